"""`compile-inspector --selftest`: open the bundled saved session offscreen, render every view,
round-trip it through a .tcinspect bundle and an HTML report, and exit 0 only if all of it worked.
Run against the frozen build before anyone ships it."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import traceback
from pathlib import Path


def run_selftest(session_dir: Path) -> int:
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from inspector.capture.launcher import RUNNER
    from inspector.core.outputs.html_report import render_report
    from inspector.core.readers.session_bundle import save_bundle
    from inspector.gui.qt_garbage import collect_on_ui_thread
    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.core.loading import load_session
    from inspector.core.readers.sources import detect
    from inspector.gui.qt_settings import AppSettings

    app = QApplication.instance() or QApplication([])
    failures: list[str] = []

    def check(condition: bool, what: str) -> None:
        print(f"{'ok  ' if condition else 'FAIL'} {what}")
        if not condition:
            failures.append(what)

    collect_on_ui_thread(app)
    with tempfile.TemporaryDirectory() as work:
        try:
            window = QtMainWindow(AppSettings(QSettings(str(Path(work) / "s.ini"), QSettings.Format.IniFormat)))
            window.show()
            loaded = load_session(detect(session_dir))
            check(len(loaded.session.units) > 0, f"bundled session opens: {len(loaded.session.units)} compile units")
            window.model.set_loaded(loaded)
            while window.model.handing:  # the views take it one per turn of the event loop
                app.processEvents()
            for name, view in window.views.items():
                if window.tabs.indexOf(view) >= 0:
                    window.tabs.setCurrentWidget(view)
                app.processEvents()
                image = view.grab().toImage()
                check(not image.isNull() and image.width() > 10,
                      f"view '{name}' renders ({image.width()}×{image.height()})")
            check("graph-break site" in window.summary_view.title.text(), "dashboard shows the verdict")
            bundle, _ = save_bundle(session_dir, Path(work) / "roundtrip")
            again = load_session(detect(bundle))
            check(len(again.session.units) == len(loaded.session.units),
                  f"a .tcinspect bundle round-trips ({bundle.stat().st_size} bytes)")
            html = render_report(loaded.analysis)
            check("<script" not in html.lower() and "Was it worth it?" in html,
                  f"HTML report renders ({len(html)} bytes)")
            check(RUNNER.is_file(), f"capture runner ships with the app ({RUNNER})")
            check(not gc.isenabled(), "after a load and its hand-over, cyclic garbage is still collected on the UI "
                  "thread only (gui/qt_garbage.py)")
            window.close()
        except Exception:
            traceback.print_exc()
            failures.append("exception")
    print("selftest passed" if not failures else f"selftest FAILED: {', '.join(failures)}")
    sys.stdout.flush()
    return 0 if not failures else 1
