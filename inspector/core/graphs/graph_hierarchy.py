"""Groups of an FX graph, so a big graph opens folded: by module (exact, from the nn_module_stack a
capture recorded), else by parameter-name prefixes and source locations. A view shows the items of
the groups expanded so far; edges between folded groups are bundled."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from inspector.core.model.fx_graph_text import FxGraph, FxNode

FOLD_ABOVE = 300  # graphs with more nodes than this open with their groups folded
_PARAM = re.compile(r"^l_(?:self|fn)_(?P<path>.*?)_(?:parameters|buffers)_(?P<leaf>\w+?)_?$")


@dataclass
class Group:
    path: tuple[str, ...]
    children: dict[str, Group] = field(default_factory=dict)
    nodes: list[str] = field(default_factory=list)  # nodes directly in this group

    @property
    def key(self) -> str:
        return "/".join(self.path)

    def size(self) -> int:
        return len(self.nodes) + sum(child.size() for child in self.children.values())

    def signature(self, graph: FxGraph) -> tuple:
        """Equal for structurally identical groups (two transformer blocks): their layout is shared."""
        return (tuple(graph.node(name).target for name in self.nodes),
                tuple(child.signature(graph) for child in self.children.values()))


def node_paths(graph: FxGraph, module_stacks: dict[str, list[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """Group path of every node. `module_stacks` (node → module path list) comes from a capture's
    structured graph; without it, parameters are grouped by their name and ops by source location."""
    paths: dict[str, tuple[str, ...]] = {}
    for node in graph.nodes:
        stack = (module_stacks or {}).get(node.name)
        if stack:
            paths[node.name] = module_path(stack[-1])
        elif node.op == "placeholder":
            match = _PARAM.match(node.name)
            paths[node.name] = ("parameters", *_module_path(match["path"])) if match else ("inputs",)
        elif node.op == "output":
            paths[node.name] = ()
        else:
            paths[node.name] = _source_path(node)
    return paths


def module_path(text: str) -> tuple[str, ...]:
    """`L['self'].blocks[0]._modules['attn']` (an nn_module_stack path) → ('blocks', '0', 'attn')."""
    text = re.sub(r"^[LG]\['(?:self|fn)'\]", "", text)
    text = re.sub(r"\._(?:modules|parameters|buffers)\['([^']+)'\]", r".\1", text)
    text = re.sub(r"\[(\d+)\]", r".\1", text)
    text = re.sub(r"\['([^']+)'\]", r".\1", text)
    return tuple(part for part in text.split(".") if part) or ("self",)


def _module_path(mangled: str) -> tuple[str, ...]:
    """`modules_blocks_modules_0_modules_attn` → ('blocks', '0', 'attn')."""
    parts = [part for part in re.split(r"_?modules_", mangled) if part]
    return tuple(parts) or ("self",)


def _source_path(node: FxNode) -> tuple[str, ...]:
    if node.source is None:
        return ("no source",)
    return (node.source.function or node.source.file.rsplit("/", 1)[-1], f"line {node.source.line}")


def build_groups(graph: FxGraph, paths: dict[str, tuple[str, ...]]) -> Group:
    root = Group(())
    for node in graph.nodes:
        group = root
        for depth, part in enumerate(paths.get(node.name, ())):
            group = group.children.setdefault(part, Group(group.path + (part,)))
        group.nodes.append(node.name)
    _flatten_single_children(root)
    return root


def _flatten_single_children(group: Group) -> None:
    """A group whose only content is one subgroup says nothing: lift the subgroup's content up."""
    for name, child in list(group.children.items()):
        _flatten_single_children(child)
        if not child.nodes and len(child.children) == 1:
            (only,) = child.children.values()
            group.children[name] = Group(child.path, only.children, only.nodes)
        elif len(child.nodes) + len(child.children) == 1 and child.nodes and not child.children:
            group.nodes += child.nodes  # a group of one node: show the node itself
            del group.children[name]


@dataclass(frozen=True)
class VisibleGraph:
    """What a view draws: nodes and folded groups, and the edges between them (bundled, with counts)."""

    items: dict[str, str]  # item id → "node" | "group"
    labels: dict[str, str]
    edges: dict[tuple[str, str], int]
    owner: dict[str, str]  # every graph node → the visible item that shows it


def visible_graph(graph: FxGraph, root: Group, expanded: set[str]) -> VisibleGraph:
    items: dict[str, str] = {}
    labels: dict[str, str] = {}
    owner: dict[str, str] = {}

    def visit(group: Group) -> None:
        for name in group.nodes:
            items[name] = "node"
            node = graph.node(name)
            labels[name] = f"{name}\n{_short(node.target)}" if node.op not in ("placeholder", "output") else name
            owner[name] = name
        for child in group.children.values():
            if child.key in expanded:
                visit(child)
            else:
                item = f"group:{child.key}"
                items[item] = "group"
                labels[item] = f"{child.path[-1]}\n{child.size()} nodes"
                for member in _members(child):
                    owner[member] = item

    visit(root)
    edges: Counter = Counter()
    for node in graph.nodes:
        target = owner[node.name]
        for source in node.inputs:
            origin = owner.get(source)
            if origin is not None and origin != target:
                edges[(origin, target)] += 1
    return VisibleGraph(items, labels, dict(edges), owner)


def _members(group: Group) -> list[str]:
    return group.nodes + [name for child in group.children.values() for name in _members(child)]


def _short(target: str) -> str:
    return target.replace("aten.", "").replace(".default", "").replace("torch._C._nn.", "")[-40:]


def all_group_keys(root: Group) -> set[str]:
    """Every group's key: the graph fully open."""
    keys: set[str] = set()
    stack = list(root.children.values())
    while stack:
        group = stack.pop()
        keys.add(group.key)
        stack.extend(group.children.values())
    return keys


def initially_expanded(root: Group, node_count: int) -> set[str]:
    """Small graphs open fully expanded; big ones folded at the top."""
    return set() if node_count > FOLD_ABOVE else all_group_keys(root)
