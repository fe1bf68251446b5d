"""Which mode pays off here? One row per capture of the same script in a different compile mode:
compile time cold (each mode in its own empty caches) and warm (again, from that cache), steady-state
time, speedup, breaks and kernels, read from each saved session; each mode's relation to eager, and a
fastest mode (by compiled call time) only when the one comparison (comparison.py) separates it from
every other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.analysis.comparison import FASTER, SLOWER, Machine, Speedup, compare_calls, decide
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.run_results import RunResults
from inspector.core.readers.mode_folders import ModeSession
from inspector.core.readers.session_loader import open_session


UNCOUNTED_CACHE_GAIN = 2.0  # a warm compile this many times shorter than the cold one was served by a cache


@dataclass(frozen=True)
class ModeRow:
    mode: str
    session: Path
    compile_s: float | None  # T_compile of the cold capture
    steady_s: float | None
    speedup: float | None  # S = T_eager / T_compiled (below 1: slower than eager)
    breaks: int
    recompiles: int
    kernels: int
    error: str | None
    vs_eager: Speedup | None = None  # the mode's verdict against eager, its interval and reason
    results: RunResults | None = field(default=None, repr=False, compare=False)  # its rounds, for comparisons
    cache_hits: int = 0  # FX graph / AOTAutograd cache hits in the cold capture: 0 when it was cold
    warm_compile_s: float | None = None  # T_compile of the warm capture (None: not run)
    warm_cache_hits: int | None = None

    @property
    def cold(self) -> bool:
        return self.cache_hits == 0

    def eager_words(self) -> str:
        """'SLOWER than eager (0.0017× [0.0015–0.002])', 'no measurable difference from eager (…)'."""
        verdict = self.vs_eager
        if verdict is None or verdict.value is None:
            return "not measured"
        relation = {"faster": "faster than eager", "SLOWER": "SLOWER than eager",
                    "no difference": "no measurable difference from eager",
                    "inconclusive": "inconclusive against eager"}[verdict.word()]
        return f"{relation} ({verdict.interval_text()})"

    def note(self, fastest_mode: str | None) -> str:
        """The row's note in every front end: its error, else fastest or not, against eager, cold and warm."""
        if self.error:
            return self.error
        return "; ".join(part for part in ("fastest" if self.mode == fastest_mode else "", self.eager_words(),
                                           cold_warm_text(self)) if part)

    def get_state(self) -> dict:
        return {"mode": self.mode, "session": str(self.session), "compile_s": self.compile_s, "steady_s": self.steady_s,
                "speedup": self.speedup, "breaks": self.breaks, "recompiles": self.recompiles, "kernels": self.kernels,
                "error": self.error, "vs_eager": self.vs_eager.get_state() if self.vs_eager is not None else None,
                "cold": self.cold, "cache_hits": self.cache_hits, "warm_compile_s": self.warm_compile_s,
                "warm_cache_hits": self.warm_cache_hits}


@dataclass(frozen=True)
class Fastest:
    """The mode the comparison separates from every other (None when none is), each other mode
    compared with the best candidate, and the sentence every front end shows."""

    mode: str | None
    against: dict[str, Speedup]  # other mode → the candidate (B) against it (A)
    text: str

    def get_state(self) -> dict:
        return {"mode": self.mode, "text": self.text,
                "against": {mode: comparison.get_state() for mode, comparison in self.against.items()}}


def compare_modes(sessions: dict[str, ModeSession],
                  warm_sessions: dict[str, ModeSession] | None = None) -> list[ModeRow]:
    """One row per mode, of its session (and its warm one) as detected where the folders came in
    (`session_loader.detect_modes`): each opened here, one at a time."""
    rows = []
    for mode, detected in sessions.items():
        try:
            run = _analysis(detected)
        except (OSError, ValueError) as error:  # the capture wrote no log: say so in that mode's row
            rows.append(ModeRow(mode, detected.folder, None, None, None, 0, 0, 0, f"cannot open the session: {error}"))
            continue
        error = run.run_error
        warm = _warm(warm_sessions.get(mode)) if warm_sessions and mode in warm_sessions else (None, None)
        rows.append(ModeRow(mode, detected.folder, run.verdict.value("t_compile"), run.verdict.value("t_execute"),
                            run.verdict.value("speedup"), len(run.session.breaks), len(run.session.recompiles),
                            run.fusion.n_kernels, error.message if error is not None else None,
                            run.speedup, run.session.results, _cache_hits(run), *warm))
    return rows


def _analysis(detected: ModeSession) -> SessionAnalysis:
    """The session detected, opened; ValueError saying why where nothing there opens."""
    if detected.source is None:
        raise ValueError(detected.unopened)
    return SessionAnalysis(open_session(detected.source))


def _warm(detected: ModeSession) -> tuple[float | None, int | None]:
    try:
        run = _analysis(detected)
    except (OSError, ValueError):
        return None, None
    return run.verdict.value("t_compile"), _cache_hits(run)


def _cache_hits(run: SessionAnalysis) -> int:
    return sum(entry.hit for entry in run.cache.values())


def fastest(rows: list[ModeRow]) -> Fastest:
    """The mode whose compiled call is fastest: the modes run the same script on the same machine, so
    the time per call is what a user wants the least of (S, over each mode's own eager run, would rank
    by how slow that eager run happened to be). The candidate is the mode with the shortest median
    call; it is named fastest only when the one comparison of compiled call times (`compare_calls`,
    T_other / T_candidate, each run's rounds resampled on their own) finds it FASTER than every other
    measured mode. With one mode measured there is nothing for it to be fastest against."""
    measured = [row for row in rows if row.error is None and row.steady_s and row.steady_s > 0]
    if not measured:
        return Fastest(None, {}, "No mode finished a measured run.")
    candidate = min(measured, key=lambda row: row.steady_s)
    against = {row.mode: _calls(row, candidate) for row in measured if row is not candidate}
    unseparated = [mode for mode, comparison in against.items() if comparison.state != FASTER]
    everyone_slower = len(measured) > 1 and all(row.vs_eager is not None and row.vs_eager.state == SLOWER
                                                for row in measured)  # one mode's sentence says it already
    tail = " Every mode is SLOWER than eager here: compiling does not pay off." if everyone_slower else ""
    if not against:
        return Fastest(None, {}, f"Only {candidate.mode} was measured: {candidate.eager_words()}.{tail}")
    if unseparated:
        words = "; ".join(f"against {mode}: {against[mode].word()}, {against[mode].interval_text()}"
                          f"{against[mode].because()}" for mode in unseparated)
        return Fastest(None, against, f"No mode is measurably fastest per call: {candidate.mode} has the shortest "
                                      f"compiled call, but {words}{tail}")
    words = ", ".join(f"{comparison.interval_text()} faster than {mode}'s" for mode, comparison in against.items())
    return Fastest(candidate.mode, against, f"Fastest per call here: {candidate.mode} (its compiled call is "
                                            f"{words}).{tail}")


def _calls(other: ModeRow, candidate: ModeRow) -> Speedup:
    """The other mode's compiled call time over the candidate's (above 1: the candidate's call is
    faster). Captures without timing rounds (older ones) compare their medians, without an interval."""
    machine = Machine.of_pair(other.vs_eager.machine if other.vs_eager else None,
                              candidate.vs_eager.machine if candidate.vs_eager else None)
    comparison = compare_calls(other.results, candidate.results, machine)
    if comparison is not None:
        return comparison
    return decide(other.steady_s / candidate.steady_s, None, None, 0, machine, two_runs=True)


def caches_text(rows: list[ModeRow]) -> str:
    """Whether the modes compiled cold, for the table's caption: said only of the rows that compiled
    (a failed mode has no compile to speak of), and naming the rows whose cold capture hit a cache."""
    compiled = [row for row in rows if row.compile_s is not None]
    warm = [row for row in compiled if not row.cold]
    if not compiled:
        return ""
    if not warm:
        return "Each mode compiled cold, in its own empty compile caches."
    return "NOT cold: " + ", ".join(f"{row.mode} ({row.cache_hits} cache hit(s))" for row in warm) + \
        " — a compile from a cache is not a cold compile."


def cold_warm_text(row: ModeRow) -> str:
    """The row's compile cost in words: cold (and whether the cache was truly empty), warm (and
    whether it hit the cache at all)."""
    if row.compile_s is None:
        return ""
    text = f"cold {row.compile_s:.2f} s" + ("" if row.cold else f" (NOT cold: {row.cache_hits} cache hit(s))")
    if row.warm_compile_s is not None:
        text += f", warm {row.warm_compile_s:.2f} s"
        if row.warm_cache_hits == 0 and 0 < row.warm_compile_s <= row.compile_s / UNCOUNTED_CACHE_GAIN:
            # torch counted no hit, yet the compile took a fraction of the cold one: the folder's other
            # caches served it (a graph holding a torch.cond bypasses the FX graph cache, yet its C++
            # kernels, once built, are loaded from the folder instead of compiled again)
            text += (f" ({row.compile_s / row.warm_compile_s:.3g}× less with no FX graph or AOTAutograd cache hit: "
                     f"from the caches torch does not count, such as the kernels Inductor built into the folder)")
        elif row.warm_cache_hits == 0:  # it compiled again from scratch: what it shows is not a warm compile
            text += " (warm run hit no cache)"
        elif row.warm_compile_s > 0:
            text += f" ({row.compile_s / row.warm_compile_s:.3g}× less)"
    return text
