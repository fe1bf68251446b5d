"""Is compiled faster than eager, and how sure can we be? S = T_eager / T_compiled with a bootstrap
interval over the capture's interleaved timing rounds, a three-state verdict (faster, slower,
inconclusive) that keeps direction and size apart — a wide interval wholly on one side of 1 still
says which way it goes, only its size is uncertain — and the state of the machine while it was
measured. One owner for these facts: the
summary, the dashboard, the HTML report, the run diff and the CI gate all read them from here."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from enum import Enum

from inspector.core.model.run_results import MachineLoad, RunResults


class SpeedupState(str, Enum):
    """Which way the timing points, if it points at all: a direction is stated only when the interval
    supports it (a str, so the summary's JSON and a comparison with its text stay as they were)."""

    FASTER = "faster"
    SLOWER = "slower"
    INCONCLUSIVE = "inconclusive"  # rounds too few, or an interval that spans 1
    UNMEASURED = "unmeasured"  # no usable timing


FASTER, SLOWER, INCONCLUSIVE, UNMEASURED = SpeedupState  # the short names the analyses compare with
CONFIDENCE = 0.95
RESAMPLES = 2000
MIN_ROUNDS = 4
MAX_SPREAD = 3.0  # interval high / low beyond this: the rounds disagree too much to state a size
BUSY_MARGIN = 1.25  # on a busy machine a direction needs the whole interval this far from 1
BUSY_SHARE = 0.25  # others' use of the machine's cores that makes it busy
OLDER_CAPTURE = "no interval: older capture (timed in separate blocks, not interleaved rounds)"


@dataclass(frozen=True)
class Machine:
    """What the capture saw of the machine around the benchmark; `busy` explains itself in `note`."""

    busy: bool
    note: str  # "machine busy: timing unreliable (…figures…)", or the quiet figures

    def to_json(self) -> dict:
        return {"busy": self.busy, "note": self.note}


@dataclass(frozen=True)
class Speedup:
    state: SpeedupState
    value: float | None  # point estimate: median eager round / median compiled round
    low: float | None  # CONFIDENCE interval, None without rounds
    high: float | None
    rounds: int
    reason: str  # why this state, in words
    machine: Machine | None
    size_certain: bool = True  # False: the direction is certain, the interval too wide to state a size

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    def interval_text(self) -> str:
        if self.value is None:
            return "not measured"
        if not self.has_interval:
            return f"{self.value:.3g}× (no interval)"
        return f"{self.value:.3g}× [{self.low:.3g}–{self.high:.3g}, {CONFIDENCE:.0%}, {self.rounds} rounds]"

    def sentence(self) -> str:
        """The verdict in one line, with the machine warning when there is one."""
        if self.value is None:
            return f"Speedup not measured: {self.reason}."
        text = {FASTER: f"Compiled is faster: S = {self.interval_text()}",
                SLOWER: f"Compiled is SLOWER: S = {self.interval_text()}",
                INCONCLUSIVE: f"Speedup INCONCLUSIVE: S = {self.interval_text()}"}[self.state]
        if self.state == INCONCLUSIVE or not self.has_interval or not self.size_certain:
            text += f" — {self.reason}"
        if self.machine is not None and self.machine.busy:
            text += f". {self.machine.note[0].upper()}{self.machine.note[1:]}"
        return text + "."

    def to_json(self) -> dict:
        return {"state": self.state.value, "value": self.value, "low": self.low, "high": self.high,
                "confidence": CONFIDENCE if self.has_interval else None, "rounds": self.rounds,
                "reason": self.reason, "machine": self.machine.to_json() if self.machine else None,
                "size_certain": self.size_certain, "text": self.sentence()}

    get_state = to_json  # with `from_state`, the pair a record's field needs (model/records.py)

    @classmethod
    def from_state(cls, state: dict) -> Speedup:
        """The estimate its `to_json` wrote (a summary read back from the cache or a file)."""
        machine = state.get("machine")
        return cls(state=SpeedupState(state["state"]), value=state.get("value"), low=state.get("low"),
                   high=state.get("high"), rounds=state.get("rounds", 0), reason=state.get("reason", ""),
                   machine=Machine(machine["busy"], machine["note"]) if machine else None,
                   size_certain=state.get("size_certain", True))

    def range_text(self) -> str:
        """How much faster or slower, as a range when the size is uncertain ("2.4–25×")."""
        if self.value is None:
            return ""
        if self.state == SLOWER:
            point, low, high = 1 / self.value, (1 / self.high if self.has_interval else None), \
                (1 / self.low if self.has_interval else None)
        else:
            point, low, high = self.value, self.low, self.high
        return f"{low:.2g}–{high:.2g}×" if not self.size_certain and low is not None else f"{point:.2f}×"


def unmeasured_reason(results: RunResults | None) -> str:
    """Why a capture has no run time: a script without inspector_model() is not timed; one with it was
    meant to be and did not get there (it raised, was cancelled or died first)."""
    if results is None or not results.entry_point:
        return "capture an entry-point script (inspector_model()) to measure run time"
    if results.error is not None:
        return f"the run failed before it was timed ({results.error.kind or 'error'}; see Problems)"
    return "the run ended before it was timed (cancelled, or the process died)"


def estimate(results: RunResults | None) -> Speedup:
    """The speedup of a capture's results.json. Older captures (no rounds) keep their point estimate
    and say they have no interval; their direction is stated as measured, flagged as such."""
    timing = results.timing if results is not None else None
    machine = machine_state(timing.environment if timing is not None else None)
    rounds = [(r.eager_s, r.compiled_s) for r in timing.rounds] if timing is not None else []
    if rounds:
        if any(not _positive(e) or not _positive(c) for e, c in rounds):
            return Speedup(UNMEASURED, None, None, None, len(rounds), "a round has a zero, negative or missing time: "
                           "the timing is nonsense", machine)
        return _from_rounds(rounds, machine)
    if results is None or results.eager is None or results.compiled is None:
        return Speedup(UNMEASURED, None, None, None, 0, unmeasured_reason(results), None)
    eager, compiled = results.eager.median_s, results.compiled.median_s
    if not _positive(eager) or not _positive(compiled):
        return Speedup(UNMEASURED, None, None, None, 0, "a zero or negative time: the timing is nonsense", None)
    value = eager / compiled
    return Speedup(FASTER if value >= 1 else SLOWER, value, None, None, 0, OLDER_CAPTURE, None)


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and value > 0


def _from_rounds(rounds: list[tuple[float, float]], machine: Machine | None) -> Speedup:
    eager = [e for e, _ in rounds]
    compiled = [c for _, c in rounds]
    value = statistics.median(eager) / statistics.median(compiled)
    n = len(rounds)
    if n < MIN_ROUNDS:
        return Speedup(INCONCLUSIVE, value, None, None, n, f"only {n} timing round(s); {MIN_ROUNDS} needed", machine)
    low, high = bootstrap_interval(rounds)
    busy = machine is not None and machine.busy
    if low <= 1 <= high:
        return Speedup(INCONCLUSIVE, value, low, high, n, "the interval spans 1: no measurable difference", machine)
    if busy and low < BUSY_MARGIN and high > 1 / BUSY_MARGIN:
        return Speedup(INCONCLUSIVE, value, low, high, n, "the machine was busy and the difference is small", machine)
    state = FASTER if low > 1 else SLOWER
    reason = f"the whole {CONFIDENCE:.0%} interval is {'above' if low > 1 else 'below'} 1"
    if high / low > MAX_SPREAD:  # the direction holds; only the size is unknown
        return Speedup(state, value, low, high, n, reason + f", but it is wide ({high / low:.1f}× from end to end): "
                       "the direction is certain, the size is not", machine, size_certain=False)
    return Speedup(state, value, low, high, n, reason, machine)


def bootstrap_interval(rounds: list[tuple[float, float]], resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap of median(eager) / median(compiled), resampling whole rounds so each
    eager time stays with the compiled time measured beside it. Seeded: the same rounds always give
    the same interval."""
    generator = random.Random(0)
    n = len(rounds)
    ratios = []
    for _ in range(resamples):
        sample = [rounds[generator.randrange(n)] for _ in range(n)]
        ratios.append(statistics.median(e for e, _ in sample) / statistics.median(c for _, c in sample))
    ratios.sort()
    tail = (1 - confidence) / 2
    return ratios[int(tail * (resamples - 1))], ratios[int((1 - tail) * (resamples - 1))]


def machine_state(environment: MachineLoad | None) -> Machine | None:
    """Busy when other processes used a quarter of the cores during the benchmark (or, where that
    could not be read, the load average exceeded the cores), or torch had more threads than the
    cores left free."""
    if environment is None:
        return None
    cores = environment.cores or 0
    threads = environment.torch_threads
    others = environment.others_cpu_cores
    load_before, load_during = environment.load_before, environment.load_during
    figures = []
    if others is not None:
        figures.append(f"other processes used {others:.1f} of {cores} cores during the benchmark")
    if load_before is not None and load_during is not None:
        figures.append(f"load average {load_before:.2f} before, {load_during:.2f} after, on {cores} cores")
    if threads is not None:
        figures.append(f"{threads} torch thread(s)")
    figures += [f"{key}={value}" for key, value in environment.thread_variables.items()]
    reasons = []
    if cores and others is not None and others >= BUSY_SHARE * cores:
        reasons.append("other processes competed for the cores")
    elif cores and others is None and load_during is not None and load_during > cores:
        reasons.append("load above the core count")
    if cores and threads and others is not None and threads > max(1.0, cores - others) + 0.5:
        reasons.append(f"{threads} torch threads on about {max(0.0, cores - others):.1f} free core(s)")
    if reasons:
        return Machine(True, f"machine busy: timing unreliable ({'; '.join(reasons)}: {', '.join(figures)})")
    return Machine(False, "machine quiet: " + ", ".join(figures) if figures else "machine state not recorded")


def break_even_calls(speedup: Speedup, t_compile: float | None, t_eager: float | None,
                     t_compiled: float | None) -> tuple[float | None, str]:
    """Calls after which the compile has paid for itself, only when the verdict is 'faster'."""
    if speedup.value is None or t_compile is None or t_eager is None or t_compiled is None:
        return None, "needs a measured run and compile time"
    if speedup.state == INCONCLUSIVE:
        return None, f"not stated: the speedup is inconclusive ({speedup.reason})"
    if speedup.state == SLOWER or t_eager <= t_compiled:
        return None, "compiled is not faster: never pays off"
    if not speedup.size_certain:
        return None, f"not stated: compiled is faster, but by how much is uncertain ({speedup.range_text()})"
    return t_compile / (t_eager - t_compiled), ("measured run" if speedup.has_interval
                                                else f"measured run; {OLDER_CAPTURE}")
