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
replaces it.

The app turns automatic collection off for good and runs the passes from its UI thread instead
(gui/qt_garbage.py); those passes ask `collection_paused()` and wait too, so a pause holds there as
well."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0  # collector_paused blocks running now, on any thread (a load, a rank overview beside it)
_resume = False  # whether automatic collection was on when the first of them started


def freeze_alive(value=None):
    """Move everything alive now out of the collector's full passes (gc.freeze), and hand back `value`
    (a cache just built that lives as long as the scene, frozen with the rest)."""
    gc.freeze()
    return value


def collection_paused() -> bool:
    """Whether a session is being built or summarised somewhere in the process: a pass that is not
    automatic (the app's UI-thread timer) waits until it is not."""
    return _pauses > 0


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection while the block runs; after it, what it made is frozen out of later full
    passes. Automatic collection resumes after the last of the blocks running at once ends, if it was
    on before the first began; one that was off (the app's: gui/qt_garbage.py) stays off."""
    global _pauses, _resume
    with _lock:
        if _pauses == 0:
            _resume = gc.isenabled()
        _pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            gc.freeze()
            if _pauses == 0 and _resume:
                gc.enable()
