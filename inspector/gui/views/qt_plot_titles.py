"""A pyqtgraph plot's title over the whole plot: pyqtgraph centres it over the data column only, so a
title wider than that column (a legend in the title, a narrow pane at 1280 px) would be cut at both ends."""

from __future__ import annotations

import pyqtgraph as pg


def span_title(item: pg.PlotItem) -> None:
    """Lay `item`'s title across every column of its layout (axes included)."""
    item.layout.removeItem(item.titleLabel)
    item.layout.addItem(item.titleLabel, 0, 0, 1, item.layout.columnCount())
