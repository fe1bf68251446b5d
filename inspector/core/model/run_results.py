"""A capture's manifest.json and results.json as typed, frozen records, decoded once by the loader so
the analyses read attributes, not the files' keys (after mitmproxy's `from_state`/`get_state`).

Only the fields some code reads are named; every other field the file held stays in `extra`, and
`get_state()` writes the document back as it was read, key order included — the summary's
`measurements` is the file's results, whatever version of the capture wrote it. The capture's writer
(`inspector/capture/runner.py`) owns the field names; `readers/session_schema.py` has already held
each field to its type, so decoding trusts them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.model.records import Record


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
    started: float | None = None
    host: Mapping[str, str] | None = None  # the machine the capture ran on ("node": its name)
    git_commit: str | None = None  # the commit of the script's work tree when the capture started

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
    memory_eager: Mapping[str, float] | None = None  # figure (cpu_rss_high_water_mb, cpu_rss_start_mb, …) → MB
    memory_compiled: Mapping[str, float] | None = None  # the compiled calls after compiling
    memory_compile: Mapping[str, float] | None = None  # the first compiled call: compiling it
    # what the figures are: a peak per phase (reset at each phase's start) or, in older captures and
    # where the reset is refused, the process's running peak (None: an older capture, running peak)
    memory_method: str | None = None
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


# --- torch's own record of the run (torch_record.json) -------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GuardFailures(Record):
    """One cache entry checked at a recompile: every guard of it that failed (torch logs the first)."""

    compile_id: str | None = None
    failures: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class RecordedRecompile(Record):
    """A recompile as torch saw it in the process: the reasons it logged and every failed guard."""

    compile_id: str | None = None
    co_name: str | None = None
    co_filename: str | None = None
    co_firstlineno: int | None = None
    reasons: tuple[str, ...] = ()
    cache_entries: tuple[GuardFailures, ...] = ()

    NESTED = {"cache_entries": [GuardFailures]}

    def every_failure(self) -> tuple[str, ...]:
        """Every guard that failed, over every earlier graph: what the oracle harness compares."""
        return tuple(failure for entry in self.cache_entries for failure in entry.failures)


@dataclass(frozen=True, kw_only=True)
class RecordedOutputCode(Record):
    """One output code Inductor loaded: the kernels it defines, subgraphs' included."""

    compile_id: str | None = None
    key: str | None = None
    kernels: int = 0
    extern_calls: int = 0


@dataclass(frozen=True, kw_only=True)
class TorchRecord(Record):
    """What torch itself recorded in the capture's process (docs/capture-session.md): its counters,
    every compilation's metrics (the fields torch names, kept as read), every recompile with every
    failed guard, and the output code it loaded. The oracle bench/oracle holds the app's facts to."""

    torch: str | None = None
    counters: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    compilation_metrics: tuple[Mapping[str, Any], ...] = ()
    recompiles: tuple[RecordedRecompile, ...] = ()
    output_code: tuple[RecordedOutputCode, ...] = ()
    hook_errors: tuple[str, ...] = ()

    NESTED = {"recompiles": [RecordedRecompile], "output_code": [RecordedOutputCode]}
