"""Launch times given to the FX nodes each launch was made from, and through them to the user's lines and
modules: what a kernel's time means in the user's model. A launch made from k nodes gives each 1/k of
its time; a line or module is measured for the launches whose nodes all lie in it, apportioned for its
shares of launches split with others. Apart from the join (profile_join.py), which decides which
launch is which site: this decides only where a site's time goes."""

from __future__ import annotations

from collections import defaultdict

from inspector.core.analysis.kernel_index import NODE_STAGES, NodeOrigin
from inspector.core.analysis.source_time import LineFigure, NodeFigure, RowTime, Site
from inspector.core.graphs.graph_hierarchy import node_paths
from inspector.core.model.fx_graph_text import FxGraph
from inspector.core.model.session import CompileUnit, base_stage

NO_MODULE = "(no module)"  # a node of a plain function, or one the graph names no module for


def _names_by_key(provenance: dict, mapping: str) -> dict[str, list[str]]:
    """One of provenance's maps (name → node names), what of it has that shape: a log may hold anything."""
    found = provenance.get(mapping)
    if not isinstance(found, dict):
        return {}
    return {key: [name for name in names if isinstance(name, str)] for key, names in found.items()
            if isinstance(names, list)}


class LaunchAttribution:
    """Launch times given to the nodes each launch was made from, and through them to lines and modules."""

    def __init__(self):
        self.nodes: dict[tuple[str, str], NodeFigure] = {}
        self.lines: dict[tuple, LineFigure] = {}
        self.modules: dict[str, RowTime] = defaultdict(RowTime)
        self.unattributed_us = 0.0
        self._paths: dict[int, dict[str, tuple[str, ...]]] = {}

    def add(self, site: Site, us: float) -> list[str]:
        """Gives `us` (the site's profiled launches summed) to its nodes; the names of those nodes."""
        nodes = self._origins(site)
        if not nodes:
            self.unattributed_us += us
            return []
        share = us / len(nodes)
        unit = str(site.unit.compile_id).strip("[]")
        lines = {(origin.file, origin.line) for origin, _ in nodes}
        modules = {module for _, module in nodes}
        for origin, module in nodes:
            row = self.nodes.setdefault((unit, origin.name), NodeFigure(unit, origin, module))
            row.figure.add(share, len(nodes) == 1)
            line = self.lines.setdefault((origin.file, origin.line), LineFigure(origin.file, origin.line, origin.code))
            line.figure.add(share, len(lines) == 1)
            if origin.name not in line.nodes:
                line.nodes.append(origin.name)
            self.modules[module].add(share, len(modules) == 1)
        return [origin.name for origin, _ in nodes]

    def _origins(self, site: Site) -> list[tuple[NodeOrigin, str]]:
        """The nodes of the graph Dynamo captured that `site` computes, with their modules: through
        the post-grad nodes its provenance handle names (else the kernel's own source nodes) and
        `postToPre`. Post-grad nodes no pre-grad node became (pattern passes' own nodes) are left
        out when others are mapped, and stand for themselves when none is."""
        unit, kernel, provenance = site.unit, site.kernel, site.unit.provenance or {}
        to_post = {**_names_by_key(provenance, "tritonCodeToPost"), **_names_by_key(provenance, "cppCodeToPost")}
        post = to_post.get(site.handle) if site.handle else None
        if post is None and kernel.source_origin == "provenance":
            post = kernel.source_nodes
        if post is not None:
            to_pre = _names_by_key(provenance, "postToPre")
            pre = list(dict.fromkeys(name for node in post for name in to_pre.get(node, ())))
            if pre:
                return self._named(unit, pre, NODE_STAGES["comment"])
            return self._named(unit, list(dict.fromkeys(post)), NODE_STAGES["provenance"])
        if kernel.source_origin == "comment":
            return self._named(unit, kernel.source_nodes, NODE_STAGES["comment"])
        return []

    def _named(self, unit: CompileUnit, names: list[str], stages: tuple[str, ...]) -> list[tuple[NodeOrigin, str]]:
        graph = next((artifact.graph for stage, artifact in unit.graphs.items() if base_stage(stage) in stages), None)
        paths = self._module_paths(graph) if graph is not None else {}
        found = []
        for name in names:
            node = graph.node(name) if graph is not None else None
            source = node.source if node is not None else None
            origin = NodeOrigin(name, node.target if node else "?", source.file if source else None,
                                source.line if source else None, source.code if source else None)
            path = paths.get(name)
            by_source = not path or path[-1].startswith("line ")  # no module evidence: grouped by line
            found.append((origin, NO_MODULE if by_source else ".".join(path)))
        return found

    def _module_paths(self, graph: FxGraph) -> dict[str, tuple[str, ...]]:
        if id(graph) not in self._paths:
            self._paths[id(graph)] = node_paths(graph)
        return self._paths[id(graph)]
