"""A payload line that holds a tab of its own (generated code, a string in a graph) is read as torch
hashed it, whichever way its md5 is checked — as the log is read, by the md5 helper, or on first
read: torch's md5 says intact, and the text keeps the tab. A tab slipped into a payload since torch
wrote it is damage, counted, however many line breaks the payload has: each line's leading tab is
what the reader strips, never a tab within a line."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuzz_cases import fix_md5, split_records
from inspector.core.readers import digest_helper
from inspector.core.readers.payload_digest import strip_tabs
from inspector.core.readers.torch_trace import read_trace_log

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"
OWN_TAB = "\t# a tab of its own"


def _with_a_tab_in_the_graph(to: Path, md5_as_torch: bool) -> Path:
    """The bundled log with a tab inside the first line of its first Dynamo graph's payload; its md5
    redone as torch would have written it (`md5_as_torch`), or left as it was (the tab came later)."""
    records = split_records(LOG.read_text())
    graph = next(record for record in records if '"dynamo_output_graph"' in record.envelope and record.payload)
    graph.payload[0] += OWN_TAB
    if md5_as_torch:
        fix_md5(graph)
    to.write_text("\n".join(record.render() for record in records) + "\n")
    return to


@pytest.fixture(params=["as read", "by the md5 helper", "on first read"])
def how(request, monkeypatch):
    if request.param == "by the md5 helper":
        monkeypatch.setattr(digest_helper, "HELPER_MIN_BYTES", 0)
    else:
        monkeypatch.setenv("TCI_SERIAL", "1")
    return request.param


def _read(log: Path, how: str):
    read = read_trace_log(log, verify_md5=how != "on first read")
    graph = next(record for record in read.records if record.kind == "dynamo_output_graph")
    return read, read.payload(graph)


def test_a_tab_of_its_own_that_torch_hashed_is_intact_and_kept(tmp_path, how):
    read, text = _read(_with_a_tab_in_the_graph(tmp_path / "run.log", md5_as_torch=True), how)
    assert OWN_TAB in text.splitlines()[0]
    assert not read.problems, read.problems.get_state()


def test_a_tab_added_after_torch_hashed_the_payload_is_counted_as_damage(tmp_path, how):
    read, text = _read(_with_a_tab_in_the_graph(tmp_path / "run.log", md5_as_torch=False), how)
    assert OWN_TAB in text.splitlines()[0]
    assert read.problems.counts["md5_mismatch"] == 1


def _by_line(payload: bytes) -> bytes:
    """torch's payload text, line by line: CRLF copies read as LF, the last line breaks dropped, each
    line without its one leading tab where it has one."""
    lines = payload.replace(b"\r\n", b"\n").rstrip(b"\r\n").split(b"\n")
    return b"\n".join(line[1:] if line.startswith(b"\t") else line for line in lines)


@pytest.mark.parametrize("payload", [b"\tx\n\ty", b"\tx\ty\n\tz\n", b"\tx\n\t\ty", b"\tx\r\n\ty\r\n", b"x\n\ty",
                                     b"\tx\n\ty\t", b"\t", b"", b"\n\t\n\t", b"\t\t\t"])
def test_stripping_takes_each_lines_leading_tab_and_nothing_else(payload):
    assert strip_tabs(payload) == _by_line(payload)
