"""The one comparison behind every faster/slower claim: two timed samples (A and B, with the state of
the machine while they were timed) → faster, slower, no measurable difference or inconclusive, with
the ratio (how many times faster B is than A), its 95 % interval and the reason in words.

The verdict (eager A vs compiled B: S), `check --min-speedup`, `check --baseline`, `diff` (steady
state and kernel rows) and `modes` all decide through `decide`, so the same pair of runs reads the
same in the summary, the CI gate, the diff, the modes table and the app. docs/measurement.md states
the rule."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from inspector.core.model.run_results import RunResults


class SpeedupState(str, Enum):
    """Which way the timing points, if it points at all: a direction is stated only when the interval
    supports it (a str, so the summary's JSON and a comparison with its text stay as they were)."""

    FASTER = "faster"
    SLOWER = "slower"
    INCONCLUSIVE = "inconclusive"  # too few rounds, an oversubscribed machine, or an interval too wide to tell
    UNMEASURED = "unmeasured"  # no usable timing
    NO_DIFFERENCE = "no_difference"  # the whole interval lies within the threshold around 1


FASTER, SLOWER, INCONCLUSIVE, UNMEASURED, NO_DIFFERENCE = SpeedupState  # the short names the analyses use


class Cause(str, Enum):
    """Why a comparison says what it says: what a reader (or a test) can act on without parsing words."""

    CLEAR = "clear"  # the interval lies wholly on one side of 1
    SMALL = "small"  # the interval lies within the threshold: no difference of the configured size
    WIDE = "wide"  # the interval spans 1 beyond the threshold, or is too wide to trust
    FEW_ROUNDS = "few_rounds"
    OVERSUBSCRIBED = "oversubscribed"  # more torch threads than free cores: the times measure contention
    NO_INTERVAL = "no_interval"  # an older capture: a point estimate only
    UNMEASURED = "unmeasured"


CONFIDENCE = 0.95
RESAMPLES = 2000
MIN_ROUNDS = 4
THRESHOLD = 0.1  # a difference smaller than this share is "no measurable difference" (check's --tolerance)
MAX_SPREAD = 3.0  # interval high / low beyond this: the direction may hold, its size is unknown
MAX_WIDTH = 10.0  # interval high / low beyond this: the rounds disagree too much to state even a direction
OLDER_CAPTURE = "no interval: older capture (timed in separate blocks, not interleaved rounds)"


@dataclass(frozen=True)
class Machine:
    """What the capture saw of the machine around the benchmark; `busy` explains itself in `note`.
    `oversubscribed`: torch ran more threads than there were free cores, so its threads waited on each
    other and on the other processes — the times then measure that contention, not the code;
    `suggested_threads` is the `--threads` that fits the free cores."""

    busy: bool
    note: str  # "machine busy: timing unreliable (…figures…)", or the quiet figures
    oversubscribed: bool = False
    suggested_threads: int | None = None
    crowding: str = ""  # "2 torch threads on about 0.3 free core(s)" when oversubscribed

    def get_state(self) -> dict:
        extra = {"oversubscribed": True, "suggested_threads": self.suggested_threads,
                 "crowding": self.crowding} if self.oversubscribed else {}
        return {"busy": self.busy, "note": self.note, **extra}

    @classmethod
    def from_state(cls, state: dict) -> Machine:
        return cls(state["busy"], state["note"], state.get("oversubscribed", False), state.get("suggested_threads"),
                   state.get("crowding", ""))

    @staticmethod
    def of_pair(a: Machine | None, b: Machine | None) -> Machine | None:
        """The state that limits a comparison of two runs: busy or oversubscribed when either was."""
        if a is None or b is None:
            return a or b
        if not a.busy and not b.busy:
            return a
        busy = [f"A: {a.note}" if a.busy else "", f"B: {b.note}" if b.busy else ""]
        crowded = [(side, m) for side, m in (("A", a), ("B", b)) if m.oversubscribed]
        return Machine(True, "; ".join(part for part in busy if part), bool(crowded),
                       min((m.suggested_threads or 1 for _, m in crowded), default=None),
                       "; ".join(f"{side}: {m.crowding}" for side, m in crowded))


@dataclass(frozen=True)
class Speedup:
    """One comparison's outcome: `value` = how many times faster B is than A (S = T_eager / T_compiled
    for the verdict, S_B / S_A for two runs), its interval, the state and why."""

    state: SpeedupState
    value: float | None  # point estimate: median of A / median of B
    low: float | None  # CONFIDENCE interval, None without rounds
    high: float | None
    rounds: int
    reason: str  # why this state, in words
    machine: Machine | None
    size_certain: bool = True  # False: the direction is certain, the interval too wide to state a size
    cause: Cause = Cause.CLEAR

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None

    @property
    def conclusive(self) -> bool:
        """A direction, or the absence of a difference, that the interval supports."""
        return self.state in (FASTER, SLOWER, NO_DIFFERENCE)

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
                NO_DIFFERENCE: f"No measurable difference: S = {self.interval_text()}",
                INCONCLUSIVE: f"Speedup INCONCLUSIVE: S = {self.interval_text()}"}[self.state]
        return text + self.because()

    def because(self) -> str:
        """The reason and the machine's state, as the tail of a sentence (" — reason. Machine busy…")."""
        text = ""
        if self.state in (INCONCLUSIVE, NO_DIFFERENCE) or not self.has_interval or not self.size_certain:
            text += f" — {self.reason}"
        if self.machine is not None and self.machine.busy:
            text += f". {self.machine.note[0].upper()}{self.machine.note[1:]}"
        return text + "."

    def word(self) -> str:
        """The state as one word for tables: faster, SLOWER, no difference, inconclusive."""
        return {FASTER: "faster", SLOWER: "SLOWER", NO_DIFFERENCE: "no difference", INCONCLUSIVE: "inconclusive",
                UNMEASURED: "not measured"}[self.state]

    def get_state(self) -> dict:
        return {"state": self.state.value, "value": self.value, "low": self.low, "high": self.high,
                "confidence": CONFIDENCE if self.has_interval else None, "rounds": self.rounds,
                "reason": self.reason, "machine": self.machine.get_state() if self.machine else None,
                "size_certain": self.size_certain, "cause": self.cause.value, "text": self.sentence()}


    @classmethod
    def from_state(cls, state: dict) -> Speedup:
        """The estimate its `get_state` wrote (a summary read back from the cache or a file)."""
        machine = state.get("machine")
        cause = state.get("cause")
        return cls(state=SpeedupState(state["state"]), value=state.get("value"), low=state.get("low"),
                   high=state.get("high"), rounds=state.get("rounds", 0), reason=state.get("reason", ""),
                   machine=Machine.from_state(machine) if machine else None,
                   size_certain=state.get("size_certain", True),
                   cause=Cause(cause) if cause in Cause._value2member_map_ else Cause.CLEAR)

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


def decide(value: float, low: float | None, high: float | None, rounds: int, machine: Machine | None,
           threshold: float = THRESHOLD, two_runs: bool = False) -> Speedup:
    """The one rule, in order: too few rounds → inconclusive; no interval (an older capture) → its
    point within [1 − t, 1 / (1 − t)] is no measurable difference, else its direction, flagged as a
    point estimate — but between two runs (`two_runs`) inconclusive: a point taken without rounds says
    nothing about which run is faster; an oversubscribed machine → inconclusive (suggest --threads);
    the whole interval within [1 − t, 1 / (1 − t)] → no measurable difference; an interval that spans
    1, or is more than MAX_WIDTH× from end to end → inconclusive, too wide; otherwise faster (above 1)
    or slower (below 1), the size stated only when the interval is within MAX_SPREAD×. A busy machine
    does not change the state: its note goes beside it."""
    if 0 < rounds < MIN_ROUNDS:
        return Speedup(INCONCLUSIVE, value, None, None, rounds, f"only {rounds} timing round(s); {MIN_ROUNDS} needed",
                       machine, cause=Cause.FEW_ROUNDS)
    floor, ceiling = 1 - threshold, 1 / (1 - threshold)
    if low is None or high is None:
        if floor <= value <= ceiling:
            return Speedup(NO_DIFFERENCE, value, None, None, rounds, f"{OLDER_CAPTURE}; the point lies within "
                           f"{threshold:.0%} of 1", machine, cause=Cause.NO_INTERVAL)
        if two_runs:
            return Speedup(INCONCLUSIVE, value, None, None, rounds, f"{OLDER_CAPTURE}; without an interval the "
                           "point cannot tell which run is faster", machine, cause=Cause.NO_INTERVAL)
        state = FASTER if value > 1 else SLOWER
        return Speedup(state, value, None, None, rounds, OLDER_CAPTURE, machine, cause=Cause.NO_INTERVAL)
    if machine is not None and machine.oversubscribed:
        threads = f"--threads {machine.suggested_threads}" if machine.suggested_threads else "fewer --threads"
        return Speedup(INCONCLUSIVE, value, low, high, rounds,
                       f"oversubscribed ({machine.crowding}): torch's threads waited on each other, so these "
                       f"times measure that contention, not the code; capture again with {threads}",
                       machine, cause=Cause.OVERSUBSCRIBED)
    busy = machine is not None and machine.busy
    if floor <= low and high <= ceiling:
        return Speedup(NO_DIFFERENCE, value, low, high, rounds,
                       f"the whole {CONFIDENCE:.0%} interval lies within {threshold:.0%} of 1: any difference is "
                       "below the configured threshold", machine, cause=Cause.SMALL)
    width = high / low
    if low <= 1 <= high:
        because = "; the machine was busy, which widens it" if busy else ""
        return Speedup(INCONCLUSIVE, value, low, high, rounds,
                       f"the interval is too wide to tell: it spans 1 and reaches beyond {threshold:.0%} of it"
                       f"{because}", machine, cause=Cause.WIDE)
    if width > MAX_WIDTH:
        because = "; the machine was busy" if busy else ""
        return Speedup(INCONCLUSIVE, value, low, high, rounds,
                       f"the interval is too wide to trust ({width:.0f}× from end to end, "
                       f"more than {MAX_WIDTH:.0f}×): "
                       f"the rounds disagree too much to state even a direction{because}", machine, cause=Cause.WIDE)
    state = FASTER if low > 1 else SLOWER
    reason = f"the whole {CONFIDENCE:.0%} interval is {'above' if low > 1 else 'below'} 1"
    if width > MAX_SPREAD:
        return Speedup(state, value, low, high, rounds, reason + f", but it is wide ({width:.1f}× from end to end): "
                       "the direction is certain, the size is not", machine, size_certain=False)
    return Speedup(state, value, low, high, rounds, reason, machine)


def bootstrap(samples: Sequence[Sequence], statistic: Callable[..., float], resamples: int = RESAMPLES,
              confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap of `statistic(*resampled)`: each sample is resampled on its own (an
    interleaved round is one element, so its eager time stays with the compiled time beside it).
    Seeded: the same samples always give the same interval."""
    generator = random.Random(0)
    values = []
    for _ in range(resamples):
        drawn = [[sample[generator.randrange(len(sample))] for _ in range(len(sample))] for sample in samples]
        values.append(statistic(*drawn))
    values.sort()
    tail = (1 - confidence) / 2
    return values[int(tail * (resamples - 1))], values[int((1 - tail) * (resamples - 1))]


def _speedup_of(rounds: Sequence[tuple[float, float]]) -> float:
    return statistics.median(e for e, _ in rounds) / statistics.median(c for _, c in rounds)


def bootstrap_interval(rounds: list[tuple[float, float]], resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The interval of S = median(eager) / median(compiled) over interleaved (eager, compiled) rounds."""
    return bootstrap([rounds], _speedup_of, resamples, confidence)


def compare_rounds(rounds: list[tuple[float, float]], machine: Machine | None,
                   threshold: float = THRESHOLD) -> Speedup:
    """S of one capture: eager (A) against compiled (B) over its interleaved rounds."""
    value = _speedup_of(rounds)
    low, high = bootstrap_interval(rounds) if len(rounds) >= MIN_ROUNDS else (None, None)
    return decide(value, low, high, len(rounds), machine, threshold)


def timed_rounds(results: RunResults | None) -> list[tuple[float, float]]:
    """A capture's (eager, compiled) seconds per call, one pair per interleaved round, or [] when it
    has none usable."""
    timing = results.timing if results is not None else None
    rounds = [(r.eager_s, r.compiled_s) for r in timing.rounds] if timing is not None else []
    if any(not positive_time(e) or not positive_time(c) for e, c in rounds):
        return []
    return rounds


def positive_time(value) -> bool:
    """A time that can be divided by: a number above zero (a damaged file may hold anything)."""
    return isinstance(value, (int, float)) and value > 0


def compare_runs(a: Speedup, a_results: RunResults | None, b: Speedup, b_results: RunResults | None,
                 threshold: float = THRESHOLD) -> Speedup:
    """Run B against run A (a baseline, another mode, the run before a fix): the ratio S_B / S_A of
    their speedups over eager, each run's rounds resampled on their own. S is used rather than the
    compiled time alone because each run's eager rounds were timed beside its compiled ones: what
    the machine did to both cancels, and two captures taken minutes apart stay comparable."""
    machine = Machine.of_pair(a.machine, b.machine)
    if a.value is None or b.value is None:
        missing = "A" if a.value is None else "B"
        return Speedup(UNMEASURED, None, None, None, 0, f"run {missing} has no measured speedup", machine,
                       cause=Cause.UNMEASURED)
    value = b.value / a.value
    rounds_a, rounds_b = timed_rounds(a_results), timed_rounds(b_results)
    if not rounds_a or not rounds_b or not a.has_interval or not b.has_interval:
        few = [len(rounds) for rounds in (rounds_a, rounds_b) if 0 < len(rounds) < MIN_ROUNDS]
        return decide(value, None, None, min(few) if few else 0, machine, threshold, two_runs=True)
    if rounds_b < rounds_a:  # one order per pair: A against B is then exactly the inverse of B against A
        low, high = (1 / end for end in reversed(bootstrap([rounds_b, rounds_a], _ratio_of_speedups)))
    else:
        low, high = bootstrap([rounds_a, rounds_b], _ratio_of_speedups)
    return decide(value, low, high, min(len(rounds_a), len(rounds_b)), machine, threshold)


def _ratio_of_speedups(rounds_a, rounds_b) -> float:
    return _speedup_of(rounds_b) / _speedup_of(rounds_a)


def compare_calls(a_results: RunResults | None, b_results: RunResults | None, machine: Machine | None,
                  threshold: float = THRESHOLD) -> Speedup | None:
    """A's compiled call time against B's (value > 1: B's call is faster), each run's compiled rounds
    resampled on their own; None when either run has no rounds. Its relative interval is the noise a
    kernel's time change is judged against (`kernel_change`)."""
    calls_a = [c for _, c in timed_rounds(a_results)]
    calls_b = [c for _, c in timed_rounds(b_results)]
    if not calls_a or not calls_b:
        return None
    value = statistics.median(calls_a) / statistics.median(calls_b)
    rounds = min(len(calls_a), len(calls_b))
    if rounds < MIN_ROUNDS:
        return decide(value, None, None, rounds, machine, threshold)
    low, high = bootstrap([calls_a, calls_b], lambda x, y: statistics.median(x) / statistics.median(y))
    return decide(value, low, high, rounds, machine, threshold)


def kernel_change(us_a: float, us_b: float, calls: Speedup | None, doubt: str = "",
                  threshold: float = THRESHOLD,
                  launches: tuple[Sequence[float], Sequence[float]] | None = None) -> Speedup:
    """One kernel's time per call in A against B (value > 1: faster in B). The kernel is given the
    relative noise of the call it runs in (`calls`: the compiled call A against B): a kernel is no
    steadier than its call. With each run's launch times (`launches`: the samples its total is made
    of) the interval also spans the kernel's own spread — its launches resampled, the ratio of the
    two means — so one launch a busy machine preempted (4,123 µs among launches of 9 µs) cannot make
    a kernel "slower beyond noise". `doubt` (a profile that disagrees with its measured call) makes
    the change inconclusive."""
    if us_a <= 0 or us_b <= 0:
        return Speedup(UNMEASURED, None, None, None, 0, "a zero time: nothing to compare", None,
                       cause=Cause.UNMEASURED)
    value = us_a / us_b
    if calls is None or calls.value is None:
        return Speedup(INCONCLUSIVE, value, None, None, 0, "no timing rounds in both runs: the noise of these "
                       "times is unknown", calls.machine if calls else None, cause=Cause.NO_INTERVAL)
    if doubt:  # a crowded machine is the first reason a profile disagrees with its call: say it first
        crowded = calls.cause == Cause.OVERSUBSCRIBED
        return Speedup(INCONCLUSIVE, value, None, None, calls.rounds, f"{calls.reason}; {doubt}" if crowded else doubt,
                       calls.machine, cause=Cause.OVERSUBSCRIBED if crowded else Cause.WIDE)
    if not calls.has_interval:
        return Speedup(INCONCLUSIVE, value, None, None, calls.rounds, calls.reason, calls.machine, cause=calls.cause)
    low, high = calls.low / calls.value, calls.high / calls.value
    if launches is not None and min(len(launches[0]), len(launches[1])) >= MIN_ROUNDS:
        own_low, own_high = launch_spread(*launches)
        low, high = min(low, own_low), max(high, own_high)
    return decide(value, value * low, value * high, calls.rounds, calls.machine, threshold)


KERNEL_RESAMPLES = 400  # a diff holds a row per call site: fewer resamples than a verdict's, each of a few launches


def launch_spread(launches_a: Sequence[float], launches_b: Sequence[float]) -> tuple[float, float]:
    """The CONFIDENCE interval of mean(A) / mean(B) over each run's launches resampled on their own,
    relative to its point: how far the kernel's own launches let its time per call move."""
    point = statistics.fmean(launches_a) / statistics.fmean(launches_b)
    generator = random.Random(0)
    ratios = sorted(statistics.fmean(generator.choices(launches_a, k=len(launches_a)))
                    / statistics.fmean(generator.choices(launches_b, k=len(launches_b)))
                    for _ in range(KERNEL_RESAMPLES))
    tail = (1 - CONFIDENCE) / 2
    return (ratios[int(tail * (KERNEL_RESAMPLES - 1))] / point,
            ratios[int((1 - tail) * (KERNEL_RESAMPLES - 1))] / point)


def meets(comparison: Speedup, floor: float) -> bool | None:
    """A gate on a comparison's interval: True when the whole interval is at or above `floor`, False
    when it is all below — whatever the comparison says about 1, since a floor asks another question
    (an interval spanning 1 may still lie wholly above a floor of 0.9) —, None (inconclusive) when it
    straddles `floor`, or when there is no interval a gate may read (`gate_doubt`): no interval at
    all (an older capture's point decides nothing), too few rounds, an oversubscribed machine, more
    than MAX_WIDTH× from end to end. Every gate (`--min-speedup`, `--baseline`, `--history`) reads
    this one rule, so none passes on what its comparison cannot decide."""
    if comparison.value is None:
        return False
    if gate_doubt(comparison) is not None:
        return None
    if comparison.low >= floor:
        return True
    if comparison.high < floor:
        return False
    return None


def gate_doubt(comparison: Speedup) -> str | None:
    """Why a gate cannot read this comparison's interval against a floor (the comparison's own
    reason: no interval, too few rounds, an oversubscribed machine, too wide), or None when it can."""
    if comparison.value is not None and trusted_interval(comparison):
        return None
    return comparison.reason or "no interval"


def trusted_interval(comparison: Speedup) -> bool:
    """An interval a gate may compare with its floor: one from enough rounds on a machine that was not
    oversubscribed, at most MAX_WIDTH× from end to end."""
    return (comparison.has_interval and comparison.cause not in (Cause.FEW_ROUNDS, Cause.OVERSUBSCRIBED)
            and comparison.high / comparison.low <= MAX_WIDTH)
