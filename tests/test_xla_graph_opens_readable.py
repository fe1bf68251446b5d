"""An XLA dump's graph opens readable at 1280×720, as the Graph tab's does: the bundled attention block's
84 instructions fitted whole into the pane beside the tables were boxes of `par…_1` and `dot…l.5`; it now
opens at the smallest scale whose labels read, from its top (its inputs), to scroll or zoom out from. The
Problems pane beside it says where a dump opened alone is shown."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")

from conftest import EXAMPLES, background_settled  # noqa: E402

XLA_EXAMPLE = EXAMPLES / "xla_compare" / "attention_block.py"


def test_the_attention_blocks_hlo_graph_opens_with_readable_labels(qtbot, window, tmp_path):
    from inspector.gui.views.graph.qt_zoom_view import READABLE_SCALE

    done = subprocess.run([sys.executable, str(XLA_EXAMPLE), "--jax", str(tmp_path / "dump")], cwd=tmp_path,
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    window.resize(1280, 720)
    view = window.xla_view
    window.open_path(tmp_path / "dump")
    qtbot.waitUntil(lambda: view.layer is not None and "instructions" in view.graph_status.text(), timeout=60_000)
    background_settled(qtbot)
    zoom = view.view
    whole = zoom.mapFromScene(zoom.scene().itemsBoundingRect()).boundingRect()
    # the case this is for: at a readable scale the whole graph is taller than its pane
    assert zoom.scene().itemsBoundingRect().height() * READABLE_SCALE > zoom.viewport().height()
    assert zoom.transform().m11() >= READABLE_SCALE
    assert abs(whole.top() - zoom.viewport().rect().top()) <= 8  # its inputs, at the top, are in view
    # and the Problems pane, empty beside it, says where an XLA dump is shown (it named only the GPU tab)
    assert "XLA dump in the XLA tab" in window.problems_view.topLevelItem(0).text(0)
