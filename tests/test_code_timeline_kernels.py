"""Code pane, compile timeline and kernel plots, on real sessions: the bundled CPU capture and the GPU
corpus log with Triton kernels and provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import open_and_wait  # noqa: E402

from inspector.gui.code_highlight import LazyHighlighter  # noqa: E402
from inspector.core.analysis.kernel_index import kernel_nodes  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402
from inspector.core.analysis.timeline import build_timeline, chrome_trace  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_slowest_kernel_shows_its_code_nodes_and_source_lines(qtbot, window):
    """The issue's 'done when': pick the slowest kernel in the plot, see its code, its FX nodes and
    their source lines; the timeline says which stage cost most."""
    loaded = open_and_wait(qtbot, window, BUNDLED)
    plots = window.kernels_view
    window.tabs.setCurrentWidget(plots)  # a tab takes the session when it is opened
    generated = [name for name in plots.kernel_names if name.startswith("cpp_fused")]
    assert generated, "the compiled profile names the generated C++ kernels"
    window.model.select_kernel_named(generated[0])
    code = window.code_view
    qtbot.waitUntil(lambda: code.code is not None and code.nodes.topLevelItemCount() > 0, timeout=60_000)
    kernel = window.model.kernel
    assert kernel.name == generated[0]
    assert code.editor.textCursor().blockNumber() + 1 == kernel.start_line
    assert code.editor.textCursor().block().text().startswith(f"{kernel.name} = async_compile.cpp_pybinding(")
    rows = [code.outline.item(r, 0).text() for r in range(code.outline.rowCount())]
    assert rows == [k.name for k in code.code.kernels]
    expected = kernel_nodes(window.model.unit, kernel)
    shown = [code.nodes.topLevelItem(i) for i in range(code.nodes.topLevelItemCount())]
    assert [item.text(0) for item in shown] == [origin.name for origin in expected]
    assert all(origin.file and origin.file.endswith("mlp_breaks.py") for origin in expected)
    code.nodes.itemActivated.emit(shown[0], 0)
    source = window.source_view  # the file is read off the UI thread
    qtbot.waitUntil(lambda: source.textCursor().blockNumber() + 1 == expected[0].line, timeout=60_000)
    time_ = loaded.kernel_time.kernel_time(window.model.unit, kernel)
    assert time_ is None or time_.launches == 0 or time_.per_launch_us > 0
    top_stage = next(iter(loaded.summary["compile_time"]["self_s"]))
    window.tabs.setCurrentWidget(window.timeline_view)
    totals = window.timeline_view.totals
    assert totals.item(0, 0).text() == top_stage


def test_code_pane_lists_every_text_of_a_unit(qtbot, window):
    open_and_wait(qtbot, window, BUNDLED)
    code = window.code_view
    labels = [code.texts.itemText(i) for i in range(code.texts.count())]
    assert labels[0] == "output code #1 (inference)"
    assert {"graph: dynamo", "graph: post_grad", "guards", "graph break #1"} <= set(labels)
    guards = next(artifact.text for artifact in window.model.unit.artifacts if artifact.name == "guards")
    assert "TENSOR_MATCH" in guards  # the unit's guards as torch wrote them
    code.texts.setCurrentIndex(labels.index("guards"))
    # the text is read off the UI thread: the pane shows exactly the unit's guards, nothing else
    qtbot.waitUntil(lambda: code.editor.toPlainText().strip() == guards.strip(), timeout=60_000)
    code.find.setText("GUARD")
    assert code.find_next(backward=False)


def test_triton_kernels_from_the_gpu_log(qtbot, window, corpus):
    loaded = open_and_wait(qtbot, window, corpus / "inductor_provenance_jit_cuda_log.txt")
    (unit,) = loaded.session.units
    triton = [kernel for kernel in unit.kernels if kernel.kind == "triton"]
    window.model.select_kernel(unit, triton[0])
    code = window.code_view
    qtbot.waitUntil(lambda: code.nodes.topLevelItemCount() > 0, timeout=60_000)
    names = [code.nodes.topLevelItem(i).text(0) for i in range(code.nodes.topLevelItemCount())]
    assert sorted(names) == sorted(unit.provenance["cppCodeToPost"][triton[0].name])
    assert all(code.nodes.topLevelItem(i).text(1).startswith("aten.") for i in range(len(names)))
    assert "exact (provenance)" in code.origin.text()
    highlighter = LazyHighlighter.for_text(unit.output_code[0].text, "python", unit.output_code[0].code)
    jit_line = next(i for i, line in enumerate(highlighter.lines) if line.startswith("@triton.jit"))
    assert any(category == "decorator" for _c, _l, category in highlighter.line_spans(jit_line))


def test_cpp_kernel_bodies_are_lexed_as_cpp():
    unit = open_path(BUNDLED).units[0]
    artifact = unit.output_code[0]
    highlighter = LazyHighlighter.for_text(artifact.text, "python", artifact.code)
    extern = next(i for i, line in enumerate(highlighter.lines) if line.startswith('extern "C"'))
    assert ("keyword" in {c for _col, _len, c in highlighter.line_spans(extern)})
    wrapper = next(i for i, line in enumerate(highlighter.lines) if line.strip().startswith("def call("))
    assert "keyword" in {c for _col, _len, c in highlighter.line_spans(wrapper)}


def test_timeline_spans_match_the_session_and_export_to_perfetto(tmp_path):
    session = open_path(BUNDLED)
    timeline = build_timeline(session, max_depth=1000)
    spans = [span for unit in session.units for root in unit.spans for span in root.walk()]
    assert len(timeline.bars) == len(spans)
    assert len(timeline.lanes) == len(session.units)
    trace = chrome_trace(session)
    complete = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    assert len(complete) == len(spans)
    dynamo = [event for event in complete if event["name"] == "dynamo"]
    metrics = sorted(unit.metric("entire_frame_compile_time_s") for unit in session.units)
    assert sorted(event["dur"] / 1e6 for event in dynamo) == pytest.approx(metrics, rel=0.05, abs=0.05)
    json.dumps(trace)  # serialisable as it is


def test_stage_cut_off_by_a_crash_is_drawn_open_ended(corpus, tmp_path):
    data = (corpus / "inductor_provenance_jit_cuda_log.txt").read_bytes()
    cut = tmp_path / "cut.log"
    cut.write_bytes(data[: int(len(data) * 0.55)])
    timeline = build_timeline(open_path(cut))
    open_bars = [bar for bar in timeline.bars if bar.is_open]
    assert open_bars and {"dynamo", "entire_frame_compile"} <= {bar.name for bar in open_bars}
    assert all(bar.end_s == timeline.end_s for bar in open_bars)


def test_views_say_what_is_missing_without_a_profile(qtbot, window, corpus):
    loaded = open_and_wait(qtbot, window, corpus / "inductor_provenance_jit_cuda_log.txt")
    assert loaded.analysis.kernel_time is None
    window.tabs.setCurrentWidget(window.kernels_view)  # a tab takes the session when it is opened
    assert "no profile" in window.kernels_view.note.text()
    window.tabs.setCurrentWidget(window.code_view)
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() > 0, timeout=60_000)
    assert code.outline.item(0, 2).text() == "—"
    assert "no profile of this run" in code.outline.item(0, 2).toolTip()
