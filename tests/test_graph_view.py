"""The FX graph view: folding by module, Graphviz layout, search, details, highlights, break map,
export — on real captures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPointF, Qt  # noqa: E402

from conftest import open_and_wait  # noqa: E402

from inspector.core.analysis.break_map import CompiledRegion, Gap, break_map  # noqa: E402
from inspector.core.model.fx_graph_text import parse_fx_graph  # noqa: E402
from inspector.core.graphs.graph_hierarchy import build_groups, module_path, node_paths, visible_graph  # noqa: E402
from inspector.core.graphs.graph_layout import dot_program, layout  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402
from inspector.core.analysis.module_stacks import module_stacks  # noqa: E402
from inspector.gui.views.graph import qt_graph_export, qt_graph_layers, qt_graph_overlays  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def open_graph(qtbot, window, path, stage="dynamo"):
    open_and_wait(qtbot, window, path)
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    graph.stage.setCurrentText(stage)
    qtbot.waitUntil(lambda: graph.layer is not None and graph.stage.currentText() == stage
                    and graph.graph is graph.unit.graphs[stage].graph, timeout=60_000)
    return graph


def test_module_paths_from_nn_module_stack_text():
    assert module_path("L['self'].blocks[0]._modules['attn']") == ("blocks", "0", "attn")
    assert module_path("L['self']._modules['head']") == ("head",)


def test_graph_shows_every_node_with_details_from_the_readable_text(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED)
    unit = window.model.unit
    assert graph.layer is not None and dot_program() is not None
    assert sorted(graph.layer.ids) == sorted(node.name for node in unit.graphs["dynamo"].graph.nodes)
    assert "layout: dot" in graph.status.text()
    graph.search.setText("^linear$")
    assert graph.run_search() == ["linear"]
    assert graph.layer.selected == "linear"
    details = graph.details.toPlainText()
    assert ("torch._C._nn.linear" in details and "mlp_breaks.py:18" in details
            and "h = torch.relu(self.up(x))" in details)
    upstream = graph.highlight_flow(up=True)
    assert upstream == {"linear", "l_x_", "l_self_modules_up_parameters_weight_", "l_self_modules_up_parameters_bias_"}
    downstream = graph.highlight_flow(up=False)
    assert {"linear", "h", "sum_1", "gt", "output"} <= downstream


def test_nodes_next_to_a_break_are_outlined(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED)
    assert str(window.model.unit.compile_id) == "[0/0]" and window.model.unit.breaks
    output = next(node for node in graph.graph.nodes if node.op == "output")
    assert set(output.inputs) <= set(graph.layer.outline)  # what the graph hands back at the break


def test_folded_modules_open_and_search_reveals_inside(qtbot, window, captured_examples):
    graph = open_graph(qtbot, window, captured_examples["tiny_decoder"])
    stacks = module_stacks(window.model.unit)
    assert stacks and any(stacks.values())
    graph.fold_all()
    qtbot.waitUntil(lambda: graph.expanded == set() and graph.layer is not None
                    and any(i.startswith("group:") for i in graph.layer.ids), timeout=120_000)
    assert "group:blocks" in graph.layer.ids
    target = next(name for name, stack in stacks.items() if stack and module_path(stack[-1])[:2] == ("blocks", "1"))
    graph.reveal(target)
    qtbot.waitUntil(lambda: graph.layer is not None and target in graph.layer.ids, timeout=60_000)
    assert {"blocks", "blocks/1"} <= graph.expanded and graph.layer.selected == target


def test_identical_blocks_share_one_cached_layout(captured_examples):
    unit = open_path(captured_examples["tiny_decoder"]).units[0]
    graph = unit.graphs["dynamo"].graph
    root = build_groups(graph, node_paths(graph, module_stacks(unit)))
    sizes = []
    for block in ("0", "1"):
        expanded = {"blocks", f"blocks/{block}"}
        placed = layout(graph, root, expanded, visible_graph(graph, root, expanded))
        x, y, w, h = placed.frames[f"blocks/{block}"]
        sizes.append((round(w), round(h)))
    assert sizes[0] == sizes[1]


def test_break_map_shows_regions_and_breaks_in_program_order():
    rows = break_map(open_path(BUNDLED))
    assert len(rows) == 2
    first = rows[0]
    assert [type(part).__name__ for part in first] == ["CompiledRegion", "Gap"] * 2 + ["CompiledRegion"]
    assert [str(part.unit.compile_id) for part in first
            if isinstance(part, CompiledRegion)] == ["[0/0]", "[1/0]", "[2/0]"]
    assert [part.brk.kind for part in first if isinstance(part, Gap)] == ["data_dependent", "explicit"]
    assert all(part.measured for part in rows[1] if isinstance(part, CompiledRegion))  # the profiled compilation


def test_export_svg_and_tiled_png(qtbot, window, tmp_path, monkeypatch):
    graph = open_graph(qtbot, window, BUNDLED)
    graph.export_svg(str(tmp_path / "g.svg"))
    assert (tmp_path / "g.svg").read_text().count("<svg") == 1
    assert graph.export_png(str(tmp_path / "g.png")) == [str(tmp_path / "g.png")]
    monkeypatch.setattr(qt_graph_export, "TILE", 128)
    tiles = graph.export_png(str(tmp_path / "t.png"), scale=2.0)
    assert len(tiles) > 1 and all(Path(tile).stat().st_size > 0 for tile in tiles)


def test_empty_and_partly_unreadable_graph_text():
    empty = parse_fx_graph('class G(torch.nn.Module):\n    def forward(self, x: "f32[4]"):\n        return (x,)\n')
    assert empty.empty
    damaged = parse_fx_graph('class G(torch.nn.Module):\n    def forward(self, x: "f32[4]"):\n'
                             '        relu: "f32[4]" = torch.relu(x)\n        ??? garbled line\n'
                             '        return (relu,)\n')
    assert [node.name for node in damaged.nodes] == ["x", "relu", "output"]
    assert damaged.unreadable == [(4, "??? garbled line")]


def test_a_transformer_big_enough_opens_folded(qtbot, window, captured_examples):
    graph = open_graph(qtbot, window, captured_examples["tiny_decoder"], stage="post_grad")
    assert len(graph.graph.nodes) > 300
    assert graph.expanded == set() and any(item.startswith("group:") for item in graph.layer.ids)
    assert "folded groups" in graph.status.text()
    folded = next(item for item in graph.layer.ids if item.startswith("group:"))
    graph._on_activated(folded)  # double-click opens it
    qtbot.waitUntil(lambda: folded[len("group:"):] in graph.expanded and graph.layer is not None
                    and folded not in graph.layer.ids, timeout=60_000)


def test_graphs_of_the_gpu_log_open(qtbot, window, corpus):
    graph = open_graph(qtbot, window, corpus / "inductor_provenance_jit_cuda_log.txt", stage="after_post_grad_graph")
    assert {"mm_default", "mul_3"} <= set(graph.layer.ids)
    window.model.select_kernel_named("triton_poi_fused_addmm_gelu_2")
    assert {"mul_3", "erf"} <= set(graph.layer.outline)  # the kernel's nodes, outlined


def test_kernel_overlays_are_stage_aware_with_a_numeric_time_scale(qtbot, window):
    graph = open_graph(qtbot, window, BUNDLED, stage="dynamo")
    graph.overlay.setCurrentText("fused kernel")  # these kernels name post-grad nodes: Dynamo's `relu` is not theirs
    assert {fills[0] for fills in graph.layer.fills} == {qt_graph_overlays.NO_KERNEL}
    graph = open_graph(qtbot, window, BUNDLED, stage="post_grad")
    assert "relu" in dict(zip(graph.layer.ids, graph.layer.fills))
    assert dict(zip(graph.layer.ids, graph.layer.fills))["relu"] != [qt_graph_overlays.NO_KERNEL]
    # [0/0] never ran in the profile (the profile ran [0/1]): its kernels are "not in the profile"
    graph.overlay.setCurrentText("kernel time")
    assert not any(text.endswith("µs per call") for text in
                   (graph.legend.item(row).text() for row in range(graph.legend.count())))
    ran = next(unit for unit in window.model.loaded.session.units if str(unit.compile_id) == "[0/1]")
    window.model.select_unit(ran)
    qtbot.waitUntil(lambda: graph.layer is not None and graph.graph is graph.unit.graphs["post_grad"].graph
                    and str(graph.unit.compile_id) == "[0/1]", timeout=60_000)
    graph.overlay.setCurrentText("fused kernel")
    graph.overlay.setCurrentText("kernel time")
    legend = [graph.legend.item(row).text() for row in range(graph.legend.count())]
    scale = [text for text in legend if text.endswith("µs per call")]
    assert len(scale) == 6 and float(scale[-1].split()[0]) == 0.0 and float(scale[0].split()[0]) > 0


def test_layers_of_a_replaced_layout_are_freed(qtbot, window):
    """The view freezes the scene out of the collector's full passes (gc.freeze) for smooth frames on
    big graphs, so a layout's layers must be free of reference cycles: after the next layout they go."""
    import gc
    import weakref
    graph = open_graph(qtbot, window, BUNDLED)
    layers = [item for item in graph.scene.items()
              if isinstance(item, (qt_graph_layers.NodeLayer, qt_graph_layers.EdgeLayer))]
    assert len(layers) == 2
    graph.view.viewport().grab()  # paints, so the lazily built caches exist too
    for factor in (0.1, 0.5, 4.0):
        graph.view.scale(factor, factor)
        graph.view.viewport().grab()
    gone = [weakref.ref(layer) for layer in layers]
    old = graph.layer
    del layers
    graph.fold_all()
    qtbot.waitUntil(lambda: graph.layer is not None and graph.layer is not old, timeout=60_000)
    del old
    gc.collect()
    assert [ref() for ref in gone] == [None, None]


def test_each_outline_colour_means_one_thing_and_the_legend_says_which(qtbot, window):
    """Next to a break and next to the selection were both orange: now each outline has its own colour,
    named under the overlay's legend."""
    from inspector.gui.views.graph.qt_graph_layers import BREAK_NEIGHBOUR_COLOUR, NEIGHBOUR_COLOUR, OUTLINES

    graph = open_graph(qtbot, window, BUNDLED)
    output = next(node for node in graph.graph.nodes if node.op == "output")
    assert {graph.layer.outline[name] for name in output.inputs} == {BREAK_NEIGHBOUR_COLOUR}
    graph.reveal("linear")
    qtbot.waitUntil(lambda: graph.layer.selected == "linear" and bool(graph.layer.neighbours), timeout=10_000)
    colours = [colour for colour, _meaning in OUTLINES]
    assert len(set(colours)) == len(colours) and NEIGHBOUR_COLOUR != BREAK_NEIGHBOUR_COLOUR
    legend = __import__("html").unescape(graph.outline_legend.text())
    assert all(meaning in legend and colour in legend for colour, meaning in OUTLINES)


def test_module_frames_follow_a_dark_theme(qtbot, window):
    """On the dark palette a module's frame is a shade of the dark background, its title light (they were
    near-white boxes with dark titles)."""
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QApplication

    from inspector.gui.qt_palette import apply_theme
    from inspector.gui.views.graph.qt_graph_layers import FrameLayer

    app = QApplication.instance()
    palette, style = app.palette(), app.style().name()
    try:
        apply_theme(app, "dark")
        graph = open_graph(qtbot, window, BUNDLED)
        [frames] = [item for item in graph.scene.items() if isinstance(item, FrameLayer)]
        assert all(shade.lightnessF() < 0.5 for shade in frames.shades[:4])
        assert frames.title_colour.lightnessF() > 0.6
        graph.view.fitInView(frames.boundingRect(), Qt.AspectRatioMode.KeepAspectRatio)
        image = graph.view.grab().toImage()
        inside = graph.view.mapFromScene(frames.rects[0].topLeft() + QPointF(3, frames.rects[0].height() / 2))
        assert QColor(image.pixel(inside.x() + 2, inside.y())).lightnessF() < 0.5, "the frame's fill on screen"
    finally:
        app.setPalette(palette)
        app.setStyle(style)


def test_a_graph_too_big_to_read_whole_opens_readable_from_its_top(qtbot, window, captured_examples):
    """A transformer's post-grad graph, every module open, at 1280×720: it opens at a scale its labels can
    be read at, showing its first nodes (it was a speck until Fit); Fit still shows it whole."""
    from inspector.gui.views.graph.qt_zoom_view import READABLE_SCALE

    window.resize(1280, 720)
    graph = open_graph(qtbot, window, captured_examples["tiny_decoder"], stage="post_grad")
    graph.expand_all()
    qtbot.waitUntil(lambda: graph.layer is not None and not any(i.startswith("group:") for i in graph.layer.ids),
                    timeout=60_000)
    view = graph.view
    bounds = view.scene().itemsBoundingRect()
    whole = min(view.viewport().width() / bounds.width(), view.viewport().height() / bounds.height())
    assert whole < READABLE_SCALE, "the graph is too big to read whole here"
    qtbot.waitUntil(lambda: abs(view.transform().m11() - READABLE_SCALE) < 1e-6, timeout=10_000)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.top() <= bounds.top() + 1, "its top, where its inputs are, is on screen"
    view.fit()
    assert view.transform().m11() == pytest.approx(whole, rel=0.05)


def test_a_small_graph_still_opens_whole(qtbot, window):
    """The bundled graph is readable whole: it opens fitted (at most at its natural size), as before."""
    graph = open_graph(qtbot, window, BUNDLED)
    view = graph.view
    bounds = view.scene().itemsBoundingRect()
    whole = min(view.viewport().width() / bounds.width(), view.viewport().height() / bounds.height())
    assert view.transform().m11() == pytest.approx(min(1.0, whole), rel=0.05)


def test_a_nodes_tooltip_reads_as_text_and_the_toolbar_says_what_each_button_does(qtbot, window):
    """Hovering a box shows its name in bold, not escaped tags (`&lt;b&gt;`); every toolbar button has
    a tooltip, and U / D — the keys the outline legend names — trace up and down."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QPushButton, QToolTip

    graph = open_graph(qtbot, window, BUNDLED)
    window.resize(1280, 720)
    graph.view.resetTransform()
    graph.view.centerOn(graph.layer.rect_of("linear").center())
    at = graph.view.mapFromScene(graph.layer.rect_of("linear").center())
    assert graph.view.item_at(at) == "linear"
    QApplication.sendEvent(graph.view.viewport(),
                           QHelpEvent(QEvent.Type.ToolTip, at, graph.view.viewport().mapToGlobal(at)))
    qtbot.waitUntil(QToolTip.isVisible, timeout=10_000)
    tip = QToolTip.text()
    assert "<b>linear</b>" in tip and "&lt;" not in tip and "torch._C._nn.linear" in tip
    buttons = [button for button in graph.findChildren(QPushButton) if button.isVisible()]
    assert buttons and all(button.toolTip() for button in buttons), [b.text() for b in buttons if not b.toolTip()]
    graph.search.setText("^linear$")
    graph.run_search()
    graph.view.setFocus()
    QTest.keyClick(graph.view, Qt.Key.Key_U)
    assert {"l_x_", "l_self_modules_up_parameters_weight_"} <= set(graph.layer.outline)
    QTest.keyClick(graph.view, Qt.Key.Key_Escape)
    QTest.keyClick(graph.view, Qt.Key.Key_D)
    assert {"h", "sum_1"} <= set(graph.layer.outline) and "l_x_" not in graph.layer.outline
    QTest.keyClicks(graph.search, "du")  # typed into the search box, not taken as shortcuts
    assert graph.search.text().endswith("du")
