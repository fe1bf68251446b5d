"""When Python's cyclic garbage collector may run while a session is read, in one place (the app and
the command line).

A full collection walks every tracked object while it holds the GIL: over the hundreds of thousands of
objects a big log makes, or a 50k-node graph's parsed nodes, layout and scene, long enough for the app's
UI thread to show a frozen frame, and the passes repeat as the objects grow, to a sizeable share of the
command line's summary of a big log (docs/benchmarks.md: "UI responsiveness while opening a 100 MB log",
"FX graph view", "Every reader row against issue 26's targets"). So the collector is paused while
a session is built and summarised, and what lives as long as the session or the scene is frozen out of
later full passes (gc.freeze). Frozen objects are never collected as cycles: what is frozen must be
free of reference cycles, so that reference counting still frees it when the next session or layout
replaces it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


def freeze_alive(value=None):
    """Move everything alive now out of the collector's full passes (gc.freeze), and hand back `value`
    (a cache just built that lives as long as the scene, frozen with the rest)."""
    gc.freeze()
    return value


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection while the block runs; after it, what it made is frozen out of later full
    passes, and automatic collection resumes if it was on. A collector already off is left off: the app
    runs its passes from the UI thread's timer instead (gui/qt_garbage.py), and those passes must not
    walk the session either."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
