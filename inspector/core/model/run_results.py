"""A capture's manifest.json and results.json as typed, frozen records, decoded once by the loader so
the analyses read attributes, not the files' keys (after mitmproxy's `from_state`/`get_state`).

Only the fields some code reads are named; every other field the file held stays in `extra`, and
`get_state()` writes the document back as it was read, key order included — the summary's
`measurements` is the file's results, whatever version of the capture wrote it. The capture's writer
(`inspector/capture/runner.py`) owns the field names; `readers/session_schema.py` has already held
each field to its type, so decoding trusts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar


@dataclass(frozen=True, kw_only=True)
class Record:
    """One JSON object of the session format. `NESTED` says which named fields hold records: a
    record class, `[Class]` for a list of them, `{str: Class}` for an object of them by free keys;
    any other field is kept as the JSON value it was."""

    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)  # fields no attribute names, as read
    order: tuple[str, ...] = field(default=(), repr=False, compare=False)  # the keys as the file had them

    NESTED: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def from_state(cls: type[_R], state: Mapping[str, Any]) -> _R:
        named = _named(cls)
        values = {key: _decode(cls.NESTED.get(key), value) for key, value in state.items() if key in named}
        return cls(**values, extra={key: value for key, value in state.items() if key not in named}, order=tuple(state))

    def get_state(self) -> dict:
        """The JSON object: the keys read, in their order; a record made in code (no order) writes its
        fields that are not at their defaults, then its extra ones."""
        named = _named(type(self))
        added = [name for name, default in named.items() if name not in self.order and getattr(self, name) != default]
        kept = [key for key in self.extra if key not in self.order]
        return {key: _encode(getattr(self, key)) if key in named else self.extra[key]
                for key in (*self.order, *added, *kept)}


_R = TypeVar("_R", bound=Record)


def state_of(record: Record | None) -> dict | None:
    """The record's JSON object, or None where the file had none."""
    return record.get_state() if record is not None else None


def _named(cls: type[Record]) -> dict[str, Any]:
    """The attributes a record class names, with their defaults (the base's bookkeeping apart)."""
    return {f.name: (f.default_factory() if f.default_factory is not MISSING else f.default)
            for f in fields(cls) if f.name not in ("extra", "order")}


def _decode(kind: Any, value: Any) -> Any:
    if value is None or kind is None:
        return value
    if isinstance(kind, list):
        return tuple(kind[0].from_state(item) for item in value)
    if isinstance(kind, dict):
        return {key: kind[str].from_state(item) for key, item in value.items()}
    return kind.from_state(value)


def _encode(value: Any) -> Any:
    if isinstance(value, Record):
        return value.get_state()
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _encode(item) for key, item in value.items()}
    return value


# --- the manifest ----------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RunError(Record):
    """How a capture failed: the exception's kind and message, at the user's line where known."""

    kind: str | None = None
    message: str | None = None
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, kw_only=True)
class Launcher(Record):
    """The process that started the capture, so a reader can tell a running capture from a dead one."""

    pid: int
    node: str
    start: int | None = None  # the launcher's start time, to tell it from a later process with its pid


@dataclass(frozen=True, kw_only=True)
class Manifest(Record):
    """What the capture recorded about itself: how it ended, with which settings, from which script."""

    script: str | None = None
    complete: bool = False
    ended: float | None = None  # None: the capture never recorded its end
    exit_status: int | None = None
    error: RunError | None = None
    settings: Mapping[str, Any] | None = None  # the capture's options as given, stated by the summary
    launcher: Launcher | None = None

    NESTED = {"error": RunError, "launcher": Launcher}


# --- the results -----------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class Environment(Record):
    torch: str | None = None
    device: str | None = None
    device_name: str | None = None
    threads: int | None = None


@dataclass(frozen=True, kw_only=True)
class Timing(Record):
    """The call times of the eager or the compiled model (seconds per call)."""

    median_s: float
    n: int | None = None
    min_s: float | None = None
    max_s: float | None = None
    p75_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class Round(Record):
    """One interleaved timing round: eager and compiled timed side by side on the same machine."""

    eager_s: float | None = None
    compiled_s: float | None = None
    eager_calls: int | None = None
    compiled_calls: int | None = None


@dataclass(frozen=True, kw_only=True)
class MachineLoad(Record):
    """What else the machine was doing while the capture timed the calls."""

    cores: int | None = None
    torch_threads: int | None = None
    others_cpu_cores: float | None = None  # core-equivalents other processes used meanwhile
    load_before: float | None = None
    load_during: float | None = None
    thread_variables: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Benchmark(Record):
    """How the calls were timed: interleaved rounds (newer captures) and the machine meanwhile."""

    rounds: tuple[Round, ...] = ()
    round_budget_s: float | None = None
    environment: MachineLoad | None = None

    NESTED = {"rounds": [Round], "environment": MachineLoad}


@dataclass(frozen=True, kw_only=True)
class Tolerance(Record):
    rtol: float | None = None
    atol: float | None = None


@dataclass(frozen=True, kw_only=True)
class Correctness(Record):
    """Compiled outputs against eager ones for one set of inputs."""

    inputs: str
    allclose: bool
    max_abs_error: float  # may be inf or NaN: outputs that held NaN still mismatch
    max_rel_error: float


@dataclass(frozen=True, kw_only=True)
class ProfileOp(Record):
    """One row of torch's profiler table. Its time columns (count, self_cpu_us, cpu_total_us,
    self_device_us, …) are the profiler's own names, picked by the profile's `time_key`, so they stay
    as read in `extra`."""

    name: str

    def time(self, column: str, default: float = 0) -> float:
        return self.extra.get(column, default)


@dataclass(frozen=True, kw_only=True)
class Profile(Record):
    """The eager or compiled run under torch's profiler: its top ops and where its trace lies."""

    trace: str | None = None  # the Chrome trace, relative to the session folder
    runs: int | None = None
    wall_s: float | None = None
    time_key: str = "self_cpu_us"
    warmup_excluded: int | None = None  # None: an older capture that profiled its first call too
    ops: tuple[ProfileOp, ...] = ()

    NESTED = {"ops": [ProfileOp]}


@dataclass(frozen=True, kw_only=True)
class RunResults(Record):
    """What the capture measured of the run: call times, correctness, memory, profiles, torch's counters."""

    environment: Environment | None = None
    entry_point: bool = False  # the script defines inspector_model(), so its run was meant to be timed
    threads: int | None = None
    tolerance: Tolerance | None = None
    eager: Timing | None = None
    compiled: Timing | None = None
    timing: Benchmark | None = None
    memory_eager: Mapping[str, float] | None = None  # figure (cpu_rss_high_water_mb, …) → MB
    memory_compiled: Mapping[str, float] | None = None
    t_first_call_s: float | None = None
    correctness: tuple[Correctness, ...] | None = None  # None: not checked (the run ended first)
    allclose: bool | None = None
    profile: Mapping[str, Profile] = field(default_factory=dict)  # "eager" / "compiled" → its profile
    counters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # torch's counters, group → name → count
    error: RunError | None = None  # the run raised before it was timed

    NESTED = {"environment": Environment, "tolerance": Tolerance, "eager": Timing, "compiled": Timing,
              "timing": Benchmark, "correctness": [Correctness], "profile": {str: Profile}, "error": RunError}

    def timed(self, label: str) -> Timing | None:
        """The call times of the `eager` or `compiled` run."""
        return self.compiled if label == "compiled" else self.eager
