"""The FX graph pane's node details: what it says of the clicked node (op, target, arguments, shape,
inputs and users, source line, the kernels it became and their time) and, where the kernel field is
empty, why and what would fill it. Apart from the pane, which only decides when to show them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QTextBrowser

from inspector.core.analysis.kernel_index import kernels_of_node, names_stage, naming_stage
from inspector.core.analysis.source_time import described
from inspector.gui.qt_plain_text import html_text

# what the node details pane says while no node is picked: an empty white pane does not say it is waiting for a click
DETAILS_HINT = ("Click a node to see its op, target, arguments, shape, dtype and stride, its inputs and users, "
                "its source line and the kernel it became.")


class QtNodeDetails(QTextBrowser):
    """The clicked node's details; while there are none (before a click, or cleared for another unit or
    stage) it says what a click shows. Painted here: QTextEdit cuts its own placeholder to one line."""

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self.document().isEmpty():
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            margin = round(self.document().documentMargin())
            painter.drawText(self.viewport().rect().adjusted(margin, margin, -margin, -margin),
                             Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap, DETAILS_HINT)


def node_details_html(unit, graph, node, stage: str, table) -> str:
    """The details of `node` (of `unit`'s `graph` at `stage`) as the pane shows them; `table`: the
    session's kernel time, or None without a profile."""
    kernels = kernels_of_node(unit, node.name, stage)
    source = (f"<a href='file://{html_text(node.source.file)}#{node.source.line}'>"
              f"{html_text(Path(node.source.file).name)}:{node.source.line}</a>"
              f"<br><code>{html_text(node.source.code)}</code>" if node.source else
              "— (" + ("an input of the graph: it comes from the caller, not from a line"
                      if node.op in ("placeholder", "get_attr")
                      else "the log records no stack for it; Dynamo's and the AOT graphs name each op's line") + ")")
    kernel_text = "; ".join(f"{k.name} ({described(table.kernel_time(unit, k), table)})" if table else k.name
                            for k in kernels) or "—"
    if not kernels:  # say what would fill it
        kernel_text = f"— ({no_kernel_reason(unit, node, stage)})"
    return (f"<b>{html_text(node.name)}</b> <i>{html_text(node.op)}</i><br>"
            f"target: <code>{html_text(node.target)}</code><br>"
            f"args: <code>{html_text(node.args[:300])}</code><br>"
            f"shape {html_text(node.shape)} dtype {html_text(node.dtype)} "
            f"stride {html_text(node.stride)}<br>inputs: {html_text(', '.join(node.inputs) or '—')}"
            f"<br>users: {html_text(', '.join(graph.users(node.name)) or '—')}"
            f"<br>source: {source}<br>kernel: {html_text(kernel_text)}")


def no_kernel_reason(unit, node, stage: str) -> str:
    """Why a node's kernel field is empty, and what would fill it."""
    if node.op in ("placeholder", "output", "get_attr"):
        return "an input or output of the graph: no kernel computes it"
    kernels = unit.kernels if unit is not None else []
    if not kernels:
        return "the log holds no generated code for this unit"
    if not any(kernel.source_origin == "provenance" for kernel in kernels):
        reason = "a CPU log records which kernel a node became only with INDUCTOR_PROVENANCE=1"
        named = next((naming_stage(unit, k) for k in kernels
                      if k.source_origin == "comment" and not names_stage(k, stage) and naming_stage(unit, k)), None)
        return reason + (f"; library calls name the {named} graph's nodes" if named else "")
    if not any(names_stage(kernel, stage) for kernel in kernels):
        named = next((naming_stage(unit, kernel) for kernel in kernels if naming_stage(unit, kernel)), None)
        return (f"the kernels name the nodes of the {named} graph: choose that stage" if named
                else "the kernels name nodes of a graph this log does not hold")
    return "no kernel names it: Inductor folded it into another node's kernel or removed it"
