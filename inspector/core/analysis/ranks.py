"""Distributed runs: small per-rank figures (units, breaks, recompiles, cache, compile time, time to the
first collective, with a fingerprint of each unit) and a divergence report across ranks — which ranks
compiled other ids, other graphs, recompiled on other guards, hit the cache differently, scheduled
collectives in another order, ran their graphs in another order, or compiled far slower than the rest.

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
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.core.analysis.figures import measured_compile_s
from inspector.core.analysis.outliers import high_outliers, rule
from inspector.core.analysis.timeline import Bar, Timeline
from inspector.core.graphs.graph_diff import diff_graphs
from inspector.core.model.compile_id import CompileId
from inspector.core.model.fx_graph_text import parse_fx_graph
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
RUNTIME_SPREAD = 1.2  # a rank whose estimated runtime of a graph exceeds the median by this factor is named
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
class RankFigures:
    """One rank at a glance; small enough to hold for thousands of ranks."""

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
    damage: dict[str, int]  # read problems that mean the log is not whole
    unit_prints: tuple[UnitPrint, ...] = field(repr=False)
    executed: tuple[str, ...] | None = None  # the compile ids of the graphs in the order they ran; None: not recorded

    @property
    def label(self) -> str:
        return f"rank {self.rank}" if self.rank is not None else self.log

    def to_json(self) -> dict:
        figures = asdict(self)
        del figures["unit_prints"]
        if self.executed is None:  # most logs have no record of it: their figures stay as they were
            del figures["executed"]
        else:
            figures["executed"] = list(self.executed)
        figures["compile_ids"] = [unit.compile_id for unit in self.unit_prints]
        return figures


@dataclass(frozen=True)
class Finding:
    """One way some ranks differ from the rest."""

    kind: str  # logs | compile_ids | recompiles | graphs | guards | cache | collectives | tensor_meta | outcome |
    #            cache_pattern | collective_sequence | execution_order | runtime | straggler
    ranks: tuple[int | None, ...]
    message: str
    compile_ids: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"rank{'s' if len(self.ranks) > 1 else ''} {rank_ranges(self.ranks)}: {self.message}"

    def to_json(self) -> dict:
        return {"kind": self.kind, "ranks": list(self.ranks), "ranks_text": rank_ranges(self.ranks),
                "compile_ids": list(self.compile_ids), "message": self.message}


@dataclass(frozen=True)
class RankReport:
    figures: tuple[RankFigures, ...]
    findings: tuple[Finding, ...]
    groups: tuple[tuple[int | None, ...], ...]  # ranks whose every compared fact agrees, largest group first
    unread: int = 0  # logs of the job not read yet: the ranks read so far, compared once every one is in

    def stragglers(self) -> set[int | None]:
        return {rank for finding in self.findings if finding.kind == "straggler" for rank in finding.ranks}

    @cached_property
    def lanes(self) -> Timeline:
        """One lane per rank, each from its own first compile (`rank_timeline`), made once: the app's
        load worker makes it, so the UI thread only draws it (~25 ms of it for 1,024 ranks)."""
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

    def to_json(self) -> dict:
        return {"figures": [figures.to_json() for figures in self.figures],
                "divergence": [finding.to_json() for finding in self.findings],
                "groups": [{"ranks": list(group), "ranks_text": rank_ranges(group)} for group in self.groups],
                "straggler_rule": STRAGGLER_RULE}


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
        frame=f"{Path(unit.location.file).name}:{unit.location.line}:{unit.location.function}" if unit.location else None)


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
    if "c10d" not in graph_text and "torch.distributed" not in graph_text:  # the pattern's words, found ~10× faster
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
    for the whole read that follows, took a 1,024-rank overview from 4.7 s to 9.1 s), except where
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
    if executor is not None:  # in batches: a cluster's per-task cost (~4 ms on Dask) would outweigh a small log
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
    figures = tuple(_in_rank_order(figures))
    return RankReport(figures, (), (), unread=logs - len(figures))


def _in_rank_order(figures: Iterable[RankFigures]) -> list[RankFigures]:
    return sorted(figures, key=lambda f: (f.rank is None, f.rank or 0))


def session_rank_report(session: Session) -> RankReport:
    """The report of a loaded session, with graph differences explained node by node."""
    figures = [rank_figures(rank, compared=len(session.ranks) > 1) for rank in session.ranks]
    by_rank = {rank.rank: rank for rank in session.ranks}
    return rank_report(figures, explain_graph=lambda a, a_id, b, b_id: _explain_graph(by_rank.get(a), a_id,
                                                                                       by_rank.get(b), b_id))


def _explain_graph(reference: Rank | None, reference_id: str, other: Rank | None, other_id: str) -> str | None:
    def graph(rank, compile_id):
        unit = next((u for u in rank.units if str(u.compile_id) == compile_id), None) if rank else None
        artifact = (unit.graphs.get("dynamo") or next(iter(unit.graphs.values()), None)) if unit else None
        return artifact.graph if artifact else None

    a, b = graph(reference, reference_id), graph(other, other_id)
    if a is None or b is None:
        return None
    diff = diff_graphs(a, b)
    parts = [f"{len(diff.changed)} changed"] if diff.changed else []
    parts += [f"{len(diff.added)} added"] if diff.added else []
    parts += [f"{len(diff.removed)} removed"] if diff.removed else []
    changed = [f"{a.node(c.a).target}→{b.node(c.b).target}" for c in diff.changed if "target" in c.fields][:3]
    return ", ".join(parts) + (f" ({'; '.join(changed)})" if changed else "") + f", similarity {diff.similarity:.2f}"


# --- divergence -------------------------------------------------------------------------------------

def rank_report(figures: Iterable[RankFigures], expected_ranks: int | None = None,
                explain_graph: Callable[[int | None, str, int | None, str], str | None] | None = None) -> RankReport:
    """Compare every rank with the majority and name each difference once, for the group of ranks
    that share it. `expected_ranks` (else one more than the highest rank seen) finds missing logs."""
    figures = _in_rank_order(figures)
    if len(figures) < 2:
        return RankReport(tuple(figures), (), ((figures[0].rank,),) if figures else ())
    duplicated = sorted((rank for rank, count in Counter(f.rank for f in figures).items() if count > 1), key=str)
    if duplicated:  # logs named without distinct rank numbers (several processes, say): nothing to line up
        message = f"{len(figures)} logs, several with the same or no rank number: ranks not compared"
        return RankReport(tuple(figures), (Finding("logs", tuple(duplicated), message),), ())
    findings: list[Finding] = []
    findings += _missing_and_damaged(figures, expected_ranks)
    findings += _compile_id_findings(figures)
    shared = _shared_units(figures)
    unit_findings = _unit_findings(shared, explain_graph)
    findings += unit_findings
    findings += _whole_run_findings(figures, unit_findings)
    findings += _execution_findings(figures)
    findings += _runtime_findings(shared)
    findings += _straggler_findings(figures, "compile_time_s", "compile-time straggler", "compile time")
    findings += _straggler_findings(figures, "first_collective_s", "reaches its first collective late",
                                    "time to the first collective")
    differing: dict[int | None, list[int]] = {}
    for number, finding in enumerate(findings):
        for rank in finding.ranks:
            differing.setdefault(rank, []).append(number)
    groups: dict[tuple, list] = {}
    for rank_figures_ in figures:
        groups.setdefault(tuple(differing.get(rank_figures_.rank, ())), []).append(rank_figures_.rank)
    ordered = sorted((tuple(group) for group in groups.values()), key=lambda g: (-len(g), g[0] if g[0] is not None else -1))
    return RankReport(tuple(figures), tuple(findings), tuple(ordered))


def _majority(values: dict) -> object:
    """The most common value; ties go to the value of the lowest rank."""
    counts = Counter(values.values())
    best = max(counts.values())
    return next(value for value in values.values() if counts[value] == best)


def _grouped(kind: str, differences: dict[int | None, tuple[str, tuple[str, ...]]]) -> list[Finding]:
    """One finding per distinct (message, compile ids), naming every rank that shows it."""
    by_message: dict[tuple, list] = {}
    for rank, key in differences.items():
        by_message.setdefault(key, []).append(rank)
    return [Finding(kind, tuple(ranks), message, compile_ids) for (message, compile_ids), ranks in by_message.items()]


def _missing_and_damaged(figures: list[RankFigures], expected: int | None) -> list[Finding]:
    numbered = {f.rank for f in figures if f.rank is not None}
    findings = []
    if numbered:
        expected = expected if expected is not None else max(numbered) + 1
        missing = tuple(rank for rank in range(expected) if rank not in numbered)
        if missing:
            findings.append(Finding("logs", missing, "no log found for this rank"))
    damaged = {f.rank: (", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in f.damage.items())
                        + " in its log", ()) for f in figures if f.damage}
    return findings + _grouped("logs", damaged)


def _compile_id_findings(figures: list[RankFigures]) -> list[Finding]:
    ids = {f.rank: tuple(unit.compile_id for unit in f.unit_prints) for f in figures}
    reference = set(_majority(ids))
    recompiles, frames = {}, {}
    misses = {f.rank: {u.compile_id for u in f.unit_prints if any(c.endswith(" miss") for c in u.cache)} for f in figures}
    for rank, own in ids.items():
        extra = tuple(cid for cid in own if cid not in reference)
        missing = tuple(sorted(reference - set(own), key=_id_order))
        extra_recompiles = tuple(cid for cid in extra if _is_recompile(cid))
        other = tuple(cid for cid in extra if not _is_recompile(cid))
        if extra_recompiles:
            missed = sum(cid in misses[rank] for cid in extra_recompiles)
            recompiles[rank] = (f"extra recompile{'s' if len(extra_recompiles) > 1 else ''} "
                                f"{_id_list(extra_recompiles)}" + (f" ({missed} of them missed the cache)" if missed else ""),
                                extra_recompiles)
        if other or missing:
            parts = ([f"extra compile ids {_id_list(other)}"] if other else []) + \
                    ([f"missing compile ids {_id_list(missing)}"] if missing else [])
            frames[rank] = ("; ".join(parts), other + missing)
    return _grouped("recompiles", recompiles) + _grouped("compile_ids", frames)


def _is_recompile(compile_id: str) -> bool:
    return not compile_id.rstrip("]").endswith("/0")


def _id_order(compile_id: str) -> tuple:
    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"\D+", compile_id) if part)


def _id_list(ids: tuple[str, ...]) -> str:
    return ", ".join(ids[:6]) + (f" … ({len(ids)} in all)" if len(ids) > 6 else "")


ASPECTS = {  # kind: (what is compared, how it reads)
    "outcome": (lambda u: u.outcome, "compile {value} (others: {reference})"),
    "graphs": (lambda u: u.graph, "graph differs structurally ({ops} ops; others {reference_ops})"),
    "guards": (lambda u: u.guards, "recompiled on other guards: {value}"),
    "cache": (lambda u: u.cache, "cache {value} (others: {reference})"),
    "collectives": (lambda u: u.collectives, "collective order {value} (others: {reference})"),
    "tensor_meta": (lambda u: u.tensor_meta, "Inductor's tensor metadata differs ({value}): the ranks compiled "
                                              "this graph for other shapes, dtypes or strides"),
}


def _unit_findings(shared: dict[tuple | str, dict[int | None, UnitPrint]], explain_graph) -> list[Finding]:
    """Per compile the ranks share (`_shared_units`): the majority value of each aspect, and who
    departs from it. A finding names each rank's own compile id."""
    findings = []
    for kind, (value_of, template) in ASPECTS.items():
        if kind != "outcome":  # a compile that failed on some ranks differs in everything else as a consequence
            shared = {key: {rank: unit for rank, unit in units.items() if unit.outcome == "ok"}
                      for key, units in shared.items()}
        differences: dict[int | None, list] = {}
        for units in shared.values():
            if len(units) < 2:
                continue
            reference = _majority({rank: value_of(unit) for rank, unit in units.items()})
            reference_rank = next(rank for rank, unit in units.items() if value_of(unit) == reference)
            for rank, unit in units.items():
                value = value_of(unit)
                if value == reference or (kind in ("graphs", "tensor_meta") and not (value and reference)):
                    continue  # a rank without the record cannot be compared on it
                if kind == "tensor_meta":  # ops and digests: shown as the op where they part
                    shown, reference_shown = _first_op_apart(value, reference), ""
                else:
                    shown, reference_shown = _shown(value), _shown(reference)
                message = template.format(value=shown, reference=reference_shown, ops=unit.graph_ops,
                                          reference_ops=units[reference_rank].graph_ops)
                if kind == "graphs" and explain_graph is not None:
                    detail = explain_graph(reference_rank, units[reference_rank].compile_id, rank, unit.compile_id)
                    message += f": {detail}" if detail else ""
                differences.setdefault(rank, []).append((unit.compile_id, message))
        findings += _grouped(kind, {rank: ("; ".join(f"{cid} {message}" for cid, message in items),
                                           tuple(cid for cid, _ in items)) for rank, items in differences.items()})
    return findings


def _shared_units(figures: list[RankFigures]) -> dict[tuple | str, dict[int | None, UnitPrint]]:
    """Each rank's unit of one compile, in compile-id order: matched by frame — its code — and the
    compile's number within it where every rank compiled the same frames, so ranks that compiled them
    in another order (where `[0/0]` is one function here and another there) compare like with like;
    by compile id, as tlparse does, where the ranks compiled other frames or a unit does not say its
    frame (an older or damaged log)."""
    frames = [{unit.frame for unit in f.unit_prints} for f in figures]
    by_frame = None not in frames[0] and all(own == frames[0] for own in frames)
    shared: dict[tuple | str, dict[int | None, UnitPrint]] = {}
    for f in figures:
        for unit in f.unit_prints:
            key = (unit.frame, _id_order(unit.compile_id)[1:]) if by_frame else unit.compile_id
            shared.setdefault(key, {})[f.rank] = unit
    return dict(sorted(shared.items(), key=lambda item: _id_order(next(iter(item[1].values())).compile_id)))


# Whole-run sequences: what a rank does from its first compile to its last, compared as tlparse's
# multi-rank report does (one group per distinct sequence), beyond what the shared compile ids show.
SEQUENCES = {  # kind: (the items of one unit, what a departure risks and what to do)
    "collective_sequence": (
        lambda unit: unit.collectives,
        "collectives must match on every rank: the ranks that issue one the others do not wait for it — a hang (or "
        "mismatched data) at that collective. Make every rank trace the same graphs: the same input shapes and "
        "control flow on every rank (pad the last batch, no rank-dependent branches), or mark the dims that vary "
        "dynamic so no rank alone recompiles into another graph."),
    "cache_pattern": (
        lambda unit: unit.cache,
        "ranks that miss where others hit compile longer and reach the next collective late. Share the compile "
        "caches (TORCHINDUCTOR_CACHE_DIR on a shared filesystem, or the remote cache) and warm them from one rank."),
}


def _whole_run_findings(figures: list[RankFigures], unit_findings: list[Finding]) -> list[Finding]:
    """Per kind of sequence, every rank whose whole-run sequence departs from the majority's, with
    the first point where it does — unless that point is a difference already reported for a compile
    id both share (collective order or cache outcome of that unit)."""
    findings = []
    recorded = all(f.executed is not None for f in figures)  # else compile order, alike for every rank
    for kind, (items_of, advice) in SEQUENCES.items():
        per_unit = {"collective_sequence": "collectives", "cache_pattern": "cache"}[kind]
        in_run_order = recorded and kind == "collective_sequence"  # a graph looks the cache up when it compiles
        reported = {(rank, cid) for finding in unit_findings if finding.kind == per_unit
                    for rank in finding.ranks for cid in finding.compile_ids}
        sequences = {f.rank: tuple((unit.compile_id, item) for unit in _run_order(f, in_run_order)
                                   for item in items_of(unit)) for f in figures}
        reference = _majority({rank: tuple(item for _, item in seq) for rank, seq in sequences.items()})
        reference_rank = next(rank for rank, seq in sequences.items() if tuple(i for _, i in seq) == reference)
        units = {f.rank: {unit.compile_id: unit for unit in f.unit_prints} for f in figures}
        departures = {}
        for rank, sequence in sequences.items():
            items = tuple(item for _, item in sequence)
            if items == reference:
                continue
            theirs = sequences[reference_rank]  # located by (compile id, item): a missing compile shows where it is
            first = next((i for i, (a, b) in enumerate(zip(sequence, theirs)) if a != b), min(len(sequence), len(theirs)))
            where = _departure_id(sequence, theirs, first, units[rank], units[reference_rank])
            if (rank, where) in reported:
                continue
            cause = _cause(where, units[rank], units[reference_rank])
            # a missing collective hangs the job whatever caused it; a cache difference that follows from
            # another finding needs no advice of its own
            message = _departure(kind, sequence, theirs, first) + (f" — {cause}" if cause else "") \
                + (f": {advice}" if kind == "collective_sequence" or not cause else "")
            departures[rank] = (message, (where,))
        findings += _grouped(kind, departures)
    return findings


def _run_order(figures: RankFigures, in_run_order: bool) -> list[UnitPrint]:
    """The rank's units in the order its graphs ran (a unit per call) when `in_run_order`, else as compiled."""
    if not in_run_order:
        return list(figures.unit_prints)
    units = {unit.compile_id: unit for unit in figures.unit_prints}
    return [units[compile_id] for compile_id in figures.executed if compile_id in units]


EXECUTION_ADVICE = (
    "ranks that run their compiled graphs in other orders issue their collectives in other orders as soon as those "
    "graphs hold any: a hang, or mismatched data, at the first one. Keep the order rank-independent (no rank-dependent "
    "branches around compiled calls).")


def _execution_findings(figures: list[RankFigures]) -> list[Finding]:
    """tlparse's graph execution-order diagnostic, by what ran rather than by compile id: each call is
    its frame's function and graph, so ranks that compiled their frames in another order (the same
    compile id naming another function) and ran the same graphs agree, and ranks that ran other graphs
    under the same compile ids do not. Each departure says whether the collectives, in the order the
    graphs ran, still match (what a hang needs)."""
    recorded = [f for f in figures if f.executed is not None]
    if len(recorded) < 2:
        return []
    units = {f.rank: {unit.compile_id: unit for unit in f.unit_prints} for f in recorded}

    def ran(f: RankFigures) -> tuple:
        return tuple((units[f.rank][cid].function, units[f.rank][cid].graph) if cid in units[f.rank] else (None, cid)
                     for cid in f.executed)

    calls = {f.rank: ran(f) for f in recorded}
    reference = _majority(calls)
    reference_rank = next(rank for rank, seq in calls.items() if seq == reference)
    theirs = next(f for f in recorded if f.rank == reference_rank)
    their_collectives = [c for unit in _run_order(theirs, True) for c in unit.collectives]
    departures = {}
    for f in recorded:
        mine = calls[f.rank]
        if mine == reference:
            continue
        first = next((i for i, (a, b) in enumerate(zip(mine, reference)) if a != b), min(len(mine), len(reference)))
        lead = "ran its compiled graphs in another order" if Counter(mine) == Counter(reference) \
            else "ran other compiled graphs than the others"
        message = (f"{lead}: {_call_apart(f, theirs, first, units)} "
                   f"({len(mine)} graph calls recorded, the others {len(reference)})")
        if first < len(f.executed):
            cause = _cause(f.executed[first], units[f.rank], units[reference_rank])
            message += f" — {cause}" if cause else ""
        renamed = _renamed_ids(units[f.rank], units[reference_rank])
        if renamed:
            message += (f"; its compile ids name other functions than the others' ({renamed}): it compiled its frames "
                        "in another order (the other comparisons match its compiles to the others' by frame)")
        mine_collectives = [c for unit in _run_order(f, True) for c in unit.collectives]
        if mine_collectives == their_collectives:
            message += (f". In the order the graphs ran, its collectives match the others' ({len(mine_collectives)} each), "
                        "so this does not put them out of step in this run")
        else:
            message += (". Its collectives in the order the graphs ran differ from the others' (see collective_sequence): "
                        + EXECUTION_ADVICE)
        departures[f.rank] = (message, f.executed[first:first + 1])
    return _grouped("execution_order", departures)


def _call_apart(mine: RankFigures, theirs: RankFigures, first: int, units: dict) -> str:
    """The first call where two ranks ran other graphs, each named by its function and compile id."""
    def call(f: RankFigures) -> str:
        if first >= len(f.executed):
            return "nothing (its record ends there)"
        compile_id = f.executed[first]
        unit = units[f.rank].get(compile_id)
        return f"{unit.function or 'a graph'} {compile_id}" if unit is not None else f"{compile_id} (no such unit in its log)"
    return f"call #{first + 1} ran {call(mine)} where the others ran {call(theirs)}"


def _renamed_ids(mine: dict[str, UnitPrint], theirs: dict[str, UnitPrint]) -> str:
    """Compile ids both ranks have that name other functions on each: `[0/0] is plain here, f there`."""
    renamed = [f"{cid} is {mine[cid].function} here, {theirs[cid].function} there" for cid in sorted(mine, key=_id_order)
               if cid in theirs and mine[cid].function and theirs[cid].function and mine[cid].function != theirs[cid].function]
    return "; ".join(renamed[:3]) + (f"; … {len(renamed)} in all" if len(renamed) > 3 else "")


def _departure(kind: str, mine: tuple, theirs: tuple, first: int) -> str:
    noun = "collectives" if kind == "collective_sequence" else "cache lookups"

    def at(sequence, index):
        cid, item = sequence[index]
        return f"{_short_op(item)} in {cid}"
    if first >= len(mine):
        return (f"the whole-run sequence of {noun} ends after {first} where the others go on to {at(theirs, first)} "
                f"({len(theirs) - first} more)")
    if first >= len(theirs):
        return f"the whole-run sequence of {noun} has {len(mine) - first} more than the others', from {at(mine, first)}"
    return f"the whole-run sequence of {noun} departs at #{first + 1}: {at(mine, first)} where the others have {at(theirs, first)}"


def _departure_id(mine: tuple, theirs: tuple, first: int, my_units: dict, their_units: dict) -> str:
    """The compile id a departure is at: the one only one side has, if either, else this rank's."""
    candidates = [sequence[first][0] for sequence in (mine, theirs) if first < len(sequence)]
    for cid in candidates:
        if (cid in my_units) != (cid in their_units):
            return cid
    return candidates[0]


def _cause(compile_id: str, mine: dict[str, UnitPrint], theirs: dict[str, UnitPrint]) -> str:
    """Why a sequence departs where it does, when another finding already says so."""
    if compile_id not in theirs:
        return f"it follows from {compile_id}, which only this rank compiled (see its compile ids)"
    if compile_id not in mine:
        return f"it follows from {compile_id}, which this rank never compiled (see its compile ids)"
    if mine[compile_id].outcome != theirs[compile_id].outcome:
        return f"it follows from {compile_id}, which compiled {mine[compile_id].outcome} here and {theirs[compile_id].outcome} there"
    return ""


def _runtime_findings(shared: dict[tuple | str, dict[int | None, UnitPrint]]) -> list[Finding]:
    """Ranks whose graph Inductor estimates to run well above the other ranks' median (tlparse's
    slowest/fastest deltas): every collective after that graph waits for them."""
    slow: dict[int | None, list] = {}
    for units in shared.values():
        values = {rank: unit.runtime_ns for rank, unit in units.items() if unit.runtime_ns is not None}
        if len(values) < 2:
            continue
        median = statistics.median(values.values())
        for rank, value in values.items():
            compile_id = units[rank].compile_id
            if median > 0 and value > RUNTIME_SPREAD * median:
                slow.setdefault(rank, []).append(
                    (compile_id, f"{compile_id} estimated {value / 1e6:.3g} ms vs median {median / 1e6:.3g} ms "
                                 f"(+{value / median - 1:.0%})"))
    return _grouped("runtime", {rank: ("; ".join(text for _, text in items) + ": Inductor expects this rank's graph to "
                                       "run slower; the collectives after it wait for it",
                                       tuple(cid for cid, _ in items)) for rank, items in slow.items()})


def _first_op_apart(ops: tuple[tuple[str, str], ...], reference: tuple[tuple[str, str], ...]) -> str:
    """Where two ranks' per-op tensor metadata first part: the op, or how many ops each has."""
    for index, (mine, theirs) in enumerate(zip(ops, reference)):
        if mine != theirs:
            return f"first at op {index} {mine[0]}" + (f" (others: {theirs[0]})" if theirs[0] != mine[0] else "")
    return f"{len(ops)} ops, others {len(reference)}"


def _shown(value) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_short_op(item) for item in value) + "]" if value else "none"
    return str(value)


def _short_op(name: str) -> str:
    """torch.ops._c10d_functional.all_reduce_.default → all_reduce_"""
    return re.sub(r"^torch\.ops\.\w+\.|\.default$", "", name)


def _straggler_findings(figures: list[RankFigures], attribute: str, label: str, what: str) -> list[Finding]:
    values = {f.rank: getattr(f, attribute) for f in figures if getattr(f, attribute) is not None}
    found = high_outliers(values, STRAGGLER_MIN_SHARE, STRAGGLER_MIN_S)
    if found is None:
        return []
    return [Finding("straggler", (rank,), f"{label}: {what} {values[rank]:.2f} s vs median {found.median:.2f} s")
            for rank in found.keys]


# --- one lane per rank --------------------------------------------------------------------------------

DIFFERS = "differs"  # the step key of a compile unit named by a divergence finding


def rank_timeline(report: RankReport, wall_clock: bool = False) -> Timeline:
    """One lane per rank, one bar per compile unit (`_unit_times`), each rank from its own
    first compile unless `wall_clock`; units a finding names are marked `DIFFERS`, a compile that
    failed or was cut off is marked open. Built from the index alone, so it shows with the overview."""
    named = {(rank, compile_id) for finding in report.findings for rank in finding.ranks
             for compile_id in finding.compile_ids}  # (a report of ranks sharing a number names no unit)
    starts = [min((u.start_s for u in f.unit_prints if u.start_s is not None), default=None) for f in report.figures]
    known = [start for start in starts if start is not None]
    bars = []
    for lane, figures in enumerate(report.figures):
        origin = min(known, default=0.0) if wall_clock else starts[lane]
        for unit in figures.unit_prints:
            if unit.start_s is None or unit.end_s is None:
                continue
            bars.append(Bar(lane, 0, unit.start_s - origin, unit.end_s - origin, unit.compile_id, unit.compile_id,
                            unit.outcome != "ok", DIFFERS if (figures.rank, unit.compile_id) in named else None))
    return Timeline(bars, [f.label for f in report.figures], 1, [], min(known, default=0.0) * 1e6,
                    tuple(f.rank for f in report.figures), wall_clock)


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
