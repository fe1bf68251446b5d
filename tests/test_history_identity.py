"""The run history knows a run by what it is, not where it lies: two opens of one bundle are one run;
the host and git commit are the run's own (from its manifest or recorder header), never read from
folders an untrusted log names (a FIFO there hangs nothing); `check --history` keeps a log written a
moment ago, never takes a failed run as its baseline, and knows a break site after lines move; a
PostgreSQL password is never shown, wherever the address carries it."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from cli_runner import run_cli, run_cli_process
from history_stores import data_home, postgres, store_address  # noqa: F401 (fixtures)

from inspector.capture.launcher import CapturePlan, CaptureSettings, write_manifest
from inspector.core.history.alerts import check_against_history, earlier_runs
from inspector.core.history.history_text import render_runs
from inspector.core.history.recording import check_session, record_run
from inspector.core.history.run_record import UNKNOWN_HOST, record_of, run_identity
from inspector.core.history.run_store import open_store
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import close_session, open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
BUNDLED_LOG = next((BUNDLED / "trace").glob("*.log"))
SCRIPT = json.loads((BUNDLED / "manifest.json").read_text())["script"]


def settled_copy(log: Path, to: Path) -> Path:
    """A copy of `log` last written a minute ago (a log the history records on any open)."""
    to.write_bytes(log.read_bytes())
    before = time.time() - 60
    os.utime(to, (before, before))
    return to


def runs_of(script: str, env: dict | None = None) -> list[dict]:
    listed = run_cli("history", script, "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)["runs"]


# --- where the commit and host come from -----------------------------------------------------------

def test_a_log_naming_a_fifo_as_git_head_opens_with_commit_and_host_unknown(tmp_path, data_home):
    """A log whose frames lie in a folder with a FIFO at .git/HEAD: reading the commit there would
    block forever; the history reads no file a log names, and says the run's commit and host are
    not known (a log does not record them)."""
    hostile = tmp_path / "hostile"
    (hostile / ".git").mkdir(parents=True)
    os.mkfifo(hostile / ".git" / "HEAD")
    text = BUNDLED_LOG.read_text().replace(str(Path(SCRIPT).parent), str(hostile))
    log = tmp_path / "hostile.log"
    log.write_text(text)
    before = time.time() - 60
    os.utime(log, (before, before))
    shown = run_cli_process("summary", str(log), timeout=120)  # a child: a hang in open(.git/HEAD) is contained
    assert shown.returncode == 0, shown.stderr
    (run,) = runs_of(str(hostile / "mlp_breaks.py"))
    assert run["git_commit"] is None and run["host"] == UNKNOWN_HOST == "unknown"


def test_a_capture_keeps_its_commit_and_host_and_the_history_takes_them_from_it(tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    plan = CapturePlan(tmp_path / "s", ["python"], {}, CaptureSettings(), script=ROOT / "resources" / "examples"
                       / "mlp_breaks.py")
    plan.session.mkdir()
    assert write_manifest(plan)["git_commit"] == head.stdout.strip()
    # a capture made on another machine at another commit: the history says where and what it ran
    copy = shutil.copytree(BUNDLED, tmp_path / "elsewhere")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["host"]["node"], manifest["git_commit"] = "trainer-7", "a1" * 20
    (copy / "manifest.json").write_text(json.dumps(manifest))
    session = open_path(copy)
    run = record_of(session, Summary.from_state(session_summary(session)), "id", time.time())
    assert (run.host, run.git_commit) == ("trainer-7", "a1" * 20)


# --- one run, however often and wherever it is opened ------------------------------------------

def test_one_bundle_opened_twice_is_one_run(tmp_path):
    bundle = tmp_path / "run.tcinspect"
    assert run_cli("bundle", str(BUNDLED), "-o", str(bundle)).returncode == 0
    store = str(tmp_path / "history.sqlite")
    kept = []
    for _ in range(2):  # each open extracts the bundle into a new temporary folder
        session = open_path(bundle)
        try:
            kept.append(record_run(session, session_summary(session), store, force=True))
        finally:
            close_session(session)
    assert kept[0].new and not kept[1].new and kept[1].run.run_id == kept[0].run.run_id
    moved = open_path(shutil.copytree(BUNDLED, tmp_path / "moved"))  # the folder copied elsewhere
    assert run_identity(moved) == run_identity(open_path(BUNDLED)) == kept[0].run.identity
    with open_store(store) as opened:
        assert len(opened.runs_of()) == 1


def test_check_history_keeps_a_log_written_a_moment_ago(tmp_path, data_home):
    """A gate runs right after the job wrote its log: the run is kept (its producer has exited), so
    the next job has a baseline."""
    log = tmp_path / "fresh.log"
    log.write_bytes(BUNDLED_LOG.read_bytes())
    checked = run_cli("check", str(log), "--history")
    assert "still changing" not in checked.stderr + checked.stdout
    assert "PASS history: no earlier run of mlp_breaks.py in the history" in checked.stdout
    (run,) = runs_of(SCRIPT)
    assert run["source"] == str(log) and run["gate"] == "pass"
    again = tmp_path / "next.log"  # the next job's log
    again.write_bytes(BUNDLED_LOG.read_bytes() + b"\n")
    nxt = run_cli("check", str(again), "--history")
    assert nxt.returncode == 0 and f"compared with run #{run['run']} of" in nxt.stdout


# --- what a gate compares with ---------------------------------------------------------------------

def test_a_retried_failing_run_is_compared_with_the_last_run_that_passed(tmp_path, store_address):
    """Run #1 had no breaks; the capture (4 breaks) fails the gate; retrying the job — the same breaks
    in a new run — must fail again against run #1, not pass against the failure."""
    capture = open_path(BUNDLED)
    summary = Summary.from_state(session_summary(capture))
    clean = record_of(capture, summary, "clean run", time.time())
    clean = dataclasses.replace(clean, run_at=clean.run_at - 3600, sites=(), breaks=0, causes=(), recompiles=0)
    with open_store(store_address) as store:
        first, _ = store.add(clean)
    checks, failed = check_session(capture, summary, store_address)
    assert any(check.name == "history-breaks" and check.passed is False for check in checks)
    assert failed.run.gate == "fail"
    retry = open_path(settled_copy(BUNDLED_LOG, tmp_path / "retry.log"))
    checks, recorded = check_session(retry, session_summary(retry), store_address)
    breaks = next(check for check in checks if check.name == "history-breaks")
    assert breaks.passed is False, breaks.reason
    assert breaks.reason.startswith("graph breaks 0 → 4, first seen in this run:")
    assert f"compared with run #{first.run_id} of" in breaks.reason
    assert recorded.run.gate == "fail"


def test_a_break_site_or_recompile_cause_moved_down_a_line_is_not_new():
    capture = open_path(BUNDLED)
    run = dataclasses.replace(record_of(capture, Summary.from_state(session_summary(capture)), "now", time.time()),
                              run_id=2)
    assert run.sites and run.causes

    def moved(location: str) -> str:  # "file:19 in forward" → "file:20 in forward"
        where, _, function = location.rpartition(" in ")
        file, _, line = where.rpartition(":")
        return f"{file}:{int(line) + 1} in {function}"

    earlier = dataclasses.replace(
        run, identity="before", run_at=run.run_at - 60, run_id=1,
        sites=tuple(dataclasses.replace(site, location=moved(site.location)) for site in run.sites),
        causes=tuple(dataclasses.replace(cause, cause=cause.cause.replace(")", ":7)", 1)) for cause in run.causes))
    checks = {check.name: check for check in check_against_history(run, earlier_runs(run, [earlier]))}
    assert checks["history-breaks"].passed, checks["history-breaks"].reason
    assert checks["history-recompiles"].passed, checks["history-recompiles"].reason
    shown = render_runs(run.script, [earlier, run])
    assert "new break site" not in shown and "new recompile cause" not in shown, shown
    # the same line with another reason is a new site
    other = dataclasses.replace(earlier, sites=tuple(dataclasses.replace(site, reason="another reason")
                                                     for site in earlier.sites))
    assert not check_against_history(run, earlier_runs(run, [other]))[0].passed


# --- passwords -------------------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["postgresql://u@127.0.0.1:1/db?password=hunter2",
                                     "postgresql://u:hunter2@127.0.0.1:1/db",
                                     "postgres://u@127.0.0.1:1/db?sslmode=disable&password=hunter2"])
def test_a_postgresql_password_is_never_shown(address):
    shown = run_cli("history", "--store", address)
    assert shown.returncode == 2
    assert "hunter2" not in shown.stdout + shown.stderr
    assert "password=***" in shown.stderr and "127.0.0.1" in shown.stderr


def test_a_debug_folder_is_one_run_wherever_it_lies(compile_debug_run, tmp_path):
    """A TORCH_COMPILE_DEBUG folder has no single log: its identity is the content of its files."""
    folder = compile_debug_run.folder / "torch_compile_debug"
    session = open_path(folder)
    identity = run_identity(session, settled_only=False)
    assert identity is not None
    copy = shutil.copytree(folder, tmp_path / "copied", symlinks=True)
    assert run_identity(open_path(copy), settled_only=False) == identity


def test_a_folder_of_rank_logs_is_one_run_wherever_it_lies(corpus, tmp_path):
    folder = corpus / "multi_rank_logs"
    identity = run_identity(open_path(folder), settled_only=False)
    assert identity is not None
    copy = shutil.copytree(folder, tmp_path / "ranks")
    assert run_identity(open_path(copy), settled_only=False) == identity


def test_the_triton_version_is_taken_from_torchs_compilation_metrics(tmp_path):
    """torch's compilation metrics name the Triton a compile used (empty on a machine without one)."""
    plain = open_path(BUNDLED_LOG)
    assert record_of(plain, Summary.from_state(session_summary(plain)), "id", time.time()).triton_version is None
    text = BUNDLED_LOG.read_text()
    assert '"triton_version": ""' in text
    log = tmp_path / "gpu.log"
    log.write_text(text.replace('"triton_version": ""', '"triton_version": "3.5.0"'))
    session = open_path(log)
    assert record_of(session, Summary.from_state(session_summary(session)), "id", time.time()).triton_version == "3.5.0"
