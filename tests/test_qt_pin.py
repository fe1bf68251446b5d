"""PySide6 6.12.0 on Python 3.11 dies after a few thousand calls (`Fatal Python error:
none_dealloc`); 6.11.3 is fine. The pin keeps 6.12 out; this test keeps the pin honest and runs the
kind of call loop that crashed, in a child process so a crash fails the test instead of the run."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

CALL_LOOP = r"""
import os
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QApplication, QTreeWidget, QTreeWidgetItem

class Emitter(QObject):
    sig = Signal(object)

app = QApplication([])
tree = QTreeWidget()
items = [QTreeWidgetItem(tree, [str(i)]) for i in range(50)]
emitter = Emitter()
received = []
emitter.sig.connect(received.append)
for n in range(20000):
    item = items[n % 50]
    assert item.data(0, Qt.ItemDataRole.UserRole) is None  # a call returning None, thousands of times
    emitter.sig.emit(None)
    tree.setCurrentItem(item)
print("survived", len(received))
"""


def test_pyside6_version_respects_the_pin():
    """On 3.11 the installed PySide6 is below 6.12; on any Python it satisfies the requirement that
    pyproject.toml's gui extra states for that Python (so the pin cannot silently drift)."""
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    from packaging.requirements import Requirement

    installed = version("PySide6-Essentials")
    major, minor = (int(part) for part in installed.split(".")[:2])
    if sys.version_info[:2] == (3, 11):
        assert (major, minor) < (6, 12), f"PySide6 {installed} crashes on Python 3.11 (none_dealloc)"
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    requirements = [Requirement(line) for line in project["project"]["optional-dependencies"]["gui"]]
    applying = [req for req in requirements
                if req.name == "PySide6-Essentials" and (req.marker is None or req.marker.evaluate())]
    assert len(applying) == 1, "exactly one PySide6 requirement applies to this Python"
    assert applying[0].specifier.contains(installed), f"PySide6 {installed} is outside {applying[0].specifier}"


def test_thousands_of_calls_returning_none_do_not_crash():
    done = subprocess.run([sys.executable, "-c", CALL_LOOP], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "survived 20000" in done.stdout
