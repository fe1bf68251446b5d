"""Run ▸ Settings… fits a 1280×720 screen: a one-line warning beside the plain tcp:// Dask box made the
dialog 1,353 pixels wide, its OK and Cancel buttons past the screen's right edge. The warning still reads
in full, under the box."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QLabel  # noqa: E402


def test_the_settings_dialog_fits_a_1280_screen_and_still_warns_of_plain_tcp(qtbot, window):
    from inspector.gui.qt_settings_dialog import INSECURE_DASK, QtSettingsDialog

    dialog = QtSettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    assert dialog.width() <= 1280 - 40, dialog.width()
    warnings = [label for label in dialog.findChildren(QLabel) if label.text() == INSECURE_DASK]
    assert warnings and warnings[0].isVisible()
    assert "run code on this machine" in INSECURE_DASK
