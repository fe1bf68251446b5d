"""Silent fallbacks to eager come first: before any figure, in the text summary, the HTML report,
the Markdown comment and under the dashboard's headline — one notice per frame torch itself warned
about (a suppressed backend failure, the recompile limit)."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT, SCENARIOS, open_and_wait, run_traced
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.ci_reports import markdown
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


@pytest.fixture(scope="module")
def fallbacks_run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "fidelity_breaks_fallbacks.py", tmp_path_factory.mktemp("fallbacks"), inductor_cache)


def _torch_warned(run) -> tuple[set[str], int]:
    """The frames torch warned it runs eagerly: '[1/2] torch._dynamo hit config.recompile_limit' and
    each 'BackendCompilerFailed' traceback (one per failed frame)."""
    limits = set(re.findall(r"\[(\d+/\d+)\] torch._dynamo hit config.recompile_limit", run.torch_logs))
    backend_failures = len(set(re.findall(r"^\w\d{4} [\d:.]+ \d+ .*?\] (torch._dynamo.exc.BackendCompilerFailed: .+)$",
                                          run.torch_logs, re.M)))
    return limits, backend_failures


def test_fallbacks_are_stated_first_everywhere(fallbacks_run):
    analysis = SessionAnalysis(open_path(fallbacks_run.trace_dir))
    limits, backend_failures = _torch_warned(fallbacks_run)
    notices = [notice for notice in analysis.notices if notice.key == "fallback"]
    assert len(notices) == len(limits) + backend_failures == 2
    assert {f"[{compile_id}]" for compile_id in limits} <= {notice.compile_id for notice in notices}
    assert any("broken_backend cannot lower aten.sin" in notice.text for notice in notices)  # the root cause

    summary = summarize(analysis)
    text = render_text(summary).splitlines()
    units_line = next(i for i, line in enumerate(text) if re.match(r"Compile units: \d+", line))
    assert [line for line in text[:units_line] if line.startswith("ATTENTION:")] == \
        [f"ATTENTION: {notice.text}" for notice in notices]
    html = render_report(analysis)
    assert html.index("Attention:") < html.index("Was it worth it?")
    md = markdown(summary)
    assert md.index("**Attention:**") < md.index("| figure | value |")


def test_the_dashboard_shows_the_fallbacks_under_its_headline(fallbacks_run, qtbot, window):
    loaded = open_and_wait(qtbot, window, fallbacks_run.trace_dir)
    dashboard = window.summary_view
    assert dashboard.notices.isVisible()
    lines = dashboard.notices.text().splitlines()
    assert lines == [f"Attention: {notice.text}" for notice in loaded.analysis.notices]
    assert any("runs EAGERLY" in line and "wave" in line for line in lines)
    open_and_wait(qtbot, window, BUNDLED)  # a session without fallbacks: no notice left from the last one
    assert not dashboard.notices.isVisible() and dashboard.notices.text() == ""
