"""A view's update that waits until the view is on screen: a tab nobody has open does not make the UI
thread pay for a session as it arrives. On a big job the Timeline's and the Kernels' updates would add to
the one freeze as the session comes; instead they are paid when the tab is opened."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget


class QtShownLater(QObject):
    """Runs a view's update now when the view is on screen, else the latest one asked for just before
    the view is next shown (before it paints, so it never shows the previous session)."""

    def __init__(self, view: QWidget):
        super().__init__(view)
        self._view = view
        self._pending: Callable[[], None] | None = None
        view.installEventFilter(self)

    @property
    def pending(self) -> bool:
        """An update waits for the view to be shown: what the view holds is not the open session's."""
        return self._pending is not None

    def run(self, update: Callable[[], None]) -> None:
        if self._view.isVisible():
            self._pending = None
            update()
        else:
            self._pending = update

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._view and event.type() == QEvent.Type.Show and self._pending is not None:
            update, self._pending = self._pending, None
            update()
        return False
