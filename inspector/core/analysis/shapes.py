"""Dynamic shapes per compile unit, from the symbolic-shape records of the log: the symbols Dynamo
created (with the input each stands for), the unbacked ones (sizes that come out of the data), the
guards it added and the symbols it specialised to a constant — each at the user's line that caused
it. This is how "why did my dynamic dim become static, why did 0/1 recompile" goes past the guard
text: the specialisation names the line (`if x.shape[0] == 4:`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, Session, artifact_record
from inspector.core.model.source_location import SourceLocation
from inspector.core.readers.break_reasons import is_library_file, split_guard_comment

SHAPE_RECORDS = {"create_symbol": "symbol", "create_unbacked_symbol": "unbacked", "guard_added": "guard",
                 "guard_added_fast": "guard", "symbolic_shape_specialization": "specialization"}
_SIZE_SOURCE = re.compile(r"^L\['(?P<name>\w+)'\]\.size\(\)\[(?P<dim>\d+)\]$")
# In the unit's guards (torch's dynamo_cpp_guards_str), one line each: the range a symbol's input ends with
# (`LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 64`), the dims the user marked dynamic (`DIMENSION_DYNAMIC_MARKING_
# GUARD: ((getattr(L['x'], '_dynamo_dynamic_indices', set()).issubset({0}))`) and the sizes it was compiled for
# (`TENSOR_MATCH: check_tensor(L['x'], …, size=[None, 8], …)`: None is a dynamic dim).
_RANGE_GUARD, _MARK_GUARD, _TENSOR_GUARD = "LAMBDA_GUARD: ", "DIMENSION_DYNAMIC_MARKING_GUARD: ((getattr(", \
    "TENSOR_MATCH: check_tensor("
_RANGE = re.compile(r"(?:(?P<low>-?\d+) <= )?(?P<source>[LG]\[\S+)(?: <= (?P<high>-?\d+))?(?=\s|$)")
_MARKED = re.compile(r"(?P<source>[LG]\[[^,\s]+), '_dynamo_dynamic_indices', set\(\)\)"
                     r"\.issubset\(\{(?P<dims>[\d, ]*)\}\)")
_TENSOR = re.compile(r"(?P<source>[LG]\[[^,\s]+), ")
_SIZES = "size=["
ZERO_ONE = ("sizes 0 and 1 get graphs of their own (0/1 specialisation: Dynamo assumes a dynamic size is at least 2; "
            "torch suggests `torch._dynamo.decorators.mark_unbacked(tensor, dim)` to keep 0 and 1 in the same graph)")
_LOCAL_SOURCE = re.compile(r"^L\['(?P<name>\w+)'\]$")


@dataclass(frozen=True)
class ShapeEvent(Record):
    """A symbol made, a dimension specialised or a guard added, at the user's line."""

    kind: str  # symbol | unbacked | guard | specialization | ignored_mark (marked dynamic, compiled static)
    symbol: str | None
    source: str | None  # Dynamo's name for the input: L['x'].size()[0]
    shown_source: str | None  # the input in the user's words: `x.shape[0]` for L['x'].size()[0], `n` for L['n']
    detail: str  # the value and range, the guard, or what it was specialised to and why
    value: str | None
    location: str | None  # the user's line, as text
    code: str | None  # the code at that line
    user_line: SourceLocation | None = live(None)  # the line itself (an event read back from a summary: None)


def shape_event(kind: str, symbol: str | None, source: str | None, detail: str, value: str | None,
                user_line: SourceLocation | None) -> ShapeEvent:
    return ShapeEvent(kind, symbol, source, user_source(source) if source else None, detail, value,
                      str(user_line) if user_line else None, user_line.code if user_line else None,
                      user_line=user_line)


def user_source(source: str) -> str:
    size = _SIZE_SOURCE.match(source)
    if size:
        return f"{size['name']}.shape[{size['dim']}]"
    local = _LOCAL_SOURCE.match(source)
    return local["name"] if local else source


# fields read here with the types torch writes them in; a record with another type in one is read without
# that field and counted as a record with an unexpected shape
_FIELD_TYPES = {"reason": str, "sources": (list, tuple), "user_stack": (list, tuple), "symbol_to_sources": dict}


def unit_shapes(unit: CompileUnit, problems: ReadProblems | None = None) -> list[ShapeEvent]:
    """The unit's symbolic-shape events in log order (the records stay on disk until asked for); a
    record with a field of the wrong type is read without it and counted in `problems`."""
    events: list[ShapeEvent] = []
    seen: set[tuple] = set()
    sources: dict[str, str] = {}
    for position, artifact in enumerate(unit.artifacts):
        kind = SHAPE_RECORDS.get(artifact.name)
        if kind is None:
            continue
        record = artifact_record(artifact)
        if record is None:
            continue
        wrong = [name for name, types in _FIELD_TYPES.items()
                 if record.get(name) is not None and not isinstance(record[name], types)]
        if wrong:
            if problems is not None:
                problems.add("bad_record", f"{artifact.name} of {unit.compile_id}: "
                                           + ", ".join(f"`{name}` is {_json_type(record[name])}" for name in wrong),
                             once=("shape record", unit.rank, str(unit.compile_id), position))
            record = {key: value for key, value in record.items() if key not in wrong}
        symbol = record.get("symbol")
        source = record.get("source") or next(iter(record.get("sources") or []), None)
        if symbol and source:
            sources.setdefault(str(symbol), str(source))
        named = record.get("symbol_to_sources")  # a guard's own (export logs create no symbols first)
        for named_symbol, named_source in (named.items() if isinstance(named, dict) else ()):
            sources.setdefault(str(named_symbol), str(named_source))
        event = shape_event(kind, str(symbol) if symbol else None, str(source) if source else None,
                           _detail(kind, record, sources), _value(kind, record), _user_line(record))
        key = (event.kind, event.symbol, event.source, event.detail, str(event.user_line))
        if key not in seen:  # torch logs some twice (the same symbol for the same input): one event
            seen.add(key)
            events.append(event)
    if any(event.kind == "symbol" for event in events):  # a unit without symbols is read without its guards
        events = _as_guarded(unit, events)
    return events


def _as_guarded(unit: CompileUnit, events: list[ShapeEvent]) -> list[ShapeEvent]:
    """The symbols' ranges as the unit's guards end them (torch refines a range as it adds guards: `[2, 64]`
    after `torch._check(x.shape[0] <= 64)`, where the create_symbol record said `[2, int_oo]`), the 0/1
    specialisation in words where torch's guard says it made the lower bound, and each dim the user marked
    dynamic that was compiled static all the same (a size of 0 or 1: Dynamo drops the mark without a word)."""
    ranges: dict[str, tuple[str | None, str | None, bool]] = {}
    marked: dict[str, tuple[list[int], str]] = {}
    sizes: dict[str, list[str]] = {}
    for artifact in unit.artifacts:
        if artifact.name != "guards":
            continue
        text = artifact.text
        for line, at in _lines_with(text, _RANGE_GUARD):
            if (found := _RANGE.match(line, at + len(_RANGE_GUARD))) and (found["low"] or found["high"]):
                ranges.setdefault(found["source"], (found["low"], found["high"], "0/1 specialization" in line))
        for line, at in _lines_with(text, _MARK_GUARD):
            if found := _MARKED.match(line, at + len(_MARK_GUARD)):
                dims = [int(dim) for dim in found["dims"].replace(" ", "").split(",") if dim]
                marked.setdefault(found["source"], (dims, line))
        for line, at in _lines_with(text, _TENSOR_GUARD):
            if found := _TENSOR.match(line, at + len(_TENSOR_GUARD)):
                start = line.find(_SIZES, found.end())
                end = line.find("]", start) if start >= 0 else -1
                if end >= 0:
                    compiled = line[start + len(_SIZES):end].split(",")
                    sizes.setdefault(found["source"], [part.strip() for part in compiled])
    shown = [_refined(event, ranges.get(event.source or "")) if event.kind == "symbol" else event for event in events]
    for source, (dims, line) in marked.items():
        compiled = sizes.get(source, [])
        for dim in dims:
            if dim < len(compiled) and compiled[dim] in ("0", "1"):
                where = split_guard_comment(line)[1]
                shown.append(shape_event(
                    "ignored_mark", None, f"{source}.size()[{dim}]",
                    f"marked dynamic, compiled static: it had size {compiled[dim]} and Dynamo drops a mark on a size "
                    f"0 or 1 without a word; {ZERO_ONE}", compiled[dim], where))
    return shown


def _lines_with(text: str, marker: str) -> Iterator[tuple[str, int]]:
    """Each line of `text` that holds `marker`, in order, with where the marker first is in it: found by
    searching the whole text (a unit's guards run to thousands of lines, few of them of one kind)."""
    at = text.find(marker)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        yield text[start:end], at - start
        at = text.find(marker, end)


def _refined(event: ShapeEvent, guarded: tuple[str | None, str | None, bool] | None) -> ShapeEvent:
    """`event` (a symbol) with its range as its guards left it, when they narrowed it."""
    if guarded is None:
        return event
    low, high, zero_one = guarded
    head, _, created = event.detail.rpartition("range ")
    bounds = created.strip("[]").split(", ")
    if not head or len(bounds) != 2:
        return event
    refined = f"[{low or bounds[0]}, {high or bounds[1]}]"
    detail = head + (f"range {refined} as its guards refined it (created as {created})" if refined != created
                     else f"range {created}")
    if zero_one:
        detail += f"; {ZERO_ONE}"
    return replace(event, detail=detail)


def session_shapes(session: Session) -> list[tuple[CompileUnit, list[ShapeEvent]]]:
    """Every unit with shape events; records of an unexpected shape counted with their rank's problems."""
    return [(unit, events) for rank in session.ranks for unit in rank.units
            if (events := unit_shapes(unit, rank.problems))]


def _json_type(value) -> str:
    """A JSON value's type in words ('a number')."""
    return {bool: "true/false", int: "a number", float: "a number", str: "text", dict: "an object",
            list: "a list"}.get(type(value), type(value).__name__)


def specialisation(unit: CompileUnit, source: str) -> ShapeEvent | None:
    """Where `unit` specialised the input `source` (L['x'].size()[0]) to a constant, if it did."""
    return next((event for event in unit_shapes(unit) if event.kind == "specialization" and event.source == source),
                None)


def _detail(kind: str, record: dict, sources: dict[str, str]) -> str:
    if kind in ("symbol", "unbacked"):
        value = f" = {record['val']}" if record.get("val") is not None else ""
        return f"{record.get('symbol')}{value}, range {record.get('vr', '?')}"
    if kind == "guard":
        expression = str(record.get("expr", "?"))
        named = re.sub(r"\b[su]\d+\b", lambda match: user_source(sources[match[0]]) if match[0] in sources
                       else match[0], expression)
        return expression if named == expression else f"{expression}  ({named})"
    return (f"{record.get('symbol')} specialised to {record.get('value')}"
            + (f" ({record['reason'].replace('_', ' ')})" if record.get("reason") else ""))


def _value(kind: str, record: dict) -> str | None:
    value = record.get("val") if kind in ("symbol", "unbacked") else record.get("value")
    return str(value) if value is not None else None


def _user_line(record: dict) -> SourceLocation | None:
    stack = [frame for frame in record.get("user_stack") or [] if isinstance(frame, dict)]
    user = [frame for frame in stack if not is_library_file(str(frame.get("file", "")))] or stack
    if not user:
        return None
    frame = user[-1]
    return SourceLocation(str(frame.get("file")), frame.get("line"), frame.get("function"), frame.get("code"))
