"""The user's lines a session marks, by file: each graph break's line, and the line of each frame
that recompiled with the guard that failed. The Source view's gutter draws them; the app's load
worker makes them, since going through a big job's units would hold the UI thread."""

from __future__ import annotations

from inspector.core.model.session import Session

GRAPH_BREAK, RECOMPILE = "graph_break", "restart"  # the gutter's marker kinds (a recompile is drawn as a restart)


def source_marks(session: Session) -> dict[str, dict[int, tuple[str, str]]]:
    """file → line → (marker kind, what happened there); a break wins a line a recompile shares."""
    marks: dict[str, dict[int, tuple[str, str]]] = {}
    for brk in session.breaks:
        if brk.location:
            marks.setdefault(brk.location.file, {})[brk.location.line or 0] = (GRAPH_BREAK,
                                                                               f"graph break: {brk.reason}")
    for unit in session.units:
        if unit.recompile and unit.location and unit.location.line:
            guards = unit.recompile.failed_guards
            marks.setdefault(unit.location.file, {}).setdefault(
                unit.location.line, (RECOMPILE, f"recompile: {guards[0].plain if guards else 'recompiled'}"))
    return marks
