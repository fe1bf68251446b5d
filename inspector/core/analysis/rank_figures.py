"""Distributed runs, the figures of each rank: small per-rank figures (units, breaks, recompiles,
cache, compile time, time to the first collective, with a fingerprint of each unit), the report that
holds them with the divergence findings (divergence_rules.py) and their lanes (rank_lanes.py).

The figures of one rank are small and picklable, so `index_ranks` can map one log per task over any
`concurrent.futures` executor (a local process pool by default, a Dask `distributed` client's
executor for logs on a shared filesystem) and keep only the index; graphs and guards are read again
from the logs when a view asks for details.

Stragglers: a rank is one when its figure exceeds median + max(K·1.4826·MAD, half the median, 1 s)
over all ranks with that figure (`outliers.high_outliers`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector.core.analysis.figures import measured_compile_s
from inspector.core.analysis.outliers import rule
from inspector.core.analysis.rank_lanes import rank_timeline
from inspector.core.analysis.timeline import Timeline
from inspector.core.model.compile_id import CompileId
from inspector.core.model.fx_graph_text import parse_fx_graph
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, Rank, Session, UnitStatus
from inspector.core.readers import json_codec
from inspector.core.readers.session_builder import build_rank, indexed_log

if TYPE_CHECKING:
    from concurrent.futures import Executor

STRAGGLER_MIN_S = 1.0
STRAGGLER_MIN_SHARE = 0.5
STRAGGLER_RULE = rule(STRAGGLER_MIN_SHARE, f"{STRAGGLER_MIN_S:g} s")
COLLECTIVE_SCHEDULE = "inductor_collective_schedule"
RUNTIME_AND_TENSOR_META = "inductor_runtime_and_tensor_meta"  # per graph: ops with shapes and estimated runtimes
EXECUTOR_BATCH = 8  # rank logs per task on a given executor
_COLLECTIVE_OP = re.compile(r"(?:_c10d_functional|c10d_functional|torch\.distributed|c10d)\.(\w+)")
# Read problems that mean a rank's log is not whole.
DAMAGE = ("truncated", "unreadable_file", "empty_file", "md5_mismatch", "bad_json")


@dataclass(frozen=True)
class UnitPrint:
    """What is compared across ranks for one compile unit."""

    compile_id: str
    outcome: str  # ok | failed | cut: a rank whose compile failed where others did not differs
    graph: str | None  # structural fingerprint of the Dynamo graph (ops, targets, wiring; no names)
    graph_ops: int | None
    guards: tuple[str, ...]  # the guard failures that caused this recompile
    cache: tuple[str, ...]  # "fx_graph hit", ... in log order
    collectives: tuple[str, ...]  # collective kernels in scheduled (or graph) order
    tensor_meta: tuple[tuple[str, str], ...]  # per op of Inductor's runtime/tensor-meta record: (name, digest)
    runtime_ns: float | None  # Inductor's estimated runtime of the graph (sum over its ops)
    compile_time_s: float | None
    start_s: float | None
    end_s: float | None
    function: str | None = None  # the frame's function: what a compile id names on this rank
    frame: str | None = None  # the frame's code (file name:line:function): the same on every rank, whatever its id


@dataclass(frozen=True)
class RankFigures(Record):
    """One rank at a glance; small enough to hold for thousands of ranks. The summary's per-rank row: a
    row read back has its unit ids (`compile_ids`) as written, not the units' fingerprints."""

    rank: int | None
    log: str
    units: int
    breaks: int
    recompiles: int
    cache_hits: int
    cache_misses: int
    failed: int
    compile_time_s: float | None
    first_collective_s: float | None  # from the rank's first compile to the end of the first compile with a collective
    damage: Mapping[str, int]  # read problems that mean the log is not whole
    unit_prints: tuple[UnitPrint, ...] = live()
    executed: tuple[str, ...] | None = None  # the compile ids of the graphs in the order they ran; None: not recorded

    @property
    def label(self) -> str:
        return f"rank {self.rank}" if self.rank is not None else self.log

    def get_state(self) -> dict:
        """`executed` only where the log recorded it (most do not), then the compile ids of its units."""
        figures = super().get_state()
        if "compile_ids" not in figures:
            figures["compile_ids"] = [unit.compile_id for unit in self.unit_prints]
        return figures


@dataclass(frozen=True)
class Finding:
    """One way some ranks differ from the rest: what the analysis finds is what the summary's per-rank
    part writes and decodes (its ranks in words computed, not stored)."""

    kind: str  # logs | compile_ids | recompiles | graphs | guards | cache | collectives | tensor_meta | outcome |
    #            cache_pattern | collective_sequence | execution_order | runtime | straggler
    ranks: tuple[int | None, ...]
    message: str
    compile_ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"rank{'s' if len(self.ranks) > 1 else ''} {rank_ranges(self.ranks)}: {self.message}"

    @property
    def ranks_text(self) -> str:
        return rank_ranges(self.ranks)

    def get_state(self) -> dict:
        return {"kind": self.kind, "ranks": list(self.ranks), "ranks_text": self.ranks_text,
                "compile_ids": list(self.compile_ids), "message": self.message}

    @classmethod
    def from_state(cls, state: dict) -> "Finding":
        return cls(state.get("kind", ""), tuple(state.get("ranks") or ()), state.get("message", ""),
                   tuple(state.get("compile_ids") or ()))


def stragglers_in(findings) -> set[int | None]:
    """The ranks the straggler rule named: the one reading of it, for the analysis's report and for a
    summary's per-rank part read back."""
    return {rank for finding in findings if finding.kind == "straggler" for rank in finding.ranks}


@dataclass(frozen=True)
class RankReport(Record):
    """The ranks' figures and how they differ: the summary's per-rank part (`divergence` there holds the
    findings, and each group is written with its ranks in words)."""

    figures: tuple[RankFigures, ...]
    findings: tuple[Finding, ...]
    groups: tuple[tuple[int | None, ...], ...]  # ranks whose every compared fact agrees, largest group first
    unread: int = live(0)  # logs of the job not read yet: the ranks read so far, compared once every one is in

    def stragglers(self) -> set[int | None]:
        return stragglers_in(self.findings)

    @cached_property
    def lanes(self) -> Timeline:
        """One lane per rank, each from its own first compile (`rank_timeline`), made once: the app's
        load worker makes it, so the UI thread only draws it (docs/benchmarks.md, "The 50 ms stall target
        met")."""
        return rank_timeline(self)

    def lines(self) -> list[str]:
        """The report as a person reads it: which ranks agree, then each difference."""
        if self.unread:
            return [f"{len(self.figures)} of {len(self.figures) + self.unread} ranks read so far: "
                    "they are compared once every rank is in"]
        if len(self.figures) < 2:
            return []
        agree = self.groups[0] if self.groups else ()
        lines = [f"ranks {rank_ranges(agree)} agree" if len(agree) > 1 else "no two ranks agree in everything"]
        lines += [f"{finding}" for finding in self.findings]
        if not self.findings:
            lines[0] = f"all {len(self.figures)} ranks agree"
        return lines

    def get_state(self) -> dict:
        state = {"figures": [figures.get_state() for figures in self.figures],
                 "divergence": [finding.get_state() for finding in self.findings],
                 "groups": [{"ranks": list(group), "ranks_text": rank_ranges(group)} for group in self.groups],
                 "straggler_rule": STRAGGLER_RULE, **self.extra}
        return {key: state[key] for key in dict.fromkeys((*self.order, *state)) if key in state}

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> RankReport:
        return cls(tuple(RankFigures.from_state(row) for row in state.get("figures") or ()),
                   tuple(Finding.from_state(finding) for finding in state.get("divergence") or ()),
                   tuple(tuple(group.get("ranks") or ()) for group in state.get("groups") or ()),
                   extra={key: value for key, value in state.items() if key not in _REPORT_KEYS}, order=tuple(state))


_REPORT_KEYS = ("figures", "divergence", "groups")


# --- figures of one rank ----------------------------------------------------------------------------

def rank_figures(rank: Rank, damage: dict[str, int] | None = None, compared: bool = True) -> RankFigures:
    """The figures and unit fingerprints of one rank (reads each unit's Dynamo graph text). A rank
    not `compared` with others gets no graph fingerprints: they parse every graph, for nothing."""
    units = rank.units
    prints = tuple(_unit_print(unit, compared) for unit in units)
    events = [event for unit in units for event in unit.cache_events]
    counts = damage if damage is not None else rank.problems.counts
    return RankFigures(
        rank=rank.rank, log=rank.log_path.name if rank.log_path else "",
        units=len(units), breaks=sum(len(unit.breaks) for unit in units),
        recompiles=sum(1 for unit in units if unit.recompile), cache_hits=sum(e.outcome == "hit" for e in events),
        cache_misses=sum(e.outcome == "miss" for e in events),
        failed=sum(unit.status in (UnitStatus.FAILED, UnitStatus.CUT) for unit in units),
        compile_time_s=measured_compile_s(units)[0], first_collective_s=_first_collective(prints),
        damage={kind: int(counts[kind]) for kind in DAMAGE if counts.get(kind)}, unit_prints=prints,
        executed=_executed(rank))


def _executed(rank: Rank) -> tuple[str, ...] | None:
    """The compile ids of the rank's compiled graphs in the order they ran, from torch's
    graph_execution records (None without one). A call torch could not name is `?`."""
    if not rank.executions:
        return None
    calls: list[str] = []
    for artifact in rank.executions:
        try:
            record = json_codec.loads(artifact.text)
        except ValueError:
            continue
        order = record.get("graph_execution_order") if isinstance(record, dict) else None
        for call in order if isinstance(order, list) else ():
            text = call.get("compile_id") if isinstance(call, dict) else None
            compile_id = CompileId.parse(text) if isinstance(text, str) else None
            calls.append(str(compile_id) if compile_id is not None else "?")
    return tuple(calls)


def _unit_print(unit: CompileUnit, fingerprinted: bool = True) -> UnitPrint:
    graph_text = ""
    artifact = unit.graphs.get("dynamo") or next(iter(unit.graphs.values()), None)
    if artifact is not None:
        graph_text = artifact.text
    fingerprint, ops = _graph_fingerprint(graph_text) if graph_text and fingerprinted else (None, None)
    status = unit.status
    outcome = "failed" if status is UnitStatus.FAILED else "cut" if status is UnitStatus.CUT else "ok"
    seconds = unit.metric("entire_frame_compile_time_s")
    start, end = _unit_times(unit, seconds)
    tensor_meta, runtime_ns = _tensor_meta(unit)
    return UnitPrint(
        compile_id=str(unit.compile_id), outcome=outcome, graph=fingerprint, graph_ops=ops,
        guards=tuple(guard.guard for guard in unit.recompile.failed_guards) if unit.recompile else (),
        cache=tuple(f"{event.cache} {event.outcome}" for event in unit.cache_events),
        collectives=_collectives(unit, graph_text), tensor_meta=tensor_meta, runtime_ns=runtime_ns,
        compile_time_s=seconds, start_s=start, end_s=end, function=unit.function,
        frame=(f"{Path(unit.location.file).name}:{unit.location.line}:{unit.location.function}"
               if unit.location else None))


def _unit_times(unit: CompileUnit, seconds: float | None) -> tuple[float | None, float | None]:
    """When the unit compiled (seconds since the epoch): from its compile metrics, else from its first
    to its last traced event. Torch writes the start time and duration only for a frame that compiled:
    a failed compile's metrics lack them and a cut-off one (a crashed rank) has no metrics at all, yet
    both are what a rank's lane must show. The spans are read only then (they are the bulk of a log)."""
    start = unit.metric("start_time")
    if start is None and unit.metric("start_time_us") is not None:
        start = unit.metric("start_time_us") / 1e6
    if start is not None and seconds is not None:
        return start, start + seconds
    events = [time for root in unit.spans for span in root.walk() for time in (span.start_us, span.end_us)
              if time is not None] + [marker.ts_us for marker in unit.markers]
    if not events:
        return start, None
    return (start if start is not None else min(events) / 1e6), max(events) / 1e6


def _graph_fingerprint(text: str) -> tuple[str, int]:
    """A hash of the graph's ops, targets and wiring (inputs as positions), blind to node names, so
    two ranks tracing the same code hash alike."""
    graph = parse_fx_graph(text)
    position = {node.name: index for index, node in enumerate(graph.nodes)}
    digest = hashlib.blake2b(digest_size=12)
    for node in graph.nodes:
        target = "" if node.op == "placeholder" else node.target
        wiring = ",".join(str(position.get(name, -1)) for name in node.inputs)
        digest.update(f"{node.op}|{target}|{wiring}\n".encode())
    return digest.hexdigest(), len(graph.op_nodes)


def _collectives(unit: CompileUnit, graph_text: str) -> tuple[str, ...]:
    """Inductor's collective schedule where the log has one, else the collective ops of the graph."""
    for artifact in unit.artifacts:
        if artifact.name == COLLECTIVE_SCHEDULE:
            try:
                schedule = json_codec.loads(artifact.text)
            except ValueError:
                continue
            if isinstance(schedule, list):
                return tuple(str(name) for name in schedule)
    # a substring test is far cheaper than the pattern
    if "c10d" not in graph_text and "torch.distributed" not in graph_text:
        return ()
    return tuple(match.group(1) for match in _COLLECTIVE_OP.finditer(graph_text))


def _tensor_meta(unit: CompileUnit) -> tuple[tuple[tuple[str, str], ...], float | None]:
    """Inductor's per-graph record of its ops (shapes, dtypes, strides, estimated runtime), as one
    digest per op of all but its runtime (compared across ranks like tlparse does, op by op so a
    finding can name the op) and the graph's estimated runtime."""
    for artifact in unit.artifacts:
        if artifact.name != RUNTIME_AND_TENSOR_META:
            continue
        try:
            record = json_codec.loads(artifact.text)
        except ValueError:
            return (), None
        ops = record.get("ops") if isinstance(record, dict) else None
        if not isinstance(ops, list):
            return (), None
        digests = tuple((str(op.get("name", "?")) if isinstance(op, dict) else "?",
                         hashlib.blake2b(json_codec.dumps(_canonical(_without_runtime(op))), digest_size=8).hexdigest())
                        for op in ops)
        runtimes = [op.get("estimated_runtime_ns") for op in ops if isinstance(op, dict)]
        numbers = [value for value in runtimes if isinstance(value, int | float) and not isinstance(value, bool)]
        return digests, float(sum(numbers)) if numbers else None
    return (), None


def _without_runtime(op):
    """An op's tensor metadata: its record without the runtime estimate (compared on its own)."""
    return {key: value for key, value in op.items() if key != "estimated_runtime_ns"} if isinstance(op, dict) else op


def _canonical(value):
    """Key order fixed, so two ranks writing the same record digest alike."""
    if isinstance(value, dict):
        return {key: _canonical(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def _first_collective(prints: tuple[UnitPrint, ...]) -> float | None:
    starts = [unit.start_s for unit in prints if unit.start_s is not None]
    first = next((unit for unit in prints if unit.collectives), None)
    if not starts or first is None or first.end_s is None:
        return None
    return first.end_s - min(starts)


def _figures_of_log(path: Path) -> RankFigures:
    """One task of the per-rank map: read one log as an index and keep only its figures — from the
    index cache when the job was opened whole before, so a reopened job's overview reads no log.

    Payload checksums are left for when a rank is opened (checking them here, to cache the index
    for the whole read that follows, would about double the time to a big job's overview), except where
    the file ends mid-line (a run cut off): then they are checked now, so the cut shows."""
    log = indexed_log(path, verify_md5=False)
    rank = build_rank(log, Session(source=path, kind="torch_trace"))
    if not log.ends_with_newline:
        log.verify_payloads()
    return rank_figures(rank)


def _figures_of_logs(paths: list[Path]) -> list[RankFigures]:
    return [_figures_of_log(path) for path in paths]


def index_ranks(paths: Iterable[Path], executor: Executor | None = None, start_method: str | None = None,
                read_so_far: Callable[[tuple[RankFigures, ...]], None] | None = None) -> list[RankFigures]:
    """The figures of every rank log, one log per task on `executor` (a local process pool by
    default). Any `concurrent.futures.Executor` works, e.g. `distributed.Client(...).get_executor()`.
    The local pool calls `read_so_far` with the figures of the logs read so far, in order, as each of
    its tasks' logs are in, until the last (the app shows a big job's first ranks while the rest are read).

    `start_method` is how the default pool starts its workers (multiprocessing's default when None).
    The desktop app asks for "spawn": a forked child of a process running Qt threads inherits them
    half-copied. Spawned workers import the caller's main module again, so a script calling this
    with "spawn" needs the `if __name__ == "__main__":` guard."""
    paths = list(paths)
    if executor is not None:  # in batches: a cluster's per-task cost would outweigh a small log (docs/benchmarks.md)
        batches = [paths[start:start + EXECUTOR_BATCH] for start in range(0, len(paths), EXECUTOR_BATCH)]
        return [figures for batch in executor.map(_figures_of_logs, batches) for figures in batch]
    if len(paths) < 4:
        return [_figures_of_log(path) for path in paths]
    import multiprocessing  # here: a summary of one log need not pay for loading the pool's modules
    from concurrent.futures import ProcessPoolExecutor

    workers = min(os.cpu_count() or 1, len(paths))
    figures: list[RankFigures] = []
    chunk = max(1, len(paths) // (8 * workers))
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(start_method)) as pool:
        for one in pool.map(_figures_of_log, paths, chunksize=chunk):
            figures.append(one)
            if read_so_far is not None and len(figures) % chunk == 0 and len(figures) < len(paths):
                read_so_far(tuple(figures))
    return figures


def report_so_far(figures: Iterable[RankFigures], logs: int) -> RankReport:
    """The ranks of a job's `logs` read so far, in rank order, not yet compared (`unread` says so)."""
    figures = tuple(in_rank_order(figures))
    return RankReport(figures, (), (), unread=logs - len(figures))



def in_rank_order(figures: Iterable[RankFigures]) -> list[RankFigures]:
    return sorted(figures, key=lambda f: (f.rank is None, f.rank or 0))


def rank_ranges(ranks: Iterable[int | None]) -> str:
    """0, 1, 2, 3, 5 → '0–3, 5'."""
    ranks = list(ranks)
    numbers = sorted(rank for rank in ranks if rank is not None)
    parts, start, previous = [], None, None
    for number in numbers:
        if start is None:
            start = previous = number
        elif number == previous + 1:
            previous = number
        else:
            parts.append(f"{start}–{previous}" if previous != start else f"{start}")
            start = previous = number
    if start is not None:
        parts.append(f"{start}–{previous}" if previous != start else f"{start}")
    if any(rank is None for rank in ranks):
        parts.append("unnumbered")
    return ", ".join(parts)
