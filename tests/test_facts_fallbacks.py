"""Failed compiles and breaks that end a frame, against torch's own record of the same run (its counters,
TORCH_LOGS=graph_breaks,recompiles_verbose and the error the script caught): a chained break is one
event, a break in a loop says the frame was skipped and how to fix it, an error torch raised is not
called a fallback, and a custom op without a fake kernel is named at the line that called it."""

from __future__ import annotations

import re

import pytest

from conftest import SCENARIOS, run_traced
from inspector.core.analysis.notices import CountersCheck
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.break_reasons import counted_by_torch
from inspector.core.readers.session_loader import open_path

TORCH_LOGS = "graph_breaks,recompiles,recompiles_verbose,dynamic"
CHAINED_BREAK = "\n\n*** While handling this graph break, another graph break occurred: ***\n\n"  # torch's words


@pytest.fixture(scope="module")
def traced(tmp_path_factory, inductor_cache):
    runs = {}

    def run(name: str):
        if name not in runs:
            runs[name] = run_traced(SCENARIOS / f"{name}.py", tmp_path_factory.mktemp(name), inductor_cache,
                                    extra_env={"TORCH_LOGS": TORCH_LOGS})
        return runs[name]

    return run


def _line_of(script: str, code: str) -> int:
    lines = (SCENARIOS / f"{script}.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip() == code)


def _text(run) -> str:
    return render_text(summarize(SessionAnalysis(open_path(run.trace_dir))))


def test_a_chained_break_is_one_event_as_torch_counts_it(traced):
    run = traced("facts_disabled_in_loop")
    # torch's record: no graph_break entry, two `unimplemented` entries, the second the first chained with GB7000
    assert not run.counters.get("graph_break")
    first, chained = sorted(run.counters["unimplemented"], key=len)
    assert chained.startswith(first + CHAINED_BREAK) and "gb7000" in chained
    logged = re.findall(r"\[__graph_breaks\] Graph break in user code at (\S+)", run.torch_logs)
    session = open_path(run.trace_dir)
    assert len(session.breaks) == len(logged) == 1
    torch_breaks, skips = counted_by_torch(run.counters)
    assert (torch_breaks, skips) == (1, {})
    assert CountersCheck(torch_breaks, skips, len(session.breaks)).note is None
    assert "torch's counters saw" not in _text(run)


def test_a_break_in_a_loop_says_the_frame_was_skipped_and_how_to_fix_it(traced):
    run = traced("facts_disabled_in_loop")
    assert "Skipping the frame and falling back to eager" in run.torch_logs and "gb7000.html" in run.torch_logs
    line = _line_of("facts_disabled_in_loop", "self.log_stats(x)")
    text = _text(run)
    [attention] = [row for row in text.splitlines() if row.startswith("ATTENTION:")]
    assert not attention.rstrip().endswith("Unsupported:")
    assert "runs EAGERLY" in attention and "torch skipped the whole frame" in attention and "GB7000" in attention
    assert "Skip inlining `torch.compiler.disable()`d function" in attention
    assert f"facts_disabled_in_loop.py:{line} `self.log_stats(x)`" in attention
    assert "move `self.log_stats(x)` out of the loop" in attention
    types = summarize(SessionAnalysis(open_path(run.trace_dir)))["break_types"]["sites"]
    assert [site["type"]["gb_id"] for site in types] == ["GB0099"]
    assert types[0]["type"]["chained"] == [
        "GB7000 graph break in loop: torch skipped the whole frame, which runs eagerly"]
    assert "then: GB7000 graph break in loop" in text


def test_an_error_torch_raised_is_not_called_a_fallback(traced):
    run = traced("facts_no_fake_kernel")
    assert "raised: TorchRuntimeError" in run.torch_logs  # the script caught what torch raised to it
    text = _text(run)
    [attention] = [row for row in text.splitlines() if row.startswith("ATTENTION:")]
    assert "without raising" not in attention and "runs EAGERLY" not in attention
    assert "RAISED TorchRuntimeError to the caller" in attention


def test_a_missing_fake_kernel_is_named_at_the_line_that_called_the_op(traced):
    run = traced("facts_no_fake_kernel")
    [message] = run.counters["unimplemented"]
    assert "There was no fake impl registered for <CustomOpDef(facts::gate)>" in message
    called = _line_of("facts_no_fake_kernel", "return gate(y) + 1")
    defined = _line_of("facts_no_fake_kernel", "def gated(x):")
    [attention] = [row for row in _text(run).splitlines() if row.startswith("ATTENTION:")]
    assert "no fake impl registered for `facts::gate`" in attention
    assert "torch.library.register_fake(\"facts::gate\")" in attention and "@gate.register_fake" in attention
    assert f"facts_no_fake_kernel.py:{called} `return gate(y) + 1`" in attention
    assert f"facts_no_fake_kernel.py:{defined} `" not in attention
