"""The Graph tab's side panel: the minimap, the overlay's legend, the search hits and the node
details, stacked in a splitter that gives the legend the room its entries need whenever the panel's
height changes, it shows, or the legend is refilled."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QSplitter, QWidget

from inspector.gui.views.graph.qt_zoom_view import RefitsWhenResized

LEGEND = 1  # the panes' order: the minimap, the legend's box, the search hits, the details
DETAILS = 3


class QtSidePanel(RefitsWhenResized, QSplitter):
    """`panes` stacked (in the order above); `refit` sizes the legend's pane to `legend`'s entries."""

    def __init__(self, legend: QListWidget, panes: tuple[QWidget, ...]):
        super().__init__(Qt.Orientation.Vertical)
        self.legend = legend
        for pane in panes:
            self.addWidget(pane)

    def refit(self) -> None:
        """The legend as tall as its entries where the panel has room for it (a third of the panel at
        most, taken from the details; given back to them when the panel shrinks or the entries are fewer):
        at 1920×1080 it showed four of six colours, scrolling, above an empty details pane. At 1280×720 the
        third is spent already, and the details keep their lines."""
        sizes, rows = self.sizes(), self.legend.count()
        if not rows or not self.legend.isVisible() or not sum(sizes):
            return
        needed = self.legend.sizeHintForRow(0) * rows + 2 * self.legend.frameWidth()
        change = min(needed - self.legend.height(), sum(sizes) // 3 - sizes[LEGEND], sizes[DETAILS] // 2)
        if change:
            sizes[LEGEND] += change
            sizes[DETAILS] -= change
            self.setSizes(sizes)
