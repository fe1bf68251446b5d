"""Screenshots of every tab for docs/screenshots, taken in a real window on an X server (run it under
`xvfb-run -s "-screen 0 1920x1080x24"`; offscreen rendering lacks the window decorations' geometry).

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python packaging/make_screenshots.py \
        [SESSION] [--sizes 1280x720 1920x1080] [--log RAW_LOG] [--compare OTHER_RUN]

Each tab of the main window is shown in turn on SESSION (default: the bundled example session) at each
size and saved as docs/screenshots/<tab>-<width>.png; the Diff tab compares SESSION with --compare
(default: --log). With --log, a raw TORCH_TRACE log is opened too and its Summary, Graph and Timeline
saved as log-<tab>-<width>.png. A view that works off the UI thread is waited for (its layout, its
highlighting), not slept on. The History tab reads a run history of its own (a temporary store, never
the user's), holding SESSION's own trace log opened first and SESSION: two runs of its script.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
OUT = ROOT / "docs" / "screenshots"
LOG_TABS = ("Summary", "Graph", "Timeline")
SETTLE_S = 20.0  # the most a tab is waited for before it is saved as it is


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_screenshots.py")
    parser.add_argument("session", nargs="?", type=Path, default=BUNDLED)
    parser.add_argument("--sizes", nargs="+", default=["1280x720", "1920x1080"], help="window sizes, WIDTHxHEIGHT")
    parser.add_argument("--tabs", nargs="*", help="only these tabs (default: every tab)")
    parser.add_argument("--log", type=Path, help="a raw TORCH_TRACE log to open as well")
    parser.add_argument("--compare", type=Path, help="the run the Diff tab compares SESSION with (default: --log)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    scratch = Path(tempfile.mkdtemp())
    os.environ.update(XDG_DATA_HOME=str(scratch / "data"))  # the History tab's store: this run's own
    for name in ("TCI_NO_HISTORY", "TCI_HISTORY_STORE"):
        os.environ.pop(name, None)
    app = QApplication.instance() or QApplication([])
    from inspector.gui.qt_garbage import collect_on_ui_thread
    collect_on_ui_thread(app)  # as the app collects garbage (gui/qt_garbage.py)
    settings = AppSettings(QSettings(str(scratch / "settings.ini"), QSettings.Format.IniFormat))
    window = QtMainWindow(settings)
    window.show()
    args.out.mkdir(parents=True, exist_ok=True)

    def wait(condition, limit: float = SETTLE_S) -> None:
        deadline = time.monotonic() + limit
        while not condition() and time.monotonic() < deadline:
            app.processEvents()
            QApplication.instance().thread().msleep(20)

    def settled() -> bool:
        """Nothing of the window's views still on its way from a worker (a layout, a diff, a highlight)."""
        from PySide6.QtCore import QThreadPool

        return QThreadPool.globalInstance().activeThreadCount() == 0 and not window.model.handing

    def open_and_wait(path: Path) -> None:
        loaded = []
        window.model.sigLoaded.connect(loaded.append)
        window.open_path(path)
        wait(lambda: bool(loaded) and settled(), 120)
        window.model.sigLoaded.disconnect(loaded.append)

    def save(prefix: str, tabs, width: int) -> None:
        for index in range(window.tabs.count()):
            name = window.tabs.tabText(index)
            if tabs and name not in tabs:
                continue
            window.tabs.setCurrentIndex(index)
            wait(lambda: False, 0.3)  # one turn for the tab to ask for its content
            wait(settled)
            target = args.out / f"{prefix}{name.lower()}-{width}.png"
            window.grab().save(str(target), "PNG", 0)  # 0: the smallest file (lossless either way)
            print(target)

    other = args.compare or args.log
    earlier_run = next(iter(sorted((args.session / "trace").glob("*.log"))), None) if args.session.is_dir() else None
    if earlier_run is not None:
        open_and_wait(earlier_run)  # recorded in the history: the History tab then plots two runs
    for size in args.sizes:
        width, height = (int(part) for part in size.lower().split("x"))
        window.resize(width, height)
        wait(lambda: (window.width(), window.height()) == (width, height), 5)
        open_and_wait(args.session)
        if other is not None:
            window.compare_with(other)
            wait(lambda: window.diff_view.diff is not None and settled(), 120)
        save("", args.tabs, width)
        log_tabs = [tab for tab in LOG_TABS if not args.tabs or tab in args.tabs]
        if args.log is not None and log_tabs:  # none of them asked for: no log- shots (an empty list is every tab)
            open_and_wait(args.log)
            save("log-", log_tabs, width)
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
