"""Open a 256-rank job to its per-rank overview: time, peak memory, and whether the divergence report
names every planted difference and nothing else; `tlparse --all-ranks-html` timed on the same folder.

    python bench/bench_ranks.py [--ranks 256] [--workers N] [--keep DIR]

Targets (issue 18): ≤ 10 s and ≤ 1 GB peak RSS on the 2-core development box. The job is built by
bench/make_many_ranks.py (not timed). The overview runs in a fresh process, as a user's open would.
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
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_many_ranks import make_job  # noqa: E402

# Run in a child process so its peak RSS is its own: the overview, then the report against the plants.
OVERVIEW = r"""
import json, resource, sys, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
started = time.perf_counter()
from inspector.core.analysis.ranks import index_ranks, rank_report
from inspector.core.readers.session_loader import find_trace_logs
folder, workers = Path(sys.argv[1]), int(sys.argv[2])
logs = find_trace_logs(folder)
with ProcessPoolExecutor(max_workers=workers) as pool:
    report = rank_report(index_ranks(logs, pool))
elapsed = time.perf_counter() - started
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "ranks": len(report.figures), "main_mb": own, "worker_mb": worker,
                  "findings": [{"kind": f.kind, "ranks": list(f.ranks), "text": str(f)} for f in report.findings]}))
"""


def tlparse_seconds(folder: Path, out: Path) -> float | None:
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(tlparse).exists():
        return None
    started = time.perf_counter()
    subprocess.run([tlparse, str(folder), "--all-ranks-html", "-o", str(out), "--overwrite", "--no-browser"],
                   check=False, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="build the job here and keep it")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ranks-bench-"))
    folder = args.keep or work / "job"
    try:
        planted = make_job(folder, args.ranks)
        size_mb = sum(p.stat().st_size for p in folder.glob("*.log")) / 2**20
        env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
        result = subprocess.run([sys.executable, "-c", OVERVIEW, str(folder), str(args.workers)], env=env,
                                capture_output=True, text=True, check=True)
        figures = json.loads(result.stdout)
        anchor = tlparse_seconds(folder, work / "tl_out")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found = sorted((f["kind"], tuple(f["ranks"])) for f in figures["findings"])
    expected = sorted((p["kind"], tuple(p["ranks"])) for p in planted)
    peak = figures["main_mb"] + args.workers * figures["worker_mb"]
    print(f"{figures['ranks']} ranks, {size_mb:.0f} MB of logs, {args.workers} worker processes")
    print(f"per-rank overview: {figures['seconds']:.2f} s (target ≤ 10 s); peak RSS main {figures['main_mb']:.0f} MB, "
          f"largest worker {figures['worker_mb']:.0f} MB, at most {peak:.0f} MB together (target ≤ 1024 MB)")
    if anchor is not None:
        print(f"tlparse --all-ranks-html: {anchor:.2f} s  (ratio overview / tlparse = {figures['seconds'] / anchor:.2f})")
    for finding in figures["findings"]:
        print(f"  {finding['text']}  [{finding['kind']}]")
    exact = found == expected
    print("planted differences: " + ("all reported, nothing else" if exact else f"MISMATCH: expected {expected}, got {found}"))
    return 0 if exact and figures["seconds"] <= 10 and peak <= 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
