"""Structural diff of two FX graphs: which nodes match, which were added, removed or changed, and a
similarity score — matched by structure, not only by name (names shift whenever one op is added).

After XLA's hlo_diff: exact-subgraph fingerprints first (a node and everything upstream of it hash
alike), then a looser fingerprint that ignores shapes (a recompile with a symbolic size changes every
shape but no structure), then greedy bottom-up matching of what remains, seeded by matched inputs,
names, targets and source lines."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from inspector.core.model.fx_graph_text import FxGraph, FxNode

_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class NodeChange:
    a: str
    b: str
    fields: tuple[str, ...]  # target | shape | dtype | args


@dataclass
class GraphDiff:
    matched: dict[str, str] = field(default_factory=dict)  # a name → b name
    changed: list[NodeChange] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # in b only
    removed: list[str] = field(default_factory=list)  # in a only
    size_a: int = 0
    size_b: int = 0

    @property
    def similarity(self) -> float:
        """2 × unchanged matches / (|A| + |B|): 1.0 for identical graphs."""
        total = self.size_a + self.size_b
        return 2 * (len(self.matched) - len(self.changed)) / total if total else 1.0

    @property
    def structural_similarity(self) -> float:
        """2 × matches / (|A| + |B|): how much of the structure carried over, changed or not."""
        total = self.size_a + self.size_b
        return 2 * len(self.matched) / total if total else 1.0

    def get_state(self) -> dict:
        return {"similarity": self.similarity, "structural_similarity": self.structural_similarity,
                "matched": len(self.matched), "changed": [c.__dict__ for c in self.changed],
                "added": self.added, "removed": self.removed, "size_a": self.size_a, "size_b": self.size_b}


def _target(node: FxNode) -> str:
    """A placeholder's target is its own name, which says nothing about what it is."""
    return "" if node.op == "placeholder" else node.target


def _strict_key(node: FxNode) -> tuple:
    return (node.op, _target(node), node.dtype, tuple(node.shape or ()))


def _loose_key(node: FxNode) -> tuple:
    return (node.op, _target(node))


def _fingerprints(graph: FxGraph, key) -> dict[str, int]:
    """Hash of each node and its whole upstream cone (nodes come in topological order)."""
    prints: dict[str, int] = {}
    for node in graph.nodes:
        prints[node.name] = hash((key(node), tuple(prints.get(source, 0) for source in node.inputs)))
    return prints


def _unique_pairs(prints_a: dict[str, int], prints_b: dict[str, int], matched: dict, taken: set) -> None:
    by_print_a, by_print_b = defaultdict(list), defaultdict(list)
    for name, value in prints_a.items():
        if name not in matched:
            by_print_a[value].append(name)
    for name, value in prints_b.items():
        if name not in taken:
            by_print_b[value].append(name)
    for value, names_a in by_print_a.items():
        names_b = by_print_b.get(value, [])
        if len(names_a) == len(names_b):  # the same cone occurs equally often: pair them in order
            for name_a, name_b in zip(names_a, names_b):
                matched[name_a] = name_b
                taken.add(name_b)


def diff_graphs(a: FxGraph, b: FxGraph) -> GraphDiff:
    matched: dict[str, str] = {}
    taken: set[str] = set()
    _unique_pairs(_fingerprints(a, _strict_key), _fingerprints(b, _strict_key), matched, taken)
    _unique_pairs(_fingerprints(a, _loose_key), _fingerprints(b, _loose_key), matched, taken)
    _greedy(a, b, matched, taken)
    result = GraphDiff(matched=matched, size_a=len(a.nodes), size_b=len(b.nodes))
    result.removed = [node.name for node in a.nodes if node.name not in matched]
    result.added = [node.name for node in b.nodes if node.name not in taken]
    for name_a, name_b in matched.items():
        fields = _changed_fields(a.node(name_a), b.node(name_b), matched)
        if fields:
            result.changed.append(NodeChange(name_a, name_b, fields))
    return result


def _greedy(a: FxGraph, b: FxGraph, matched: dict[str, str], taken: set[str]) -> None:
    """Bottom-up: an unmatched node of A looks among the users of its inputs' partners in B, and their
    users in turn (an op inserted between them), or, with no matched input, among B's nodes of the same
    name, for the best-scoring node of the same op and target."""
    by_key_b = defaultdict(list)
    position = {}
    for index, node in enumerate(b.nodes):
        by_key_b[_loose_key(node)].append(node)
        position[node.name] = index
    for node in a.nodes:
        if node.name in matched:
            continue
        partners = [matched[source] for source in node.inputs if source in matched]
        candidates = {user for partner in partners for user in b.users(partner)}
        candidates |= {second for user in candidates for second in b.users(user)}  # past one inserted op
        ordered = sorted(candidates, key=position.__getitem__)  # ties go to the earliest: deterministic
        pool = [b.node(name) for name in ordered] if ordered else [b.node(node.name)] if b.node(node.name) else []
        if not pool and len(by_key_b[_loose_key(node)]) <= 64:
            pool = by_key_b[_loose_key(node)]
        best, best_score = None, 0.0
        for candidate in pool:
            if candidate is None or candidate.name in taken or _loose_key(candidate) != _loose_key(node):
                continue
            score = _score(node, candidate, partners, b)
            if score > best_score:
                best, best_score = candidate, score
        if best is not None and best_score >= 1.0:
            matched[node.name] = best.name
            taken.add(best.name)


def _score(node: FxNode, candidate: FxNode, partners: list[str], b: FxGraph) -> float:
    score = 1.0  # same op and target
    if node.inputs:
        two_hops = {grand for source in candidate.inputs if b.node(source) for grand in b.node(source).inputs}
        near = sum(1.0 if p in candidate.inputs else 0.5 if p in two_hops else 0.0 for p in partners)
        score += 4 * near / len(node.inputs)
    if node.name == candidate.name:
        score += 3
    if (node.source and candidate.source
            and (node.source.file, node.source.line) == (candidate.source.file, candidate.source.line)):
        score += 2
    return score


def _changed_fields(a: FxNode, b: FxNode, matched: dict[str, str]) -> tuple[str, ...]:
    fields = []
    if _target(a) != _target(b):
        fields.append("target")
    if (a.shape or []) != (b.shape or []):
        fields.append("shape")
    if a.dtype != b.dtype:
        fields.append("dtype")
    renamed = _NAME.sub(lambda m: matched.get(m.group(0), m.group(0)), a.args)
    if renamed.replace(" ", "") != b.args.replace(" ", ""):
        fields.append("args")
    return tuple(fields)
