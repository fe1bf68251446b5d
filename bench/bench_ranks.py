"""Open a 256-rank job to its per-rank overview: time, peak memory, and whether the divergence report
names every planted difference and nothing else; `tlparse --all-ranks-html` timed on the same folder.

    python bench/bench_ranks.py [--ranks 256] [--workers N] [--keep DIR] [--rounds R]

Two opens, each in a fresh process: the core's per-rank index and report (what the CLI and any
executor run), and the desktop app (offscreen) opening the folder as a user does: time until its
Ranks tab shows the overview, time until every rank's details are in, the longest the UI thread
did not respond, and the peak memory of the app with its child processes together (PSS, sampled).

Targets (issue 18): ≤ 10 s to the overview and ≤ 1 GB peak memory (RSS; for the app with its child
processes, their PSS, which counts a page they share once) on the 2-core development box. The
job is built by bench/make_many_ranks.py (not timed). With --rounds R the three measurements
alternate R times (core, app, tlparse, core, …), so machine load falls on all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
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
from inspector.core.analysis.divergence_rules import rank_report
from inspector.core.analysis.rank_figures import index_ranks
from inspector.core.readers.trace_logs import find_trace_logs
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


# The app, offscreen, opening the folder; the GUI is imported under the main guard, since the index
# spawns its workers, and a spawned child imports the main module again. Its memory is sampled from
# outside (`run_sampling_memory`): reading /proc from the UI thread would itself stall it.
APP = r"""
import json, os, sys, time
from pathlib import Path

if __name__ == "__main__":
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication
    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    app = QApplication([])
    from inspector.gui.qt_garbage import collect_on_ui_thread
    collect_on_ui_thread(app)  # as the app collects garbage (gui/qt_garbage.py)
    window = QtMainWindow(AppSettings(QSettings(sys.argv[2], QSettings.Format.IniFormat)))
    window.resize(1280, 720)
    window.show()
    app.processEvents()
    marks, stalls = {}, [0.0]
    last = [time.perf_counter()]

    def tick():  # how late each 10 ms tick comes is how long the UI could not respond
        now = time.perf_counter()
        stalls.append(now - last[0] - 0.010)
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(10)
    started = time.perf_counter()
    window.model.sigOverview.connect(lambda report: marks.setdefault("overview_s", time.perf_counter() - started))
    window.model.sigLoaded.connect(lambda loaded: marks.setdefault("details_s", time.perf_counter() - started))
    window.open_path(Path(sys.argv[1]))
    while "details_s" not in marks and time.perf_counter() - started < 600:
        app.processEvents()
        time.sleep(0.002)
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.002)
    ranks = window.views["Ranks"]
    print(json.dumps({**marks, "rows": ranks.rows.rowCount(), "tab": window.tabs.tabText(window.tabs.currentIndex()),
                      "stall_ms": max(stalls) * 1000}))
"""


def tree_pss_mb(pid: int) -> float:
    """Memory of `pid` and its children from /proc: their PSS (resident pages, each shared page split
    among the processes sharing it). Plain RSS would count a child caught between fork and exec
    (graphviz's dot being started, say) as a second copy of the app."""
    total_kb = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            if entry.name != str(pid) and parent != pid:
                continue
            with open(f"/proc/{entry.name}/smaps_rollup", encoding="ascii") as rollup:
                total_kb += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
        except (OSError, IndexError, ValueError, StopIteration):
            continue
    return total_kb / 1024


def run_sampling_memory(command: list[str], env: dict) -> tuple[str, float]:
    """Run `command`; its stdout and the peak memory (PSS) of it and its child processes together,
    sampled every 50 ms."""
    with tempfile.TemporaryFile("w+") as out:
        child = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.DEVNULL, text=True)
        peak = 0.0
        while child.poll() is None:
            peak = max(peak, tree_pss_mb(child.pid))
            time.sleep(0.05)
        if child.returncode:
            raise subprocess.CalledProcessError(child.returncode, command)
        out.seek(0)
        return out.read(), peak


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
    parser.add_argument("--rounds", type=int, default=1, help="alternate the three measurements this many times")
    parser.add_argument("--keep", type=Path, help="build the job here and keep it")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ranks-bench-"))
    folder = args.keep or work / "job"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(work / "cache")}
    cores, apps, anchors = [], [], []
    try:
        planted = make_job(folder, args.ranks)
        size_mb = sum(p.stat().st_size for p in folder.glob("*.log")) / 2**20
        for _ in range(args.rounds):
            result = subprocess.run([sys.executable, "-c", OVERVIEW, str(folder), str(args.workers)], env=env,
                                    capture_output=True, text=True, check=True)
            cores.append(json.loads(result.stdout))
            script = work / "open_in_app.py"
            script.write_text(APP, encoding="utf-8")
            stdout, peak = run_sampling_memory([sys.executable, str(script), str(folder), str(work / "settings.ini")],
                                            {**env, "HOME": str(work)})
            apps.append({**json.loads(stdout.strip().splitlines()[-1]), "peak_mb": peak})
            anchors.append(tlparse_seconds(folder, work / "tl_out"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = cores[-1]
    found = sorted((f["kind"], tuple(f["ranks"])) for f in figures["findings"])
    expected = sorted((p["kind"], tuple(p["ranks"])) for p in planted)
    print(f"{figures['ranks']} ranks, {size_mb:.0f} MB of logs, {args.rounds} round(s); the core with {args.workers} "
          f"worker processes, the app with its own pool (one per core: {os.cpu_count()})")
    for core, app, anchor in zip(cores, apps, anchors):
        peak = core["main_mb"] + args.workers * core["worker_mb"]
        if "overview_s" not in app:  # a job under OVERVIEW_FIRST_BYTES opens whole, straight to its details
            app["overview_s"] = app["details_s"]
        print(f"core index + report: {core['seconds']:.2f} s, peak RSS ≤ {peak:.0f} MB | app: overview "
              f"{app['overview_s']:.2f} s, details {app['details_s']:.2f} s, "
              f"longest UI stall {app['stall_ms']:.0f} ms, "
              f"peak memory (PSS) with its child processes {app['peak_mb']:.0f} MB, "
              f"{app['rows']} rows on the {app['tab']} tab"
              + (f" | tlparse --all-ranks-html {anchor:.2f} s (overview / tlparse = {app['overview_s'] / anchor:.2f})"
                 if anchor else ""))
    for finding in figures["findings"]:
        print(f"  {finding['text']}  [{finding['kind']}]")
    exact = found == expected
    print("planted differences: "
          + ("all reported, nothing else" if exact else f"MISMATCH: expected {expected}, got {found}"))
    slowest = max(max(core["seconds"], app["overview_s"]) for core, app in zip(cores, apps))
    heaviest = max(app["peak_mb"] for app in apps)
    return 0 if exact and slowest <= 10 and heaviest <= 1024 else 1


if __name__ == "__main__":
    sys.exit(main())
