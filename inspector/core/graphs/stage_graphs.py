"""A compile unit's graphs by stage as a mapping, each parsed only when asked for, for the
grouping that links one stage's nodes through the stages before it."""

from __future__ import annotations

from collections.abc import Mapping


class StageGraphs(Mapping):
    """A unit's graphs by stage, parsed only when asked for (grouping one stage links through two others)."""

    def __init__(self, unit):
        self.unit = unit

    def __getitem__(self, stage: str):
        return self.unit.graphs[stage].graph

    def __iter__(self):
        return iter(self.unit.graphs)

    def __len__(self) -> int:
        return len(self.unit.graphs)
