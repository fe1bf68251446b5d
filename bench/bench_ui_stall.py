"""Largest event-loop stall of the app while it opens a ~100 MB log and runs a capture at once.

    QT_QPA_PLATFORM=offscreen python bench/bench_ui_stall.py [--log PATH] [--example small_resnet]

A 5 ms timer on the UI thread records how late each tick fires; the worst lateness is the longest
time the UI could not respond. Target (issue 4): ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from inspector.capture.launcher import CaptureSettings  # noqa: E402
from inspector.gui.qt_main_window import QtMainWindow  # noqa: E402
from inspector.gui.qt_settings import AppSettings  # noqa: E402

TICK_MS = 5


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", type=Path, default=ROOT / "bench" / "out" / "dedicated_log_torch_trace_big.log")
    parser.add_argument("--example", default="small_resnet")
    args = parser.parse_args()
    if not args.log.exists():
        subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"),
                        str(next((ROOT / "resources" / "sessions" / "mlp_breaks" / "trace").glob("*.log"))),
                        str(args.log), "--mb", "100"], check=True)
    app = QApplication([])
    from inspector.gui.qt_garbage import collect_on_ui_thread
    collect_on_ui_thread(app)  # as the app collects garbage (gui/qt_garbage.py)
    work = Path(tempfile.mkdtemp(prefix="ui_stall_"))
    settings = AppSettings(QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat))
    settings.set_capture_settings(CaptureSettings(runs=5, warmup=1, threads=1))
    settings.python = sys.executable
    window = QtMainWindow(settings)
    window.show()
    gaps: list[float] = []
    last = [time.perf_counter()]
    pending = {"log", "capture"}

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000 - TICK_MS)
        last[0] = now

    def finished(what: str) -> None:
        pending.discard(what)
        if not pending:
            QTimer.singleShot(200, app.quit)

    timer = QTimer()
    timer.setInterval(TICK_MS)
    timer.timeout.connect(tick)
    timer.start()
    started = time.perf_counter()
    opened = {}

    def on_loaded(loaded) -> None:
        if str(loaded.session.source) == str(args.log):
            opened["log_s"] = time.perf_counter() - started
            finished("log")
        else:
            opened["capture_s"] = time.perf_counter() - started
            finished("capture")

    window.model.sigLoaded.connect(on_loaded)
    window.open_path(ROOT / "resources" / "examples" / f"{args.example}.py")
    window.run_capture()
    window.open_path(args.log)
    QTimer.singleShot(600_000, app.quit)
    app.exec()
    ordered = sorted(gaps)
    print(f"log {args.log.stat().st_size / 1e6:.1f} MB opened in {opened.get('log_s', float('nan')):.2f} s; "
          f"capture of {args.example} finished and opened in {opened.get('capture_s', float('nan')):.2f} s")
    print(f"{len(gaps)} ticks of {TICK_MS} ms: worst stall {ordered[-1]:.1f} ms, "
          f"p99 {ordered[int(len(ordered) * 0.99)]:.1f} ms, "
          f"median {statistics.median(gaps):.2f} ms  (target: worst ≤ 50 ms)")


if __name__ == "__main__":
    main()
