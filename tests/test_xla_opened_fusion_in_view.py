"""Opening a fusion in the XLA tab's graph (a double-click on its kernel, or on its box) shows its ops where
the user is looking, at the scale they chose: the graph redrawn at its top after every open put a fusion
below sixty ops out of view, and folding it again lost the place as well."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import background_settled  # noqa: E402


def write_dump(folder: Path, negates: int = 60) -> Path:
    """An XLA dump of one module: a chain of `negates` negations, then a fusion of an add and a multiply
    (the fusion far below the graph's top at a readable scale)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines, previous = ["  %p.0 = f32[4] parameter(0)"], "p.0"
    for i in range(1, negates + 1):
        lines.append(f"  %negate.{i} = f32[4] negate(f32[4] %{previous})")
        previous = f"negate.{i}"
    lines.append(f"  ROOT %fusion = f32[4] fusion(f32[4] %{previous}), kind=kLoop, calls=%fused_computation")
    (folder / "module_0001.jit_f.cpu_after_optimizations.txt").write_text(
        "HloModule jit_f\n\n"
        "%fused_computation (param_0: f32[4]) -> f32[4] {\n"
        "  %param_0 = f32[4] parameter(0)\n"
        "  %add.1 = f32[4] add(f32[4] %param_0, f32[4] %param_0)\n"
        "  ROOT %multiply.1 = f32[4] multiply(f32[4] %add.1, f32[4] %param_0)\n}\n\n"
        "ENTRY %main (p.0: f32[4]) -> f32[4] {\n" + "\n".join(lines) + "\n}\n")
    return folder


def in_view(zoom, layer, name: str) -> bool:
    return zoom.mapToScene(zoom.viewport().rect()).boundingRect().contains(layer.rect_of(name))


def test_a_kernel_opened_from_its_row_shows_its_fusion_in_view_and_folding_keeps_it(qtbot, window, tmp_path):
    window.resize(1280, 720)
    view = window.xla_view
    window.open_path(write_dump(tmp_path / "dump"))
    qtbot.waitUntil(lambda: view.layer is not None and "instructions" in view.graph_status.text(), timeout=60_000)
    background_settled(qtbot)
    zoom = view.view
    row = next(row for row in range(view.kernels.rowCount()) if view.kernels.item(row, 0).text() == "fusion")
    view.kernels.cellDoubleClicked.emit(row, 0)  # "open the kernel's fusion in the graph"
    qtbot.waitUntil(lambda: view.layer is not None and "add.1" in view.layer.index, timeout=60_000)
    background_settled(qtbot)
    assert in_view(zoom, view.layer, "add.1") and in_view(zoom, view.layer, "multiply.1")

    zoom.zoom(1.25)  # the user's own zoom, kept through a fold
    scale = zoom.transform().m11()
    zoom.sigActivated.emit("open:fusion")  # a double-click on the fusion's frame folds it
    qtbot.waitUntil(lambda: view.layer is not None and "group:fusion" in view.layer.index, timeout=60_000)
    background_settled(qtbot)
    assert in_view(zoom, view.layer, "group:fusion")
    assert zoom.transform().m11() == pytest.approx(scale)
