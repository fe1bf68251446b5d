"""`compile-inspector summary` as a user and a CI script call it."""

from __future__ import annotations

import json
from pathlib import Path
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_SESSION = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_summary_text_names_breaks_recompiles_and_stage_times(breaks_run):
    done = run_cli("summary", str(breaks_run.trace_dir))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Graph breaks: 4 at 2 site(s)" in out
    assert "mlp_breaks.py:19 in forward  ×2  [data_dependent]" in out
    assert "mlp_breaks.py:21 in forward  ×2  [explicit]" in out
    assert "Recompiles: 3" in out and "x changed size in dim 0: 8 → 16" in out
    assert "where it went" in out and "compile_file" in out and "Kernels:" in out


def test_summary_json_is_versioned_and_matches_the_text(breaks_run):
    done = run_cli("summary", str(breaks_run.trace_dir), "--json")
    summary = json.loads(done.stdout)
    assert summary["schema"] == "torch-compile-inspector/summary" and summary["schema_version"] == 5
    assert len(summary["graph_breaks"]) == 4 and len(summary["recompiles"]) == 3
    assert {site["count"] for site in summary["break_sites"]} == {2}
    assert summary["compile_time"]["total_s"] > 0
    assert summary["kernels"]["total"] == sum(unit["kernels"] for unit in summary["units"]) > 0
    assert summary["unreadable"] == {}


def test_strict_fails_only_on_damaged_input(corpus, tmp_path):
    log = corpus / "inductor_provenance_jit_cuda_log.txt"
    assert run_cli("summary", str(log), "--strict").returncode == 0
    cut = tmp_path / "cut.log"
    cut.write_bytes(log.read_bytes()[:50_000])
    done = run_cli("summary", str(cut), "--strict")
    assert done.returncode == 3
    assert "cut off at the end of the file" in done.stdout


def test_wrong_path_gets_a_message_naming_what_was_expected(tmp_path):
    done = run_cli("summary", str(tmp_path))
    assert done.returncode == 2
    assert "holds no torch.compile output" in done.stderr and "TORCH_COMPILE_DEBUG" in done.stderr
    assert "Traceback" not in done.stderr
    missing = run_cli("summary", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_bundled_example_session_opens(tmp_path):
    """The session `make run` shows is real, complete and shows both breaks."""
    done = run_cli("summary", str(EXAMPLE_SESSION), "--strict", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["complete"] and len(summary["break_sites"]) == 2


def test_many_recompiles_are_folded_above_their_groups(corpus):
    """A log with 14 recompiles lists five, says how many more, and leaves the rest to the groups."""
    text = run_cli("summary", str(corpus / "multi_rank_logs" / "dedicated_log_torch_trace_rank_1.log")).stdout
    block = text.split("\nRecompiles: 14 (grouped by cause further down)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(block) == 6 and block[-1] == "  … 9 more (every one in --json)"
    assert "Recompiles by cause:" in text


def test_a_resume_function_is_named_after_the_users_function_in_every_list(tmp_path):
    """Dynamo compiles the code after a break as `torch_dynamo_resume_in_forward_at_19`; the unit
    list, the recompile lines, the recompile groups and the HTML report call it what the user wrote:
    `forward (resumed at line 19)` (Dynamo's name stays in the unit's location only)."""
    text = run_cli("summary", str(EXAMPLE_SESSION)).stdout
    for line in ("[1/0]    forward (resumed at line 19) ",
                 "[1/1] forward (resumed at line 19): h changed size in dim 0",
                 "frame 2 forward (resumed at line 21): h size dim 0"):
        assert line in text
    listed = [line for line in text.splitlines() if "torch_dynamo_resume_in_" in line]
    assert listed and all(line.rstrip().endswith(("in torch_dynamo_resume_in_forward_at_19",
                                                 "in torch_dynamo_resume_in_forward_at_21")) for line in listed)
    report = tmp_path / "report.html"
    assert run_cli("report", str(EXAMPLE_SESSION), "-o", str(report)).returncode == 0
    assert "<td>forward (resumed at line 19)</td>" in report.read_text()
    summary = json.loads(run_cli("summary", str(EXAMPLE_SESSION), "--json").stdout)
    assert {group["shown"] for group in summary["recompile_groups"]} == {
        "forward", "forward (resumed at line 19)", "forward (resumed at line 21)"}
