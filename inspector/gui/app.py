"""Start the desktop app: `compile-inspector [PATH]` (a script, a session folder, a log)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_EXAMPLE = Path(__file__).resolve().parent.parent.parent / "resources" / "sessions" / "mlp_breaks"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compile-inspector", description="torch.compile Inspector (desktop app)")
    parser.add_argument("path", nargs="?", help="model script, session folder, TORCH_TRACE log or folder")
    parser.add_argument("--run", action="store_true", help="with a script as PATH: start compiling it right away")
    parser.add_argument("--screenshot", type=Path, help="save a picture of the window once PATH is open, then quit")
    args = parser.parse_args(argv)

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from inspector.gui.qt_main_window import QtMainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("torch.compile Inspector")
    app.setOrganizationName("torch-compile-inspector")
    window = QtMainWindow()
    window.show()
    path = Path(args.path) if args.path else (DEFAULT_EXAMPLE if DEFAULT_EXAMPLE.exists() else None)
    if path is not None:
        window.open_path(path)
        if args.run and path.suffix == ".py":
            window.run_capture()
    if args.screenshot:
        def grab_when_ready(*_):
            QTimer.singleShot(300, lambda: (window.grab().save(str(args.screenshot)), app.quit()))
        window.model.sigLoaded.connect(grab_when_ready)
        if path is None or (path.suffix == ".py" and not args.run):
            grab_when_ready()
        QTimer.singleShot(60_000, app.quit)  # never hang a screenshot run
    return app.exec()
