"""What Ctrl+F looks for in a view: a view with a find box says which one it is (the Graph's node
search, the Code tab's find, the Log's filter), instead of the window guessing at attribute names."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtWidgets import QLineEdit


@runtime_checkable
class Findable(Protocol):
    def find_box(self) -> QLineEdit:
        """The line edit Ctrl+F puts the cursor in."""
        ...
