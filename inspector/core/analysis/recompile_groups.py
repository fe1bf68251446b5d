"""Recompiles grouped by cause: one group per frame and guarded value (e.g. "input_ids, size dim 1"),
with how often it recompiled, the values it took (8 → 1 → 9), and what the log says of it (the symbol
automatic dynamic made, where the code specialised it again). What a failed guard names is read by
readers/guard_subjects.py; the diagnosis in plain words and the fix with its exact API are written by
recompile_advice.py; the limit past which Dynamo silently runs a frame eagerly is recompile_limit.py's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from inspector.core.analysis.recompile_advice import STANCE, explain
from inspector.core.analysis.recompile_limit import says_limit_hit
from inspector.core.analysis.shapes import ShapeEvent, specialisation
from inspector.core.analysis.user_names import _RESUME, UserName, shown_function, user_name
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, FailedGuard, Session, artifact_record
from inspector.core.readers.break_reasons import explain_guard, parse_recompile_reasons, split_guard_comment
from inspector.core.readers.guard_subjects import guarded_value

_SOURCE_OF = re.compile(r"^(?P<base>[A-Za-z_]\w*)")  # `args[0]` → `L['args'][0]`
_LOCAL = re.compile(r"L\['([^']+)'\]")
_PLAIN_LOCAL = re.compile(r"^[A-Za-z_]\w*$")


@dataclass(frozen=True)
class RecompileGroup(Record):
    """Recompiles of one frame for one cause, with the values seen, the diagnosis and the fix."""

    rank: int | None
    frame: int
    function: str | None
    shown: str  # the frame's function as lists name it (`forward (resumed at line 19)`, not Dynamo's resume name)
    location: str | None
    file: str | None
    line: int | None
    subject: str  # the guarded value: "x", "L['self'].training"
    user_name: str | None  # the guarded value in the user's words
    shown_subject: str  # the guarded value as the user wrote it, with Dynamo's name beside it when they differ
    aspect: str  # "size dim 0", "dtype", "value", "guard"
    count: int
    compile_ids: list[str]
    history: list[str]  # the values it took, first compile first
    guard: str  # torch's words for the failure against the newest graph: the value that changed
    failed: list[str]  # every guard that failed, one line per recompile
    changed: list[str]  # the guarded values that failed against the newest earlier graph
    every_guard: bool  # the guards come from torch's record of the run: every one that failed is named
    diagnosis: str
    fix: str
    stance: str
    # what the analysis found on the way (a group read back from a summary has none of it)
    units: tuple[CompileUnit, ...] = live()  # the recompiles
    name: UserName | None = live(None)  # the guarded value in the user's words
    symbol: str | None = live(None)  # from the log's create_symbol record for this dim, when it has one
    specialised: ShapeEvent | None = live(None)  # where the graph it failed against made this dim a constant
    respecialised: ShapeEvent | None = live(None)  # a value made symbolic, then made a constant again by the code
    resumed_from: str | None = live(None)  # the function whose local this is, when a resume function guards it

    @property
    def title(self) -> str:
        values = " → ".join(self.history) if self.history else ""
        return f"{self.shown_subject} {self.aspect}" + (f": {values}" if values else "")


@dataclass
class _GroupDraft:
    """A group as `recompile_groups` gathers it, before it is a record."""

    rank: int | None
    frame: int
    function: str | None
    location: str | None
    file: str | None
    line: int | None
    subject: str  # the guarded value: "x", "L['self'].training"
    aspect: str  # "size dim 0", "dtype", "value", "guard"
    units: list[CompileUnit] = field(default_factory=list)
    history: list[str] = field(default_factory=list)  # the values it took, first compile first
    diagnosis: str = ""
    fix: str = ""
    guard: str = ""  # torch's words for the failure against the newest graph: the value that changed
    name: UserName | None = None  # the guarded value in the user's words
    symbol: str | None = None  # from the log's create_symbol record for this dim, when it has one
    specialised: ShapeEvent | None = None  # where the graph it failed against made this dim a constant
    # every guard that failed, per recompile: `[1/2] against [1/1]: self.scale == 1.0; against [1/0]: …`, one line per
    # recompile (torch's log names the first guard of each earlier graph that failed; its record, every one)
    failed: list[str] = field(default_factory=list)
    # every guarded value that failed against the newest earlier graph, across the group's recompiles: what
    # changed (`which`, `self.scale`); only the first of them when the session has no record of torch's
    changed: list[str] = field(default_factory=list)
    every_guard: bool = False  # the guards come from torch's record of the run: every one that failed is named
    respecialised: ShapeEvent | None = None  # a value made symbolic, then made a constant again by the code
    resumed_from: str | None = None  # the function whose local this is, when a resume function guards it

    @property
    def count(self) -> int:
        return len(self.units)

    @property
    def shown_subject(self) -> str:
        """The guarded value as the user wrote it, with Dynamo's name beside it when they differ."""
        user = self.name.user if self.name else None
        return f"{user} (Dynamo: {self.subject})" if user and user != self.subject else self.subject

    @property
    def shown_function(self) -> str:
        """The frame's function as lists name it (`forward (resumed at line 19)`, not Dynamo's resume name)."""
        return shown_function(self.units[0]) if self.units else self.function or "?"

    def record(self) -> RecompileGroup:
        return RecompileGroup(
            self.rank, self.frame, self.function, self.shown_function, self.location, self.file, self.line,
            self.subject, self.name.user if self.name else None, self.shown_subject, self.aspect, self.count,
            [str(unit.compile_id) for unit in self.units], self.history, self.guard, self.failed, self.changed,
            self.every_guard, self.diagnosis, self.fix, STANCE, units=tuple(self.units), name=self.name,
            symbol=self.symbol, specialised=self.specialised, respecialised=self.respecialised,
            resumed_from=self.resumed_from)


# Said wherever a recompile failed the guards of more than one earlier graph: torch's record holds no more.
FIRST_GUARD_ONLY = ("torch names only the first failed guard of each earlier graph: a recompile is put down to the "
                    "one against the newest graph, and other values may have changed too")


def every_failed_guard(session: Session, unit: CompileUnit) -> tuple[list[FailedGuard], bool]:
    """The guards that failed at `unit`'s recompile, and whether that is every one of them: torch's
    record of the run (a capture's torch_record.json) checks every guard of every earlier graph, where its
    log names only the first that failed against each."""
    logged = unit.recompile.failed_guards if unit.recompile else []
    record = session.torch_record
    if record is None or len(session.ranks) > 1:  # one record per process: a rank's ids would be ambiguous
        return logged, False
    wanted = str(unit.compile_id.without_attempt()).strip("[]")
    recorded = next((recompile for recompile in record.recompiles if recompile.compile_id == wanted), None)
    if recorded is None or not recorded.cache_entries:
        return logged, False
    guards = [FailedGuard(against or entry.compile_id or "", guard, explain_guard(guard))
              for entry in recorded.cache_entries for failure in entry.failures
              for against, guard in parse_recompile_reasons(failure)]
    return (guards, True) if guards else (logged, False)


@dataclass(frozen=True)
class RecompiledUnit(Record):
    """A compile unit that is a recompile, with the guards that failed: every one when torch's record
    of the run has them (`every_guard`), else the first against each earlier graph, as torch's log names them."""

    compile_id: str
    rank: int | None
    function: str | None
    shown: str
    every_guard: bool
    failed_guards: tuple[FailedGuard, ...]

    NESTED = {"failed_guards": [FailedGuard]}


def recompiled_units(session: Session) -> list[RecompiledUnit]:
    found = []
    for unit in session.units:
        if unit.recompile:
            guards, every = every_failed_guard(session, unit)
            found.append(RecompiledUnit(str(unit.compile_id), unit.rank, unit.function, shown_function(unit), every,
                                        tuple(guards)))
    return found


def recompile_groups(session: Session) -> list[RecompileGroup]:
    """Recompiles grouped by frame and the guard that failed against the newest graph, most frequent first."""
    groups: dict[tuple, _GroupDraft] = {}
    units = session.units
    for unit in units:
        if not unit.recompile:
            continue
        guards, every = every_failed_guard(session, unit)
        newest = _newest_failure(guards)
        guard = newest.guard if newest else unit.recompile.raw.strip() or "reason not recorded"
        subject, aspect, expected, actual = guarded_value(guard)
        key = (unit.rank, unit.compile_id.autograd, unit.compile_id.frame, subject, aspect)
        group = groups.get(key)
        if group is None:
            location = unit.location
            group = groups[key] = _GroupDraft(
                unit.rank, unit.compile_id.frame, unit.function, str(location) if location else None,
                location.file if location else None, location.line if location else None, subject, aspect,
                guard=guard, name=user_name(session, unit, subject, split_guard_comment(guard)[1]))
            if expected is not None:
                group.history.append(expected)
        elif aspect == "value" and expected is not None:
            group.history.append(expected)  # a value guard says only what the newest graph was built for
        group.units.append(unit)
        group.every_guard = every
        for changed in _against_newest(guards):
            if changed not in group.changed:
                group.changed.append(changed)
        group.failed.append(f"{unit.compile_id} " + ("; ".join(
            f"against [{failed.against}]: {split_guard_comment(failed.guard)[0]}" for failed in _newest_first(guards))
            if guards else guard))
        if actual is not None:
            group.history.append(actual)
    by_id: dict[tuple, CompileUnit] = {}
    for unit in units:  # the first of a (rank, id) seen twice, as when several logs have no rank number
        by_id.setdefault((unit.rank, str(unit.compile_id.without_attempt())), unit)
    for group in groups.values():
        made = _symbol_record(group) if group.aspect == "value" or group.aspect.startswith("size dim") else None
        if group.aspect == "value":
            now = _value_in_guards(group.units[-1], group.subject)
            if now is None and made is not None and made[1].get("val") is not None:
                now = str(made[1]["val"])  # a value made symbolic has no guard on it: its record holds it
            if now is not None:
                group.history.append(now)
        if made is not None:
            group.symbol = _symbol_text(group, made)
            if group.aspect == "value":
                group.respecialised = specialisation(made[0], _source_of(group))
        group.resumed_from = _resumed_local(session, group)
        if group.aspect.startswith("size dim"):
            group.specialised = _specialised_before(by_id, group)
        group.diagnosis, group.fix = explain(group)
        if len(group.changed) > 1:
            group.diagnosis += (f" Every value that changed since the graph it failed against: "
                                f"{', '.join(group.changed)} (torch's record of the run names every failed guard).")
        elif not group.every_guard and any(unit.recompile and len(unit.recompile.failed_guards) > 1
                                           for unit in group.units):
            group.diagnosis += f" Guards of several earlier graphs failed ({FIRST_GUARD_ONLY})."
        if any(says_limit_hit(unit.fail_reason or "") for unit in group.units):
            group.diagnosis += (" The last one hit the recompile limit: Dynamo gave up and this frame now runs "
                                "eagerly, with only a log warning.")
    return [group.record() for group in sorted(groups.values(), key=lambda g: (-g.count, g.rank or 0, g.frame))]


def _value_in_guards(unit: CompileUnit, subject: str) -> str | None:
    """The value the newest compile specialised `subject` on, from its guards (`len(L['___stack1']) == 15`):
    the recompile reasons only say what the graphs before it were built for."""
    name = _LOCAL.sub(r"\1", subject)
    pattern = re.compile(rf"(?:^|[\s:]){re.escape(name)} == (?P<value>[^\s#]+)")
    for artifact in unit.artifacts:
        if artifact.name == "guards":
            for line in _lines_with(artifact.text, max(re.findall(r"\w+", name), key=len, default=name)):
                found = pattern.search(_LOCAL.sub(r"\1", line))
                if found:
                    return found["value"]
    return None


def _lines_with(text: str, word: str) -> Iterator[str]:
    """The lines of `text` that hold `word`, in order: a big model's guards run to hundreds of KB, and
    rewriting them whole (`L['x']` to `x`) to find one guard would cost that much work per guard."""
    at = text.find(word)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield text[start:end]
        at = text.find(word, end + 1)  # on past the line's end: an empty word too finds each line once


def _specialised_before(by_id: dict[tuple, CompileUnit], group: _GroupDraft) -> ShapeEvent | None:
    """The specialisation, in the unit whose guard failed first, of the dim that changed: a dynamic
    dim the code made static (`if x.shape[0] == 4:`) is why a new size could not reuse that graph.
    `by_id`: every unit by (rank, compile id) — looked up per group, not searched (a big job has a
    group per rank: searching every unit for each grows with the square of the ranks)."""
    first = group.units[0]
    newest = _newest_failure(first.recompile.failed_guards) if first.recompile else None
    against = newest.against if newest else ""
    previous = by_id.get((first.rank, f"[{against}]"))
    if previous is None:
        return None
    return specialisation(previous, f"{_source_of(group)}.size()[{group.aspect.rsplit(' ', 1)[1]}]")


def _source_of(group: _GroupDraft) -> str:
    """Dynamo's source for the guarded value (`L['x']`) from the guard's subject (`x`)."""
    return group.subject if group.subject.startswith(("L[", "G[")) else \
        _SOURCE_OF.sub(r"L['\g<base>']", group.subject, count=1)


def _symbol_record(group: _GroupDraft) -> tuple[CompileUnit, dict] | None:
    """(unit, record) of the group's create_symbol record for the guarded value (its source:
    `L['x'].size()[0]`, `L['n']`), when a unit of the group made it symbolic."""
    source = _source_of(group)
    if group.aspect.startswith("size dim"):
        source = f"{source}.size()[{group.aspect.rsplit(' ', 1)[1]}]"
    for unit in group.units:
        for artifact in unit.artifacts:
            record = artifact_record(artifact) if artifact.name == "create_symbol" else None
            if record is not None and record.get("source") == source and record.get("symbol"):
                return unit, record
    return None


def _symbol_text(group: _GroupDraft, made: tuple[CompileUnit, dict]) -> str:
    """'The recompile [0/1] made `x` dim 0 symbolic (s77)' (or `n` for a Python int)."""
    unit, record = made
    what = f"`{group.name.in_code if group.name else group.subject}`"
    if group.aspect.startswith("size dim"):
        what += f" dim {group.aspect.rsplit(' ', 1)[1]}"
    return f"The recompile {unit.compile_id} made {what} symbolic ({record['symbol']})"


def _newest_first(guards: list) -> list:
    """Failed guards, the one against the newest graph first: torch lists them by cache entry, an order
    that is not always newest first."""
    return sorted(guards, key=lambda failed: -_compile_number(failed.against))


def _against_newest(guards: list[FailedGuard]) -> list[str]:
    """Each guarded value that failed against the newest earlier graph (`which`, `self.scale`), in
    torch's order: what changed since that graph was built."""
    newest = _newest_failure(guards)
    if newest is None:
        return []
    subjects = (guarded_value(failed.guard)[0] for failed in guards if failed.against == newest.against)
    return list(dict.fromkeys(subjects))


def _newest_failure(guards: list):
    """The failure against the newest earlier graph: the value that changed since that graph was built."""
    return _newest_first(guards)[0] if guards else None


def _compile_number(against: str) -> int:
    last = against.rsplit("/", 1)[-1]
    return int(last) if last.isdigit() else -1


def _resumed_local(session: Session, group: _GroupDraft) -> str | None:
    """The function a resume function's guarded local was made in (`score` for `logits`), when it is a
    local the user cannot reach from outside: not an argument of that function (none of its own
    frame's guards name it)."""
    resumed = _RESUME.match(group.function or "")
    if resumed is None or not _PLAIN_LOCAL.match(group.subject):
        return None
    original = resumed["function"]
    guarded = f"L['{group.subject}']"
    for unit in session.units:
        if unit.rank == group.rank and unit.function == original and _guards_name(unit, guarded):
            return None
    return original


def _guards_name(unit: CompileUnit, guarded: str) -> bool:
    """Whether `unit`'s guards name `guarded`, their text read back from the log once per unit and name:
    every recompile group of a resume function asks it of each unit of the function its local was made
    in (read per group, a log of 150 such groups would read its guards ~10,000 times)."""
    answers = _GUARDS_NAME.setdefault(unit, {})
    if guarded not in answers:
        answers[guarded] = any(artifact.name == "guards" and guarded in artifact.text for artifact in unit.artifacts)
    return answers[guarded]


_GUARDS_NAME: WeakKeyDictionary[CompileUnit, dict[str, bool]] = WeakKeyDictionary()
