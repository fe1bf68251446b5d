"""Issue #52, Graph tab: search lists name/op/target matches before source-line matches and Enter
steps through them (no double-click); node details say what would fill an empty field; a breadcrumb
of the selected node's module path folds and opens each group from above the graph."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QToolButton  # noqa: E402

from conftest import EXAMPLES, open_and_wait, run_traced  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def open_graph(qtbot, window, path, stage="post_grad"):
    open_and_wait(qtbot, window, path)
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    qtbot.waitUntil(lambda: graph.unit is not None and stage in graph.unit.graphs, timeout=60_000)
    graph.stage.setCurrentText(stage)
    qtbot.waitUntil(lambda: graph.layer is not None and graph.graph is graph.unit.graphs[stage].graph, timeout=60_000)
    return graph


def shown_hits(graph) -> list[str]:
    return [graph.results.item(i).text() for i in range(graph.results.count())]


def test_search_lists_name_matches_before_source_line_matches_and_enter_steps_through(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED)
    graph.search.setText("relu")  # the node relu; addmm and permute come from the line `torch.relu(self.up(x))`
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: graph.results.count() >= 2, timeout=10_000)
    hits = shown_hits(graph)
    assert hits[0].startswith("relu  ")
    by_source = [hit for hit in hits if "(source line" in hit]
    assert by_source and hits[len(hits) - len(by_source):] == by_source, hits  # all after the name matches
    assert {hit.split("  ")[0] for hit in by_source} >= {"addmm"}
    qtbot.waitUntil(lambda: graph.layer.selected == "relu", timeout=10_000)
    assert "source line" in graph.status.text() and "Enter shows the next" in graph.status.text()
    QTest.keyClick(graph.search, Qt.Key.Key_Return)  # the same text again: the next hit, on screen and in details
    second = hits[1].split("  ")[0]
    qtbot.waitUntil(lambda: graph.layer is not None and graph.layer.selected == second, timeout=30_000)
    assert graph.details.toPlainText().startswith(second)


def test_details_of_an_input_say_why_it_has_no_kernel_and_no_source(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED)
    graph.search.setText("^arg0_1$")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: graph.details.toPlainText().startswith("arg0_1"), timeout=30_000)
    text = graph.details.toPlainText()
    assert "kernel: — (an input or output of the graph: no kernel computes it)" in text
    assert "source: — (an input of the graph" in text


def crumbs(graph) -> list[str]:
    return [button.text() for button in graph.breadcrumb.findChildren(QToolButton) if button.isVisibleTo(graph)]


def test_breadcrumb_shows_the_module_path_and_a_segment_folds_and_opens_its_group(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED)
    graph.search.setText("^addmm$")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: graph.layer.selected == "addmm", timeout=30_000)
    assert graph.breadcrumb.isVisible() and crumbs(graph) == ["up"]
    button = next(b for b in graph.breadcrumb.findChildren(QToolButton) if b.text() == "up")
    assert "click to fold" in button.toolTip()
    button.click()
    qtbot.waitUntil(lambda: graph.layer is not None and "group:up" in graph.layer.index
                    and "addmm" not in graph.layer.index, timeout=30_000)
    qtbot.waitUntil(lambda: graph.layer.selected == "group:up" and crumbs(graph) == ["up"], timeout=10_000)
    button = next(b for b in graph.breadcrumb.findChildren(QToolButton) if b.text() == "up")
    assert "click to open" in button.toolTip()
    button.click()
    qtbot.waitUntil(lambda: graph.layer is not None and "addmm" in graph.layer.index, timeout=30_000)


def test_a_cpu_log_without_provenance_says_what_would_fill_the_kernel_field(qtbot, window, tmp_path, compiles):
    run = run_traced(EXAMPLES / "mlp_breaks.py", tmp_path / "run", tmp_path / "cache",
                     extra_env={"INDUCTOR_PROVENANCE": None, "TORCH_COMPILE_DEBUG": None})
    graph = open_graph(qtbot, window, run.trace_dir)
    graph.search.setText("^relu$")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: graph.details.toPlainText().startswith("relu"), timeout=30_000)
    assert "kernel: — (a CPU log records which kernel a node became only with INDUCTOR_PROVENANCE=1" \
        in graph.details.toPlainText()
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)
