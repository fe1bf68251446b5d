"""A 1,024-rank job's overview (per-rank index + divergence report) read by the local process pool
and by a Dask `distributed.LocalCluster` of 1, 2 and 4 worker processes, interleaved round by round
so machine load falls on all alike; every engine must give the same report.

    python bench/bench_dask_ranks.py [--ranks 1024] [--rounds 3] [--keep DIR]

Times exclude building the job (bench/make_many_ranks.py) and starting the cluster; they include
finding the logs, each worker reading its logs and sending back the figures, and the report. Peak
memory is the client process's own (the workers' is theirs). Needs the dask extra.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_many_ranks import make_job  # noqa: E402

from inspector.core.analysis.divergence_rules import rank_report  # noqa: E402
from inspector.core.analysis.rank_figures import index_ranks  # noqa: E402
from inspector.core.readers.trace_logs import find_trace_logs  # noqa: E402


def timed(folder: Path, executor) -> tuple[float, dict]:
    started = time.perf_counter()
    report = rank_report(index_ranks(find_trace_logs(folder), executor))
    return time.perf_counter() - started, report.get_state()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the job here instead of a temporary folder")
    args = parser.parse_args()
    import distributed

    folder = args.keep or Path(tempfile.mkdtemp(prefix="dask-ranks-")) / "job"
    if not (folder / "planted.json").is_file():
        started = time.perf_counter()
        make_job(folder, args.ranks)
        print(f"built {args.ranks} ranks in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    size_mb = sum(path.stat().st_size for path in folder.glob("*.log")) / 2**20
    engines = {"local pool (2 processes)": None, **{f"dask, {n} worker(s)": n for n in (1, 2, 4)}}
    clusters = {name: distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                               dashboard_address=None, worker_dashboard_address=None)
                for name, n in engines.items() if n}
    clients = {name: distributed.Client(cluster) for name, cluster in clusters.items()}
    seconds: dict[str, list[float]] = {name: [] for name in engines}
    reports = {}
    try:
        for _ in range(args.rounds):
            for name in engines:
                if name in clients:
                    elapsed, report = timed(folder, clients[name].get_executor())
                else:
                    with ProcessPoolExecutor(max_workers=2) as pool:
                        elapsed, report = timed(folder, pool)
                seconds[name].append(elapsed)
                reports[name] = json.dumps(report, sort_keys=True)
    finally:
        for client in clients.values():
            client.close()
        for cluster in clusters.values():
            cluster.close()
    same = len(set(reports.values())) == 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{args.ranks} ranks, {size_mb:.0f} MB of logs, {os.cpu_count()} cores; rounds {args.rounds}; "
          f"client peak RSS {peak:.0f} MB; the same report from every engine: {same}")
    local = statistics.median(seconds["local pool (2 processes)"])
    print("| engine | median | min–max | vs local pool |\n| --- | --- | --- | --- |")
    for name, values in seconds.items():
        print(f"| {name} | {statistics.median(values):.2f} s | {min(values):.2f}–{max(values):.2f} s | "
              f"{statistics.median(values) / local:.2f} |")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
