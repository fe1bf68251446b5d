"""A log's chromium events are kept as rows of columns, not as a record each: they are half to three
quarters of a real log's records, and as records they were a fifth of the reader's memory on a log of
many small records. The rows must say everything the records said: where each event is, its compile
id, whether its payload is whole, and the same damage counted once whenever it is checked."""

from __future__ import annotations

import hashlib
import json
import re
import tracemalloc
from pathlib import Path

import pytest

from conftest import ROOT, on_two_threads_at_once
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.torch_trace import read_trace_log
from inspector.core.readers.trace_records import EventRows

LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"
_ENVELOPE = re.compile(rb"^[VIWEC]\d{4} [^\n]*?\] (\{[^\n]*)$", re.M)


def _events_in_file(path: Path) -> list[tuple[int, dict]]:
    """(line, envelope) of each chromium_event line with a payload, read without our reader."""
    found = []
    for line_no, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        match = _ENVELOPE.match(line)
        if match and line.count(b'"chromium_event": {}') and b'"has_payload"' in line:
            found.append((line_no, json.loads(match[1])))
    return found


def test_every_chromium_event_is_a_row_with_its_line_compile_id_and_payload():
    log = read_trace_log(LOG)
    in_file = _events_in_file(LOG)
    assert len(in_file) > 500 and len(log.events) == len(in_file)
    assert not [record for record in log.records if record.kind == "chromium_event"]
    data = LOG.read_bytes()
    for row, (line_no, envelope) in enumerate(in_file):
        assert log.events.line_nos[row] == line_no
        compile_id = log.events.compile_ids[row]
        if "frame_id" in envelope:
            assert (compile_id.frame, compile_id.compile) == (envelope["frame_id"], envelope["frame_compile_id"])
        else:
            assert compile_id is None
        payload = data[log.events.starts[row]:log.events.ends[row]].replace(b"\n\t", b"\n")[1:]
        assert hashlib.md5(payload).hexdigest() == envelope["has_payload"]
        assert log.events.states[row] == EventRows.WHOLE and log.event_json(row) == json.loads(payload)


def _with_one_event_damaged(folder: Path) -> tuple[Path, int]:
    """The bundled log with the payload of its 40th chromium event edited (its md5 then fails), and
    that event's line."""
    line_no, _ = _events_in_file(LOG)[40]
    lines = LOG.read_bytes().split(b"\n")
    ts = next(index for index in range(line_no, len(lines)) if lines[index].startswith(b'\t"ts"'))
    lines[ts] = lines[ts].replace(b'"ts"', b'"ts" ', 1)  # still JSON, no longer what torch hashed
    damaged = folder / "dedicated_log_torch_trace_damaged.log"
    damaged.write_bytes(b"\n".join(lines))
    return damaged, line_no


def test_a_damaged_event_is_counted_once_when_read_and_when_checked_later(tmp_path):
    damaged, line_no = _with_one_event_damaged(tmp_path)
    lines = damaged.read_text().split("\n")  # and a record's payload after the event: damage in the log's order
    graph_line = max(number for number, line in enumerate(lines, start=1) if '{"dynamo_output_graph"' in line)
    lines[graph_line] = lines[graph_line] + " "  # the payload's first line
    damaged.write_text("\n".join(lines))
    checked = read_trace_log(damaged)
    assert checked.problems.counts == {"md5_mismatch": 2}
    assert checked.problems.examples["md5_mismatch"] == [f"line {line_no} (chromium_event)",
                                                         f"line {graph_line} (dynamo_output_graph)"]
    assert [line for line, state in zip(checked.events.line_nos, checked.events.states)
            if state == EventRows.DAMAGED] == [line_no]
    later = read_trace_log(damaged, verify_md5=False)
    assert not later.problems and set(later.events.states) == {EventRows.UNCHECKED}
    later.verify_payloads()
    assert later.problems.to_json() == checked.problems.to_json()
    assert bytes(later.events.states) == bytes(checked.events.states)


@pytest.mark.parametrize("damaged", [False, True], ids=["intact", "one event damaged"])
def test_events_read_by_two_threads_at_once_are_settled_once(tmp_path, damaged):
    """The app's views build spans on a worker while another reads; whichever reads an unchecked
    event first settles it, and its damage is counted once."""
    path = _with_one_event_damaged(tmp_path)[0] if damaged else LOG
    for _trial in range(10):
        log = read_trace_log(path, verify_md5=False)
        decoded = []
        on_two_threads_at_once(lambda: decoded.extend(log.event_json(row) for row in range(len(log.events))))
        assert len(decoded) == 2 * len(log.events) and all(isinstance(event, dict) for event in decoded)
        assert log.problems.counts.get("md5_mismatch", 0) == (1 if damaged else 0)
        assert list(log.events.states).count(EventRows.DAMAGED) == (1 if damaged else 0)
        assert not log.events.md5s


def test_the_stage_spans_are_the_same_from_a_checked_and_an_unchecked_read(tmp_path):
    damaged, _ = _with_one_event_damaged(tmp_path)

    def spans(verify: bool) -> list:
        session = build_trace_session([damaged], damaged, verify_md5=verify)
        return [(str(unit.compile_id), [(span.name, span.start_us, span.end_us, len(span.children))
                                        for root in unit.spans for span in root.walk()])
                for unit in session.units], session.problems.to_json()

    assert spans(True) == spans(False)
    assert spans(True)[0][0][1], "the first unit has its stages"


def test_an_event_costs_a_fraction_of_a_record(tmp_path):
    """20,000 events of a few hundred bytes: ~270 bytes each as records, ~50 as rows."""
    lines = []
    for index in range(20_000):
        event = json.dumps({"name": "stage", "ts": 1_000 + index, "args": {"compile_id": "0/0"},
                            "ph": "B" if index % 2 == 0 else "E", "cat": "dynamo_timed", "tid": 0, "pid": 0},
                           indent=1)
        envelope = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0,
                    "has_payload": hashlib.md5(event.encode()).hexdigest()}
        lines.append(f"V1206 12:00:00.000000 1 torch/_dynamo/utils.py:1] {json.dumps(envelope)}")
        lines.extend("\t" + line for line in event.split("\n"))
    log_path = tmp_path / "dedicated_log_torch_trace_events.log"
    log_path.write_text("\n".join(lines) + "\n")
    tracemalloc.start()
    log = read_trace_log(log_path)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(log.events) == 20_000 and not log.problems
    assert held / 20_000 < 100, f"{held / 20_000:.0f} bytes an event"


def test_a_stage_end_without_its_start_is_counted_in_an_otherwise_whole_log(tmp_path):
    """Its count was lost where nothing else in the log was wrong: an empty problem count is falsy, and
    the span builder took it for none given."""
    end = json.dumps({"name": "never_began", "ts": 1, "ph": "E", "args": {}, "pid": 0, "tid": 0})
    line = (f'V1202 12:18:50.598000 7677 torch/_dynamo/utils.py:2350] {{"chromium_event": {{}}, '
            f'"has_payload": "{hashlib.md5(end.encode()).hexdigest()}"}}\n\t{end}\n')
    log = tmp_path / LOG.name
    log.write_text(line + LOG.read_text())
    session = build_trace_session([log], log)
    session.units[0].spans
    assert session.problems.to_json()["unmatched_span_end"]["examples"] == ["never_began at 1"]
