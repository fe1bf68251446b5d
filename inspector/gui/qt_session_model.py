"""The app's one model: the open session, its summary and problems, and the selection every view
follows. Built by a worker off the UI thread; views subscribe to its signals."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import cached_property
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QProgressBar

from inspector.core.analysis.dask_engine import DaskTarget, EngineUnavailable, overview_on_dask
from inspector.core.analysis.issues import Issue
from inspector.core.analysis.divergence_rules import rank_report
from inspector.core.analysis.rank_figures import RankReport, index_ranks, report_so_far
from inspector.core.analysis.session_analysis import SessionAnalysis, analyse
from inspector.core.analysis.source_time import SourceTime
from inspector.core.model.output_code import Kernel
from inspector.core.model.selection import Change, Selection
from inspector.core.model.session import CompileUnit, Session
from inspector.core.numbers import megabytes
from inspector.core.outputs.cached_summary import kernel_counts, session_glance, session_issues
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers import index_cache
from inspector.core.readers.session_loader import close_session, open_session
from inspector.core.readers.session_builder import build_preview_session
from inspector.core.readers.sources import TRACE_LOG, Source, detect
from inspector.core.readers.torch_trace import rank_from_filename
from inspector.gui.code_highlight import compile_lexers
from inspector.core.gc_policy import collector_paused

# A job of rank logs this big takes seconds to read whole: its per-rank overview, from an index the
# ranks' logs are read into in parallel, is shown first. A smaller one opens straight to the Summary.
OVERVIEW_FIRST_BYTES = 32 << 20
# The ranks read in this long are shown while the rest are read (their overview's first rows).
FIRST_RANKS_AFTER_S = 0.3
# A single log this big (never read before) is shown first as a preview: the session of its whole
# records within its first PREVIEW_BYTES, read in ~0.1 s, while the whole log is read (~10 s a GB).
PREVIEW_FIRST_BYTES = 32 << 20
PREVIEW_BYTES = 8 << 20
# A log this big is previewed at a reopen too: its index, read from the cache, and the analysis take
# the first view past 0.5 s (0.49–0.57 s for a 213 MB log, 1.9 s for 1 GB; 0.33 s for 106 MB).
REOPEN_PREVIEW_BYTES = 128 << 20


class LoadedSession:
    """The open session and its analysis, computed in the worker so the UI thread only displays it."""

    def __init__(self, analysis: SessionAnalysis, overview: RankReport | None = None):
        self.analysis = analysis
        self._overview = overview  # the per-rank overview this load showed first, if it did

    def made_ahead(self) -> LoadedSession:
        """What every view reads first beyond `analyse`'s facts, made now (on the worker that calls this):
        the parts of the summary a reopen takes from the index cache, the lanes, the lexers."""
        self.ranks.lanes  # the Ranks tab's lanes
        compile_lexers()  # the Source and Code views highlight the session's code next
        self.glance  # made here, where it costs the UI thread nothing; the dashboard reads it
        self.kernel_counts  # the navigator's
        self.problems  # the Problems list's
        return self

    @property
    def session(self) -> Session:
        return self.analysis.session

    @property
    def preview_extent(self) -> str:
        """How much of its log a preview holds ("first 8 MB of 1,056 MB"; '' for a whole session)."""
        if self.session.preview is None:
            return ""
        read, total = self.session.preview
        return f"first {megabytes(read)} of {megabytes(total)}"

    @property
    def preview_note(self) -> str:
        """What a preview shows, said wherever its figures are ('' for a whole session)."""
        if self.session.preview is None:
            return ""
        return (f"Preview: the whole records in the log's {self.preview_extent}. Every figure covers those "
                "only, and a unit still compiling there shows as cut off; the whole log is being read.")

    @cached_property
    def problems(self) -> list[Issue]:
        """Every problem, worst first; on a reopen, from the index cache."""
        return session_issues(self.analysis)

    @property
    def kernel_time(self) -> SourceTime | None:
        """The one table of kernel time (per unit and call site), None without a profile trace."""
        return self.analysis.kernel_time

    @cached_property
    def ranks(self) -> RankReport:
        """The Ranks tab's report: the analysis's, holding the overview's own figures when they are
        the same, so the tab, which shows the overview meanwhile, sees that its rows stay by identity
        rather than by a comparison of every rank's figures (~15 ms for 1,024 ranks, twice)."""
        report = self.analysis.ranks
        if self._overview is not None and report.figures == self._overview.figures:
            return replace(report, figures=self._overview.figures)
        return report

    @cached_property
    def glance(self) -> Summary:
        """The summary's parts the dashboard shows, typed (the model every output renders); on a reopen,
        from the index cache."""
        return session_glance(self.analysis)

    @cached_property
    def kernel_counts(self) -> dict[CompileUnit, int]:
        """How many kernels each unit holds; on a reopen, from the index cache."""
        return dict(zip(self.session.units, kernel_counts(self.analysis)))

    @cached_property
    def summary(self) -> dict:
        """The summary document (what `summary --json` prints), for exports that want it whole."""
        return summarize(self.analysis)


def load_session(source: Source | Path, progress: Callable[[int, int], None] | None = None,
                 overview: Callable[[RankReport, str], None] | None = None, dask: DaskTarget | None = None,
                 preview: Callable[[LoadedSession], None] | None = None) -> LoadedSession:
    """Runs on a worker thread, on a source the window detected (a path is detected here). For a big
    distributed job, `overview` first gets the per-rank overview from the index (seconds before the
    whole job is read) and where it was read: on the Dask cluster `dask` names when one is set and can be
    reached, else on this machine (and why). For a big single log, `preview` first gets the session
    of its first records (`PREVIEW_BYTES`). The cyclic garbage collector is paused meanwhile, the
    overview's reading too: a full collection over the hundreds of thousands of objects a big job
    makes holds the GIL for 60+ ms, which the UI thread would feel as a freeze. The session's objects
    are then frozen out of later collections."""
    source = source if isinstance(source, Source) else detect(source)
    shown = None
    with collector_paused():
        if overview is not None and source.is_rank_logs:
            try:
                logs = sorted(source.files, key=_in_rank_order)  # the ranks read first are 0, 1, 2…
                if len(logs) > 1 and sum(log.stat().st_size for log in logs) >= OVERVIEW_FIRST_BYTES:
                    report, where = _rank_overview(logs, dask, _FirstRanks(len(logs), overview))
                    report.lanes  # made here, not on the UI thread that draws them
                    overview(report, where)
                    shown = report
            except Exception:  # the overview only saves waiting: the whole read below says what is wrong
                pass
        if preview is not None and _worth_a_preview(source):
            try:
                preview(LoadedSession(analyse(build_preview_session(source.files[0], source.path, PREVIEW_BYTES)))
                        .made_ahead())
            except Exception:  # as the overview: the whole read says what is wrong
                pass
        return LoadedSession(analyse(open_session(source, progress)), shown).made_ahead()


def _worth_a_preview(source: Source) -> bool:
    """A single log big enough to take seconds to read, not opened before, or so big that even its
    reopen takes seconds. A reopen reads its index from the cache: tried with a preview, the 106 MB
    GPT-2 log's first view came ~0.4 s sooner but the whole ~0.3 s later, with longer UI stalls (50–65
    ms against 33–39 ms, 2026-12-06); without one, a reopen of it grown to 1 GB showed nothing for 1.9 s."""
    if source.kind is not TRACE_LOG:
        return False
    try:
        size = source.files[0].stat().st_size
        return size >= PREVIEW_FIRST_BYTES and (size >= REOPEN_PREVIEW_BYTES or not index_cache.has_log(source.files[0]))
    except OSError:
        return False


def _rank_overview(logs: list[Path], dask: DaskTarget | None, first: _FirstRanks) -> tuple[RankReport, str]:
    """The per-rank report and where it was read; read on this machine, the ranks read in the first
    FIRST_RANKS_AFTER_S are shown `first`."""
    if dask:
        try:
            cluster = overview_on_dask(logs, dask)
            return cluster.report, cluster.said(len(logs))
        except EngineUnavailable as error:
            return rank_report(index_ranks(logs, start_method="spawn", read_so_far=first)), f"read on this machine: {error}"
    return rank_report(index_ranks(logs, start_method="spawn", read_so_far=first)), ""


def _in_rank_order(log: Path) -> tuple:
    rank = rank_from_filename(log)
    return (rank is None, rank or 0, log.name)


class _FirstRanks:
    """Shows, once, the ranks of a job read in its first FIRST_RANKS_AFTER_S, if some are still being
    read then: the first open of a 256-rank job's 352 MB showed nothing for ~0.9 s."""

    def __init__(self, logs: int, overview: Callable[[RankReport, str], None]):
        self._logs, self._overview = logs, overview
        self._due: float | None = time.perf_counter() + FIRST_RANKS_AFTER_S  # None once shown

    def __call__(self, figures: tuple) -> None:
        if self._due is not None and time.perf_counter() >= self._due:
            self._due = None
            report = report_so_far(figures, self._logs)
            report.lanes  # made here, not on the UI thread that draws them
            self._overview(report, "")


# When the UI thread has not yet taken the worker's last progress this long after it was sent, the
# worker sleeps GIVE_WAY_S before going on. A worker reading logs lets go of the GIL at every file
# operation and takes it straight back, and a thread that waits for the GIL starts its wait over each
# time it changes hands (CPython's convoy effect): the UI thread, painting or ticking, waited 40–60 ms
# for it while a job's cached indexes were read, a fingerprint of a few reads per log.
UI_BEHIND_S = 0.012
GIVE_WAY_S = 0.002
# The worker waits, at most this long, for the UI thread to draw a big job's overview before it goes
# on to read the details: drawn while the worker read, the Ranks table and lanes waited on the GIL
# (up to ~80 ms in all, against ~25 ms alone).
OVERVIEW_DRAWN_WAIT_S = 0.5


class LoadProgress(QObject):
    """What the load worker has got so far, for the UI thread: how much of the logs it has read,
    shown on `bar` (a determinate bar with megabytes while bytes are read, an indeterminate one while
    what was read is analysed), and a big job's per-rank overview (`sigOverview`). A worker whose
    progress the UI thread is behind on gives way to it a moment (UI_BEHIND_S)."""

    sigBytes = Signal(object, object)  # done, total (Python ints: a log may pass 2 GB)
    sigOverview = Signal(object, str)  # RankReport, where it was read ('' on this machine, as usual)
    sigPreview = Signal(object)  # LoadedSession of a big log's first records, while the whole is read

    def __init__(self, bar: QProgressBar, parent: QObject | None = None):
        super().__init__(parent)
        self.bar: QProgressBar | None = bar  # None once detached
        self._unseen_since: float | None = None  # when the progress the UI thread has not shown yet was sent
        # the overview or the preview is on screen: the worker waits for it (a plain event, set even
        # after this object is gone)
        self.drawn = threading.Event()
        self.sigBytes.connect(self._show)  # queued: `report` and `overview` run on the worker

    def report(self, done: int, total: int) -> None:
        sent = self._unseen_since
        if sent is not None and time.perf_counter() - sent > UI_BEHIND_S:
            time.sleep(GIVE_WAY_S)  # asleep, the worker leaves the GIL to the UI thread
        if sent is None:
            self._unseen_since = time.perf_counter()
        self.sigBytes.emit(done, total)

    def overview(self, report: RankReport, where: str) -> None:
        self.drawn.clear()
        self.sigOverview.emit(report, where)
        self.drawn.wait(OVERVIEW_DRAWN_WAIT_S)

    def preview(self, loaded: LoadedSession) -> None:
        """A big log's first records, then a wait (OVERVIEW_DRAWN_WAIT_S at most) until every view shows
        them: read meanwhile, a reopened 2 GB log's cached index held the GIL the views needed."""
        self.drawn.clear()
        self.sigPreview.emit(loaded)
        self.drawn.wait(OVERVIEW_DRAWN_WAIT_S)

    def after_drawing(self) -> None:
        """Let the worker go on once what the overview's slot asked to repaint is painted (the UI thread
        calls this at the end of that slot: the repaint was posted before it), or at once for a preview
        that is not shown (its open was superseded)."""
        QTimer.singleShot(0, self, self.drawn.set)

    def detach(self) -> None:
        """A newer open has the bar now: this (superseded) load no longer moves it."""
        self.bar = None

    def _show(self, done: int, total: int) -> None:
        self._unseen_since = None
        if self.bar is None:
            return
        if total <= 0 or done >= total:
            self.bar.setRange(0, 0)
            return
        self.bar.setRange(0, 1000)
        self.bar.setValue(int(1000 * done / total))
        self.bar.setFormat(f"%p% of {megabytes(total)}")


_DONE = object()  # what a view's exhausted steps give


class QtSessionModel(QObject):
    """Views take each session through `on_each_session`, one view per turn of the event loop, so the
    UI thread answers the user between them (on a 1,024-rank job the views together took ~150 ms, one
    freeze, when they all took it in one signal). Then the session's first unit is selected, and
    `sigLoaded` says the session is open and every view shows it."""

    sigOpening = Signal(str)  # path: an open starts (what a view keeps for the open under way is dropped)
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
        self.selection = Selection()  # the rules live there; this model turns its changes into signals
        self.selection.subscribe(self._on_selection)

    @property
    def unit(self) -> CompileUnit | None:
        return self.selection.unit

    @property
    def kernel(self) -> Kernel | None:
        return self.selection.kernel

    def opening(self, path: Path) -> None:
        self.sigOpening.emit(str(path))

    def show_overview(self, report: RankReport) -> None:
        """A big job's per-rank overview, before its details (`set_loaded`) arrive."""
        self.sigOverview.emit(report)

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
        self._hand_on(loaded, self._opened, 0)

    def _hand_on(self, loaded: LoadedSession, number: int, view: int, steps: Iterator | None = None) -> None:
        """The session to the view at `view` (or the next of its `steps`), and what follows in the
        next turn; after the last view, the first unit is selected (what follows the selection takes
        a turn too), then sigLoaded emitted. A newer session's handing ends this one."""
        if number != self._opened:
            return
        if view > len(self._views):
            self.handing = False
            self.sigLoaded.emit(loaded)
            return
        if view == len(self._views):
            QTimer.singleShot(0, self, lambda: self._hand_on(loaded, number, view + 1))
            shown = self.selection.session  # a preview of this log: the unit chosen in it stays chosen
            keep = shown is not None and shown.preview is not None and shown.source == loaded.session.source
            self.selection.open(loaded.session, self.selection.unit if keep else None)
            return
        more = False  # this view has steps still to take
        try:
            if steps is None:
                taken = self._views[view](loaded)
                steps = taken if isinstance(taken, Iterator) else None
            more = steps is not None and next(steps, _DONE) is not _DONE
        finally:  # a view that raises stops no other
            QTimer.singleShot(0, self, lambda: self._hand_on(loaded, number, view, steps) if more
                              else self._hand_on(loaded, number, view + 1))

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
