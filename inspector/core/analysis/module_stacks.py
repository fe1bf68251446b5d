"""The module stack of each node of a unit's Dynamo graph, from the structured graph a capture
recorded (its exact nn_module_stack), for grouping the graph by module."""

from __future__ import annotations

from inspector.core.readers import json_codec


def module_stacks(unit) -> dict[str, list[str]] | None:
    """node → module path list, from the structured graph a capture recorded (exact nn_module_stack)."""
    recorded = next((a for a in unit.artifacts if a.name == "structured_graph"), None)
    if recorded is None:
        return None
    try:  # a session may come from anyone: any shape of JSON, at any depth, falls back to no stacks
        nodes = json_codec.loads(recorded.text)["nodes"]
        return {node["name"]: [entry[1] for entry in node.get("nn_module_stack") or []] for node in nodes}
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None
