"""Issue #52, Run ▸ Settings: the interpreter is checked when the field is left or typing pauses (not
on every keystroke), only the answer for the text the field holds is shown (a slow answer for an
earlier text never replaces it), and the app takes `--python` as the CLI does, for this session."""

from __future__ import annotations

import stat

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from conftest import background_settled  # noqa: E402


@pytest.fixture
def settings(tmp_path):
    from inspector.gui.qt_settings import AppSettings

    store = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    store.python = "/nonexistent/python3"  # nothing to probe for long when the dialog opens
    return store


@pytest.fixture
def dialog(qtbot, settings, quick_interpreter):
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    window = QtSettingsDialog(settings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "cannot run /nonexistent/python3" in window.interpreter_info.text(), timeout=30_000)
    return window


def test_typing_checks_nothing_until_it_pauses_then_checks_what_the_field_holds(qtbot, dialog):
    field = dialog.python.lineEdit()
    field.clear()
    QTest.keyClicks(field, "/nowhere/bin/pyth")
    assert dialog.interpreter_info.text() == ""  # no "checking /n…", no error for a half-typed path
    QTest.keyClicks(field, "on3")
    qtbot.waitUntil(lambda: "cannot run /nowhere/bin/python3" in dialog.interpreter_info.text(), timeout=30_000)
    assert "/nowhere/bin/pyth:" not in dialog.interpreter_info.text()


def test_a_slow_answer_for_an_earlier_path_never_replaces_the_answer_for_the_full_one(
        qtbot, dialog, tmp_path, quick_interpreter):
    """The earlier path is a real program that answers late (after the later path's answer is on show);
    the later one answers as a Python with torch does, at once."""
    release = tmp_path / "release"
    slow = tmp_path / "slow-python"
    slow.write_text(f"#!/bin/sh\nwhile [ ! -e '{release}' ]; do sleep 0.05; done\n"
                    f"echo 'Permission denied' >&2\ntouch '{tmp_path / 'answered'}'\nexit 1\n")
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    field = dialog.python.lineEdit()
    field.setText(str(slow))
    dialog.check_interpreter()  # the field left with the earlier path
    qtbot.waitUntil(lambda: "checking" in dialog.interpreter_info.text(), timeout=5_000)
    field.setText(quick_interpreter)
    field.editingFinished.emit()
    qtbot.waitUntil(lambda: dialog.interpreter_info.text().startswith("Python "), timeout=60_000)
    shown = dialog.interpreter_info.text()
    release.touch()
    qtbot.waitUntil(lambda: (tmp_path / "answered").exists(), timeout=30_000)
    background_settled(qtbot)  # the slow answer has arrived on the UI thread...
    assert dialog.interpreter_info.text() == shown  # ...and is not shown
    assert "Permission denied" not in dialog.interpreter_info.text()


def test_app_takes_python_for_this_session_without_saving_it(qtbot, settings):
    from inspector.gui.app import arguments, make_window

    window = make_window(arguments().parse_args(["--python", "/opt/torch-env/bin/python"]), settings)
    qtbot.addWidget(window)
    assert window.settings.python == "/opt/torch-env/bin/python"  # what Run and Compare Modes use
    assert settings.store.value("capture/python") == "/nonexistent/python3"
    window.settings.python = "/usr/bin/python3"  # the user's own choice in Run ▸ Settings wins after
    assert window.settings.python == "/usr/bin/python3"
