"""The FX graph view on real Hugging Face models (GPT-2 and Llama built from tiny configs, compiled under
TORCH_TRACE by bench/make_real_graphs.py, no nn_module_stack recorded): module groups from the raw log at
every stage, every node drawn once, hover text, selection, kernel overlays."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from test_graph_view import open_graph  # noqa: E402
from PySide6.QtCore import QEvent, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from inspector.core.analysis.kernel_index import kernels_by_node  # noqa: E402
from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, stage_paths  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import make_real_graphs  # noqa: E402

C_ATTN_WEIGHT = "l_self_modules_transformer_modules_h_modules_0_modules_attn_modules_c_attn_parameters_weight_"


@pytest.fixture(scope="session")
def gpt2_log(compiles) -> Path:
    """GPT-2, 2 layers of width 64, compiled with Inductor (kept under bench/out: made once)."""
    pytest.importorskip("transformers")
    return make_real_graphs.make("gpt2_2_inductor")


@pytest.fixture(scope="session")
def llama_log(compiles) -> Path:
    pytest.importorskip("transformers")
    return make_real_graphs.make("llama_2_inductor")


def _paths(log: Path, stage: str):
    unit = open_path(log).units[0]
    graph = unit.graphs[stage].graph
    return unit, graph, stage_paths({name: g.graph for name, g in unit.graphs.items()}, stage)


def test_raw_gpt2_log_groups_ops_and_parameters_under_their_module(gpt2_log):
    _unit, graph, paths = _paths(gpt2_log, "dynamo")
    assert paths[C_ATTN_WEIGHT] == ("transformer", "h", "0", "attn", "c_attn")
    users = [user for user in graph.users(C_ATTN_WEIGHT)]
    assert users and all(paths[user] == paths[C_ATTN_WEIGHT] for user in users)  # the addmm that reads it
    root = build_groups(graph, paths)
    keys = all_group_keys(root)
    assert {"transformer/h/0/attn", "transformer/h/1/mlp", "transformer/wte"} <= keys
    assert not any(key.split("/")[-1] in ("parameters", "forward", "lazy_initialization") for key in keys)
    layer = root.children["transformer"].children["h"].children
    assert layer["0"].size() > 40 and abs(layer["0"].size() - layer["1"].size()) <= 4  # like layers alike
    sdpa = [node.name for node in graph.nodes if "scaled_dot_product" in node.target]
    assert [paths[name] for name in sdpa] == [("transformer", "h", "0", "attn"), ("transformer", "h", "1", "attn")]


@pytest.mark.parametrize("stage", ["aot_inference", "post_grad"])
def test_later_stages_are_grouped_through_their_links_to_dynamo(gpt2_log, stage):
    _unit, graph, paths = _paths(gpt2_log, stage)
    addmms = [node.name for node in graph.nodes if node.target == "aten.addmm.default"]
    per_layer = Counter(paths[name][:3] for name in addmms)
    # c_attn, c_proj, c_fc, c_proj
    assert per_layer[("transformer", "h", "0")] == per_layer[("transformer", "h", "1")] == 4
    assert {paths[name][-1] for name in addmms} == {"c_attn", "c_proj", "c_fc"}
    weights = [(arg, name) for name in addmms for arg in graph.node(name).inputs if graph.node(arg).op == "placeholder"]
    # inside their module
    assert len(weights) == 2 * len(addmms) and all(paths[arg] == paths[name] for arg, name in weights)
    sizes = {layer: sum(1 for path in paths.values() if path[:3] == ("transformer", "h", layer)) for layer in "01"}
    assert sizes["0"] > 40 and abs(sizes["0"] - sizes["1"]) <= 6


def test_llama_log_names_its_layers(llama_log):
    _unit, graph, paths = _paths(llama_log, "post_grad")
    mms = [node.name for node in graph.nodes if node.target == "aten.mm.default"]
    assert {paths[name][:3] for name in mms} >= {("model", "layers", "0"), ("model", "layers", "1")}
    assert any(path[-1:] == ("q_proj",) for path in paths.values())


def test_every_node_drawn_once_hover_and_selection(qtbot, window, gpt2_log):
    view = open_graph(qtbot, window, gpt2_log, stage="post_grad")
    graph = view.graph
    owners = view.visible.owner
    assert sorted(owners) == sorted(node.name for node in graph.nodes)  # folded: each node in one item
    assert len(view.layer.ids) == len(set(view.layer.ids))
    view.expand_all()
    qtbot.waitUntil(lambda: view.layer is not None and not any(i.startswith("group:") for i in view.layer.ids),
                    timeout=60_000)
    assert sorted(view.layer.ids) == sorted(node.name for node in graph.nodes)
    assert "layered" not in view.status.text()
    addmm = next(node for node in graph.nodes if node.target == "aten.addmm.default")
    text = view.hover_text(addmm.name)
    assert addmm.name in text and "aten.addmm.default" in text and "transformer/h/0/attn/c_attn" in text
    assert "pytorch_utils.py:" in text and "f32[" in text
    view.view.resetTransform()
    view.view.centerOn(view.layer.rect_of(addmm.name).center())
    point = view.view.mapFromScene(view.layer.rect_of(addmm.name).center())
    viewport = view.view.viewport()
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, point, viewport.mapToGlobal(point)))
    assert addmm.name in QToolTip.text() and "aten.addmm.default" in QToolTip.text()  # what the mouse shows
    qtbot.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=point)
    assert view.layer.selected == addmm.name
    assert set(addmm.inputs) | set(graph.users(addmm.name)) == view.layer.neighbours
    assert addmm.name in view.details.toPlainText()


def test_overlays_show_every_kernel_of_a_node_and_list_them_all(qtbot, window, llama_log):
    view = open_graph(qtbot, window, llama_log, stage="dynamo")
    view.expand_all()
    qtbot.waitUntil(lambda: view.layer is not None and not any(i.startswith("group:") for i in view.layer.ids),
                    timeout=60_000)
    by_node = kernels_by_node(view.unit, "dynamo")
    multi = next(name for name, kernels in by_node.items() if len({k.name for k in kernels}) > 1)
    colours_before = {name: fills for name, fills in zip(view.layer.ids, view.layer.fills)}
    view.overlay.setCurrentText("fused kernel")
    fills = dict(zip(view.layer.ids, view.layer.fills))
    assert len(fills[multi]) == len({k.name for k in by_node[multi]})  # one stripe per kernel
    legend = [view.legend.item(row).text() for row in range(view.legend.count())]
    assert {k.name for kernels in by_node.values() for k in kernels} <= set(legend)
    view.overlay.setCurrentText("op kind")
    view.fold_all()
    qtbot.waitUntil(lambda: view.layer is not None and any(i.startswith("group:") for i in view.layer.ids),
                    timeout=60_000)
    for name, fill in zip(view.layer.ids, view.layer.fills):  # a node's colour does not change with folding
        if name in colours_before:
            assert fill == colours_before[name]
