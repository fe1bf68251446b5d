"""Run ▸ Settings… fits a 1280×720 screen with a 40-pixel panel, title bar and frame included, whatever the
Dask field holds: empty, a plain tcp:// address allowed (the warning under it), or one not allowed (the
longer "Not used" hint). A one-line warning beside the tcp:// box once made the dialog 1,353 pixels wide;
a second, static copy of that warning under the box then made it 791 pixels tall with an address typed,
its OK button below a 720-pixel screen, and had the user read the same warning twice in two wordings."""

from __future__ import annotations

import html

import pytest

pytest.importorskip("PySide6")

from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLabel  # noqa: E402

from inspector.core.analysis.dask_engine import INSECURE_WARNING  # noqa: E402

SCREEN_WIDTH, SCREEN_HEIGHT = 1280, 720 - 40  # a laptop's screen less a desktop panel
# the window manager's title bar and borders, which the offscreen platform does not draw
TITLE_BAR, BORDER = 32, 4
TCP = "tcp://scheduler:8786"


def dialog_for(qtbot, window):
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    dialog = QtSettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(dialog.isVisible, timeout=5_000)
    return dialog


def frame_size(dialog) -> tuple[int, int]:
    """The room the dialog takes on screen once the layout has settled on what it shows now: its size, or
    the height its content needs at its width where that is more, plus the window manager's frame."""
    QApplication.processEvents()
    needed = dialog.layout().totalHeightForWidth(dialog.width())
    return dialog.width() + 2 * BORDER, max(dialog.height(), needed) + TITLE_BAR + BORDER


def warnings_shown(dialog) -> list[str]:
    return [label.text() for label in dialog.findChildren(QLabel)
            if label.isVisible() and "can run code on this machine" in label.text()]


@pytest.mark.parametrize("address, allowed, shown", [
    ("", False, None),
    (TCP, True, "<b>Warning</b>"),
    (TCP, False, "<b>Not used</b>"),
], ids=["empty", "tcp allowed", "tcp not allowed"])
def test_the_settings_dialog_and_its_ok_button_fit_a_1280_by_720_screen(qtbot, window, quick_interpreter,
                                                                       address, allowed, shown):
    dialog = dialog_for(qtbot, window)
    dialog.dask_allow_insecure.setChecked(allowed)
    dialog.dask_scheduler.setText(address)
    if shown:
        assert dialog.dask_check.text().startswith(shown)
    width, height = frame_size(dialog)
    assert width <= SCREEN_WIDTH and height <= SCREEN_HEIGHT, (width, height)
    buttons = dialog.findChild(QDialogButtonBox)
    bottom = buttons.mapTo(dialog, buttons.rect().bottomLeft()).y()
    assert buttons.isVisible() and bottom + TITLE_BAR + BORDER <= SCREEN_HEIGHT, bottom


def test_a_plain_tcp_scheduler_is_warned_of_once_in_cores_words(qtbot, window, quick_interpreter):
    dialog = dialog_for(qtbot, window)
    assert warnings_shown(dialog) == []  # nothing typed: nothing to warn of, the box's tooltip says why it is there
    assert INSECURE_WARNING in dialog.dask_allow_insecure.toolTip()
    dialog.dask_allow_insecure.setChecked(True)
    dialog.dask_scheduler.setText(TCP)
    assert warnings_shown(dialog) == [f"<b>Warning</b>: {html.escape(INSECURE_WARNING)}"]
    dialog.dask_allow_insecure.setChecked(False)
    (refused,) = warnings_shown(dialog)
    assert refused.startswith("<b>Not used</b>") and html.escape(INSECURE_WARNING) in refused
