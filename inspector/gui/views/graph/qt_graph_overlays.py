"""What the FX graph pane colours its nodes by (op kind, dtype, fused kernel, kernel time) and the legend
that says what each colour means. Apart from the pane because the colours are a function of the graph,
its stage and the kernel-time table alone: they never change when groups fold or open."""

from __future__ import annotations

from enum import Enum

from PySide6.QtGui import QColor

from inspector.core.analysis.kernel_index import kernels_by_node
from inspector.core.graphs.op_kinds import OP_KINDS, op_kind


class Overlay(str, Enum):
    """What the nodes are coloured by; the value is the text of the toolbar's choice."""

    OP_KIND = "op kind"
    DTYPE = "dtype"
    FUSED_KERNEL = "fused kernel"
    KERNEL_TIME = "kernel time"


PALETTE = ("#2b7bb9", "#2e9d4f", "#e0a526", "#8e5bb6", "#d9822b", "#17a2b8", "#c0392b", "#7f8c8d", "#16a085", "#9b59b6")
NO_KERNEL, UNMEASURED = "#e3e6ea", "#b8bec7"


def overlay_colours(mode: Overlay, unit, stage: str, graph, kernel_time) -> tuple[dict[str, list[str]],
                                                                                  list[tuple[str, str, str]]]:
    """The overlay `mode` of `unit`'s `graph` at `stage`: node → its fill(s) (a node in several kernels gets
    one stripe per kernel), and the legend as (colour, label, tooltip). Keys and their colours come from
    the whole graph, so a node's colour never changes when groups fold or open. `kernel_time()`: the
    session's kernel-time table or None, asked for only by the kernel-time overlay (it may read a profile)."""
    by_node = kernels_by_node(unit, stage) if unit is not None else {}
    nodes = graph.nodes
    fills: dict[str, list[str]] = {}
    legend: list[tuple[str, str, str]] = []
    if mode is Overlay.KERNEL_TIME:
        table = kernel_time()
        timed = {id(k): table.kernel_time(unit, k) for ks in by_node.values() for k in ks} if table else {}
        measured = {key: time.us_per_call for key, time in timed.items() if time is not None and time.launches}
        slowest = max(measured.values(), default=0.0) or 1.0
        for node in nodes:
            fills[node.name] = [_heat(measured[key] / slowest) if key in measured else UNMEASURED
                                for key in dict.fromkeys(id(k) for k in by_node.get(node.name, []))] or [NO_KERNEL]
        legend = [(_heat(step / 5), f"{slowest * step / 5:.1f} µs per call", "") for step in range(5, -1, -1)] \
            if measured else []
        legend += [(UNMEASURED, "kernel not in the profile (or this unit not profiled)", ""),
                   (NO_KERNEL, "no kernel", "")]
        return fills, legend
    if mode is Overlay.FUSED_KERNEL:
        names = sorted({k.name for ks in by_node.values() for k in ks})
        colour = {name: _colour(position) for position, name in enumerate(names)}
        for node in nodes:
            fills[node.name] = [colour[name] for name in dict.fromkeys(k.name for k in by_node.get(node.name, []))] \
                or [NO_KERNEL]
        legend = [(colour[name], name, name) for name in names] + [(NO_KERNEL, "no kernel (at this stage)", "")]
        return fills, legend
    if mode is Overlay.OP_KIND:
        colour = {kind: fill for kind, fill, _pattern in OP_KINDS}
        kinds = {node.name: op_kind(node) for node in nodes}
        present = set(kinds.values())
        return ({name: [colour[kind]] for name, kind in kinds.items()},
                [(fill, kind, "") for kind, fill, _pattern in OP_KINDS if kind in present])
    keys = sorted({node.dtype or "none" for node in nodes})  # Overlay.DTYPE
    colour = {key: _colour(position) for position, key in enumerate(keys)}
    return {node.name: [colour[node.dtype or "none"]] for node in nodes}, [(colour[key], key, "") for key in keys]


def _colour(position: int) -> str:
    """The palette, then evenly spread hues: enough distinct colours for every kernel of a unit."""
    if position < len(PALETTE):
        return PALETTE[position]
    return QColor.fromHsvF(((position - len(PALETTE)) * 0.618034) % 1.0, 0.55, 0.85).name()


def _heat(share: float) -> str:
    """Kernel time colour: pale yellow (fast) → dark red (slowest)."""
    share = min(1.0, max(0.0, share))
    return QColor.fromHsvF(0.15 * (1 - share), 0.25 + 0.75 * share, 1.0 - 0.35 * share).name()
