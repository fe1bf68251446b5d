"""What the summary reads back from a big log grows with the log, not with its square: a log of many
copies of a real run (the bundled mlp_breaks log repeated by bench/make_big_log.py, as the reader's
bench grows its logs) has as many recompile groups as copies, and each group once read the guards of
every unit of the function it recompiled — ~10,000 payloads read back on the 105 MB bench log, half
of its summary's time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers import torch_trace
from inspector.core.readers.session_loader import open_session
from inspector.core.readers.sources import detect

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"
GUARD_KINDS = ("dynamo_guards", "dynamo_cpp_guards_str")


def _grown_log(folder: Path, mb: float) -> Path:
    log = folder / f"dedicated_log_torch_trace_{mb}.log"
    grow = ROOT / "bench" / "make_big_log.py"
    subprocess.run([sys.executable, str(grow), str(BUNDLED_LOG), str(log), "--mb", str(mb)], check=True, capture_output=True)
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
    log = _grown_log(tmp_path, 8)  # four copies of the run
    session = open_session(detect(log))
    groups = SessionAnalysis(session).recompile_groups

    assert len(groups) >= 12 and any(group.resumed_from for group in groups), \
        "the grown log has recompile groups per copy, some of a resume function"
    subjects = {group.subject for group in groups}
    assert len(guard_reads) <= len(set(guard_reads)) * len(subjects), \
        f"{len(guard_reads)} reads of {len(set(guard_reads))} guards records for {len(subjects)} guarded locals"
