"""Distributed runs, the divergence across ranks: which ranks compiled other ids, other graphs,
recompiled on other guards, hit the cache differently, scheduled collectives in another order, ran
their graphs in another order, or compiled far slower than the rest.

Each kind of finding is a rule in `DIVERGENCE_RULES`, run in that order over one `Comparison` of the
ranks' figures (rank_figures.py): a new kind of finding is one more entry there. Most compare one
aspect of the units every rank compiled (`AspectRule`) or one sequence over the whole run
(`SequenceRule`); the rest are functions of the comparison (`Rule`).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from inspector.core.analysis.outliers import high_outliers
from inspector.core.analysis.rank_figures import (STRAGGLER_MIN_S, STRAGGLER_MIN_SHARE, Finding, RankFigures,
                                                  RankReport, UnitPrint, in_rank_order, rank_figures)
from inspector.core.graphs.graph_diff import diff_graphs
from inspector.core.model.session import Rank, Session

RUNTIME_SPREAD = 1.2  # a rank whose estimated runtime of a graph exceeds the median by this factor is named

# explain_graph(reference rank, its compile id, other rank, its compile id): how two graphs differ, or None
GraphExplainer = Callable[[int | None, str, int | None, str], str | None]
SharedUnits = dict[tuple | str, dict[int | None, UnitPrint]]


@dataclass
class Comparison:
    """What every divergence rule reads: the ranks' figures in rank order, their units matched across
    ranks (`_shared_units`), and the findings of the rules run before it."""

    figures: list[RankFigures]
    expected_ranks: int | None
    explain_graph: GraphExplainer | None
    shared: SharedUnits = field(init=False)
    found: list[Finding] = field(default_factory=list)

    def __post_init__(self):
        self.shared = _shared_units(self.figures)


@dataclass(frozen=True)
class Rule:
    """A kind of finding worked out by a function of the comparison."""

    find: Callable[[Comparison], list[Finding]]

    def findings(self, comparison: Comparison) -> list[Finding]:
        return self.find(comparison)


def _shown_values(value, reference) -> tuple[str, str]:
    return _shown(value), _shown(reference)


@dataclass(frozen=True)
class AspectRule:
    """Per compile the ranks share: the majority value of one aspect of its units, and who departs
    from it. A finding names each rank's own compile id."""

    kind: str
    value_of: Callable[[UnitPrint], object]  # what is compared
    template: str  # how it reads: {value}, {reference}, {ops}, {reference_ops}
    shown: Callable[[object, object], tuple[str, str]] = _shown_values  # (value, reference) as the template shows them
    only_where_recorded: bool = False  # a rank without the record cannot be compared on it
    explained: bool = False  # the message says how the graphs differ (`explain_graph`)
    # a compile that failed on some ranks differs in everything else as a consequence: compared among
    # the units that compiled, except the outcome itself
    among_compiled: bool = True

    def findings(self, comparison: Comparison) -> list[Finding]:
        shared = comparison.shared
        if self.among_compiled:
            shared = {key: {rank: unit for rank, unit in units.items() if unit.outcome == "ok"}
                      for key, units in shared.items()}
        value_of, explain_graph = self.value_of, comparison.explain_graph
        differences: dict[int | None, list] = {}
        for units in shared.values():
            if len(units) < 2:
                continue
            reference = _majority({rank: value_of(unit) for rank, unit in units.items()})
            reference_rank = next(rank for rank, unit in units.items() if value_of(unit) == reference)
            for rank, unit in units.items():
                value = value_of(unit)
                if value == reference or (self.only_where_recorded and not (value and reference)):
                    continue
                shown, reference_shown = self.shown(value, reference)
                message = self.template.format(value=shown, reference=reference_shown, ops=unit.graph_ops,
                                               reference_ops=units[reference_rank].graph_ops)
                if self.explained and explain_graph is not None:
                    detail = explain_graph(reference_rank, units[reference_rank].compile_id, rank, unit.compile_id)
                    message += f": {detail}" if detail else ""
                differences.setdefault(rank, []).append((unit.compile_id, message))
        return _grouped(self.kind, {rank: ("; ".join(f"{cid} {message}" for cid, message in items),
                                           tuple(cid for cid, _ in items)) for rank, items in differences.items()})


@dataclass(frozen=True)
class SequenceRule:
    """Whole-run sequences: what a rank does from its first compile to its last, compared as tlparse's
    multi-rank report does (one group per distinct sequence), beyond what the shared compile ids show.
    Every rank whose sequence departs from the majority's is named with the first point where it does —
    unless that point is a difference already reported for a compile id both share (`per_unit`)."""

    kind: str
    items_of: Callable[[UnitPrint], tuple]  # the items of one unit
    per_unit: str  # the AspectRule reporting the same items unit by unit
    advice: str  # what a departure risks and what to do
    in_run_order: bool  # in the order the graphs ran, where every rank recorded it (else as compiled)
    noun: str  # what the items are, in a message
    # the advice goes with every departure, also one that follows from another finding (else only
    # with those that do not)
    always_advised: bool = False

    def findings(self, comparison: Comparison) -> list[Finding]:
        figures, kind, advice = comparison.figures, self.kind, self.advice
        recorded = all(f.executed is not None for f in figures)  # else compile order, alike for every rank
        in_run_order = recorded and self.in_run_order
        reported = {(rank, cid) for finding in comparison.found if finding.kind == self.per_unit
                    for rank in finding.ranks for cid in finding.compile_ids}
        sequences = {f.rank: tuple((unit.compile_id, item) for unit in _run_order(f, in_run_order)
                                   for item in self.items_of(unit)) for f in figures}
        reference = _majority({rank: tuple(item for _, item in seq) for rank, seq in sequences.items()})
        reference_rank = next(rank for rank, seq in sequences.items() if tuple(i for _, i in seq) == reference)
        units = {f.rank: {unit.compile_id: unit for unit in f.unit_prints} for f in figures}
        departures = {}
        for rank, sequence in sequences.items():
            items = tuple(item for _, item in sequence)
            if items == reference:
                continue
            theirs = sequences[reference_rank]  # located by (compile id, item): a missing compile shows where it is
            first = next((i for i, (a, b) in enumerate(zip(sequence, theirs)) if a != b),
                         min(len(sequence), len(theirs)))
            where = _departure_id(sequence, theirs, first, units[rank], units[reference_rank])
            if (rank, where) in reported:
                continue
            cause = _cause(where, units[rank], units[reference_rank])
            # a missing collective hangs the job whatever caused it; a cache difference that follows from
            # another finding needs no advice of its own
            message = _departure(self.noun, sequence, theirs, first) + (f" — {cause}" if cause else "") \
                + (f": {advice}" if self.always_advised or not cause else "")
            departures[rank] = (message, (where,))
        return _grouped(kind, departures)


@dataclass(frozen=True)
class StragglerRule:
    """Ranks whose figure is far above the other ranks' (`outliers.high_outliers`)."""

    attribute: str  # of RankFigures, in seconds
    label: str
    what: str

    def findings(self, comparison: Comparison) -> list[Finding]:
        attribute = self.attribute
        values = {f.rank: getattr(f, attribute) for f in comparison.figures if getattr(f, attribute) is not None}
        found = high_outliers(values, STRAGGLER_MIN_SHARE, STRAGGLER_MIN_S)
        if found is None:
            return []
        return [Finding("straggler", (rank,), f"{self.label}: {self.what} {values[rank]:.2f} s vs median "
                                              f"{found.median:.2f} s") for rank in found.keys]


def rank_report(figures: Iterable[RankFigures], expected_ranks: int | None = None,
                explain_graph: GraphExplainer | None = None) -> RankReport:
    """Compare every rank with the majority and name each difference once, for the group of ranks
    that share it. `expected_ranks` (else one more than the highest rank seen) finds missing logs."""
    figures = in_rank_order(figures)
    if len(figures) < 2:
        return RankReport(tuple(figures), (), ((figures[0].rank,),) if figures else ())
    duplicated = sorted((rank for rank, count in Counter(f.rank for f in figures).items() if count > 1), key=str)
    if duplicated:  # logs named without distinct rank numbers (several processes, say): nothing to line up
        message = f"{len(figures)} logs, several with the same or no rank number: ranks not compared"
        return RankReport(tuple(figures), (Finding("logs", tuple(duplicated), message),), ())
    comparison = Comparison(figures, expected_ranks, explain_graph)
    for divergence_rule in DIVERGENCE_RULES:
        comparison.found += divergence_rule.findings(comparison)
    findings = comparison.found
    differing: dict[int | None, list[int]] = {}
    for number, finding in enumerate(findings):
        for rank in finding.ranks:
            differing.setdefault(rank, []).append(number)
    groups: dict[tuple, list] = {}
    for rank_figures_ in figures:
        groups.setdefault(tuple(differing.get(rank_figures_.rank, ())), []).append(rank_figures_.rank)
    ordered = sorted((tuple(group) for group in groups.values()),
                     key=lambda g: (-len(g), g[0] if g[0] is not None else -1))
    return RankReport(tuple(figures), tuple(findings), tuple(ordered))


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
    misses = {f.rank: {u.compile_id for u in f.unit_prints if any(c.endswith(" miss") for c in u.cache)}
              for f in figures}
    for rank, own in ids.items():
        extra = tuple(cid for cid in own if cid not in reference)
        missing = tuple(sorted(reference - set(own), key=_id_order))
        extra_recompiles = tuple(cid for cid in extra if _is_recompile(cid))
        other = tuple(cid for cid in extra if not _is_recompile(cid))
        if extra_recompiles:
            missed = sum(cid in misses[rank] for cid in extra_recompiles)
            recompiles[rank] = (f"extra recompile{'s' if len(extra_recompiles) > 1 else ''} "
                                f"{_id_list(extra_recompiles)}"
                                + (f" ({missed} of them missed the cache)" if missed else ""),
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
            message += (f". In the order the graphs ran, its collectives match the others' "
                        f"({len(mine_collectives)} each), so this does not put them out of step in this run")
        else:
            message += (". Its collectives in the order the graphs ran differ from the others' "
                        "(see collective_sequence): " + EXECUTION_ADVICE)
        departures[f.rank] = (message, f.executed[first:first + 1])
    return _grouped("execution_order", departures)


def _call_apart(mine: RankFigures, theirs: RankFigures, first: int, units: dict) -> str:
    """The first call where two ranks ran other graphs, each named by its function and compile id."""
    def call(f: RankFigures) -> str:
        if first >= len(f.executed):
            return "nothing (its record ends there)"
        compile_id = f.executed[first]
        unit = units[f.rank].get(compile_id)
        if unit is None:
            return f"{compile_id} (no such unit in its log)"
        return f"{unit.function or 'a graph'} {compile_id}"
    return f"call #{first + 1} ran {call(mine)} where the others ran {call(theirs)}"


def _renamed_ids(mine: dict[str, UnitPrint], theirs: dict[str, UnitPrint]) -> str:
    """Compile ids both ranks have that name other functions on each: `[0/0] is plain here, f there`."""
    renamed = [f"{cid} is {mine[cid].function} here, {theirs[cid].function} there"
               for cid in sorted(mine, key=_id_order) if cid in theirs and mine[cid].function
               and theirs[cid].function and mine[cid].function != theirs[cid].function]
    return "; ".join(renamed[:3]) + (f"; … {len(renamed)} in all" if len(renamed) > 3 else "")


def _departure(noun: str, mine: tuple, theirs: tuple, first: int) -> str:

    def at(sequence, index):
        cid, item = sequence[index]
        return f"{_short_op(item)} in {cid}"
    if first >= len(mine):
        return (f"the whole-run sequence of {noun} ends after {first} where the others go on to {at(theirs, first)} "
                f"({len(theirs) - first} more)")
    if first >= len(theirs):
        return f"the whole-run sequence of {noun} has {len(mine) - first} more than the others', from {at(mine, first)}"
    return (f"the whole-run sequence of {noun} departs at #{first + 1}: {at(mine, first)} "
            f"where the others have {at(theirs, first)}")


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
        return (f"it follows from {compile_id}, which compiled {mine[compile_id].outcome} here "
                f"and {theirs[compile_id].outcome} there")
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



ASPECT_RULES = (
    AspectRule("outcome", lambda u: u.outcome, "compile {value} (others: {reference})", among_compiled=False),
    AspectRule("graphs", lambda u: u.graph, "graph differs structurally ({ops} ops; others {reference_ops})",
               only_where_recorded=True, explained=True),
    AspectRule("guards", lambda u: u.guards, "recompiled on other guards: {value}"),
    AspectRule("cache", lambda u: u.cache, "cache {value} (others: {reference})"),
    AspectRule("collectives", lambda u: u.collectives, "collective order {value} (others: {reference})"),
    # ops and digests: shown as the op where they part
    AspectRule("tensor_meta", lambda u: u.tensor_meta, "Inductor's tensor metadata differs ({value}): the ranks "
               "compiled this graph for other shapes, dtypes or strides",
               shown=lambda value, reference: (_first_op_apart(value, reference), ""), only_where_recorded=True),
)

SEQUENCE_RULES = (
    SequenceRule(
        "collective_sequence", lambda unit: unit.collectives, "collectives",
        "collectives must match on every rank: the ranks that issue one the others do not wait for it — a hang (or "
        "mismatched data) at that collective. Make every rank trace the same graphs: the same input shapes and "
        "control flow on every rank (pad the last batch, no rank-dependent branches), or mark the dims that vary "
        "dynamic so no rank alone recompiles into another graph.",
        in_run_order=True, noun="collectives", always_advised=True),  # a missing collective hangs the job
    SequenceRule(
        "cache_pattern", lambda unit: unit.cache, "cache",
        "ranks that miss where others hit compile longer and reach the next collective late. Share the compile "
        "caches (TORCHINDUCTOR_CACHE_DIR on a shared filesystem, or the remote cache) and warm them from one rank.",
        in_run_order=False, noun="cache lookups"),  # a graph looks the cache up when it compiles
)

# Every kind of finding, in the order the report lists them.
DIVERGENCE_RULES = (
    Rule(lambda comparison: _missing_and_damaged(comparison.figures, comparison.expected_ranks)),
    Rule(lambda comparison: _compile_id_findings(comparison.figures)),
    *ASPECT_RULES,
    *SEQUENCE_RULES,
    Rule(lambda comparison: _execution_findings(comparison.figures)),
    Rule(lambda comparison: _runtime_findings(comparison.shared)),
    StragglerRule("compile_time_s", "compile-time straggler", "compile time"),
    StragglerRule("first_collective_s", "reaches its first collective late", "time to the first collective"),
)
