"""Screenshots of every tab for docs/screenshots, taken in a real window on an X server (run it under
`xvfb-run -s "-screen 0 1920x1080x24"`; offscreen rendering lacks the window decorations' geometry).

    xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python packaging/make_screenshots.py [SESSION] [--size 1280x720]

Each tab of the main window is shown in turn on SESSION (default: the bundled example session) and
saved as docs/screenshots/<tab>.png; `--suffix` names a second set (e.g. -1920 for 1920×1080).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
OUT = ROOT / "docs" / "screenshots"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="make_screenshots.py")
    parser.add_argument("session", nargs="?", type=Path, default=BUNDLED)
    parser.add_argument("--size", default="1280x720", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--tabs", nargs="*", help="only these tabs (default: every tab)")
    parser.add_argument("--suffix", default="", help="added to each file name")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    width, height = (int(part) for part in args.size.lower().split("x"))

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    app = QApplication.instance() or QApplication([])
    settings = AppSettings(QSettings(str(Path(tempfile.mkdtemp()) / "settings.ini"), QSettings.Format.IniFormat))
    window = QtMainWindow(settings)
    window.resize(width, height)
    window.show()
    loaded = []
    window.model.sigLoaded.connect(loaded.append)
    window.open_path(args.session)
    while not loaded:
        app.processEvents()
    args.out.mkdir(parents=True, exist_ok=True)
    for index in range(window.tabs.count()):
        name = window.tabs.tabText(index)
        if args.tabs and name not in args.tabs:
            continue
        window.tabs.setCurrentIndex(index)
        for _ in range(200):  # views lay out and highlight off the UI thread: let their answers arrive
            app.processEvents()
            QApplication.instance().thread().msleep(10)
        target = args.out / f"{name.lower()}{args.suffix}.png"
        window.grab().save(str(target))
        print(target)
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
