"""A mode comparison as `modes` prints it after its captures and `summary DIR` prints it of their
folder: one row per mode (compile time, time per call, speedup, breaks, kernels, a note) and the
sentence naming the fastest, or the same as JSON."""

from __future__ import annotations

from inspector.core.analysis.mode_comparison import ModeRow, fastest
from inspector.core.numbers import quantity, seconds


def mode_document(rows: list[ModeRow], captures: list | None = None) -> dict:
    """The comparison as JSON (`modes --json`, `summary DIR --json`), with each capture's outcome
    when `modes` just ran them."""
    best = fastest(rows)
    document = {"best": best.mode, "fastest": best.to_json(), "modes": [row.to_json() for row in rows]}
    return document if captures is None else {**document, "captures": captures}


def render_mode_rows(rows: list[ModeRow]) -> str:
    """The comparison as a table, then the sentence naming the fastest mode."""
    best = fastest(rows)
    lines = [f"{'mode':<28} {'compile':>10} {'per call':>10} {'speedup':>9} {'breaks':>7} {'kernels':>8}  note"]
    lines += [f"{row.mode:<28} {seconds(row.compile_s):>10} {seconds(row.steady_s):>10} "
              f"{quantity(row.speedup, '×'):>9} {row.breaks:>7} {row.kernels:>8}  {row.note(best.mode)}"
              for row in rows]
    return "\n".join([*lines, best.text])
