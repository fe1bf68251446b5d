"""The oracle harness on a few cases: each captured in its own process, its facts (the summary the
CLI prints) compared field by field with torch's own record of that process (torch_record.json).
Every field agrees except those bench/oracle/known_differences.py lists with their reason."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench" / "oracle"))
import run_oracle  # noqa: E402
from known_differences import KNOWN  # noqa: E402

from inspector.core.readers.session_loader import open_path  # noqa: E402

SUBSET = ("modulelist_index_and_scale", "explicit_graph_break", "cond_compiled", "batch_size_recompile",
          "fullgraph_error", "custom_op_without_fake", "cond_eager", "break_in_loop")


@pytest.fixture(scope="module")
def oracle_rows(tmp_path_factory, inductor_cache) -> dict[str, dict]:
    work = tmp_path_factory.mktemp("oracle")
    return {case: run_oracle.compare(case, work, inductor_cache) | {"work": work} for case in SUBSET}


@pytest.mark.parametrize("case", SUBSET)
def test_every_field_of_the_case_equals_torchs_record(oracle_rows, case):
    row = oracle_rows[case]
    assert "error" not in row and row["hook_errors"] == []
    differing = {name: values for name, values in row["fields"].items()
                 if values[0] != values[1] and (case, name) not in KNOWN}
    assert differing == {}


def test_torchs_record_names_every_guard_that_failed_not_only_the_first(oracle_rows):
    """torch logs `which == 0` alone; the value that changed beside it (self.scale 1.0 -> 0.5) is in
    the capture's record of the same recompile."""
    ours, torchs = oracle_rows["modulelist_index_and_scale"]["fields"]["failed_guards"]
    assert "self.scale == 1.0" in torchs and "which == 0" in torchs
    assert oracle_rows["modulelist_index_and_scale"]["fields"]["recompiles"] == (2, 2)


def test_a_recompile_names_every_value_that_changed_from_torchs_record(oracle_rows):
    """The log names `which == 0` alone; with torch's record the recompile and its group also name
    `self.scale`, which changed from 1.0 at the same call."""
    session = open_path(oracle_rows["modulelist_index_and_scale"]["work"] / "modulelist_index_and_scale")
    summary = run_oracle.summarize(session)
    first = summary["recompiles"][0]
    assert first["every_guard"] is True
    assert {guard["guard"].split("  #")[0].strip() for guard in first["failed_guards"]} == {"which == 0",
                                                                                          "self.scale == 1.0"}
    group, = summary["recompile_groups"]
    assert group["changed"] == ["which", "self.scale"]
    assert "which, self.scale" in group["diagnosis"]


@pytest.mark.parametrize("case, gb_id", [("fullgraph_error", "GB0025"), ("custom_op_without_fake", "GB4315")])
def test_a_compile_that_failed_instead_of_breaking_has_its_break_type(oracle_rows, case, gb_id):
    session = open_path(oracle_rows[case]["work"] / case)
    failures = run_oracle.summarize(session)["break_types"]["failures"]
    assert [(failed["compile_id"], failed["type"]["gb_id"]) for failed in failures] == [("[0/0]", gb_id)]


@pytest.mark.parametrize("case, breaks", [("explicit_graph_break", 1), ("fullgraph_error", 1), ("cond_eager", 0)])
def test_the_summary_says_what_torchs_counters_saw_of_a_captured_script(oracle_rows, case, breaks):
    """A script's capture keeps no benchmark counters; torch's record of the process has them, and a
    compile that failed at a break (fullgraph=True) is the one break torch counted, not a disagreement."""
    summary = run_oracle.summarize(open_path(oracle_rows[case]["work"] / case))
    assert summary["run"]["torch_counted_breaks"] == breaks
    assert summary["run"]["breaks_agree_with_torch"] is True
    assert not [notice for notice in summary["notices"] if notice["key"] == "counters"]


def test_a_frame_skipped_for_a_break_in_a_loop_is_listed_with_the_frames_skipped(oracle_rows):
    """torch counts GB7000 (chained to the break inside the loop) and runs forward eagerly: the summary
    lists forward among the frames skipped, as well as keeping the break itself."""
    summary = run_oracle.summarize(open_path(oracle_rows["break_in_loop"]["work"] / "break_in_loop"))
    assert [(skip["compile_id"], skip["function"], skip["type"]) for skip in summary["frame_skips"]] == [
        ("[0/0]", "forward", "graph break in loop (GB7000)")]
    assert len(summary["graph_breaks"]) == summary["run"]["torch_counted_breaks"] == 1
    assert oracle_rows["break_in_loop"]["fields"]["frame_skips"] == (1, 1)


def test_a_damaged_torch_record_opens_with_the_rest_and_counts_what_was_not(oracle_rows, tmp_path):
    session = tmp_path / "s"
    shutil.copytree(oracle_rows["batch_size_recompile"]["work"] / "batch_size_recompile", session)
    record = json.loads((session / "torch_record.json").read_text())
    assert record["recompiles"] and record["counters"]["frames"]
    record["recompiles"][0]["cache_entries"] = "not a list"
    record["counters"]["frames"]["total"] = "many"
    (session / "torch_record.json").write_text(json.dumps(record))
    opened = open_path(session)
    assert opened.load_problems.counts["bad_field"] == 2
    assert opened.torch_record.recompiles[0].cache_entries == ()
    assert "total" not in opened.torch_record.counters["frames"]
    assert len(opened.torch_record.recompiles) == len(record["recompiles"])
