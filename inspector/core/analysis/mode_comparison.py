"""Which mode pays off here? One row per capture of the same script in a different compile mode:
compile time, steady-state time, speedup, breaks and kernels, read from each saved session; each
mode's relation to eager, and a fastest mode only when the one comparison (comparison.py) separates
it from every other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.analysis.comparison import FASTER, SLOWER, Speedup, compare_runs
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.run_results import RunResults
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
    vs_eager: Speedup | None = None  # the mode's verdict against eager, its interval and reason
    results: RunResults | None = field(default=None, repr=False, compare=False)  # its rounds, for comparisons

    def eager_words(self) -> str:
        """'SLOWER than eager (0.0017× [0.0015–0.002])', 'no measurable difference from eager (…)'."""
        verdict = self.vs_eager
        if verdict is None or verdict.value is None:
            return "not measured"
        relation = {"faster": "faster than eager", "SLOWER": "SLOWER than eager",
                    "no difference": "no measurable difference from eager",
                    "inconclusive": "inconclusive against eager"}[verdict.word()]
        return f"{relation} ({verdict.interval_text()})"

    def to_json(self) -> dict:
        return {"mode": self.mode, "session": str(self.session), "compile_s": self.compile_s, "steady_s": self.steady_s,
                "speedup": self.speedup, "breaks": self.breaks, "recompiles": self.recompiles, "kernels": self.kernels,
                "error": self.error, "vs_eager": self.vs_eager.to_json() if self.vs_eager is not None else None}


@dataclass(frozen=True)
class Fastest:
    """The mode the comparison separates from every other (None when none is), each other mode
    compared with the best candidate, and the sentence every front end shows."""

    mode: str | None
    against: dict[str, Speedup]  # other mode → the candidate (B) against it (A)
    text: str

    def to_json(self) -> dict:
        return {"mode": self.mode, "text": self.text,
                "against": {mode: comparison.to_json() for mode, comparison in self.against.items()}}


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
                            run.fusion.n_kernels, error.message if error is not None else None,
                            run.speedup, run.session.results))
    return rows


def fastest(rows: list[ModeRow]) -> Fastest:
    """The candidate is the mode with the highest speedup over eager; it is named fastest only when
    it is FASTER than every other measured mode by the one comparison (S_candidate / S_other)."""
    measured = [row for row in rows if row.error is None and row.vs_eager is not None and row.vs_eager.value]
    if not measured:
        return Fastest(None, {}, "No mode finished a measured run.")
    candidate = max(measured, key=lambda row: row.vs_eager.value)
    against = {row.mode: compare_runs(row.vs_eager, row.results, candidate.vs_eager, candidate.results)
               for row in measured if row is not candidate}
    unseparated = [mode for mode, comparison in against.items() if comparison.state != FASTER]
    everyone_slower = all(row.vs_eager.state == SLOWER for row in measured)
    tail = " Every mode is SLOWER than eager here: compiling does not pay off." if everyone_slower else ""
    if not against:
        return Fastest(candidate.mode, {}, f"Only {candidate.mode} was measured: {candidate.eager_words()}.{tail}")
    if unseparated:
        words = "; ".join(f"against {mode}: {against[mode].word()}, {against[mode].interval_text()}"
                          f"{against[mode].because()}" for mode in unseparated)
        return Fastest(None, against, f"No mode is measurably fastest: {candidate.mode} has the highest speedup, "
                                      f"but {words}{tail}")
    words = ", ".join(f"{comparison.interval_text()} against {mode}" for mode, comparison in against.items())
    return Fastest(candidate.mode, against, f"Fastest steady state here: {candidate.mode} ({words}).{tail}")


def best_mode(rows: list[ModeRow]) -> str | None:
    """The mode measurably faster than every other, or None when the intervals do not separate them."""
    return fastest(rows).mode
