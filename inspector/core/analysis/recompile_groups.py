"""Recompiles grouped by cause: one group per frame and guarded value (e.g. "input_ids, size dim 1"),
with how often it recompiled, the values it took (8 → 1 → 9), a diagnosis in plain words and the fix
with its exact API. The limit past which Dynamo silently runs a frame eagerly is recompile_limit.py's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PureWindowsPath
from weakref import WeakKeyDictionary

from inspector.core.analysis.recompile_limit import says_limit_hit
from inspector.core.analysis.shapes import ShapeEvent, specialisation
from inspector.core.analysis.unit_origin import eager_trigger
from inspector.core.analysis.user_names import _RESUME, UserName, shown_function, user_name
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, FailedGuard, Session, artifact_record
from inspector.core.readers.break_reasons import (explain_guard, parse_recompile_reasons, split_guard_comment,
                                                  tensor_mismatch)

# A tensor guard, `tensor 'NAME' size mismatch at index 0. expected 8, actual 16`: found by `tensor_mismatch`, linear
# in the guard (`tensor '(.+?)' …` rescanned the rest of the line from every "tensor '"), as the text after NAME
# (the mark) and what follows it (the tail).
_TENSOR = (re.compile(r"' (?P<what>size|stride) mismatch at index "),
           re.compile(r"(?P<dim>\d+)\. expected (?P<expected>\S+), actual (?P<actual>\S+)").match)
_TENSOR_PROPERTY = re.compile(r"' (?P<what>dtype|rank|device|requires_grad|dispatch key set) mismatch\. expected ")
_VALUE = re.compile(r"^(?P<name>(?:len\()?[A-Za-z_][\w.\[\]'\"]*\)?) == (?P<expected>\S.*)$")
_CHECKED = re.compile(r"(?<=___check_obj_id\()[^,()]+|(?<=___check_type_id\()[^,()]+")  # `fn.__code__`: no L[...]
_SOURCE_OF = re.compile(r"^(?P<base>[A-Za-z_]\w*)")  # `args[0]` → `L['args'][0]`
_LOCAL = re.compile(r"L\['([^']+)'\]")
_MARKING = "_has_dynamo_dim_marking"  # a tensor marked dynamic where the graph was compiled without a mark
_PLAIN_LOCAL = re.compile(r"^[A-Za-z_]\w*$")
_SOURCE = re.compile(r"[LG]\[['\"][^'\"]+['\"]\](?:\.\w+|\[[^\]]+\])*")
STANCE = ("If the new values only come during warm-up: `torch.compiler.set_stance(\"eager_on_recompile\")` after "
           "warm-up runs them eagerly instead of recompiling; in a test, `torch.compiler.set_stance("
           "\"fail_on_recompile\")` turns any recompile into an error.")


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
        group.diagnosis, group.fix = _explain(group)
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


def guarded_value(guard: str) -> tuple[str, str, str | None, str | None]:
    """(subject, aspect, expected, actual) of one failed guard in torch's words; the comments torch
    appends (`  # depth = len(inspect.stack())  # model.py:11 in forward`) are no part of the subject."""
    guard = split_guard_comment(guard)[0]
    if _MARKING in guard:  # torch's words name no tensor: `_has_dynamo_dim_marking is present on runtime tensor …`
        return "a tensor argument", "dynamic marking", None, None
    found = tensor_mismatch(guard, *_TENSOR)
    if found:
        name, mark, tail = found
        return name, f"{mark['what']} dim {tail['dim']}", tail["expected"], tail["actual"]
    found = tensor_mismatch(guard, _TENSOR_PROPERTY, _property_tail(guard))
    if found:
        name, mark, (expected, actual) = found
        return name, mark["what"], expected.strip(), (actual or "").strip() or None
    match = _VALUE.match(guard.strip())
    if match:
        return match["name"], "value", match["expected"].strip(), None
    source = _SOURCE.search(guard) or _CHECKED.search(guard)
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return (source[0] if source else guard), "object identity", None, None
    if "___check_type_id" in guard or "TYPE_MATCH" in guard:
        return (source[0] if source else guard), "type", None, None
    return (source[0] if source else guard.strip()[:120]), "guard", None, None


def _property_tail(guard: str):
    """What follows `dtype mismatch. expected ` in a guard: (expected, actual) of
    `(?P<expected>[^,]+?)(?:, actual (?P<actual>.+?))?$` there, or None, in time independent of the guard's length
    (that regex, tried after each mark, rescans the rest of the guard: cubic on a guard of repeated marks).

    The expected value holds no ",": with a "," after it, it ends there and `, actual ` and the rest of the
    guard's last line follow; with none, it is the rest of the guard (a final line break apart)."""
    commas = [-2]  # the first "," at or after the last mark's tail (-1: none; -2: not looked up), marks in order
    end = len(guard) - 1 if guard.endswith("\n") else len(guard)  # where `$` matches first
    last_newline = guard.rfind("\n", 0, end)

    def tail(text: str, at: int) -> tuple[str, str | None] | None:
        if commas[0] == -2 or 0 <= commas[0] < at:
            commas[0] = text.find(",", at)
        comma = commas[0]
        if comma < 0:
            stop = end if end > at else len(text)
            return (text[at:stop], None) if stop > at else None
        if comma > at and text.startswith(", actual ", comma) and last_newline < comma + 9 < end:
            return text[at:comma], text[comma + 9:end]
        return None

    return tail


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


def _explain(group: _GroupDraft) -> tuple[str, str]:
    """The diagnosis and the fix for one group, with the exact API to call, in the user's names."""
    named = group.name or UserName(group.subject)
    said, name, n = named.text, named.in_code, group.count
    times = "once" if n == 1 else f"{n} times"
    if group.aspect.startswith("size dim"):
        return _explain_size(group, named, times)
    if group.aspect.startswith("stride dim"):
        diagnosis = f"{said} arrived with a different memory layout (stride); Dynamo recompiled {times}."
        fix = f"Make the layout the same on every call, e.g. `{name}.contiguous()` before the compiled call."
    elif group.aspect in ("dtype", "device", "rank", "dispatch key set"):
        diagnosis = (f"{said} changed {group.aspect} ({' → '.join(group.history) or 'see the guard'}); "
                     f"Dynamo recompiled {times}.")
        fix = (f"Pass `{name}` with one {group.aspect} on every call (cast or move it before the call), or accept one "
               f"graph per {group.aspect}.")
    elif group.aspect == "dynamic marking":
        diagnosis = (f"A tensor arrived marked dynamic (`torch._dynamo.mark_dynamic`, `maybe_mark_dynamic` or "
                     f"`mark_unbacked`) where the graph was compiled for tensors without a mark; Dynamo recompiled "
                     f"{times}. torch's guard does not say which tensor.")
        fix = ("Mark the tensor before the first call as well, so every call brings the same marks (a mark stays on "
               "the tensor object: one reused from a marked call is still marked).")
    elif group.aspect == "requires_grad":
        diagnosis = f"{said} switched requires_grad (or grad mode) between calls; Dynamo recompiled {times}."
        fix = "Call the compiled code in one grad mode (e.g. always under `torch.no_grad()` for inference)."
    elif group.aspect == "value" and group.subject.startswith("len("):
        diagnosis = (f"The graph was specialised on the length {said} ({' → '.join(group.history) or 'see the guard'})"
                     f": a Python value, not a tensor; Dynamo recompiled {times}.")
        fix = (f"Keep `{name}` the same between calls, or compute it outside the compiled code and pass it in as a "
               f"tensor; else accept one compile per value (up to the recompile limit).")
    elif group.aspect == "value":
        diagnosis, fix = _explain_value(group, named, times)
    elif group.aspect == "object identity" and group.subject.endswith(".__code__"):
        function = group.subject.removesuffix(".__code__")
        diagnosis = (f"{group.function or 'This frame'}() ran with a different `{function}` ({times}): each graph was "
                     f"compiled for one `{function}` and guards on {said}. A wrapper's frame is shared by every "
                     f"function it wraps, so each new one compiles again in that frame, and all of them share its "
                     f"recompile limit.")
        fix = (f"Compile the wrapped function, not the wrapper that calls it: `torch.compile({function})` inside "
               f"the decorator, or decorate a function that is compiled already; or raise "
               f"`torch._dynamo.config.recompile_limit` if more functions share the wrapper than it allows.")
    elif group.aspect in ("object identity", "type"):
        diagnosis = (f"{said} is a different {'object' if group.aspect == 'object identity' else 'type'} "
                     f"than the graph was compiled for ({times}).")
        fix = (f"Create `{name}` once outside the loop (a new module, function or closure per call forces a "
               f"recompile each time).")
    else:
        diagnosis = f"A guard failed {times}: {group.guard}"
        fix = "Find what changes between calls in the guard above and keep it fixed."
    return diagnosis, fix


def _explain_value(group: _GroupDraft, named: UserName, times: str) -> tuple[str, str]:
    """A Python value the graph was specialised on, by what it is: a bool flag (one graph per value, and no
    more), a value automatic dynamic made symbolic (later values reuse it) or that the code made a constant
    again (a ModuleList index: no tensor can stand for it), an int or a float Dynamo kept specialised."""
    said, name = named.text, named.in_code
    values = group.history
    diagnosis = (f"The graph was specialised on the Python value of {said} "
                 f"({' → '.join(values) or 'see the guard'}); Dynamo recompiled {times}.")
    spec = group.respecialised
    if values and all(value in ("True", "False") for value in values):
        diagnosis += (" It is a bool: Dynamo always specialises on a bool, so each value gets its own graph, two "
                      "at most.")
        fix = (f"Nothing to fix if `{name}` takes each value a few times: once both graphs exist, switching finds "
               f"one of them and compiles nothing. For a single graph, pass the flag as a tensor and choose with "
               f"`torch.where` (or `torch.cond`).")
    elif spec is not None:
        where = f"{PureWindowsPath(spec.user_line.file).name}:{spec.user_line.line}" if spec.user_line else "?"
        code = f"`{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "the code"
        diagnosis += (f" {group.symbol} by automatic dynamic, but {code} at {where} made it a constant again "
                      f"({spec.detail}): each new value compiles a new graph, and automatic dynamic cannot make it "
                      f"reusable.")
        if spec.user_line and spec.user_line.code and f"[{name}]" in spec.user_line.code:
            diagnosis += f" Indexing a ModuleList (or a list) needs a Python int: `{name}` can never be dynamic there."
            fix = (f"Passing `{name}` as a tensor cannot work for an index into a ModuleList or a list: expect one "
                   f"graph per index (raise `torch._dynamo.config.recompile_limit` if there are more indices than it "
                   f"allows), or stack the indexed modules' weights (`torch.func.stack_module_state`) and index the "
                   f"stacked tensors, or call the indexed module outside the compiled code.")
        else:
            fix = (f"Marking `{name}` dynamic cannot help while {code} needs it as a constant: rewrite that line so "
                   f"it does not, or accept one graph per value.")
    elif group.symbol:
        diagnosis += f" {group.symbol}: automatic dynamic, so later values reuse that graph."
        fix = (f"Nothing more to do: later values of `{name}` reuse the graph with the symbolic value. To avoid "
               f"even this recompile, pass `{name}` as a 0-dim tensor.")
    elif values and _is_float(values[0]):
        fix = (f"Pass `{name}` as a 0-dim tensor if it changes per call, or keep it constant: Dynamo kept this "
               f"float specialised (`torch._dynamo.config.specialize_float`, or code that needs it as a constant).")
    elif values and values[0].lstrip("-").isdigit():
        fix = (f"Pass `{name}` as a tensor if it changes per call, or keep it constant; for Python ints Dynamo "
               f"specialises on, `torch._dynamo.config.automatic_dynamic_shapes` (on by default) treats them as "
               f"dynamic after the first change.")
    else:
        fix = f"Keep `{name}` the same between calls, or accept one graph per value (up to the recompile limit)."
    return diagnosis, fix


def _is_float(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return not value.lstrip("-").isdigit()


def _explain_size(group: _GroupDraft, named: UserName, times: str) -> tuple[str, str]:
    """A size change, by cause: an input's shape (mark it dynamic) or a size that comes out of the data
    (an op like nonzero broke the graph; no input can be marked for it)."""
    said, name = named.text, named.in_code
    dim = group.aspect.rsplit(" ", 1)[1]
    values = " → ".join(group.history)
    small = any(value in ("0", "1") for value in group.history)
    if named.data_dependent:
        op = named.produced_by.location
        made = f"`{op.code}` at {PureWindowsPath(op.file).name}:{op.line}" if op and op.code else "an op"
        diagnosis = (f"{named.short} got a new size in dim {dim} ({values}), a size that depends on the data: it is "
                     f"the result of {made}, an op whose output size depends on its input's values, so the graph "
                     f"broke there to run it; Dynamo recompiled {times}.")
    else:
        diagnosis = f"{said} arrived with a new size in dim {dim} ({values}); Dynamo recompiled {times}."
    spec = group.specialised
    if spec is not None:
        where = f"{PureWindowsPath(spec.user_line.file).name}:{spec.user_line.line}" if spec.user_line else "?"
        diagnosis += (f" The dim was dynamic, but the graph it failed against specialised it: {spec.detail} at {where}"
                      + (f" by `{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "")
                      + ", so no other size could reuse that graph.")
    if group.symbol:
        diagnosis += f" {group.symbol}: automatic dynamic"
        diagnosis += (". Sizes 0 and 1 are always specialised, even on a dynamic dim: every switch between 1 and "
                      "another size compiles again." if small else ", so later sizes reuse that graph.")
    elif group.count == 1:
        diagnosis += (" After the first change Dynamo usually makes the dim symbolic (automatic dynamic), so one "
                      "recompile per dim is expected and later sizes reuse the new graph.")
    elif small:
        diagnosis += (" Sizes 0 and 1 are always specialised, even on a dynamic dim: every switch between 1 and "
                      "another size compiles again.")
    else:
        diagnosis += " The dim did not become dynamic, so each new size compiled a new graph."
    resumed = _RESUME.match(group.function or "") if group.resumed_from else None
    operator = eager_trigger(group.units[0]) if group.units else None
    if operator:
        diagnosis += (f" torch started this compile itself, for an eager {operator} call: your code never passed "
                      f"this function to torch.compile.")
    if resumed and not named.data_dependent:
        diagnosis += (f" `{name}` is a local of {group.resumed_from}() that Dynamo hands to the code it resumes "
                      f"after the graph break at line {resumed['line']}.")
    if operator and not named.data_dependent and spec is None:
        fix = (f"`torch.compile(..., dynamic=True)` does not apply to a compile torch starts for an eager {operator} "
               f"call. Mark dim {dim} of that operand dynamic before the call (`torch._dynamo.mark_dynamic(tensor, "
               f"{dim})`), or call {operator} inside a function you compile, where Dynamo traces it with the rest "
               f"of your code and automatic dynamic applies.")
    elif resumed and not named.data_dependent:
        fix = (f"No call of yours can mark `{name}`: it is made inside {group.resumed_from}(). Mark the inputs of "
               f"{group.resumed_from}() it is computed from dynamic (automatic dynamic does so after their first "
               f"change), or remove the graph break at line {resumed['line']} so `{name}` stays inside one graph.")
    elif named.data_dependent:
        fix = ("No input of yours has this size, so mark_dynamic cannot reach it. Keep the op in the graph with "
               "`torch._dynamo.config.capture_dynamic_output_shape_ops = True` (the size becomes an unbacked "
               f"symbol; tell Dynamo what you know about it with `torch._check({name}.shape[{dim}] > 0)`-style checks "
               f"where later code needs them), or move the op out of the compiled code and pass `{name}` in, "
               f"marked with `torch._dynamo.mark_dynamic({name}, {dim})`.")
    elif spec is not None:
        line = f"`{spec.user_line.code}`" if spec.user_line and spec.user_line.code else "the code at that line"
        fix = (f"Marking the dim dynamic cannot help while {line} compares `{name}.shape[{dim}]` with a constant: "
               "that comparison is what makes the size static. Branch on something that is not the size (a flag, "
               "a config value), write the branch with `torch.cond`, or accept one graph per size it tests.")
    elif named.module_state:  # measured on torch 2.13: mark_dynamic alone leaves a buffer static
        fix = ("Dynamo keeps the shapes of module parameters and buffers static: set "
               "`torch._dynamo.config.force_parameter_static_shapes = False` and "
               "`torch._dynamo.config.force_nn_module_property_static_shapes = False`, and mark each new tensor "
               f"when you assign it: `torch._dynamo.mark_dynamic({name}, {dim})`.")
    elif named.role and not named.user:
        fix = (f"Mark dim {dim} dynamic before the first call on the tensor Dynamo calls `{named.dynamo}` "
               f"({named.role}): `torch._dynamo.mark_dynamic(tensor, {dim})` (or "
               f"`torch._dynamo.maybe_mark_dynamic(tensor, {dim})` if it may stay static), or compile with "
               f"`torch.compile(..., dynamic=True)`. Padding it to a few fixed sizes also works.")
    else:
        fix = (f"Mark the dim dynamic before the first call: `torch._dynamo.mark_dynamic({name}, {dim})` "
               f"(or `torch._dynamo.maybe_mark_dynamic({name}, {dim})` if it may stay static), or compile with "
               f"`torch.compile(..., dynamic=True)`. Padding {name} to a few fixed sizes also works.")
    return diagnosis, fix


def _guards_name(unit: CompileUnit, guarded: str) -> bool:
    """Whether `unit`'s guards name `guarded`, their text read back from the log once per unit and name:
    every recompile group of a resume function asks it of each unit of the function its local was made
    in (read per group, a log of 150 such groups would read its guards ~10,000 times)."""
    answers = _GUARDS_NAME.setdefault(unit, {})
    if guarded not in answers:
        answers[guarded] = any(artifact.name == "guards" and guarded in artifact.text for artifact in unit.artifacts)
    return answers[guarded]


_GUARDS_NAME: WeakKeyDictionary[CompileUnit, dict[str, bool]] = WeakKeyDictionary()
