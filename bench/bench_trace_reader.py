"""Reader speed and memory on a ~100 MB TORCH_TRACE log, side by side with tlparse in one run.

    python bench/bench_trace_reader.py [--log PATH] [--mb 100]

Without --log it builds the log from the bundled example (bench/make_big_log.py). Each measurement
runs in a fresh interpreter so its peak RSS is its own. Figures go to docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"

# Runs in a child interpreter: prints seconds and peak RSS as JSON.
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.outputs.summary import summarize
log = Path({log!r})
start = time.perf_counter()
session = build_trace_session([log], log, verify_md5={full})
units, breaks = len(session.units), len(session.breaks)
metrics = sum(1 for unit in session.units if unit.metrics)
if {full}:
    nodes = sum(len(a.graph.nodes) for unit in session.units for a in unit.graphs.values())
    kernels = sum(len(unit.kernels) for unit in session.units)
    spans = sum(1 for unit in session.units for root in unit.spans for _ in root.walk())
    summarize(session)
else:
    nodes = kernels = spans = None
elapsed = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(dict(seconds=elapsed, rss=rss, units=units, breaks=breaks, metrics=metrics,
                      nodes=nodes, kernels=kernels, spans=spans, problems=session.problems.total)))
"""


def measure(log: Path, full: bool) -> dict:
    code = CHILD.format(root=str(ROOT), log=str(log), full=full)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def time_tlparse(log: Path) -> float | None:
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(tlparse).exists():
        return None
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([tlparse, str(log), "-o", out, "--overwrite", "-p", "--no-browser"],
                       capture_output=True, check=False)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", type=Path)
    parser.add_argument("--mb", type=float, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    log = args.log
    if log is None:
        log = ROOT / "bench" / "out" / "dedicated_log_torch_trace_big.log"
        if not log.exists() or abs(log.stat().st_size / 2**20 - args.mb) > 5:
            log.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"), str(EXAMPLE), str(log),
                            "--mb", str(args.mb)], check=True)
    size = log.stat().st_size
    print(f"log: {log} ({size / 1e6:.1f} MB)")
    rows = []
    for label, full in (("index (units, breaks, metrics)", False), ("full parse (md5, graphs, kernels, spans, summary)", True)):
        runs = [measure(log, full) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        rows.append((label, best))
        print(f"{label:<52} {best['seconds']:6.2f} s (best of {args.repeat})   peak RSS {best['rss'] / 1e6:6.1f} MB "
              f"= {best['rss'] / size:.2f}× log   units {best['units']} breaks {best['breaks']}"
              + (f" nodes {best['nodes']} kernels {best['kernels']} spans {best['spans']}" if full else ""))
    tl = [time_tlparse(log) for _ in range(args.repeat)]
    if tl[0] is None:
        print("tlparse not found: pip install tlparse")
        return
    best_tl = min(tl)
    print(f"{'tlparse -p':<52} {best_tl:6.2f} s (best of {args.repeat})")
    full = rows[1][1]["seconds"]
    print(f"full parse / tlparse = {full / best_tl:.2f}  (target ≤ 0.5); index {rows[0][1]['seconds']:.2f} s (target ≤ 1 s)")


if __name__ == "__main__":
    main()
