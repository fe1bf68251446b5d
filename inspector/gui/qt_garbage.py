"""Python's cyclic garbage is collected on the UI thread only, by a timer, never by whichever thread
happens to allocate past the collector's threshold.

Why: a closed window, and pyqtgraph's plot menus, hold their Qt objects through reference cycles, so
only the cyclic collector frees them. Left automatic, it runs on the thread that allocates, which is
usually a worker (a log being read makes millions of objects). PySide cannot delete a Qt object
there: it queues the deletion to the UI thread and runs it the next time Qt calls into Python. When
that call comes from inside a paint (an `event` or `paintEvent` override), the object's destructor
waits on a lock Qt already holds, and the app hangs where no timeout can end it (`py-spy dump
--native` of a hung test run: `QObject::~QObject` of a pyqtgraph menu under the code editor's gutter
`event`). The same queue takes a Qt object a worker drops by reference count, so work run off the UI
thread never owns one that no parent owns (gui/qt_background.py).

pyqtgraph's GarbageCollector does the first half of this, but cannot be told to wait while a session
is built: its passes on the UI thread would walk the session as it grows, the frozen frames
core/gc_policy.py pauses the collector against. This one asks `collection_paused()` first."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer

from inspector.core.gc_policy import collection_paused

# How often the UI thread looks at the collector's counts. Often, because what a pass walks is what was
# allocated since the last one: a second's worth makes one young pass long enough to be a stalled frame
# (docs/benchmarks.md, "Garbage collected on the UI thread"); a look that finds no pass due costs
# nothing worth counting.
COLLECT_EVERY_MS = 100


class UiThreadCollector(QObject):
    """Automatic collection off; the passes it would have run, run from a timer of the UI thread, as
    CPython chooses them (the oldest generation whose count is past its threshold, once the youngest's
    is), except while a session is built (core/gc_policy.collection_paused)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        app = QCoreApplication.instance()
        if app is None or QThread.currentThread() is not app.thread():
            raise RuntimeError("the collector's passes must run on the UI thread: make it there, after the app")
        self.resume = gc.isenabled()
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.collect_due)
        self.timer.start(COLLECT_EVERY_MS)

    def collect_due(self) -> None:
        if collection_paused():
            return
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[0] > thresholds[0]:
            gc.collect(max(generation for generation in range(3) if counts[generation] > thresholds[generation]))

    def stop(self) -> None:
        """No more passes; what is left is collected here at once, and automatic collection resumes
        if it was on."""
        self.timer.stop()
        gc.collect()
        if self.resume:
            gc.enable()


def collect_on_ui_thread(app: QCoreApplication) -> UiThreadCollector:
    """For the rest of `app`'s life (the desktop app's, a tool's or a benchmark's): no worker ever
    collects; the collector lives as long as `app`, its parent. Call on the UI thread."""
    return UiThreadCollector(app)


@contextmanager
def collected_on_ui_thread() -> Iterator[UiThreadCollector]:
    """The same while the block runs (a GUI test): after it, what is left is collected on this thread
    and automatic collection resumes if it was on."""
    collector = UiThreadCollector()
    try:
        yield collector
    finally:
        collector.stop()
