"""The production recorder: a real compiled loop under it writes one line per compile that opens as
a session whose breaks, recompiles, compile units and cache counts are torch's own (in the app too);
its files rotate at their size limit and are read together; a damaged file opens with what is
readable and a count of what is not; what it records feeds the run history."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SCENARIOS, open_and_wait

from inspector.core.model.compile_id import CompileId
from inspector.core.outputs.summary import summarize
from inspector.core.readers import sources
from inspector.core.readers.session_loader import open_path, open_session

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, inductor_cache):
    folder = tmp_path_factory.mktemp("recorded")
    paths = folder / "events.jsonl", folder / "small.jsonl", folder / "counters.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_CACHE_DIR": str(inductor_cache),
           "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(SCENARIOS / "recorded_service.py"), *map(str, paths)], env=env,
                          capture_output=True, text=True, timeout=600, cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return paths[0], paths[1], json.loads(paths[2].read_text())


def test_a_recorded_file_opens_with_torchs_own_counts(recorded):
    events, _, torch_counts = recorded
    source = sources.detect(events)
    assert source.kind is sources.RECORDER_LOG
    summary = summarize(open_session(source))
    assert len(summary["units"]) == torch_counts["compiles"] == 6
    assert len(summary["graph_breaks"]) == torch_counts["breaks"] == 4
    assert len(summary["recompiles"]) == torch_counts["recompiles"] == 3
    assert summary["cache"]["fx_graph"]["miss"] + summary["cache"]["fx_graph"]["hit"] == \
        torch_counts["fx_graph_miss"] + torch_counts["fx_graph_hit"]
    assert sorted(site["reason"] for site in summary["break_sites"]) == \
        ["Call to `torch._dynamo.graph_break()`", "Data-dependent branching"]
    assert summary["torch_version"].startswith("2.")
    lines = [json.loads(line) for line in events.read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["header"] + ["compile"] * 6 + ["summary"]  # steady calls: nothing
    assert lines[-1]["breaks"] == 4 and lines[-1]["compiles"] == 6


def test_a_rotated_file_is_read_with_the_files_it_rotated_into(recorded):
    _, small, _ = recorded
    rotated = [small.with_name(f"{small.name}.{n}") for n in (1, 2)]
    assert all(file.is_file() for file in rotated) and not small.with_name(f"{small.name}.3").exists()
    for file in (small, *rotated):
        assert json.loads(file.read_text().splitlines()[0])["kind"] == "header"
        assert file.stat().st_size <= 1500 + 2000  # a line may pass the limit once; then the file rotates
    units = [str(unit.compile_id) for unit in open_path(small).units]
    kept = [str(CompileId.parse(json.loads(line)["compile_id"])) for file in (*reversed(rotated), small)
            for line in file.read_text().splitlines() if json.loads(line)["kind"] == "compile"]
    assert units and sorted(units) == sorted(kept)


def test_a_damaged_file_opens_with_what_is_readable(recorded, tmp_path):
    events, _, _ = recorded
    lines = events.read_text().splitlines()
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join([lines[0], lines[1], "{not json", json.dumps({"kind": "compile", "compile_id": 7}),
                                  "x" * 70_000, lines[2], '{"kind": "compile", "compile_id": "3/0", "breaks": "many"']))
    session = open_path(damaged)
    assert [str(unit.compile_id) for unit in session.units] == [f"[{json.loads(line)['compile_id']}]"
                                                               for line in lines[1:3]]
    counts = session.problems.counts
    assert counts["bad_json"] == 1 and counts["bad_record"] == 1 and counts["line_too_long"] == 1
    assert counts["truncated"] == 1


def test_what_the_recorder_kept_feeds_the_history(recorded, tmp_path):
    events, _, _ = recorded
    settled = time.time() - 60  # a file written seconds ago may still grow: the history waits for it to settle
    os.utime(events, (settled, settled))
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}
    run = [sys.executable, "-m", "inspector"]
    assert subprocess.run([*run, "summary", str(events)], cwd=ROOT, env=env, capture_output=True).returncode == 0
    listed = subprocess.run([*run, "history", str(ROOT / "resources" / "examples" / "mlp_breaks.py"), "--json"],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    runs = json.loads(listed.stdout)["runs"]
    assert len(runs) == 1 and runs[0]["kind"] == "recorder" and runs[0]["breaks"] == 4 and runs[0]["recompiles"] == 3


def test_the_app_opens_a_recorder_file(recorded, qtbot, window):
    events, _, torch_counts = recorded
    loaded = open_and_wait(qtbot, window, events)
    assert loaded.session.kind == "recorder" and len(loaded.session.units) == torch_counts["compiles"]
    assert "2 graph-break site(s)" in window.summary_view.title.text()
