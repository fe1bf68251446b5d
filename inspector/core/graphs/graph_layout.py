"""Layout of a folded FX graph with Graphviz `dot` (the graphviz-pure wheel: a self-contained binary,
no system package, faster than Graphviz's own dot here: docs/benchmarks.md, "FX graph view"), one
group at a time.

Each open group is laid out on its own — its nodes and folded subgroups as boxes, its open subgroups
as boxes of their own laid-out size — and placed inside its parent, so dot never sees more than one
group's direct content, and a group's layout is cached by its structure: identical transformer blocks
are laid out once. A group with more direct items than MAX_DOT_ITEMS, or a dot that fails or runs out of
time, gets a simple layered arrangement instead, and the result says so."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.model.fx_graph_text import FxGraph
from inspector.core.graphs.item_ids import ItemKind, group_item, is_group, item_key, item_kind, open_item
from inspector.core.graphs.graph_hierarchy import Group, VisibleGraph, edges_by_owner, visible_graph

MAX_DOT_ITEMS = 400
DOT_TIMEOUT_S = 20.0
NODE_W, NODE_H, GROUP_W, GROUP_H = 1.9, 0.55, 2.6, 0.8  # inches, as dot measures
POINTS = 72.0
PAD = 18.0  # points around an open group's content
GRID_FROM, GRID_ASPECT, GRID_GAP = 6, 1.6, 60.0  # module lists this long are laid out in columns


@dataclass
class Layout:
    boxes: dict[str, tuple[float, float, float, float]]  # visible item → x, y (centre), w, h; points, y down
    frames: dict[str, tuple[float, float, float, float]]  # open group key → its frame (x, y, w, h top-left)
    edges: dict[tuple[str, str], list[tuple[float, float]]]  # visible edge → polyline, ending at its head
    engine: str  # "dot", "layered" or "dot + layered"
    notes: list[str] = field(default_factory=list)
    routed: set[tuple[str, str]] = field(default_factory=set)  # edges drawn on dot's own route (inside one group)


@dataclass(frozen=True)
class _Placed:
    """One group's content laid out relative to its own top-left corner."""

    size: tuple[float, float]
    items: dict[str, tuple[float, float, float, float]]  # local item id → centre x, y, w, h
    engine: str
    note: str
    routes: dict[tuple[int, int], list[tuple[float, float]]] = field(default_factory=dict)  # by item position


_cache: dict[tuple, _Placed] = {}


def dot_program() -> str | None:
    """graphviz-pure beside this interpreter (a venv, a frozen app) or on PATH."""
    for folder in (Path(sys.executable).parent, Path(getattr(sys, "_MEIPASS", "") or "/nonexistent")):
        if (folder / "graphviz-pure").exists():
            return str(folder / "graphviz-pure")
    return shutil.which("graphviz-pure") or shutil.which("dot")


@dataclass
class _Context:
    """What one layout() call knows about the whole graph, computed once: each node's group, each open
    group's edges between its direct items, and each open group's placed content (asked for by its
    parent for its size and again when placed: without it a group ten levels deep is laid out ten times)."""

    expanded: set[str]
    group_of: dict[str, tuple[str, ...]]
    edges: dict[tuple[str, ...], list[tuple[str, str]]]
    placed: dict[str, _Placed] = field(default_factory=dict)


def layout(graph: FxGraph, root: Group, expanded: set[str], visible: VisibleGraph) -> Layout:
    group_of, by_owner = edges_by_owner(graph, root)
    context = _Context(expanded, group_of, defaultdict(list))
    open_paths = [()] + [tuple(key.split("/")) for key in expanded]
    for owner in open_paths:
        if not all("/".join(owner[:depth]) in expanded for depth in range(1, len(owner) + 1)):
            continue  # inside a folded group
        seen: set[tuple[str, str]] = set()
        for (source, source_group), (target, target_group) in _owned_pairs(root, group_of, by_owner, owner):
            edge = (_item(source, source_group, expanded), _item(target, target_group, expanded))
            if edge[0] != edge[1] and edge not in seen:
                seen.add(edge)
                context.edges[owner].append(edge)
    result = Layout({}, {}, {}, "", [])
    engines: set[str] = set()
    routes: dict[tuple[str, str], list[tuple[float, float]]] = {}
    _place(root, context, 0.0, 0.0, result, engines, routes)
    result.engine = " + ".join(sorted(engines)) or "dot"
    for (a, b) in visible.edges:
        if a in result.boxes and b in result.boxes:
            route = routes.get((a, b))
            if route is not None:
                result.edges[(a, b)] = route
                result.routed.add((a, b))
                continue
            (xa, ya, _wa, ha), (xb, yb, _wb, hb) = result.boxes[a], result.boxes[b]
            result.edges[(a, b)] = [(xa, ya + ha / 2), (xb, yb - hb / 2)]
    return result


_pairs: dict[int, tuple[Group, dict]] = {}  # id(root) → (root, owner path → its edges as pairs of direct content)


def _owned_pairs(root: Group, group_of: dict[str, tuple[str, ...]], by_owner: dict, owner: tuple[str, ...]
                 ) -> list[tuple[tuple[str, bool], tuple[str, bool]]]:
    """The edges a group owns, as distinct pairs of its direct content — a node (name, False) or a child
    group (key, True) — in first-seen order. Worked out once per grouping and group, so opening a group
    decides open or folded per pair instead of walking every edge again: the rotary embedding and the
    attention mask feed every layer, thousands of edges owned by the top group that become one pair
    per layer."""
    known = _pairs.get(id(root))
    if known is None or known[0] is not root:
        if len(_pairs) > 8:
            _pairs.clear()
        known = _pairs[id(root)] = (root, {})
    pairs = known[1].get(owner)
    if pairs is None:
        depth = len(owner)

        def direct(name: str) -> tuple[str, bool]:
            path = group_of[name]
            return (name, False) if len(path) == depth else ("/".join(path[:depth + 1]), True)

        pairs = known[1][owner] = list(dict.fromkeys((direct(a), direct(b)) for a, b in by_owner.get(owner, ())))
    return pairs


def _item(name: str, is_group: bool, expanded: set[str]) -> str:
    """The visible item of a group's direct content: a node, or a child group open or folded."""
    if not is_group:
        return name
    return open_item(name) if name in expanded else group_item(name)


def _place(group: Group, context: _Context, left: float, top: float, result: Layout, engines: set[str],
           routes: dict[tuple[str, str], list[tuple[float, float]]]) -> None:
    placed = _group_layout(group, context)
    engines.add(placed.engine)
    if placed.note:
        result.notes.append(placed.note)
    names = list(placed.items)
    for (a, b), points in placed.routes.items():
        routes[(names[a], names[b])] = [(left + x, top + y) for x, y in points]
    children = {child.key: child for child in group.children.values()}
    boxes = result.boxes
    for local, (x, y, w, h) in placed.items.items():
        if item_kind(local) is ItemKind.OPEN:
            key = item_key(local)
            frame_left, frame_top = left + x - w / 2, top + y - h / 2
            result.frames[key] = (frame_left, frame_top, w, h)
            _place(children[key], context, frame_left + PAD, frame_top + PAD * 1.5, result, engines, routes)
        else:
            boxes[local] = (left + x, top + y, w, h)


def _group_layout(group: Group, context: _Context) -> _Placed:
    placed = context.placed.get(group.key)
    if placed is None:
        placed = context.placed[group.key] = _content_layout(group, context)
    return placed


def _content_layout(group: Group, context: _Context) -> _Placed:
    items: list[tuple[str, float, float]] = [(name, NODE_W * POINTS, NODE_H * POINTS) for name in group.nodes]
    for child in group.children.values():
        if child.key in context.expanded:
            width, height = _group_layout(child, context).size
            items.append((open_item(child.key), width + 2 * PAD, height + 2.5 * PAD))
        else:
            items.append((group_item(child.key), GROUP_W * POINTS, GROUP_H * POINTS))
    edges = context.edges.get(group.path, [])
    index = {item: position for position, (item, _w, _h) in enumerate(items)}
    key = (tuple((round(w), round(h), item_kind(item)) for item, w, h in items),
           tuple(sorted((index[a], index[b]) for a, b in edges if a in index and b in index)))
    cached = _cache.get(key)
    if cached is None and _is_module_list(items):
        cached = _cache[key] = _columns(items)
    if cached is None:
        cached = _cache[key] = _compute(items, [e for e in edges if e[0] in index and e[1] in index], index)
    if list(cached.items) == [item for item, _w, _h in items]:
        return cached
    names = [item for item, _w, _h in items]  # same structure, other names: reuse the positions
    return _Placed(cached.size, dict(zip(names, cached.items.values())), cached.engine, cached.note, cached.routes)


def _compute(items: list[tuple[str, float, float]], edges: list[tuple[str, str]], index: dict[str, int]) -> _Placed:
    program = dot_program()
    if program is None:
        return _layered(items, edges, "no Graphviz found (install graphviz-pure): simple layered layout")
    if len(items) > MAX_DOT_ITEMS:
        return _layered(items, edges, f"a group with {len(items)} direct items (dot gets at most {MAX_DOT_ITEMS}): "
                                      "simple layered layout")
    lines = ["digraph G {", "rankdir=TB; nodesep=0.25; ranksep=0.35;", 'node [shape=box fixedsize=true label=""];',
             "edge [arrowhead=none];"]
    lines += [f"n{index[item]} [width={w / POINTS:.3f} height={h / POINTS:.3f}];" for item, w, h in items]
    lines += [f"n{index[a]} -> n{index[b]};" for a, b in edges]
    lines.append("}")
    try:
        done = subprocess.run([program, "-Tplain"], input="\n".join(lines), capture_output=True, text=True,
                              timeout=DOT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return _layered(items, edges, f"dot took longer than {DOT_TIMEOUT_S:g} s: simple layered layout instead")
    except OSError as error:
        return _layered(items, edges, f"dot could not run ({error}): simple layered layout")
    if done.returncode != 0:
        return _layered(items, edges, f"dot failed ({done.stderr.strip()[:160]}): simple layered layout")
    names = [item for item, _w, _h in items]
    height, placed, width, routes = 0.0, {}, 0.0, {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == "graph":
            width, height = float(parts[2]) * POINTS, float(parts[3]) * POINTS
        elif parts and parts[0] == "node":
            x, y, w, h = (float(value) * POINTS for value in parts[2:6])
            placed[names[int(parts[1][1:])]] = (x, height - y, w, h)
        elif parts and parts[0] == "edge":
            count = int(parts[3])
            controls = [(float(parts[4 + 2 * k]) * POINTS, height - float(parts[5 + 2 * k]) * POINTS)
                        for k in range(count)]
            routes[(int(parts[1][1:]), int(parts[2][1:]))] = bezier_points(controls)
    order = [name for name in names if name in placed]
    position = {name: k for k, name in enumerate(order)}
    return _Placed((width, height), {name: placed[name] for name in order}, "dot", "",
                   {(position[names[a]], position[names[b]]): points for (a, b), points in routes.items()
                    if names[a] in position and names[b] in position})


def bezier_points(controls: list[tuple[float, float]], steps: int = 4) -> list[tuple[float, float]]:
    """Dot's route (a B-spline given as cubic Bézier pieces: 1 + 3k control points) as a polyline."""
    points = [controls[0]]
    for start in range(0, len(controls) - 3, 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = controls[start:start + 4]
        for step in range(1, steps + 1):
            t = step / steps
            u = 1 - t
            points.append((u * u * u * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x3,
                           u * u * u * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y3))
    return points


def _is_module_list(items: list[tuple[str, float, float]]) -> bool:
    """A group that is nothing but the layers of a module list (`h/0` … `h/99`), open or folded."""
    return len(items) >= GRID_FROM and all(is_group(item) and item.rsplit("/", 1)[-1].isdigit()
                                           for item, _w, _h in items)


def _columns(items: list[tuple[str, float, float]]) -> _Placed:
    """The layers of a module list in columns, in order (layer 0 at the top left, down each column, then
    the next), the columns as high as makes the whole about GRID_ASPECT wide: a 100-layer model fills
    the screen instead of standing as one tower a hundred layers tall. Open and folded layers mix."""
    area = sum((w + GRID_GAP) * (h + GRID_GAP) for _i, w, h in items)
    target = max(max(h for _i, _w, h in items), (area / GRID_ASPECT) ** 0.5)
    placed, left, top, column_width, height = {}, 0.0, 0.0, 0.0, 0.0
    for item, w, h in items:
        if top > 0 and top + h > target:
            left, top, column_width = left + column_width + GRID_GAP, 0.0, 0.0
        placed[item] = (left + w / 2, top + h / 2, w, h)
        top += h + GRID_GAP
        column_width, height = max(column_width, w), max(height, top - GRID_GAP)
    return _Placed((left + column_width, height), placed, "columns", "")


def _layered(items: list[tuple[str, float, float]], edges: list[tuple[str, str]], note: str) -> _Placed:
    """Longest-path layers, items in each layer in graph order: fast for any size, not pretty."""
    incoming = defaultdict(list)
    for a, b in edges:
        incoming[b].append(a)
    sizes = {item: (w, h) for item, w, h in items}
    layer: dict[str, int] = {}
    for item, _w, _h in items:
        layer[item] = 1 + max((layer[a] for a in incoming[item] if a in layer), default=-1)
    rows: dict[int, list[str]] = defaultdict(list)
    for item, _w, _h in items:
        rows[layer[item]].append(item)
    placed, top, width = {}, 0.0, 0.0
    for depth in sorted(rows):
        left, row_height = 0.0, max(sizes[item][1] for item in rows[depth])
        for item in rows[depth]:
            w, h = sizes[item]
            placed[item] = (left + w / 2, top + row_height / 2, w, h)
            left += w + 20
        width, top = max(width, left), top + row_height + 30
    return _Placed((width, top), placed, "layered", note)


@dataclass(frozen=True)
class LaidOutGraph:
    """What a graph pane's background layout hands back to it: the graph, its groups and which are open,
    what shows and where it goes, and each node's module path (empty where the pane needs none)."""

    graph: FxGraph
    root: Group
    expanded: set[str]
    visible: VisibleGraph
    placed: Layout
    paths: dict = field(default_factory=dict)


def lay_out_view(graph: FxGraph, root: Group, expanded: set[str], paths: dict | None = None) -> LaidOutGraph:
    """The one preparation every graph pane runs off the UI thread: what shows with `expanded` groups
    open, and where it goes."""
    visible = visible_graph(graph, root, expanded)
    return LaidOutGraph(graph, root, expanded, visible, layout(graph, root, expanded, visible), paths or {})
