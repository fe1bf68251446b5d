"""Which mode pays off here? One row per capture of the same script in a different compile mode:
compile time, steady-state time, speedup, breaks and kernels, read from each saved session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers.session_loader import open_session

@dataclass(frozen=True)
class ModeRow:
    mode: str
    session: Path
    compile_s: float | None
    steady_s: float | None
    speedup: float | None
    breaks: int
    recompiles: int
    kernels: int
    error: str | None


def compare_modes(sessions: dict[str, Path]) -> list[ModeRow]:
    rows = []
    for mode, folder in sessions.items():
        try:
            run = SessionAnalysis(open_session(folder))
        except (OSError, ValueError) as error:  # the capture wrote no log: say so in that mode's row
            rows.append(ModeRow(mode, folder, None, None, None, 0, 0, 0, f"cannot open the session: {error}"))
            continue
        error = run.run_error
        rows.append(ModeRow(mode, folder, run.verdict.value("t_compile"), run.verdict.value("t_execute"),
                            run.verdict.value("speedup"), len(run.session.breaks), len(run.session.recompiles),
                            run.fusion.n_kernels, error.message if error is not None else None))
    return rows


def best_mode(rows: list[ModeRow]) -> str | None:
    """The mode with the fastest steady state among those that ran."""
    measured = [row for row in rows if row.steady_s is not None and row.error is None]
    return min(measured, key=lambda row: row.steady_s).mode if measured else None
