"""The app's one model: the open session, its summary and problems, and the selection every view
follows, as Qt signals. What an open does and in which order (overview, preview, the whole session)
is decided by the Qt-free loading pipeline, `core/loading.py`, on a worker; this module only carries
its events to the UI thread and hands each session to the views."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.analysis.dask_engine import DaskTarget
from inspector.core.loading import LoadedSession, LoadEvent, Loaded, Overview, Preview, ReadProgress, load_session
from inspector.core.model.output_code import Kernel
from inspector.core.model.selection import Change, Selection
from inspector.core.model.session import CompileUnit
from inspector.core.readers.session_loader import close_session
from inspector.core.readers.sources import Source
from inspector.gui.code_highlight import compile_lexers
from inspector.gui.qt_background import in_turns, next_turn, run_in_background

# The load worker waits for the UI thread to have taken what it sent, never longer than this: a big
# job's overview or a big log's preview until every view shows it (drawn while the worker reads on, the
# Ranks table and lanes, or a reopened big log's views, wait on the GIL several times as long)…
FIRST_VIEW_WAIT_S = 0.5
# … and its progress, when the UI thread is UI_BEHIND_S late taking the last one, for GIVE_WAY_S: a
# worker reading logs lets go of the GIL at every file operation and takes it straight back, and a
# thread waiting for the GIL starts its wait over each time it changes hands (CPython's convoy
# effect): the UI thread, painting or ticking, would wait on it turn after turn while a job's cached
# indexes are read (docs/benchmarks.md, "The 50 ms stall target met").
UI_BEHIND_S = 0.012
GIVE_WAY_S = 0.002


class _Carrier(QObject):
    """One open's events, from its worker (`send`) to the UI thread (`sigEvent`, queued). The one way
    the worker waits on the UI thread: `taken`, set by the UI thread once it has taken (and, for the
    first view, shown) the last event, waited on for at most the bound above."""

    sigEvent = Signal(object)

    def __init__(self, parent: QObject):
        super().__init__(parent)
        self.taken = threading.Event()
        self.taken.set()
        self._sent_at = 0.0

    def send(self, event: LoadEvent) -> None:
        """On the worker."""
        if isinstance(event, (Preview, Loaded)):
            compile_lexers()  # the Source and Code views highlight the session's code next
        behind = not self.taken.is_set() and time.perf_counter() - self._sent_at > UI_BEHIND_S
        if isinstance(event, ReadProgress) and behind:
            self.taken.wait(GIVE_WAY_S)  # asleep, the worker leaves the GIL to the UI thread
        first_view = isinstance(event, (Overview, Preview))
        if first_view or self.taken.is_set():
            self.taken.clear()
            self._sent_at = time.perf_counter()
        self.sigEvent.emit(event)
        if first_view:
            self.taken.wait(FIRST_VIEW_WAIT_S)

    def next_turn(self) -> None:
        """On the UI thread: the worker goes on once what was asked to repaint is painted (the repaint
        was posted before this), in the next turn."""
        next_turn(self, self.taken.set)


class QtSessionModel(QObject):
    """Views take each session through `on_each_session`, one view per turn of the event loop, so the
    UI thread answers the user between them (on a big job the views together, taking it in one signal,
    would be one long freeze). Then the session's first unit is selected, and
    `sigLoaded` says the session is open and every view shows it."""

    sigOpening = Signal(str)  # path: an open starts (what a view keeps for the open under way is dropped)
    sigLoadEvent = Signal(object)  # each event (core/loading.py) of the latest open, once the model has acted on it
    sigOverview = Signal(object)  # RankReport of a job whose details are still being read
    sigLoaded = Signal(object)  # LoadedSession, once every view has it and its first unit is selected
    sigLoadFailed = Signal(str, str)  # path, message
    sigUnitSelected = Signal(object)  # CompileUnit or None
    sigLocationRequested = Signal(str, int)  # file, line
    sigKernelSelected = Signal(object, object)  # CompileUnit, Kernel

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.loaded: LoadedSession | None = None
        self._views: list[Callable[[LoadedSession], Iterator | None]] = []
        self._opened = 0  # sessions set so far: a handing of an older one than the last stops
        self.handing = False  # a session is on its way to the views: some still show the previous one
        self._opens = 0  # opens started: the events of an older one than the last are dropped
        self._carrier: _Carrier | None = None  # the latest open's, while its first view is being shown
        self.selection = Selection()  # the rules live there; this model turns its changes into signals
        self.selection.subscribe(self._on_selection)

    @property
    def unit(self) -> CompileUnit | None:
        return self.selection.unit

    @property
    def kernel(self) -> Kernel | None:
        return self.selection.kernel

    def open(self, source: Source, dask: DaskTarget | None = None) -> None:
        """Load `source` on a worker (core/loading.load_session); its events come back as signals, on
        this thread, until a newer open starts: a big job's overview (sigOverview), a big log's preview
        and then the whole session (each handed to the views, then sigLoaded), or sigLoadFailed."""
        self._opens += 1
        number = self._opens
        self._release_worker()  # a first view the views will not finish taking: its worker need not wait
        self.sigOpening.emit(str(source.path))
        carrier = self._carrier = _Carrier(self)
        carrier.sigEvent.connect(lambda event: self._arrived(event, number, carrier))

        def failed(message: str, _traceback: str) -> None:
            carrier.deleteLater()
            if number == self._opens:
                self.load_failed(source.path, message)

        run_in_background(lambda: load_session(source, carrier.send, dask), lambda _loaded: carrier.deleteLater(),
                          failed, self)

    def _arrived(self, event: LoadEvent, number: int, carrier: _Carrier) -> None:
        if number != self._opens:  # superseded: what it holds is let go, its worker goes on at once
            if isinstance(event, (Preview, Loaded)):
                close_session(event.loaded.session)
            carrier.taken.set()
            return
        if isinstance(event, Overview):
            self.sigOverview.emit(event.report)
        elif isinstance(event, (Preview, Loaded)):
            self.set_loaded(event.loaded)
        self.sigLoadEvent.emit(event)
        if isinstance(event, ReadProgress):
            carrier.taken.set()
        elif isinstance(event, Overview):
            carrier.next_turn()
        elif isinstance(event, Loaded):
            self._carrier = None
        # a preview's worker goes on once every view has it (`_handing`, at sigLoaded)

    def _release_worker(self) -> None:
        if self._carrier is not None:
            self._carrier.taken.set()
            self._carrier = None

    def load_failed(self, path: Path, message: str) -> None:
        self.sigLoadFailed.emit(str(path), message)

    def on_each_session(self, take: Callable[[LoadedSession], Iterator | None]) -> None:
        """`take` (a view's) gets each opened session, in a turn of the event loop of its own; views
        take it in the order they asked. A view whose taking is long returns an iterator (a generator
        `take`): each of its steps then gets a turn of its own."""
        self._views.append(take)

    def set_loaded(self, loaded: LoadedSession) -> None:
        if self.loaded is not None and self.loaded.session is not loaded.session:
            close_session(self.loaded.session)  # a bundle's extracted folder goes with it
        self.loaded = loaded
        self._opened += 1
        self.handing = True
        in_turns(self._handing(loaded, self._opened), self)

    def _handing(self, loaded: LoadedSession, number: int) -> Iterator[None]:
        """The session to each view in a turn of its own (each step of a view's steps too); after the
        last view, the first unit is selected (what follows the selection takes a turn too), then
        sigLoaded emitted. A newer session's handing ends this one; a view that raises stops no other."""
        for take in list(self._views):
            try:
                taken = take(loaded)
                for _step in taken if isinstance(taken, Iterator) else ():
                    yield
                    if number != self._opened:
                        return
            except Exception:  # reported as a slot's exception is
                sys.excepthook(*sys.exc_info())
            yield
            if number != self._opened:
                return
        shown = self.selection.session  # a preview of this log: the unit chosen in it stays chosen
        keep = shown is not None and shown.preview is not None and shown.source == loaded.session.source
        try:
            self.selection.open(loaded.session, self.selection.unit if keep else None)
        except Exception:
            sys.excepthook(*sys.exc_info())
        yield
        if number != self._opened:
            return
        self.handing = False
        self.sigLoaded.emit(loaded)
        if loaded.session.preview is not None and self._carrier is not None:
            self._carrier.next_turn()  # its load's worker reads the rest once this is painted

    def select_unit(self, unit: CompileUnit | None) -> None:
        self.selection.choose_unit(unit)

    def select_compile_id(self, compile_id, rank=None) -> None:
        self.selection.choose_compile_id(compile_id, rank)

    def select_kernel(self, unit: CompileUnit, kernel: Kernel) -> None:
        """Select `kernel` of `unit` in every view (its unit becomes the selected unit too)."""
        self.selection.choose_kernel(unit, kernel)

    def select_kernel_named(self, name: str) -> None:
        self.selection.choose_kernel_named(name)

    def _on_selection(self, change: Change) -> None:
        if change.what == "unit":
            self.sigUnitSelected.emit(change.unit)
        else:
            self.sigKernelSelected.emit(change.unit, change.kernel)

    def show_location(self, file: str | None, line: int | None) -> None:
        if file:
            self.sigLocationRequested.emit(file, line or 0)
