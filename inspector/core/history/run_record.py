"""One run as the history keeps it: who, when, where and what of a run, and the figures of its
summary (compile time, breaks, recompiles, caches, kernels, S with its interval, memory), made from
the typed summary the other outputs render, so the history never counts a thing differently."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from inspector import __version__
from inspector.core.analysis.comparison import Speedup, timed_rounds
from inspector.core.analysis.figures import BreakSite
from inspector.core.history.git_work_tree import is_sha
from inspector.core.history.log_digests import content_digest
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session
from inspector.core.outputs.summary_model import CacheCount, Summary, Unit
from inspector.core.readers import index_cache
from inspector.core.readers.safe_files import check_regular, is_readable_file

FOLDER_FILES = 10_000  # a run's folder is read this far for its identity
GATE_PASSED, GATE_FAILED = "pass", "fail"  # what `check --history` said of a run
UNKNOWN_HOST = "unknown"  # the store's host of a run whose record does not say


@dataclass(frozen=True)
class CauseRow:
    """A recompile cause of the run, worded without the values that changed ("forward: x size dim 0"),
    so the same cause in two runs is the same text."""

    cause: str
    count: int


@dataclass(frozen=True)
class RunRecord:
    """A run in the history. `identity` is a digest of what the run is (its manifest and the content
    of its logs: two opens of one run are one run); `run_id` is the store's number for it (None until
    stored); `host` is where the run ran ("unknown" for a log, which does not say)."""

    identity: str
    run_at: float  # when the run ended (a capture's end, a log's last write), seconds since the epoch
    recorded_at: float
    host: str
    kind: str
    source: str
    script: str | None  # the captured script, else the file of the run's first compiled frame
    git_commit: str | None
    torch_version: str | None
    triton_version: str | None
    tool_version: str
    mode: str | None
    options: dict = field(default_factory=dict)
    complete: bool = False
    compile_s: float | None = None
    units: int = 0
    breaks: int = 0
    recompiles: int = 0
    kernels: int = 0
    speedup: dict | None = None  # the summary's `speedup` (state, value, low, high, rounds, reason)
    t_eager_s: float | None = None
    t_compiled_s: float | None = None
    memory_mb: float | None = None  # the compiled run's high-water mark
    rounds: tuple[tuple[float, float], ...] = ()  # (eager, compiled) s per call of each timing round
    # the summary's own records, with the fields the history keeps: site location, reason and count; a
    # unit's id, rank, name, location, status, compile time and kernels; each cache's hits, misses, bypasses
    sites: tuple[BreakSite, ...] = ()
    causes: tuple[CauseRow, ...] = ()
    unit_rows: tuple[Unit, ...] = ()
    caches: Mapping[str, CacheCount] = field(default_factory=dict)
    gate: str | None = None  # GATE_PASSED / GATE_FAILED once `check --history` judged it, else None
    run_id: int | None = None

    @property
    def break_sites(self) -> int:
        return len(self.sites)

    @property
    def cache_lookups(self) -> tuple[int, int]:
        """(hits, lookups) of the FX graph cache: the cache the summary's hit rate is stated for."""
        fx_graph = self.caches.get("fx_graph") or CacheCount()
        return fx_graph.hit, fx_graph.hit + fx_graph.miss

    @property
    def cache_hit_rate(self) -> float | None:
        """FX graph cache hits over lookups, as the summary's verdict (`cache_hit_rate`) states it; None
        when nothing was looked up."""
        hits, lookups = self.cache_lookups
        return hits / lookups if lookups else None

    @property
    def speedup_estimate(self) -> Speedup | None:
        try:  # a store is shared: a row another tool wrote is read, never trusted
            return Speedup.from_state(self.speedup) if self.speedup else None
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    @property
    def timing(self) -> RunResults | None:
        """The run's timing rounds as the comparison reads them (None: not timed in rounds)."""
        if not self.rounds:
            return None
        return RunResults.from_state({"timing": {"rounds": [{"eager_s": eager, "compiled_s": compiled}
                                                            for eager, compiled in self.rounds]}})

    @property
    def label(self) -> str:
        """How a person names the run: its number in the store, else where it was read from."""
        return f"run #{self.run_id}" if self.run_id is not None else self.source

    def get_state(self) -> dict:
        return {"run": self.run_id, "run_at": self.run_at, "recorded_at": self.recorded_at, "host": self.host,
                "kind": self.kind, "source": self.source, "script": self.script, "git_commit": self.git_commit,
                "torch_version": self.torch_version, "triton_version": self.triton_version,
                "tool_version": self.tool_version, "mode": self.mode, "options": self.options,
                "complete": self.complete, "compile_s": self.compile_s, "units": self.units, "breaks": self.breaks,
                "break_sites": [{"location": site.location, "reason": site.reason, "count": site.count}
                                for site in self.sites], "recompiles": self.recompiles,
                "recompile_causes": [vars(row) for row in self.causes], "kernels": self.kernels,
                "cache": {name: {"hit": count.hit, "miss": count.miss, "bypass": count.bypass}
                          for name, count in self.caches.items()},
                "cache_hit_rate": self.cache_hit_rate, "speedup": self.speedup, "t_eager_s": self.t_eager_s,
                "t_compiled_s": self.t_compiled_s, "memory_mb": self.memory_mb, "timing_rounds": len(self.rounds),
                "gate": self.gate, "identity": self.identity}


def kept_site(location: str, reason: str, count: int, kind: str, code: str | None) -> BreakSite:
    """A break site with what the history keeps of it: where, why, what kind of break, its line of code
    and how often."""
    return BreakSite(location, reason, kind, count, code, (), ())


def run_identity(session: Session, settled_only: bool = True) -> str | None:
    """A digest of what the run is, never of where it lies: a capture's manifest (started, ended, host,
    script) and the content of its logs, so two opens of one run — a bundle extracted into a new
    temporary folder each time, a folder copied or moved — are one run. None for a session still
    changing — a preview, a capture not ended, and (with `settled_only`) a log written in the last
    seconds, recorded once it settles; `check` keeps a log at once (its producer has exited)."""
    if session.preview is not None:
        return None
    manifest = session.manifest
    if session.settled_by_manifest and (manifest is None or manifest.ended is None):
        return None
    files = [Path(rank.log_path) for rank in session.ranks if rank.log_path is not None]
    if not files and not session.settled_by_manifest:  # a folder of dumps (TORCH_COMPILE_DEBUG), else the file
        source = Path(session.source)
        files = _folder_files(source) if source.is_dir() and not source.is_symlink() else [source]
    try:
        stats = [check_regular(file) for file in files]
        if settled_only and not session.settled_by_manifest and any(
                time.time() - stat.st_mtime < index_cache.SETTLE_SECONDS for stat in stats):
            return None  # a log still being written: its figures are not the run's yet
        digests = sorted(content_digest(file) for file in files)
    except OSError:
        return None
    about = None
    if manifest is not None:
        about = [_number(manifest.started), _number(manifest.ended), run_host(session), manifest.script]
    identity = [session.kind, about, digests]
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()


def _folder_files(folder: Path) -> list[Path]:
    """The regular files in `folder` and below (links, FIFOs and devices left out), the first
    FOLDER_FILES of them by name: what a folder run is made of."""
    found = []
    for place, folders, names in os.walk(folder):
        folders.sort()
        found += [Path(place) / name for name in sorted(names)
                  if not os.path.islink(Path(place) / name) and is_readable_file(Path(place) / name)]
        if len(found) >= FOLDER_FILES:
            break
    return found[:FOLDER_FILES]


def run_host(session: Session) -> str | None:
    """Where the run ran, as its own record says: the capture manifest's machine, the recorder's
    header; None (unknown) for a log, which does not say — never the machine reading it."""
    if session.manifest is not None:
        host = session.manifest.host
        node = host.get("node") if isinstance(host, Mapping) else host
        return node[:255] if isinstance(node, str) and node else None
    return session.host


def run_triton(session: Session) -> str | None:
    """The Triton version the run's own record states: a recorder's header, else torch's compilation
    metrics (`triton_version`, empty where no Triton was installed); None when neither says."""
    if session.triton_version:
        return session.triton_version
    for unit in session.units:
        version = unit.metrics.get("triton_version")
        if isinstance(version, str) and version.strip():
            return version.strip()[:100]
    return None


def run_commit(session: Session) -> str | None:
    """The git commit the capture recorded for its script (a log says none). Read from the manifest
    only: the folders a log names may be anyone's, and reading them could hang (a FIFO as .git/HEAD)."""
    commit = session.manifest.git_commit if session.manifest is not None else None
    return commit if isinstance(commit, str) and is_sha(commit) else None


def record_of(session: Session, summary: Summary, identity: str, now: float) -> RunRecord:
    """The history's record of a run, from its session (who, when, what) and its typed summary."""
    manifest = session.manifest
    script = manifest.script if manifest and manifest.script else _first_frame_file(summary)
    settings = dict(manifest.settings or {}) if manifest else {}
    figures = {figure.key: figure.value for figure in summary.verdict}
    memory = (summary.run.memory or {}).get("compiled") if summary.run else None
    return RunRecord(
        identity=identity, run_at=_run_at(session, now), recorded_at=now, host=run_host(session) or UNKNOWN_HOST,
        kind=summary.kind, source=str(Path(session.source).resolve()),
        script=str(Path(script).resolve()) if script else None,
        git_commit=run_commit(session), torch_version=summary.torch_version,
        triton_version=run_triton(session), tool_version=__version__,
        mode=settings.pop("mode", None), options=settings, complete=summary.complete,
        compile_s=summary.compile_time.total_s, units=len(summary.units), breaks=len(summary.graph_breaks),
        recompiles=len(summary.recompiles), kernels=summary.kernels.total,
        speedup=summary.speedup.get_state() if summary.speedup and summary.speedup.value is not None else None,
        t_eager_s=_number(figures.get("t_eager")), t_compiled_s=_number(figures.get("t_execute")),
        rounds=tuple(timed_rounds(session.results)),
        memory_mb=_peak_mb(memory),
        sites=tuple(kept_site(site.location, site.reason, site.count, site.kind, site.code)
                    for site in summary.break_sites),
        causes=tuple(CauseRow(_cause(group), group.count) for group in summary.recompile_groups),
        unit_rows=tuple(Unit(compile_id=unit.compile_id, rank=unit.rank, shown=unit.shown, location=unit.location,
                             status=unit.status, compile_time_s=unit.compile_time_s, kernels=unit.kernels)
                        for unit in summary.units),
        caches={name: CacheCount(hit=count.hit, miss=count.miss, bypass=count.bypass)
                for name, count in summary.cache.items()})


def _cause(group) -> str:
    """A recompile group worded as a cause: the function, its file and what changed — not the values,
    nor the line, which moves when a line is added above it."""
    where = f" ({Path(group.file).name})" if group.file else ""
    what = " ".join(part for part in (group.shown_subject, group.aspect) if part) or group.guard
    return f"{group.shown}{where}: {what}"


def _first_frame_file(summary: Summary) -> str | None:
    """A log knows no script: the file of its first compiled frame names what ran."""
    for unit in summary.units:
        if unit.location:
            return unit.location.rsplit(":", 1)[0] if ":" in unit.location else unit.location
    return None


def _run_at(session: Session, now: float) -> float:
    """When the run ran, as its own record says: a capture's manifest (its end, else its start), the
    recorder's lines (`ran_at`), else torch's compile metrics (the last compile's start plus its
    duration). The logs' modification time only where the record says none: a log copied or touched
    has the time of the copy, and would pass for the newest run (and `check --history`'s baseline)."""
    manifest = session.manifest
    stated = [_number(manifest.ended), _number(manifest.started)] if manifest is not None else []
    stated += [_number(session.ran_at), _last_compile(session)]
    recorded = next((moment for moment in stated if moment is not None), None)
    if recorded is not None:
        return recorded
    times = []
    for rank in session.ranks:
        try:
            times.append(Path(rank.log_path).stat().st_mtime) if rank.log_path else None
        except OSError:
            pass
    return max(times) if times else now


def _last_compile(session: Session) -> float | None:
    """When the run's last compile ended, in seconds since the epoch, from torch's compile metrics
    (`start_time` or `start_time_us`, plus `entire_frame_compile_time_s`), forward and backward; None
    where no unit has a start time. The metrics are what the session already holds: no log is read."""
    ends = []
    for unit in session.units:
        for metrics in (unit.metrics, unit.backward_metrics):
            start = _number(metrics.get("start_time"))
            if start is None and _number(metrics.get("start_time_us")) is not None:
                start = metrics["start_time_us"] / 1e6
            if start is not None:
                ends.append(start + (_number(metrics.get("entire_frame_compile_time_s")) or 0.0))
    return max(ends) if ends else None


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _peak_mb(memory) -> float | None:
    """The compiled run's high-water mark: the device's where it was measured, else the process's."""
    if not isinstance(memory, dict):
        return None
    marks = [(key, _number(value)) for key, value in memory.items() if key.endswith("_mb")]
    marks = [(key, value) for key, value in marks if value is not None]
    device = [value for key, value in marks if not key.startswith("cpu_")]
    return (device or [value for _, value in marks] or [None])[0]
