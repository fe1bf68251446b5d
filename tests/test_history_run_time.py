"""The history dates a run by when it ran, as its own record says — torch's compile metrics in a
TORCH_TRACE log, a recorder file's lines, a capture's manifest — never by when its file was last
written: a log copied yesterday from a run of last year is last year's run, and must not become the
newest run (the baseline `check --history` compares with)."""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timezone
from pathlib import Path

from cli_runner import run_cli
from history_stores import data_home  # noqa: F401 (fixture)

from inspector.core.history.run_record import record_of
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LONG_AGO = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp()


def run_at(path: Path) -> float:
    session = open_path(path)
    return record_of(session, Summary.from_state(session_summary(session)), "id", time.time()).run_at


def test_a_copied_log_is_dated_by_its_compiles_not_by_the_copy(corpus, tmp_path, data_home):
    """The corpus CUDA log ran on 2025-05-21 (its events' `ts` and its compile metrics' `start_time`
    say so); copied here and touched to 2025-01-01, `history` still lists it on 2025-05-21."""
    source = corpus / "inductor_provenance_jit_cuda_log.txt"
    text = source.read_text()
    starts = [float(found) for found in re.findall(r'"start_time": ([0-9.]+)', text)]
    assert starts, "the corpus log carries torch's compile metrics"
    log = tmp_path / "copied.log"
    log.write_text(text)
    os.utime(log, (LONG_AGO, LONG_AGO))
    recorded = run_at(log)
    assert max(starts) <= recorded < max(starts) + 3600  # the last compile's start plus its compile time
    shown = run_cli("summary", str(log))
    assert shown.returncode == 0, shown.stderr
    listed = run_cli("history")
    assert listed.returncode == 0, listed.stderr
    day = time.strftime("%Y-%m-%d", time.localtime(recorded))
    assert f"latest {day} " in listed.stdout and "latest 2025-01-01" not in listed.stdout, listed.stdout
    os.utime(log, None)  # touched now: the run is still last year's
    assert run_at(log) == recorded


def test_a_bundled_capture_is_dated_by_its_manifest():
    manifest = json.loads((BUNDLED / "manifest.json").read_text())
    assert run_at(BUNDLED) == float(manifest["ended"])


def test_a_recorder_file_is_dated_by_its_lines(tmp_path):
    """A recorder file's header and compile lines carry `t` (and the process's `started`): the run is
    dated by its last, not by the file's modification time."""
    events = tmp_path / "events.jsonl"
    header = {"kind": "header", "format": "torch-compile-inspector/recorder", "format_version": 1, "t": 1_700_000_000.0,
              "pid": 10, "started": 1_699_999_990.0, "host": "serving-3", "torch": "2.13.0"}
    compile_line = {"kind": "compile", "t": 1_700_000_050.0, "compile_id": "0/0", "frame": "forward",
                    "file": "/srv/model.py", "line": 3, "compile_s": 0.5, "breaks": 0, "break_reasons": []}
    events.write_text("\n".join(json.dumps(line) for line in (header, compile_line)) + "\n")
    os.utime(events, (LONG_AGO, LONG_AGO))
    assert run_at(events) == 1_700_000_050.0


def test_a_log_without_any_time_of_its_own_falls_back_to_its_modification_time(tmp_path):
    """A recorder file whose lines state no time: the file's modification time is all there is."""
    events = tmp_path / "events.jsonl"
    header = {"kind": "header", "format": "torch-compile-inspector/recorder", "format_version": 1, "pid": 10}
    compile_line = {"kind": "compile", "compile_id": "0/0", "frame": "forward"}
    events.write_text("\n".join(json.dumps(line) for line in (header, compile_line)) + "\n")
    os.utime(events, (LONG_AGO, LONG_AGO))
    assert run_at(events) == LONG_AGO
