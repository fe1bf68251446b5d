"""The run history: runs recorded as they are read, once per version of their files; `history`
listing a script's runs with the figures its summary states; `check --history` naming the run it
compares with and the change; the same store tests on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from history_stores import data_home, postgres, store_address  # noqa: F401 (fixtures)

from inspector.core.analysis.comparison import timed_rounds
from inspector.core.history.alerts import check_against_history, earlier_runs
from inspector.core.history.recording import record_run
from inspector.core.history.git_work_tree import git_commit
from inspector.core.history.run_record import record_of, run_identity
from inspector.core.history.run_store import SCHEMA_VERSION, StoreError, default_store_path, open_store
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import open_path
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
BUNDLED_LOG = next((BUNDLED / "trace").glob("*.log"))


@pytest.fixture(scope="module")
def bundled():
    """The bundled capture and its own TORCH_TRACE log: two runs of one script, with their summaries."""
    session, log = open_path(BUNDLED), open_path(BUNDLED_LOG)
    return (session, session_summary(session)), (log, session_summary(log))


def test_summary_records_the_run_once_with_the_figures_its_summary_states(data_home):
    first = run_cli("summary", str(BUNDLED))
    assert first.returncode == 0, first.stderr
    assert default_store_path() == data_home / "torch-compile-inspector" / "history.sqlite"
    assert run_cli("summary", str(BUNDLED), "--json").returncode == 0  # the same files again: the same run
    summary = json.loads(run_cli("summary", str(BUNDLED), "--json").stdout)
    listed = run_cli("history", json.loads((BUNDLED / "manifest.json").read_text())["script"], "--json")
    runs = json.loads(listed.stdout)["runs"]
    assert len(runs) == 1
    run = runs[0]
    assert run["breaks"] == len(summary["graph_breaks"]) == 4
    assert [site["location"] for site in run["break_sites"]] == [site["location"] for site in summary["break_sites"]]
    assert run["recompiles"] == len(summary["recompiles"]) == 3
    assert run["compile_s"] == summary["compile_time"]["total_s"]
    assert run["kernels"] == summary["kernels"]["total"]
    assert run["cache"]["fx_graph"] == {key: summary["cache"]["fx_graph"][key] for key in ("hit", "miss", "bypass")}
    assert run["speedup"]["value"] == summary["speedup"]["value"]
    assert run["torch_version"] == summary["torch_version"] and run["mode"] == "default"
    assert run["memory_mb"] == summary["run"]["memory"]["compiled"]["cpu_rss_high_water_mb"]
    verdict = {figure["key"]: figure["value"] for figure in summary["verdict"]}
    assert run["cache_hit_rate"] * 100 == verdict["cache_hit_rate"]  # the rate the summary states


def test_history_lists_a_scripts_runs_with_their_figures(data_home):
    assert run_cli("summary", str(BUNDLED)).returncode == 0
    assert run_cli("summary", str(BUNDLED_LOG)).returncode == 0  # its log: another run of the same script
    script = json.loads((BUNDLED / "manifest.json").read_text())["script"]
    shown = run_cli("history", script)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"2 run(s) of {script}"
    rows = [line for line in lines if line.lstrip().startswith("#")]
    assert len(rows) == 2 and all("4 @ 2" in row and "23.2 s" in row and "2.13.0+cpu" in row for row in rows)
    scripts = run_cli("history")
    assert f"2 run(s), latest" in scripts.stdout and script in scripts.stdout


def test_no_history_switches_record_nothing(data_home):
    assert run_cli("summary", str(BUNDLED), "--no-history").returncode == 0
    assert run_cli("summary", str(BUNDLED), env={"TCI_NO_HISTORY": "1"}).returncode == 0
    assert not default_store_path().exists() or "holds no run" in run_cli("history").stdout


def test_check_history_names_the_run_it_compares_with(data_home):
    # the log's compiles ended before its capture did: the log is the earlier run, the capture's baseline
    assert run_cli("summary", str(BUNDLED_LOG)).returncode == 0
    checked = run_cli("check", str(BUNDLED), "--history")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert ("PASS history-breaks: no new graph-break site (graph breaks 4 → 4); compared with run #1 of"
            in checked.stdout)
    assert "PASS history-recompiles: no new recompile cause (recompiles 3 → 3)" in checked.stdout


def test_new_breaks_and_a_fallen_hit_rate_fail_naming_the_change(bundled):
    (session, summary), _ = bundled
    run = dataclasses.replace(record_of(session, Summary.from_state(summary), "now", time.time()), run_id=7)
    warm = {name: dataclasses.replace(count, hit=count.miss, miss=0) for name, count in run.caches.items()}
    clean = dataclasses.replace(run, identity="before", run_at=run.run_at - 60, run_id=6, sites=(), breaks=0,
                                causes=(), recompiles=0, caches=warm)
    checks = {check.name: check for check in check_against_history(run, earlier_runs(run, [clean, run]))}
    breaks = checks["history-breaks"]
    assert breaks.passed is False
    assert breaks.reason.startswith("graph breaks 0 → 4, first seen in this run: ")
    assert "mlp_breaks.py:19 in forward: Data-dependent branching (×2)" in breaks.reason
    assert "compared with run #6 of" in breaks.reason
    assert checks["history-recompiles"].passed is False and "recompiles 0 → 3" in checks["history-recompiles"].reason
    cache = checks["history-cache"]
    assert cache.passed is False and "FX graph cache hit rate 100% → 0%" in cache.reason


def test_store_keeps_a_run_once_and_reads_it_back(store_address, bundled):
    (session, summary), (log, log_summary) = bundled
    first = record_run(session, summary, store_address, force=True)
    again = record_run(session, summary, store_address, force=True)
    other = record_run(log, log_summary, store_address, force=True)
    assert first.new and not again.new and again.run.run_id == first.run.run_id and other.new
    with open_store(store_address) as store:
        assert store.schema_version() == SCHEMA_VERSION
        runs = store.runs_of(first.run.script)
    # oldest first: the log's last compile ended before its capture did (each dated by its own record)
    assert [run.run_id for run in runs] == [other.run.run_id, first.run.run_id]
    kept = runs[1]
    assert kept == dataclasses.replace(first.run)  # every figure, site, cause, cache and unit as written
    assert len(kept.unit_rows) == 6 and kept.cache_hit_rate == 0.0 and kept.break_sites == 2


def test_store_refuses_a_newer_schema(store_address):
    with open_store(store_address) as store:
        with store._transaction() as cursor:
            cursor.execute(store._sql("UPDATE schema_version SET version = ?"), (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match=f"schema version {SCHEMA_VERSION + 1}, newer than this tool's"):
        open_store(store_address)


def test_an_unreadable_store_is_said_not_raised(tmp_path, bundled):
    (session, summary), _ = bundled
    broken = tmp_path / "history.sqlite"
    broken.write_bytes(b"not a database" * 100)
    recorded = record_run(session, summary, str(broken), force=True)
    assert recorded.run is None and "cannot open the history" in recorded.said


def test_an_older_store_is_migrated(tmp_path):
    path = tmp_path / "history.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE schema_version (version INTEGER NOT NULL)").connection.commit()
    with open_store(str(path)) as store:
        assert store.schema_version() == SCHEMA_VERSION and store.runs_of() == []


def test_a_store_of_the_first_schema_is_migrated_and_its_runs_kept(tmp_path, bundled):
    from inspector.core.history.run_store import MIGRATIONS

    (session, summary), _ = bundled
    path = tmp_path / "history.sqlite"
    # the tables as version 1 made them, with one run in them
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for statement in MIGRATIONS[0]:
        connection.execute(statement.format(id="INTEGER PRIMARY KEY AUTOINCREMENT", real="REAL"))
    connection.execute("INSERT INTO schema_version (version) VALUES (1)")
    connection.execute("INSERT INTO runs (identity, run_at, recorded_at, host, kind, source, tool_version, options, "
                       "complete, units, breaks, recompiles, kernels) VALUES ('old', 1, 1, 'h', 'capture', 's', "
                       "'0.1', '{}', 1, 6, 4, 3, 10)")
    connection.commit()
    connection.close()
    with open_store(str(path)) as store:
        assert store.schema_version() == SCHEMA_VERSION == 3
        (old,) = store.runs_of()
        assert (old.breaks, old.recompiles, old.rounds) == (4, 3, ())
        run, new = store.add(record_of(session, Summary.from_state(summary), "new", time.time()))
        assert new and run.rounds == tuple(timed_rounds(session.results))


def test_a_log_still_being_written_is_not_recorded(tmp_path):
    log = tmp_path / "live.log"
    log.write_bytes(BUNDLED_LOG.read_bytes())
    assert run_identity(open_path(log)) is None  # modified just now
    settled = time.time() - 60
    os.utime(log, (settled, settled))
    assert run_identity(open_path(log)) is not None


def test_git_commit_is_read_from_the_work_tree():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    assert git_commit(ROOT / "inspector" / "core") == head.stdout.strip()
    assert git_commit(Path("/")) is None


TINY = '''import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        h = torch.relu(self.lin(x))
{extra}        return h * 2


def inspector_model():
    torch.manual_seed(0)
    return Tiny().eval(), (torch.randn(4, 16),)
'''


def test_three_captures_are_recorded_and_the_third_s_new_break_fails_the_gate(tmp_path, inductor_cache):
    """The issue's done-when: three captures of one script path recorded without being asked, the
    third with a new break; `history` lists them; `check --history` on the third names the break."""
    script = tmp_path / "model.py"
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
           "OMP_NUM_THREADS": "1"}
    for number, extra in enumerate(("", "", "        torch._dynamo.graph_break()\n"), start=1):
        script.write_text(TINY.format(extra=extra))
        done = run_cli("capture", str(script), "-o", str(tmp_path / f"s{number}"), "--runs", "3", "--warmup", "1",
                       "--threads", "1", env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"recorded in the history as run #{number}" in done.stderr
    listed = json.loads(run_cli("history", str(script), "--json", env=env).stdout)["runs"]
    assert [run["breaks"] for run in listed] == [0, 0, 1]
    assert [Path(run["source"]).name for run in listed] == ["s1", "s2", "s3"]
    third = run_cli("history", str(script), env=env).stdout.splitlines()[-1]
    assert third.lstrip().startswith("#3 ") and third.endswith("← new break site: model.py:11 in forward")
    checked = run_cli("check", str(tmp_path / "s3"), "--history", env=env)
    assert checked.returncode == 1, checked.stdout
    assert (f"FAIL history-breaks: graph breaks 0 → 1, first seen in this run: {script}:11 in forward: "
            "Call to `torch._dynamo.graph_break()` (×1); compared with run #2 of") in checked.stdout


def test_a_run_is_compared_with_runs_of_its_own_mode(bundled):
    (session, summary), _ = bundled
    run = dataclasses.replace(record_of(session, Summary.from_state(summary), "now", time.time()), run_id=3)
    other_mode = dataclasses.replace(run, identity="autotuned", run_at=run.run_at - 60, run_id=2,
                                     mode="max-autotune", sites=(), breaks=0)
    same_mode = dataclasses.replace(run, identity="default", run_at=run.run_at - 120, run_id=1)
    assert earlier_runs(run, [same_mode, other_mode, run]) == [same_mode]
    (alone,) = check_against_history(run, earlier_runs(run, [other_mode]))
    assert alone.passed and alone.reason == ("no earlier run of mlp_breaks.py in mode default in the history: "
                                             "nothing to compare with")
