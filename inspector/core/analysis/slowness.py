"""Where a compiled call's time goes, measured from the capture's profile of the compiled run: guard
checks (Dynamo's cache lookup), torch's runtime wrappers, the compiled graphs themselves, and the eager
Python and ops between them; plus kernel launches per call and CUDA-graph skips from the log. Each
figure is a share of the profiled call, so "compiled is slower" names its cause with a number."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.analysis.profile_ops import WRAPPERS
from inspector.core.model.records import Record
from inspector.core.model.run_results import Profile
from inspector.core.model.session import Session

GUARD_EVENT = "TorchDynamo Cache Lookup"
GRAPH_EVENT = "## Call CompiledFxGraph"
RUNTIME_WRAPPERS = ("Pregraph bytecode", "AOTDispatcher", "CompiledFunction")


@dataclass(frozen=True)
class Cost(Record):
    key: str
    label: str
    us_per_call: float | None
    share: float | None  # of the profiled call's wall time
    detail: str  # what was measured and how


@dataclass(frozen=True)
class CudagraphSkip(Record):
    """A unit whose CUDA graph torch did not record, and torch's reason."""

    compile_id: str
    reason: str


@dataclass(frozen=True)
class Slowness(Record):
    """Where a compiled call's time goes, from the profile."""

    call_us: float | None  # wall time of one profiled compiled call
    costs: tuple[Cost, ...]
    graphs_per_call: float | None
    launches_per_call: float | None
    launch_detail: str
    cudagraph_skips: tuple[CudagraphSkip, ...]
    cudagraph_skip_count: int | None  # torch's counter, when the capture recorded it
    note: str

    NESTED = {"costs": [Cost], "cudagraph_skips": [CudagraphSkip]}


def slowness(session: Session) -> Slowness:
    results = session.results
    skips = tuple(CudagraphSkip(str(unit.compile_id), unit.metrics["cudagraph_skip_reason"])
                  for unit in session.units if unit.metrics.get("cudagraph_skip_reason"))
    counted = results.counters.get("inductor", {}).get("cudagraph_skips") if results is not None else None
    profile = results.profile.get("compiled") if results is not None else None
    if profile is None or not profile.wall_s or not profile.ops:
        return Slowness(None, (), None, None, "", skips, counted,
                        "no profile of the compiled run: capture an entry-point script with profiling on")
    runs = profile.runs or 1
    call_us = profile.wall_s * 1e6 / runs
    ops = profile.ops

    def per_call(rows, column="self_cpu_us") -> float:
        return sum(row.time(column) for row in rows) / runs

    guard_rows = [row for row in ops if row.name.startswith(GUARD_EVENT)]
    graph_rows = [row for row in ops if row.name.startswith(GRAPH_EVENT)]
    wrapper_rows = [row for row in ops if row.name.startswith(RUNTIME_WRAPPERS)]
    guards = per_call(guard_rows)
    graphs = per_call(graph_rows, "cpu_total_us")
    wrappers = per_call(wrapper_rows)
    between = max(0.0, call_us - guards - graphs - wrappers)

    def cost(key, label, us, detail) -> Cost:
        return Cost(key, label, us, us / call_us if call_us else None, detail)

    guard_calls = sum(row.time("count") for row in guard_rows) / runs
    costs = (
        cost("guards", "guard checks (Dynamo cache lookup)", guards,
             f"'{GUARD_EVENT}' self time, {guard_calls:g} lookup(s) per call"),
        cost("runtime_wrappers", "torch runtime wrappers", wrappers,
             "self time of 'Pregraph bytecode', 'AOTDispatcher …' and 'CompiledFunction' events"),
        cost("compiled_graphs", "inside compiled graphs", graphs,
             f"total time of the {len(graph_rows)} compiled graph(s) called ('{GRAPH_EVENT} …' events)"),
        cost("eager_between", "eager Python and ops between compiled regions", between,
             "the rest of the call: bytecode and eager ops around and between graphs (breaks, resume functions)"),
    )
    launches, launch_detail = _launches(profile, runs)
    return Slowness(call_us, costs, sum(row.time("count") for row in graph_rows) / runs if graph_rows else None,
                    launches, launch_detail, skips, counted,
                    f"profile of {runs} compiled call(s); the profiler slows every part it watches, so read shares, "
                    "not absolute times")


def _launches(profile: Profile, runs: int) -> tuple[float | None, str]:
    """Kernels launched per call: device kernels on CUDA; on CPU the profiled ops and kernels."""
    rows = [row for row in profile.ops if not row.name.startswith(WRAPPERS)]
    if profile.time_key == "self_device_us":
        kernels = [row for row in rows if row.time("self_device_us")]
        launches = sum(row.time("count") for row in kernels) / runs
        device_us = sum(row.time("self_device_us") for row in kernels) / runs
        return launches, (f"{launches:g} device kernel launch(es) per call, {device_us:.1f} µs of device time; "
                          "many short kernels point at launch overhead (CUDA graphs: mode=\"reduce-overhead\")")
    launches = sum(row.time("count") for row in rows) / runs
    return launches, (f"{launches:g} op/kernel call(s) per call seen by the profiler (extern ATen calls, generated "
                      "kernels when kernel profiling is on, and eager ops between graphs)")
