"""The deployment path opens like a torch.compile run: a torch.export + AOTInductor log (no Dynamo
frame, [-/-] in tlparse) is one compile unit with every graph stage, AOTInductor's C++ wrapper and
kernel code split into kernels with their FX nodes, its compile time and where it was called from —
checked against torch's own account of the same run (the exported program, the package's C++)."""

from __future__ import annotations

import json

import pytest

from conftest import SCENARIOS, open_and_wait, run_traced
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path


@pytest.fixture(scope="module")
def aoti_run(tmp_path_factory, inductor_cache):
    run = run_traced(SCENARIOS / "export_aoti.py", tmp_path_factory.mktemp("aoti"), inductor_cache)
    return run, json.loads((run.folder / "aoti_facts.json").read_text())


def test_an_aotinductor_log_is_a_unit_with_its_graphs_code_and_kernels(aoti_run):
    run, facts = aoti_run
    session = open_path(run.trace_dir)
    assert len(session.units) == 1
    unit = session.units[0]
    assert str(unit.compile_id) == "[-/-]" and unit.function == "aoti_compile_and_package"
    assert unit.location.file.endswith("export_aoti.py") and "aoti_compile_and_package" in unit.location.code
    # the exported program's graph, as torch.export holds it, is the first stage
    assert {"before_pre_grad_graph", "aot_inference", "post_grad"} <= set(unit.graphs)
    assert len(unit.graphs["before_pre_grad_graph"].graph.op_nodes) == facts["exported_ops"]
    for stage, artifact in unit.graphs.items():  # inputs declared in the body (a pytree spec) read too
        assert artifact.graph.unreadable == [] and any(node.op == "placeholder" for node in artifact.graph.nodes), stage
    code = unit.output_code[0].code
    assert code.language == "cpp"
    generated = sorted(kernel.name for kernel in unit.kernels if kernel.kind == "cpp")
    assert generated == facts["kernels"]  # what the package's C++ defines
    for kernel in unit.kernels:  # every kernel is called from run_impl and named after its FX nodes
        assert kernel.call_lines and kernel.source_nodes and kernel.source_origin == "provenance", kernel.name
    assert unit.compile_s and unit.compile_s > 0


def test_the_summary_and_the_app_show_it(aoti_run, qtbot, window):
    run, facts = aoti_run
    analysis = SessionAnalysis(open_path(run.trace_dir))
    summary = summarize(analysis)
    assert summary["kernels"]["by_kind"]["cpp"] == len(facts["kernels"])
    text = render_text(summary)
    assert "Compile units: 1\n" in text and "[-/-]" in text and "aoti_compile_and_package" in text
    assert "Compile time: not recorded" not in text

    loaded = open_and_wait(qtbot, window, run.trace_dir)
    tree = window.navigator
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    items += [item.child(j) for item in items for j in range(item.childCount())]
    assert any(item.text(0) == "outside Dynamo: aoti_compile_and_package" for item in items)
    window.model.select_unit(loaded.session.units[0])
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() == len(loaded.session.units[0].kernels), timeout=60_000)
    names = {code.outline.item(row, 0).text() for row in range(code.outline.rowCount())}
    assert set(facts["kernels"]) <= names


@pytest.fixture(scope="module")
def draft_run(tmp_path_factory, inductor_cache):
    folder = tmp_path_factory.mktemp("draft")
    run = run_traced(SCENARIOS / "draft_export.py", folder, inductor_cache,
                     extra_env={"TORCH_DTRACE": str(folder / "trace")})  # where draft export writes its log
    failures = json.loads((run.folder / "draft_facts.json").read_text())["failures"]
    # torch's report also lists guards its trace handler keeps out of the log (on no input's symbol, or
    # runtime asserts, such as `u0 > 2` beside its data-dependent error): the log cannot show those
    return run, [f for f in failures
                 if f["type"] != "GUARD_ADDED" or (f["sources"] and f["prefix"] != "runtime_assert")]


KIND_OF = {"DATA_DEPENDENT_ERROR": "data_dependent", "MISSING_FAKE_KERNEL": "missing_fake_kernel",
           "MISMATCHED_FAKE_KERNEL": "mismatched_fake_kernel", "GUARD_ADDED": "guard_added"}


def test_a_draft_export_log_reports_each_issue_torch_reported(draft_run):
    run, failures = draft_run
    analysis = SessionAnalysis(open_path(run.trace_dir))
    found = analysis.export_issues
    assert sorted((KIND_OF[f["type"]], f["expr"] or f["op"]) for f in failures) == \
        sorted((finding.issue.kind, finding.issue.subject) for finding in found)
    data = next(finding for finding in found if finding.issue.kind == "data_dependent")
    torch_line = next(f["line"] for f in failures if f["type"] == "DATA_DEPENDENT_ERROR")
    assert data.issue.location.line == torch_line and data.issue.location.file.endswith("draft_export.py")
    assert data.expression == "total > 2" and "torch._check(total > 2)" in data.fix  # the user's name, not u0
    kernel = next(finding for finding in found if finding.issue.kind == "missing_fake_kernel")
    assert "triple(x)" in kernel.issue.location.code and 'register_fake("tci::triple")' in kernel.fix
    guard = next(finding for finding in found if finding.issue.kind == "guard_added")
    assert guard.issue.location.line == next(f["line"] for f in failures if f["type"] == "GUARD_ADDED")
    assert guard.expression == "x.shape[0] == 4" and "Dim.AUTO" in guard.fix  # the input as the user names it
    assert analysis.session.units[0].graphs["exported_program"].graph.op_nodes
    shapes = dict(analysis.shapes)[analysis.session.units[0]]
    assert [event.user_line.line for event in shapes if event.kind == "guard"] == [guard.issue.location.line]


def test_export_issues_reach_every_output_and_the_gate(draft_run, tmp_path):
    import subprocess
    import sys

    run, failures = draft_run
    summary = summarize(SessionAnalysis(open_path(run.trace_dir)))
    text = render_text(summary)
    assert f"Export issues: {len(failures)}" in text and "torch._check(total > 2)" in text
    sarif = tmp_path / "export.sarif"
    done = subprocess.run([sys.executable, "-m", "inspector", "check", str(run.trace_dir), "--max-export-issues", "0",
                           "--sarif", str(sarif)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and f"{len(failures)} export issue(s), at most 0 allowed" in done.stdout
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    lines = sorted(r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results
                   if r["ruleId"].startswith("export/"))
    assert len(lines) == len(failures) and all(line > 0 for line in lines)
    allowed = subprocess.run([sys.executable, "-m", "inspector", "check", str(run.trace_dir), "--max-export-issues",
                              str(len(failures))], capture_output=True, text=True, timeout=120)
    assert allowed.returncode == 0


def test_the_app_lists_export_issues_under_problems(draft_run, qtbot, window):
    from inspector.gui.views.qt_problems import PROBLEM_ROLE

    run, failures = draft_run
    open_and_wait(qtbot, window, run.trace_dir)
    problems = window.problems_view
    rows = [problems.topLevelItem(i) for i in range(problems.topLevelItemCount())]
    export_rows = [row for row in rows if row.data(0, PROBLEM_ROLE) and row.data(0, PROBLEM_ROLE).kind == "export"]
    assert len(export_rows) == len(failures)
    assert any(row.text(0) == "Export: data-dependent expression: total > 2" for row in export_rows)
