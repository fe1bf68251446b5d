"""Start the desktop app: `compile-inspector [PATH]` (a script, a session folder, a log)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

RESOURCES = Path(__file__).resolve().parent.parent.parent / "resources"
DEFAULT_SESSION = RESOURCES / "sessions" / "mlp_breaks"
SCREENSHOT_WAIT_S = 60  # --screenshot: how long PATH may take to open before the run ends without a picture


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="compile-inspector", description="torch.compile Inspector (desktop app)")
    parser.add_argument("path", nargs="?", help="model script, session folder, TORCH_TRACE log or folder")
    parser.add_argument("--run", action="store_true", help="with a script as PATH: start compiling it right away")
    parser.add_argument("--compare", type=Path, help="once PATH is open, diff it against this other run")
    parser.add_argument("--screenshot", type=Path, help="save a picture of the window once PATH is open, then quit")
    parser.add_argument("--size", type=int, nargs=2, default=(1400, 900), metavar=("W", "H"),
                        help="window size for --screenshot")
    parser.add_argument("--tab", help="with --screenshot: the tab to show (Summary, Graph, Source, Code, …)")
    parser.add_argument("--theme", choices=("system", "light", "dark"), default="system",
                        help="colours: follow the desktop (default), or force light or dark")
    parser.add_argument("--python", help="interpreter captures run in, for this session (default: the one in "
                        "Run ▸ Settings; else this one, or in the frozen app the first Python found)")
    parser.add_argument("--selftest", action="store_true", help="render every view offscreen on the bundled session")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    if args.selftest:
        from inspector.gui.selftest import run_selftest

        return run_selftest(Path(args.path) if args.path else DEFAULT_SESSION)

    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication

    from inspector.gui.qt_garbage import collect_on_ui_thread
    from inspector.gui.qt_palette import apply_theme

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("torch.compile Inspector")
    app.setOrganizationName("torch-compile-inspector")
    app.setWindowIcon(QIcon(str(RESOURCES / "icons" / "compile-inspector.svg")))
    apply_theme(app, args.theme)
    collect_on_ui_thread(app)
    return _run_window(app, args)


def _run_window(app, args: argparse.Namespace) -> int:
    """Show the window as the command line asks, open its path, and run the event loop until it quits."""
    window = make_window(args)
    _close_on_termination(window)
    if args.screenshot:
        window.resize(*args.size)
        window.show()
    elif window.fill_screen:  # a screen smaller than the default size: all of it
        window.showMaximized()
    else:
        window.show()
    path = Path(args.path) if args.path else (DEFAULT_SESSION if DEFAULT_SESSION.exists() else None)
    if args.screenshot:  # before the open: one that fails at once says so at once
        _screenshot_once_open(app, window, path, args)
    if path is not None:
        window.open_path(path)
        if args.run and path.suffix == ".py":
            window.run_capture()
    if args.compare:
        def compare_once(*_):
            window.model.sigLoaded.disconnect(compare_once)
            window.compare_with(args.compare)
        window.model.sigLoaded.connect(compare_once)
    return app.exec()


def _screenshot_once_open(app, window, path: Path | None, args: argparse.Namespace) -> None:
    """`--screenshot`: the picture 1.5 s after PATH is open (a session, or another kind in its tab),
    then quit; an open that fails, or takes longer than SCREENSHOT_WAIT_S, ends the run with exit 1 and
    says why on stderr instead of leaving without a picture."""
    from PySide6.QtCore import QTimer

    def end_without_picture(why: str) -> None:
        print(f"compile-inspector: no screenshot saved: {why}", file=sys.stderr)
        QTimer.singleShot(0, lambda: app.exit(1))  # an exit asked before the event loop runs is lost

    deadline = QTimer(window)
    deadline.setSingleShot(True)
    deadline.timeout.connect(lambda: end_without_picture(f"{path} did not open within {SCREENSHOT_WAIT_S} s"))

    def grab_when_ready(*_):
        deadline.stop()
        if args.tab in window.views:
            window.tabs.setCurrentWidget(window.views[args.tab])
        QTimer.singleShot(1500, lambda: (window.grab().save(str(args.screenshot)), app.quit()))
    window.sigOpened.connect(grab_when_ready)
    window.sigOpenFailed.connect(lambda failed, why: end_without_picture(f"could not open {failed}: {why}"))
    deadline.start(SCREENSHOT_WAIT_S * 1000)
    if path is None or (path.suffix == ".py" and not args.run):
        grab_when_ready()


def make_window(args: argparse.Namespace, settings=None):
    """The main window as the command line asks for it (`--python`: captures of this session run there)."""
    from inspector.gui.qt_main_window import QtMainWindow

    window = QtMainWindow(settings)
    if args.python:
        window.settings.python_this_session = args.python
    return window


def _close_on_termination(window) -> None:
    """SIGTERM or SIGHUP (a logout, `kill`) closes the window as the user would: a running capture is
    stopped, and the folders of opened bundles are removed at exit. Python runs signal handlers only
    between bytecodes, so a timer lets it in while Qt's event loop waits."""
    import signal

    from PySide6.QtCore import QTimer

    for number in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if number is not None:
            signal.signal(number, lambda *_: window.close())
    wake = QTimer(window)
    wake.timeout.connect(lambda: None)
    wake.start(250)
