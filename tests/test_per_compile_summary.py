"""What tlparse shows on each compile's page, in `summary` text and JSON: the call that triggered the
compile (folded into a trie), restarts and the failure chain, every compilation-metrics field (those of
another torch version listed), cache lookups with their reasons, and the code Dynamo wrote that the log
carries (resume functions' bytecode, guards)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SCENARIOS, run_traced
from cli_runner import run_cli


def _logged_metrics(log: Path) -> list[dict]:
    """torch's own compilation_metrics records, read straight from the log (the oracle)."""
    found = []
    for line in log.read_text().splitlines():
        head, _, body = line.partition("] ")
        if body.startswith("{") and '"compilation_metrics"' in body:
            record = json.loads(body)
            if "compilation_metrics" in record:
                found.append(record["compilation_metrics"])
    return found


@pytest.fixture(scope="session")
def cond_run(tmp_path_factory, inductor_cache):
    """An explicit break, a torch.cond and a data-dependent branch at two batch sizes."""
    return run_traced(SCENARIOS / "per_compile_cond.py", tmp_path_factory.mktemp("per_compile"), inductor_cache)


def test_a_failed_compile_shows_its_trigger_stack_failure_and_unknown_metrics(corpus):
    log = corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_0.log"
    done = run_cli("summary", str(log), "--no-cache")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Triggered from (the user's frames of each compile's stack, folded):" in out
    lines = out.splitlines()
    caller = next(i for i, line in enumerate(lines)
                  if "test_misc.py:10765 in test_graph_break_compilation_metrics" in line)
    # the compiled frame is one level below the test that called it, and carries the compile id
    assert lines[caller + 1].strip() == ("/data/users/xmfan/a/pytorch/test/dynamo/test_misc.py:10755 in fn"
                                         "  -> [0/0] (rank 0)")
    assert lines[caller + 1].index("/") > lines[caller].index("/")
    assert "failure: BackendCompilerFailed: backend='broken_backend' raised: RuntimeError: broken backend" in out


def test_a_metrics_field_of_a_newer_torch_is_listed_not_dropped(corpus, tmp_path):
    """The same real log, its metrics record given one field no torch we know writes."""
    log = tmp_path / "newer.log"
    log.write_text((corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_0.log").read_text().replace(
        '{"compilation_metrics": {', '{"compilation_metrics": {"warp_drive_time_us": 42, ', 1))
    out = run_cli("summary", str(log), "--no-cache").stdout
    assert "metrics fields this version does not know: warp_drive_time_us" in out
    unit = json.loads(run_cli("summary", str(log), "--json", "--no-cache").stdout)["units"][0]["compile"]
    assert unit["unknown_metrics"] == ["warp_drive_time_us"] and unit["metrics"]["warp_drive_time_us"] == 42


def test_the_json_keeps_every_metrics_field_torch_wrote(corpus):
    log = corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_0.log"
    done = run_cli("summary", str(log), "--json", "--no-cache")
    unit = json.loads(done.stdout)["units"][0]["compile"]
    (logged,) = _logged_metrics(log)
    assert set(unit["metrics"]) == set(logged)
    assert unit["metrics"] == logged  # every value as torch wrote it, the config dumps included
    assert unit["unknown_metrics"] == []
    assert unit["failures"][0]["type"] == "BackendCompilerFailed"


def test_cache_misses_of_a_cuda_compile_are_listed_per_unit(corpus):
    done = run_cli("summary", str(corpus / "inductor_provenance_jit_cuda_log.txt"), "--json", "--no-cache")
    lookups = json.loads(done.stdout)["units"][0]["compile"]["cache_lookups"]
    outcomes = {(lookup["cache"], lookup["outcome"]) for lookup in lookups}
    assert outcomes >= {("fx_graph", "miss"), ("aotautograd", "miss")}


def test_a_real_compile_shows_bypass_reasons_restarts_and_resume_bytecode(cond_run):
    done = run_cli("summary", str(cond_run.trace_dir), "--no-cache")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    per_compile = out[out.index("Per compile"):out.index("Graph breaks:")]
    # torch.cond cannot be cached: every run compiles it cold, and the summary says why
    assert "fx graph cache bypass: Can't cache HigherOrderOperator: cond" in per_compile
    # the explicit break restarts the first frame's analysis, named by its break type
    assert "restart: Call to `torch._dynamo.graph_break()` [GB0025]" in per_compile
    assert ("code Dynamo wrote: branchy (resumed at line 10): original bytecode, "
            "branchy (resumed at line 10): transformed bytecode, guards") in per_compile
    # each resume function was triggered from the script's call, one level below it
    trie = out[out.index("Triggered from"):out.index("Per compile")].splitlines()
    call = next(i for i, line in enumerate(trie) if "per_compile_cond.py:16 in <module>: f(torch.randn(4, 8))" in line)
    assert "per_compile_cond.py:8 in branchy (resumed at line 8)  -> [1/0]" in trie[call + 1]


def test_the_json_carries_the_transformed_bytecode_of_each_resume_function(cond_run):
    document = json.loads(run_cli("summary", str(cond_run.trace_dir), "--json", "--no-cache").stdout)
    resumed = next(unit for unit in document["units"] if unit["compile_id"] == "[1/0]")
    code = {text["title"]: text.get("text") for text in resumed["compile"]["code"]}
    transformed = code["branchy (resumed at line 8): transformed bytecode"]
    assert "__compiled_fn_" in transformed  # the code Dynamo wrote calls the compiled graph
    assert "__compiled_fn_" not in code["branchy (resumed at line 8): original bytecode"]
    logs = list(cond_run.trace_dir.glob("*.log"))
    logged = [metrics for log in logs for metrics in _logged_metrics(log)]
    by_id = {f"[{metrics['compile_id']}]": metrics for metrics in logged}
    assert sorted(by_id) == sorted(unit["compile_id"] for unit in document["units"])
    assert all(set(unit["compile"]["metrics"]) == set(by_id[unit["compile_id"]]) for unit in document["units"])
    assert [unit["compile"]["unknown_metrics"] for unit in document["units"]] == [[]] * len(logged)
