"""How a read log's index is written down and read back: its records as columns (a list per field
decodes faster than a list per record), its chromium events packed, its string table, and what could
not be read. The index cache keeps this shape on disk (index_cache.FORMAT is its version), and the
summary's forked copy hands its problems back in it (forked_parts.py). Decoding takes plain JSON
values only and raises TypeError, ValueError, KeyError or IndexError on a shape that is not this one."""

from __future__ import annotations

import base64
import sys
from array import array
from pathlib import Path

from inspector.core.model.compile_id import CompileId
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.torch_trace import TraceLog
from inspector.core.readers.trace_records import EventRows, TraceRecord

# The record fields, each stored as one column (a list per field decodes faster than a list per record).
COLUMNS = ("kind", "name", "meta", "compile_id", "rank", "line_no", "line_start", "line_end",
           "payload_start", "payload_end", "payload_md5", "payload_intact")


def encode_log(log: TraceLog) -> dict:
    columns = {name: [getattr(record, name) for record in log.records] for name in COLUMNS}
    columns["compile_id"] = _encode_ids(columns["compile_id"])
    return {"columns": columns, "events": _encode_events(log.events),
            "strings": [[key, value] for key, value in log.strings.items()], "problems": encode_problems(log.problems),
            "rank": log.rank, "size": log.size, "ends_with_newline": log.ends_with_newline}


def encode_problems(problems: ReadProblems) -> list:
    return [[category, count, problems.examples.get(category, [])] for category, count in problems.counts.items()]


def decode_problems(rows: list) -> ReadProblems:
    problems = ReadProblems()
    for category, count, examples in rows:
        if not (isinstance(category, str) and isinstance(count, int) and isinstance(examples, list)
                and all(isinstance(example, str) for example in examples)):
            raise ValueError("problems")
        problems.counts[category] = count
        if examples:
            problems.examples[category] = examples
    return problems


def _encode_ids(compile_ids: list) -> list:
    return [None if cid is None else cid.get_state() for cid in compile_ids]


def _all(values: list, *types: type) -> bool:
    return set(map(type, values)).issubset(types)  # in C: a reopen checks every value of ~100k records


def decode_log(path: Path, body: dict, size: int) -> TraceLog:
    """Rebuild the index, checking every value's type and range: a wrong one raises, and the
    caller then reads the log itself."""
    if body["size"] != size:
        raise ValueError("size")
    columns = body["columns"]
    values = [columns[name] for name in COLUMNS]
    count = len(values[0])
    none = type(None)
    kinds, names, metas, cids, ranks, line_nos, line_starts, line_ends, starts, ends, md5s, intact = values
    if not (all(type(column) is list and len(column) == count for column in values)
            and _all(kinds, str) and _all(names, str) and _all(metas, dict)
            and _all(ranks, int, none) and _all(line_nos, int) and _all(md5s, str, none)
            and _all(intact, bool, none) and _all(line_starts, int) and _all(line_ends, int)
            and _all(starts, int) and _all(ends, int)
            and all(0 <= a <= b <= size for a, b in zip(line_starts, line_ends))
            and all(-1 <= a <= b <= size for a, b in zip(starts, ends))):
        raise ValueError("records")
    compile_ids: dict[tuple, CompileId] = {}  # one object per distinct id, shared by its records
    cids = _decode_ids(cids, compile_ids)
    intern = sys.intern
    records = list(map(TraceRecord, map(intern, kinds), map(intern, names), metas, cids, ranks,
                       line_nos, line_starts, line_ends, starts, ends, md5s, intact))
    strings = {}
    for key, value in body["strings"]:
        if not isinstance(key, int) or not isinstance(value, str):
            raise ValueError("string table")
        strings[key] = value
    problems = decode_problems(body["problems"])
    rank = body["rank"]
    if type(rank) not in (int, type(None)) or not isinstance(body["ends_with_newline"], bool):
        raise ValueError("log")
    return TraceLog(path, records, strings, problems, rank, size, body["ends_with_newline"],
                    _decode_events(body["events"], size, compile_ids))


def _decode_ids(cids: list, compile_ids: dict[tuple, CompileId]) -> list[CompileId | None]:
    """Each stored id as a CompileId, one object per distinct id (kept in `compile_ids`)."""
    for cid in cids:
        if cid is not None and tuple(cid) not in compile_ids:
            compile_ids[tuple(cid)] = CompileId.from_state(cid)
    return [None if cid is None else compile_ids[tuple(cid)] for cid in cids]


# The event rows' columns are stored as their bytes (little-endian, base64), their compile ids as places
# in a table: read back as lists of ints, the tens of thousands of rows of a big log would make a reopen's
# peak memory a large fraction of the log's size.
def _encode_events(events: EventRows) -> dict:
    id_table, id_rows = _distinct(events.compile_ids)
    return {"line_no": _packed(events.line_nos), "start": _packed(events.starts), "end": _packed(events.ends),
            "state": _packed(array("b", events.states)), "compile_ids": _encode_ids(id_table),
            "compile_id": _packed(id_rows)}


def _distinct(values: list) -> tuple[list, array]:
    """The distinct values (in order of first use) and, for each value, its place among them."""
    places: dict = {}
    rows = array("q", (places.setdefault(value, len(places)) for value in values))
    return list(places), rows


def _packed(column: array) -> str:
    if sys.byteorder == "big":
        column = array(column.typecode, column)
        column.byteswap()
    return base64.b64encode(column.tobytes()).decode("ascii")


def _unpacked(text, typecode: str) -> array:
    column = array(typecode)
    column.frombytes(base64.b64decode(text.encode("ascii"), validate=True))  # ValueError when not whole items
    if sys.byteorder == "big":
        column.byteswap()
    return column


def _decode_events(body: dict, size: int, compile_ids: dict[tuple, CompileId]) -> EventRows:
    line_nos, starts, ends, id_rows = (_unpacked(body[name], "q") for name in ("line_no", "start", "end", "compile_id"))
    states = bytearray(_unpacked(body["state"], "b").tobytes())
    id_table = _decode_ids(body["compile_ids"], compile_ids)
    count = len(line_nos)
    if not (all(len(column) == count for column in (starts, ends, states, id_rows))
            and set(states) <= {EventRows.WHOLE, EventRows.DAMAGED}
            and all(0 <= a <= b <= size for a, b in zip(starts, ends))
            and all(0 <= place < len(id_table) for place in set(id_rows))):
        raise ValueError("events")
    events = EventRows()
    events.line_nos, events.starts, events.ends, events.states = line_nos, starts, ends, states
    events.compile_ids = [id_table[place] for place in id_rows]
    return events
