"""The spread of the speedup verdict over repeated captures of the bundled examples, on a quiet
machine and with every core kept busy by burner processes (docs/measurement.md).

    python bench/bench_speedup_spread.py [--repeats 5] [--examples mlp_breaks small_resnet]
        [--code CHECKOUT] [--threads N] [--runs ROUNDS] [--out results.jsonl]

Each capture is a real `compile-inspector capture` (compile, interleaved timing, profile) run with the
code of CHECKOUT (default: this one; point it at an older checkout to measure the method before), and
read back with this checkout's core: S, its interval and the verdict state, and the machine note.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from inspector.core.analysis.speedup import estimate  # noqa: E402

BURN = "while True: pass"


def capture(code: Path, example: str, folder: Path, threads: int | None, runs: int) -> dict:
    command = [sys.executable, "-m", "inspector", "capture", str(ROOT / "resources" / "examples" / f"{example}.py"),
               "-o", str(folder), "--quiet", "--runs", str(runs)]
    if threads:
        command += ["--threads", str(threads)]
    env = dict(os.environ, PYTHONPATH=str(code))
    # -m imports from cwd
    done = subprocess.run(command, env=env, cwd=code, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        return {"error": done.stderr[-500:]}
    results = json.loads((folder / "results.json").read_text())
    speedup = estimate(results)
    return {"value": speedup.value, "low": speedup.low, "high": speedup.high, "state": speedup.state,
            "machine": speedup.machine.note if speedup.machine else None,
            "t_eager_s": results["eager"]["median_s"], "t_compiled_s": results["compiled"]["median_s"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--examples", nargs="+", default=["mlp_breaks", "small_resnet"])
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--conditions", nargs="+", default=["quiet", "load"])
    parser.add_argument("--out", type=Path, default=Path("speedup_spread.jsonl"))
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as scratch, args.out.open("a") as out:
        for condition in args.conditions:
            for example in args.examples:
                for repeat in range(args.repeats):
                    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(os.cpu_count() or 1)] \
                        if condition == "load" else []
                    try:
                        started = time.time()
                        row = capture(args.code, example, Path(scratch) / f"{condition}-{example}-{repeat}",
                                      args.threads, args.runs)
                    finally:
                        for burner in burners:
                            burner.kill()
                            burner.wait()
                    row.update(condition=condition, example=example, repeat=repeat, code=str(args.code),
                               threads=args.threads, wall_s=time.time() - started, load=os.getloadavg()[0])
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print("\n| example | condition | S over repeats | states |\n| --- | --- | --- | --- |")
    for example in args.examples:
        for condition in args.conditions:
            group = [r for r in rows if r["example"] == example and r["condition"] == condition and "value" in r]
            if not group:
                continue
            values = [r["value"] for r in group]
            states = {state: sum(r["state"] == state for r in group) for state in {r["state"] for r in group}}
            print(f"| {example} | {condition} | {min(values):.3g}–{max(values):.3g} (median "
                  f"{statistics.median(values):.3g}) | {', '.join(f'{k} ×{v}' for k, v in sorted(states.items()))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
