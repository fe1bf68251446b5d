"""A service restarted appends to its recorder file: every process writes its own header (pid, start,
torch and Triton versions, host), and the file opens with each process's compiles kept apart — a
unit is (process, compile id) — and a torch upgrade between restarts shown; the history takes the
run's Triton version and host from the header; rotated files are read only when they are regular
files inside the file's folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_cli

from inspector.core.history.recording import record_run
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent

SERVICE = '''import sys
import torch
from inspector.capture.recorder import install

recorder = install(sys.argv[1], summary_every_s=3600)
torch.set_num_threads(1)


@torch.compile(dynamic=False)
def step(x):
    return torch.relu(x) * 2


for size in (4, 8):  # two compiles: the second a recompile for the new size
    step(torch.randn(size))
recorder.close()
'''


@pytest.fixture(scope="module")
def restarted(tmp_path_factory, inductor_cache) -> Path:
    """The recorder file of a service run twice (a restart), both processes appending to one file."""
    folder = tmp_path_factory.mktemp("restarted")
    (folder / "service.py").write_text(SERVICE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
           "OMP_NUM_THREADS": "1"}
    for _ in range(2):
        done = subprocess.run([sys.executable, "service.py", "events.jsonl"], env=env, capture_output=True,
                              text=True, timeout=600, cwd=folder)
        assert done.returncode == 0, done.stderr[-3000:]
    return folder / "events.jsonl"


@pytest.mark.slow
def test_a_restarted_service_keeps_both_processes_compiles(restarted):
    records = [json.loads(line) for line in restarted.read_text().splitlines()]
    headers = [record for record in records if record["kind"] == "header"]
    compiles = [record for record in records if record["kind"] == "compile"]
    assert len(headers) == 2 and headers[0]["pid"] != headers[1]["pid"]
    assert all(header["started"] and "triton" in header for header in headers)
    assert len(compiles) == 4  # two per process, each process's ids from 0/0 again
    session = open_path(restarted)
    assert len(session.units) == len(compiles)
    assert [[str(unit.compile_id) for unit in rank.units] for rank in session.ranks] == [["[0/0]", "[0/1]"]] * 2
    shown = run_cli("summary", str(restarted), "--no-history")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == "Compile units: 4 on 2 ranks"  # a rank of a recorder file is a process that wrote it
    assert [line.split()[:3] for line in lines[2:6]] == [["rank", "0", "[0/0]"], ["rank", "0", "[0/1]"],
                                                         ["rank", "1", "[0/0]"], ["rank", "1", "[0/1]"]]


@pytest.mark.slow
def test_a_torch_upgrade_between_restarts_is_shown(restarted, tmp_path):
    lines = restarted.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["kind"] == "header"
    import torch

    first["torch"] = "2.12.0"  # the first process ran the torch before the upgrade
    upgraded = tmp_path / "events.jsonl"
    upgraded.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    shown = run_cli("summary", str(upgraded), "--no-history")
    assert shown.returncode == 0, shown.stderr
    assert f"torch 2.12.0 → {torch.__version__}" in shown.stdout.splitlines()[0]


def header(pid: int, started: float, torch: str = "2.13.0", triton: str | None = "3.5.0") -> str:
    return json.dumps({"kind": "header", "format": "torch-compile-inspector/recorder", "format_version": 1,
                       "t": started, "pid": pid, "started": started, "host": "serving-3", "python": "3.11.7",
                       "torch": torch, "triton": triton, "program": "serve.py"})


def compile_line(compile_id: str, frame: str = "forward") -> str:
    return json.dumps({"kind": "compile", "t": 1.0, "compile_id": compile_id, "frame": frame,
                       "file": "/srv/model.py", "line": 3, "compile_s": 0.5, "breaks": 0, "break_reasons": []})


def test_the_history_takes_triton_and_host_from_the_recorder_header(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join([header(10, 100.0), compile_line("0/0")]) + "\n")
    os.utime(events, (100.0, 100.0))  # written long ago: the history records it on any open
    session = open_path(events)
    assert (session.triton_version, session.host) == ("3.5.0", "serving-3")
    recorded = record_run(session, session_summary(session), str(tmp_path / "history.sqlite"), force=True)
    assert (recorded.run.triton_version, recorded.run.host) == ("3.5.0", "serving-3")


def test_a_rotated_file_linked_out_of_the_folder_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    folder = tmp_path / "logs"
    outside.mkdir()
    folder.mkdir()
    (outside / "secret.jsonl").write_text("\n".join([header(9, 50.0), compile_line("5/0", "elsewhere")]) + "\n")
    (folder / "events.jsonl.1").symlink_to(outside / "secret.jsonl")
    (folder / "events.jsonl.2").write_text("\n".join([header(10, 100.0), compile_line("0/0")]) + "\n")
    (folder / "events.jsonl").write_text("\n".join([header(10, 100.0), compile_line("0/1")]) + "\n")
    session = open_path(folder / "events.jsonl")
    assert [str(unit.compile_id) for unit in session.units] == ["[0/0]", "[0/1]"]  # FILE.2 and FILE, one process
    summary = Summary.from_state(session_summary(session))
    assert "elsewhere" not in {unit.shown for unit in summary.units}


def test_a_restart_appended_without_a_header_loses_no_compile(tmp_path):
    """A file an older recorder appended to after a restart (one header, compile ids from 0/0 again)."""
    events = tmp_path / "events.jsonl"
    events.write_text("\n".join([header(10, 100.0), compile_line("0/0"), compile_line("0/1"),
                                 compile_line("0/0"), compile_line("0/1")]) + "\n")
    session = open_path(events)
    assert [[str(unit.compile_id) for unit in rank.units] for rank in session.ranks] == [["[0/0]", "[0/1]"]] * 2
