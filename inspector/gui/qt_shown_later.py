"""A view's update that waits until the view is on screen: a tab nobody has open does not make the UI
thread pay for a session as it arrives. On a big job the Timeline's and the Kernels' updates would add to
the one freeze as the session comes; instead they are paid when the tab is opened."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget


class QtShownLater:
    """Runs a view's update now when the view is on screen, else the latest one asked for when the view
    is next shown: the view's `showEvent` calls `shown`, before the view paints, so it never shows the
    previous session.

    Called from the view's own handler, not an event filter: Qt calls a filter while it deletes the
    view's children, and Python entered there may run deletions PySide queued from another thread's
    garbage collection, on which Qt's own lock deadlocks and the window's teardown hangs. A view's own
    handlers are no longer Python once its deletion has begun."""

    def __init__(self, view: QWidget):
        self._view = view
        self._pending: Callable[[], None] | None = None

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

    def shown(self) -> None:
        """The view is being shown: run the update that waited for it."""
        if self._pending is not None:
            update, self._pending = self._pending, None
            update()
