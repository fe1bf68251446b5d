"""Python's cyclic garbage is collected on the UI thread only, by a timer, never by whichever thread
happens to allocate past the collector's threshold.

Why: a closed window, and pyqtgraph's plot menus, hold their Qt objects through reference cycles, so
only the cyclic collector frees them. Left automatic, it runs on the thread that allocates, which is
usually a worker (a log being read makes millions of objects). PySide cannot delete a Qt object
there: it queues the deletion to the UI thread and runs it the next time Qt calls into Python. When
that call comes from inside a paint (an `event` or `paintEvent` override), the object's destructor
waits on a lock Qt already holds, and the app hangs where no timeout can end it (`py-spy dump
--native` of a hung test run: `QObject::~QObject` of a pyqtgraph menu under the code editor's gutter
`event`). pyqtgraph's GarbageCollector, made for this, turns automatic collection off and runs the
same generational passes from a timer of the thread that creates it. The reader's own pause
(core/gc_policy.py) leaves the collector off where it found it off."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from pyqtgraph.util.garbage_collector import GarbageCollector

COLLECT_EVERY_S = 1.0  # how often the UI thread checks the collector's counts (as often as Qt's own timers allow)


@contextmanager
def collected_on_ui_thread() -> Iterator[GarbageCollector]:
    """While the block runs (the app's event loop, a GUI test), cyclic garbage is collected only by
    the calling thread, which must be the UI thread, from a timer. After it, what is left is collected
    there at once and automatic collection resumes if it was on."""
    collecting = gc.isenabled()
    collector = GarbageCollector(interval=COLLECT_EVERY_S)
    try:
        yield collector
    finally:
        collector.timer.stop()
        gc.collect()
        if collecting:
            gc.enable()
