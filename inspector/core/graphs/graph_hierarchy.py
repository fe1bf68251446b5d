"""Groups of an FX graph, so a big graph opens folded: by module (exact, from the nn_module_stack a
capture recorded), else by parameter-name prefixes and source locations. A view shows the items of
the groups expanded so far; edges between folded groups are bundled."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from functools import cached_property, lru_cache
from collections import Counter
from dataclasses import dataclass, field

from inspector.core.model.fx_graph_text import FxGraph, FxNode
from inspector.core.graphs.item_ids import group_item

FOLD_ABOVE = 300  # graphs with more nodes than this open with their groups folded
# A parameter or buffer by its mangled name, `l_self_modules_h_modules_0_modules_attn_parameters_weight_`: read by
# `_parameter_name` in one pass (the regex `^l_(…)_(?:(modules_.*?)_)?(?:parameters|buffers)_(\w+?)_?$` rescanned
# the rest of the name for every "_" in it: quadratic).
_PARAM_OWNER = re.compile(r"l_(?:self|fn|args_\d+|kwargs_[a-z0-9]+)_")
_PARAM_KIND = re.compile(r"_(?=parameters_|buffers_)")
_WORD_CHARS = re.compile(r"\w*")


@dataclass
class Group:
    path: tuple[str, ...]
    children: dict[str, Group] = field(default_factory=dict)
    nodes: list[str] = field(default_factory=list)  # nodes directly in this group

    @property
    def key(self) -> str:
        return "/".join(self.path)

    def size(self) -> int:
        return len(self.members)

    @cached_property
    def members(self) -> tuple[str, ...]:
        """Every node in this group and its subgroups (asked once the grouping is built)."""
        return (*self.nodes, *(name for child in self.children.values() for name in child.members))

    def signature(self, graph: FxGraph) -> tuple:
        """Equal for structurally identical groups (two transformer blocks): their layout is shared."""
        return (tuple(graph.node(name).target for name in self.nodes),
                tuple(child.signature(graph) for child in self.children.values()))


# Stages whose node names are Dynamo's own (the graph Dynamo captured, before and after pre-grad passes).
DYNAMO_STAGES = ("dynamo", "before_pre_grad_graph", "after_pre_grad_graph")
ALIGN_AHEAD, ALIGN_BEHIND = 400, 60  # how far along the Dynamo graph a later-stage node's source line is looked for


def node_paths(graph: FxGraph, module_stacks: dict[str, list[str]] | None = None,
               reference: tuple[FxGraph, dict[str, tuple[str, ...]]] | None = None) -> dict[str, tuple[str, ...]]:
    """Module path of every node, from the best evidence at hand:
    1. `module_stacks` (node → nn_module_stack paths) a capture recorded: exact;
    2. for a later stage (AOT, post-grad), `reference` = (Dynamo graph, its paths): a node takes the path of
       the Dynamo node of the same name, else of the Dynamo node with its source line, matched in program order;
    3. from the graph alone: parameter and buffer names (`l_self_modules_h_modules_0_..._parameters_weight_`),
       `call_module` targets, and for the other ops the modules of the parameters used around them.
    Parameters, buffers and constants end up in the module that uses them, never in a group of their own."""
    stacks = module_stacks or {}
    paths: dict[str, tuple[str, ...]] = {}
    for node in graph.nodes:
        stack = stacks.get(node.name)
        if stack:
            paths[node.name] = module_path(stack[-1])
        elif node.op == "output":
            paths[node.name] = ()
    if reference is not None:
        _align_to_reference(graph, reference, paths)
    _anchor_parameters(graph, paths)
    if any(paths.values()):
        _interpolate(graph, paths)
    else:  # no module evidence at all (a plain function): group ops by where they come from
        paths.update({node.name: _source_path(node) for node in graph.nodes
                      if node.op not in ("placeholder", "get_attr", "output")})
    _fold_inputs_into_users(graph, paths)
    return paths


def _anchor_parameters(graph: FxGraph, paths: dict[str, tuple[str, ...]]) -> None:
    """Parameters and buffers by their mangled names, `call_module` by target, and an op that reads
    parameters of one module inside that module."""
    owned: dict[str, tuple[str, ...]] = {}
    for node in graph.nodes:
        if node.name in paths:
            continue
        if node.op in ("placeholder", "get_attr"):
            match = _parameter_name(node.name)
            if match:
                owned[node.name] = _module_path(match[0] or "")
        elif node.op == "call_module":
            paths[node.name] = module_path(node.target)
    for node in graph.nodes:
        if node.name in paths or node.op in ("placeholder", "get_attr", "output"):
            continue
        used = [owned[name] for name in node.inputs if name in owned]
        if used:
            paths[node.name] = _common(used)


def _parameter_name(name: str) -> tuple[str | None, str] | None:
    """(module path or None, leaf) of a parameter's or buffer's mangled name, as the regex
    `^l_(?:self|fn|args_\\d+|kwargs_[a-z0-9]+)_(?:(modules_.*?)_)?(?:parameters|buffers)_(\\w+?)_?$` read them,
    in time linear in the name: the path ends at the first `_parameters_` (or `_buffers_`) after which only
    word characters follow; the leaf is those, less one "_" at the end."""
    owner = _PARAM_OWNER.match(name)
    if owner is None:
        return None
    end = len(name) - 1 if name.endswith("\n") else len(name)  # `$` stands before a final line break
    words = end - len(_WORD_CHARS.match(name[:end][::-1]).group())  # where the word characters ending it begin

    def leaf(start: int) -> str | None:
        if not words <= start < end:
            return None
        return name[start:end - 1] if end - start >= 2 and name[end - 1] == "_" else name[start:end]

    def after_kind(start: int) -> int:
        return start + len("parameters_") if name.startswith("parameters_", start) else start + len("buffers_")

    start = owner.end()
    if name.startswith("modules_", start):
        line_end = name.find("\n")
        for kind in _PARAM_KIND.finditer(name, start + len("modules_")):
            if 0 <= line_end < kind.start():
                break
            found = leaf(after_kind(kind.start() + 1))
            if found is not None:
                return name[start:kind.start()], found
    elif name.startswith(("parameters_", "buffers_"), start):
        found = leaf(after_kind(start))
        if found is not None:
            return None, found
    return None


def _interpolate(graph: FxGraph, paths: dict[str, tuple[str, ...]]) -> None:
    """An op with no evidence of its own sits, in program order, between two ops that have some: it
    belongs to the module both are in; at a boundary between siblings of a module list (block 0 → block 1)
    to the one it follows, since a block's last ops (the residual add) come after its last parameter."""
    ops = [node for node in graph.nodes if node.op not in ("placeholder", "get_attr", "output")]
    previous: tuple[str, ...] | None = None
    following: list[tuple[str, ...] | None] = [None] * len(ops)
    upcoming = None
    for position in range(len(ops) - 1, -1, -1):
        following[position] = upcoming
        upcoming = paths.get(ops[position].name, upcoming)
    for position, node in enumerate(ops):
        if node.name in paths:
            previous = paths[node.name]
            continue
        after = following[position]
        if previous is None or after is None:  # before the first module or after the last
            paths[node.name] = ()
            continue
        common = _common([previous, after])
        if len(previous) > len(common) and previous[len(common)].isdigit():
            common = previous[:len(common) + 1]
        paths[node.name] = common


def _fold_inputs_into_users(graph: FxGraph, paths: dict[str, tuple[str, ...]]) -> None:
    """A placeholder or constant not yet placed joins the deepest module holding all its users: a
    weight its layer, the input ids the embedding, a mask shared by every block the block list."""
    for node in graph.nodes:
        if node.name in paths:
            continue
        users = [paths[user] for user in graph.users(node.name) if user in paths and graph.node(user).op != "output"]
        paths[node.name] = _common(users) if users else ()
    for node in graph.nodes:  # parameters named after their module but read elsewhere stay with their name
        match = _parameter_name(node.name) if node.op in ("placeholder", "get_attr") else None
        if match:
            paths[node.name] = _module_path(match[0] or "")


def _align_to_reference(graph: FxGraph, reference: tuple[FxGraph, dict[str, tuple[str, ...]]],
                        paths: dict[str, tuple[str, ...]]) -> None:
    """Paths for a graph from the graph of the stage before it (AOT from Dynamo, post-grad from AOT):
    by node name where the same name has the same target and source line, else by source line, walking both graphs
    in program order (one line of a layer's code occurs once per layer; order tells the layers apart),
    preferring among equal lines the node of the same op (`aten.addmm` for `torch.addmm`)."""
    earlier, earlier_paths = reference
    ordered = [node for node in earlier.nodes if node.source is not None and node.name in earlier_paths]
    lines = [(node.source.file, node.source.line) for node in ordered]
    position = {node.name: i for i, node in enumerate(ordered)}
    where: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(lines):
        where.setdefault(key, []).append(i)
    cursor = 0
    for node in graph.nodes:
        if node.name in paths or node.op in ("placeholder", "output"):
            continue
        same = earlier.node(node.name)
        if same is not None and node.name in earlier_paths and same.target == node.target and _same_line(same, node):
            paths[node.name] = earlier_paths[node.name]
            cursor = position.get(node.name, cursor)
            continue
        if node.source is None:
            continue
        key = (node.source.file, node.source.line)
        found = _nearest(where.get(key, []), cursor)
        if found is None:
            continue
        op = _op_name(node.target)
        run = found
        while run < len(lines) and lines[run] == key:  # the run of nodes from this line: the same op if any
            if _op_name(ordered[run].target) == op:
                found = run
                break
            run += 1
        paths[node.name] = earlier_paths[ordered[found].name]
        cursor = found


def _nearest(positions: list[int], cursor: int) -> int | None:
    """The first of `positions` at or after `cursor` (within ALIGN_AHEAD), else the last just before it."""
    at = bisect_left(positions, cursor)
    if at < len(positions) and positions[at] < cursor + ALIGN_AHEAD:
        return positions[at]
    if at > 0 and positions[at - 1] > cursor - ALIGN_BEHIND:
        return positions[at - 1]
    return None


def _same_line(a: FxNode, b: FxNode) -> bool:
    return (a.source is None and b.source is None) or (
        a.source is not None and b.source is not None
        and (a.source.file, a.source.line) == (b.source.file, b.source.line))


def _op_name(target: str) -> str:
    """`aten.addmm.default`, `torch.addmm` → `addmm`."""
    parts = [part for part in target.split(".") if part not in ("default", "Tensor", "Scalar", "int")]
    return parts[-1].lstrip("_") if parts else target


def stage_paths(graphs: Mapping[str, FxGraph], stage: str,
                module_stacks: dict[str, list[str]] | None = None) -> dict[str, tuple[str, ...]]:
    """Module paths of the graph at `stage` (`graphs`: stage → graph, as torch.compile wrote them),
    grouped through the stages before it: Dynamo's graph (named by the capture's exact module stacks
    where recorded), then the first AOT graph, then `stage` — each linked to the one before."""
    order = list(graphs)  # stage names only: a lazy mapping parses just the graphs of the chain
    if stage not in order:
        return {}
    dynamo = next((name for name in order if name in DYNAMO_STAGES), None)
    aot = next((name for name in order if name.startswith("aot_")), None)
    chain: list[str] = []
    for name in (dynamo, aot, stage):
        if name is not None and name not in chain and order.index(name) <= order.index(stage):
            chain.append(name)
    paths, previous = None, None
    for name in chain:
        reference = None if paths is None else (previous, paths)
        paths = node_paths(graphs[name], module_stacks if name in DYNAMO_STAGES else None, reference)
        previous = graphs[name]
    return paths


def _common(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    first = paths[0]
    length = len(first)
    for other in paths[1:]:
        length = min(length, len(other))
        for depth in range(length):
            if other[depth] != first[depth]:
                length = depth
                break
    return first[:length]


@lru_cache(maxsize=8192)  # a graph repeats a few hundred module paths over thousands of nodes
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
    owner: Mapping[str, str]  # every graph node → the visible item that shows it


def visible_graph(graph: FxGraph, root: Group, expanded: set[str]) -> VisibleGraph:
    """Visits only the open groups and the edges they own: an edge inside a folded group is hidden in
    it, so a folded 50k-node graph costs its open part, not its size."""
    items: dict[str, str] = {}
    labels: dict[str, str] = {}
    group_of, chains, by_owner = _structure_of(graph, root)
    owner = OwnerMap(group_of, chains, expanded)
    open_paths: list[tuple[str, ...]] = []

    def visit(group: Group) -> None:
        open_paths.append(group.path)
        for name in group.nodes:
            items[name] = "node"
            node = graph.node(name)
            labels[name] = f"{name}\n{_short(node.target)}" if node.op not in ("placeholder", "output") else name
        for child in group.children.values():
            if child.key in expanded:
                visit(child)
            else:
                item = group_item(child.key)
                items[item] = "group"
                labels[item] = f"{child.path[-1]}\n{child.size()} nodes"

    visit(root)
    edges: Counter = Counter()
    for path in open_paths:
        for source, target in by_owner.get(path, ()):
            origin, end = owner[source], owner[target]
            if origin != end:
                edges[(origin, end)] += 1
    return VisibleGraph(items, labels, dict(edges), owner)


class OwnerMap(Mapping):
    """Node → the visible item showing it (itself, or its outermost folded group), worked out when
    asked: opening a group of a 50k-node graph does not rewrite an entry per node."""

    def __init__(self, group_of: dict[str, tuple[str, ...]], chains: dict[tuple[str, ...], tuple[str, ...]],
                 expanded: set[str]):
        self._group_of, self._chains, self._expanded = group_of, chains, expanded

    def __getitem__(self, name: str) -> str:
        for key in self._chains[self._group_of[name]]:
            if key not in self._expanded:
                return group_item(key)
        return name

    def __iter__(self):
        return iter(self._group_of)

    def __len__(self) -> int:
        return len(self._group_of)


_structure: dict[int, tuple[Group, dict, dict, dict]] = {}  # id(root) → (root, group_of, chains, edges by owner)


def edges_by_owner(graph: FxGraph, root: Group) -> tuple[dict[str, tuple[str, ...]],
                                                         dict[tuple[str, ...], list[tuple[str, str]]]]:
    """Each node's group, and each edge filed under its owner (the deepest group holding both ends),
    once per grouping: a view or a layout then visits only the edges of the groups that are open."""
    group_of, _chains, by_owner = _structure_of(graph, root)
    return group_of, by_owner


def _structure_of(graph: FxGraph, root: Group) -> tuple[dict, dict, dict]:
    known = _structure.get(id(root))
    if known is not None and known[0] is root:
        return known[1], known[2], known[3]
    group_of: dict[str, tuple[str, ...]] = {}
    chains: dict[tuple[str, ...], tuple[str, ...]] = {}  # group path → keys of the groups from the top down to it
    stack: list[tuple[Group, tuple[str, ...]]] = [(root, ())]
    while stack:
        group, chain = stack.pop()
        chains[group.path] = chain
        for name in group.nodes:
            group_of[name] = group.path
        stack.extend((child, (*chain, child.key)) for child in group.children.values())
    by_owner: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for node in graph.nodes:
        path_b = group_of.get(node.name)
        for source in node.inputs:
            path_a = group_of.get(source)
            if path_a is None or path_b is None:
                continue
            common = 0
            while common < min(len(path_a), len(path_b)) and path_a[common] == path_b[common]:
                common += 1
            by_owner.setdefault(path_a[:common], []).append((source, node.name))
    if len(_structure) > 16:
        _structure.clear()
    _structure[id(root)] = (root, group_of, chains, by_owner)
    return group_of, chains, by_owner


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
