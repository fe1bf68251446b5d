"""The loading pipeline: from a detected input to the session every view shows, as plain events.

One function, `load_session`, holds the whole policy of an open, whoever shows it: whether a big
folder of rank logs first gets its per-rank overview (and the ranks read first before the rest), whether
a big single log is first previewed, which facts are made before a view asks, and the hand-over of the
whole session. It runs on whatever thread calls it (the app's load worker; a test's own thread) and
tells what it has got so far through `on_event`, as the events below, in this order:

    Overview*     (a big job's ranks read first, `report.unread` > 0; then every rank)   per-rank kinds
    Preview       (a big log's first records, the session of its first PREVIEW_BYTES)   previewable kinds
    ReadProgress* (bytes of the whole input read, as they are read)
    Loaded        (the whole session, its facts made: what `load_session` returns too)

A front end turns them into what it shows: the app's `gui/qt_session_model.QtSessionModel` into
signals on the UI thread. Nothing here knows of Qt (the layering of napari's `layers` and `_qt`), so the
policy is tested without a window (tests/test_loading_pipeline.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from operator import attrgetter
from pathlib import Path

from inspector.core.analysis.dask_engine import ClusterOverview, DaskTarget, EngineUnavailable, overview_on_dask
from inspector.core.analysis.divergence_rules import rank_report
from inspector.core.analysis.issues import Issue
from inspector.core.analysis.rank_figures import RankReport, index_ranks, report_so_far
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.source_time import SourceTime
from inspector.core.gc_policy import collector_paused
from inspector.core.model.session import CompileUnit, Session
from inspector.core.numbers import megabytes
from inspector.core.outputs.cached_summary import kernel_counts, session_glance, session_issues
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers import index_cache
from inspector.core.readers.session_builder import build_preview_session
from inspector.core.readers.session_loader import open_session
from inspector.core.readers.sources import Source
from inspector.core.readers.torch_trace import rank_from_filename

# A job of rank logs this big takes seconds to read whole: its per-rank overview, from an index the
# ranks' logs are read into in parallel, is shown first. A smaller one opens straight to the Summary.
OVERVIEW_FIRST_BYTES = 32 << 20
# The ranks read in this long are shown while the rest are read (their overview's first rows).
FIRST_RANKS_AFTER_S = 0.3
# A single log this big (never read before) is shown first as a preview: the session of its whole
# records within its first PREVIEW_BYTES, quick to read, while the whole log is read, which takes seconds
# (docs/benchmarks.md, "The app's first view of a big log: a preview").
PREVIEW_FIRST_BYTES = 32 << 20
PREVIEW_BYTES = 8 << 20
# A log this big is previewed at a reopen too: its index, read from the cache, and the analysis would
# hold its first view back (docs/benchmarks.md, "Every row against every target of issue 26").
REOPEN_PREVIEW_BYTES = 128 << 20


# The facts every view reads as soon as a session arrives, each an attribute of the LoadedSession
# (dotted: of its analysis, of its rank report), made in this order by `analyse` on the pipeline's
# thread (the app's load worker) so that the UI thread only displays them: on a big job, computing
# them there would be a large part of a visible freeze. The Ranks view and the dashboard read `ranks`,
# which fingerprints every unit's graph; the timeline of a many-rank job takes a few hundred ms. The
# issues, the verdict's fusion figures (which parse every graph) and the units' kernel counts are made
# only through `glance`, `kernel_counts` and `issues`, which on a reopen come from the index cache
# (outputs/cached_summary.py) instead.
MADE_AHEAD = ("analysis.compile_time", "analysis.compile_time_per_unit", "analysis.warnings",
              "analysis.kernel_time", "analysis.ranks", "analysis.timeline", "analysis.regions",
              "analysis.notices", "analysis.shapes", "analysis.source_marks",
              "ranks.lanes",  # the Ranks tab's lanes
              "glance",  # the dashboard's part of the summary
              "kernel_counts",  # the navigator's
              "issues")  # the Problems list's


def analyse(session: Session, overview: RankReport | None = None) -> LoadedSession:
    """`session` analysed, every fact of MADE_AHEAD made now, on the calling thread (never the UI's);
    `overview`: the per-rank overview this load showed first, if it did."""
    loaded = LoadedSession(SessionAnalysis(session), overview)
    for fact in MADE_AHEAD:
        attrgetter(fact)(loaded)
    return loaded


class LoadedSession:
    """The open session and its analysis, with what every view reads first (MADE_AHEAD) made by the
    pipeline (on its thread), so a front end only displays it."""

    def __init__(self, analysis: SessionAnalysis, overview: RankReport | None = None):
        self.analysis = analysis
        self._overview = overview  # the per-rank overview this load showed first, if it did

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
    def issues(self) -> list[Issue]:
        """Every issue the Problems list shows, worst first; on a reopen, from the index cache."""
        return session_issues(self.analysis)

    @property
    def kernel_time(self) -> SourceTime | None:
        """The one table of kernel time (per unit and call site), None without a profile trace."""
        return self.analysis.kernel_time

    @cached_property
    def ranks(self) -> RankReport:
        """The Ranks tab's report: the analysis's, holding the overview's own figures when they are
        the same, so the tab, which shows the overview meanwhile, sees that its rows stay by identity
        rather than by a comparison of every rank's figures (twice, for each of a big job's ranks)."""
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


# --- the events ----------------------------------------------------------------------------------
# Each says how long after the load began (`after_s`, monotonic seconds) it was sent.

@dataclass(frozen=True)
class ReadProgress:
    """Bytes of the input read so far (`done` of `total`); done >= total: what was read is analysed."""
    done: int
    total: int
    after_s: float


@dataclass(frozen=True)
class Overview:
    """A big job's per-rank overview, before its details: the ranks read so far (`report.unread` > 0,
    not yet compared), then every rank, and where it was read ('' on this machine, as usual)."""
    report: RankReport
    where: str
    after_s: float


@dataclass(frozen=True)
class Preview:
    """A big log's first records, a session of its own (`loaded.session.preview` says how much)."""
    loaded: LoadedSession
    after_s: float


@dataclass(frozen=True)
class Loaded:
    """The whole session, its first views' facts made."""
    loaded: LoadedSession
    after_s: float


LoadEvent = ReadProgress | Overview | Preview | Loaded


def load_session(source: Source, on_event: Callable[[LoadEvent], None] | None = None,
                 dask: DaskTarget | None = None) -> LoadedSession:
    """The session a detected `source` holds, its first views' facts made. With `on_event`,
    the load is watched: a big job's overview and a big log's preview are sent first, then every
    event above; without it, the whole session is only read (a comparison's second run, a test).

    The cyclic garbage collector is paused meanwhile, the overview's reading too: a full collection over
    the hundreds of thousands of objects a big job makes holds the GIL long enough for a UI thread to
    freeze (docs/benchmarks.md, "The 50 ms stall target met"). The session's objects are then frozen out
    of later collections."""
    started = time.monotonic()
    send = on_event or (lambda _event: None)

    def since() -> float:
        return time.monotonic() - started

    shown = None
    with collector_paused():
        if on_event is not None and _worth_an_overview(source):
            try:
                logs = in_rank_order(source.files)
                first = _FirstRanks(len(logs), lambda report: send(Overview(report, "", since())))
                overview = rank_overview(logs, dask, read_so_far=first)
                overview.report.lanes  # made here, not on the UI thread that draws them
                send(Overview(overview.report, overview.where, since()))
                shown = overview.report
            except Exception:  # the overview only saves waiting: the whole read below says what is wrong
                pass
        if on_event is not None and _worth_a_preview(source):
            try:
                preview = build_preview_session(source.files[0], source.path, PREVIEW_BYTES)
                send(Preview(analyse(preview), since()))
            except Exception:  # as the overview: the whole read says what is wrong
                pass
        progress = (lambda done, total: send(ReadProgress(done, total, since()))) if on_event is not None else None
        loaded = analyse(open_session(source, progress), shown)
    send(Loaded(loaded, since()))
    return loaded


def _worth_an_overview(source: Source) -> bool:
    """A job of several rank logs big enough (OVERVIEW_FIRST_BYTES) to take seconds to read whole."""
    if not source.kind.per_rank or len(source.files) < 2:
        return False
    try:
        return sum(log.stat().st_size for log in source.files) >= OVERVIEW_FIRST_BYTES
    except OSError:
        return False


def _worth_a_preview(source: Source) -> bool:
    """A single log big enough to take seconds to read, not opened before, or so big that even its
    reopen takes seconds. A reopen reads its index from the cache: a preview shows it first a little sooner
    but the whole later, with longer UI stalls, so a reopen is previewed only where, without one, the window
    would show nothing for seconds (docs/benchmarks.md, "The app's first view of a big log")."""
    if not source.kind.previewable:
        return False
    try:
        log = source.files[0]
        size = log.stat().st_size
        return size >= PREVIEW_FIRST_BYTES and (size >= REOPEN_PREVIEW_BYTES or not index_cache.has_log(log))
    except OSError:
        return False


@dataclass(frozen=True)
class RankOverview:
    """A job's per-rank report, where it was read ('' on this machine, else a sentence naming the
    cluster, or why it was not used) and the cluster that read it (None on this machine)."""
    report: RankReport
    where: str
    cluster: ClusterOverview | None = None


def rank_overview(logs: Iterable[Path], dask: DaskTarget | None = None, *, fall_back: bool = True,
                  timeout_s: float | None = None,
                  read_so_far: Callable[[tuple], None] | None = None) -> RankOverview:
    """The per-rank report of a job's logs (the app's first view of a big job, `summary --dask`'s
    whole answer): on the Dask cluster `dask` names when one is set, else on this machine (a local
    process pool, whose `read_so_far` gets the figures read so far). A cluster that cannot be used is
    said in `where` and the logs read here, unless not `fall_back` (the CLI, asked for a cluster,
    says so and stops): then EngineUnavailable is raised."""
    logs = in_rank_order(logs)
    if dask:
        try:
            cluster = overview_on_dask(logs, dask, timeout_s)
            return RankOverview(cluster.report, cluster.said(len(logs)), cluster)
        except EngineUnavailable as error:
            if not fall_back:
                raise
            return RankOverview(_read_here(logs, read_so_far), f"read on this machine: {error}")
    return RankOverview(_read_here(logs, read_so_far), "")


def _read_here(logs: list[Path], read_so_far) -> RankReport:
    # spawned, not forked: a forked child of a process running Qt (or any) threads inherits them half-copied
    return rank_report(index_ranks(logs, start_method="spawn", read_so_far=read_so_far))


def in_rank_order(logs: Iterable[Path]) -> list[Path]:
    """Rank logs by their rank number (0, 1, 2…, so the ranks read first are the first ranks), those
    without one last, by name."""
    def key(log: Path) -> tuple:
        rank = rank_from_filename(log)
        return (rank is None, rank or 0, log.name)
    return sorted(logs, key=key)


class _FirstRanks:
    """Sends, once, the ranks of a job read in its first FIRST_RANKS_AFTER_S, if some are still being
    read then: without it, the first open of a job of hundreds of ranks shows nothing until all are read."""

    def __init__(self, logs: int, send: Callable[[RankReport], None]):
        self._logs, self._send = logs, send
        self._due: float | None = time.monotonic() + FIRST_RANKS_AFTER_S  # None once sent

    def __call__(self, figures: tuple) -> None:
        if self._due is not None and time.monotonic() >= self._due:
            self._due = None
            report = report_so_far(figures, self._logs)
            report.lanes  # made here, not on the UI thread that draws them
            self._send(report)
