"""The deployment path opens like a torch.compile run: a torch.export + AOTInductor log (no Dynamo
frame, [-/-] in tlparse) is one compile unit with every graph stage, AOTInductor's C++ wrapper and
kernel code split into kernels with their FX nodes, its compile time and where it was called from —
checked against torch's own account of the same run (the exported program, the package's C++)."""

from __future__ import annotations

import json

import pytest

from conftest import SCENARIOS, open_and_wait, run_traced, torch_available
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import render_text, summarize
from inspector.core.readers.session_loader import open_session


@pytest.fixture(scope="module")
def aoti_run(tmp_path_factory, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    run = run_traced(SCENARIOS / "export_aoti.py", tmp_path_factory.mktemp("aoti"), inductor_cache)
    return run, json.loads((run.folder / "aoti_facts.json").read_text())


def test_an_aotinductor_log_is_a_unit_with_its_graphs_code_and_kernels(aoti_run):
    run, facts = aoti_run
    session = open_session(run.trace_dir)
    assert len(session.units) == 1
    unit = session.units[0]
    assert str(unit.compile_id) == "[-/-]" and unit.function == "aoti_compile_and_package"
    assert unit.location.file.endswith("export_aoti.py") and "aoti_compile_and_package" in unit.location.code
    # the exported program's graph, as torch.export holds it, is the first stage
    assert {"before_pre_grad_graph", "aot_inference", "post_grad"} <= set(unit.graphs)
    assert len(unit.graphs["before_pre_grad_graph"].graph.op_nodes) == facts["exported_ops"]
    code = unit.output_code[0].code
    assert code.language == "cpp"
    generated = sorted(kernel.name for kernel in unit.kernels if kernel.kind == "cpp")
    assert generated == facts["kernels"]  # what the package's C++ defines
    for kernel in unit.kernels:  # every kernel is called from run_impl and named after its FX nodes
        assert kernel.call_lines and kernel.source_nodes and kernel.source_origin == "provenance", kernel.name
    assert unit.compile_s and unit.compile_s > 0


def test_the_summary_and_the_app_show_it(aoti_run, qtbot, window):
    run, facts = aoti_run
    analysis = SessionAnalysis(open_session(run.trace_dir))
    summary = summarize(analysis)
    assert summary["kernels"]["by_kind"]["cpp"] == len(facts["kernels"])
    text = render_text(summary)
    assert "1 compile unit" in text and "[-/-]" in text and "aoti_compile_and_package" in text
    assert "Compile time: not recorded" not in text

    loaded = open_and_wait(qtbot, window, run.trace_dir)
    tree = window.views["Session"]
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    items += [item.child(j) for item in items for j in range(item.childCount())]
    assert any(item.text(0) == "outside Dynamo: aoti_compile_and_package" for item in items)
    window.model.select_unit(loaded.session.units[0])
    code = window.views["Code"]
    qtbot.waitUntil(lambda: code.outline.rowCount() == len(loaded.session.units[0].kernels), timeout=10_000)
    names = {code.outline.item(row, 0).text() for row in range(code.outline.rowCount())}
    assert set(facts["kernels"]) <= names
