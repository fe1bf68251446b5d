"""The FX graph pane, in parts: the drawn layers, the zoomable view and its minimap, and the pane
that drives them (toolbar, search, details, overlays, export)."""
