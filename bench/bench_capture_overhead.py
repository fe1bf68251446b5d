"""Compile-phase cost of our capture against the same script under plain TORCH_TRACE.

    python bench/bench_capture_overhead.py [--example tiny_decoder] [--rounds 5]

Both sides compile the same model on the same inputs; the compile phase is torch's own figure,
Σ entire_frame_compile_time_s from each run's compilation_metrics (it includes our stage relay and
graph recording, which run inside the compile). Rounds alternate plain/capture with one shared,
pre-warmed Inductor cache so both sides see the same cache state. Threads pinned to 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.core.readers.session_loader import open_path  # noqa: E402


def compile_seconds(folder: Path) -> float:
    return sum(unit.metric("entire_frame_compile_time_s") or 0 for unit in open_path(folder).units)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--example", default="tiny_decoder")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    script = ROOT / "resources" / "examples" / f"{args.example}.py"
    work = Path(tempfile.mkdtemp(prefix="capture_overhead_"))
    env = dict(os.environ, OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(work / "cache"))
    plain, ours = [], []
    try:
        subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True)  # warm the cache
        for index in range(args.rounds):
            trace = work / f"plain{index}"
            subprocess.run([sys.executable, str(script)], env=dict(env, TORCH_TRACE=str(trace)), check=True,
                           capture_output=True)
            plain.append(compile_seconds(trace))
            session = work / f"ours{index}"
            subprocess.run([sys.executable, "-m", "inspector", "capture", str(script), "-o", str(session), "--quiet",
                            "--threads", "1", "--runs", "5", "--no-profile"], env=env, check=True, capture_output=True,
                           cwd=ROOT)
            ours.append(compile_seconds(session))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    p, o = statistics.median(plain), statistics.median(ours)
    print(f"example {args.example}, {args.rounds} rounds, warm Inductor cache, 1 thread")
    print(f"plain TORCH_TRACE compile phase: median {p:.3f} s  (runs: {', '.join(f'{x:.2f}' for x in plain)})")
    print(f"our capture compile phase:       median {o:.3f} s  (runs: {', '.join(f'{x:.2f}' for x in ours)})")
    print(f"ratio {o / p:.3f}  (target ≤ 1.10)")


if __name__ == "__main__":
    main()
