"""What the summary reads back from a big log grows with the log, not with its square. A log of many
copies of a real run (the bundled mlp_breaks log repeated as bench/make_big_log.py grows the reader's
bench logs) has recompile groups in every copy; each group of a resume function asks whether the guards
of every unit of the function its local was made in name that local. Those guards are read back from
the log once per unit and local, not once per group (per group: ~10,000 reads on the 105 MB bench log,
half of its summary's time)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers import torch_trace
from inspector.core.readers.session_loader import open_session
from inspector.core.readers.sources import detect

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"
GUARD_KINDS = ("dynamo_guards", "dynamo_cpp_guards_str")


def _grown_log(folder: Path, copies: int) -> Path:
    """The bundled log repeated `copies` times with fresh frame ids, as bench/make_big_log.py grows it."""
    spec = importlib.util.spec_from_file_location("make_big_log", ROOT / "bench" / "make_big_log.py")
    grow = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grow)
    records = grow.split_records(BUNDLED_LOG.read_bytes())
    frames = max(int(m.group(1)) for envelope, _ in records for m in grow._FRAME.finditer(envelope)) + 1
    log = folder / "dedicated_log_torch_trace_grown.log"
    log.write_bytes(b"".join(grow.shifted_copy(records, copy * frames, copy * 1e7) for copy in range(copies)))
    return log


@pytest.fixture
def guard_reads(monkeypatch):
    """The line of each guards record whose payload is read back from its log."""
    reads: list[int] = []
    payload = torch_trace.TraceLog.payload

    def counted(log, record):
        if record.kind in GUARD_KINDS:
            reads.append(record.line_no)
        return payload(log, record)

    monkeypatch.setattr(torch_trace.TraceLog, "payload", counted)
    return reads


def test_recompile_groups_read_each_units_guards_once_however_many_groups_ask(tmp_path, monkeypatch, guard_reads):
    monkeypatch.setenv("TCI_NO_CACHE", "1")
    log = _grown_log(tmp_path, 4)
    session = open_session(detect(log))
    groups = SessionAnalysis(session).recompile_groups

    assert len(groups) >= 12 and any(group.resumed_from for group in groups), \
        "the grown log has recompile groups per copy, some of a resume function"
    subjects = {group.subject for group in groups}
    assert len(guard_reads) <= len(set(guard_reads)) * len(subjects), \
        f"{len(guard_reads)} reads of {len(set(guard_reads))} guards records for {len(subjects)} guarded locals"
