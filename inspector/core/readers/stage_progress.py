"""Live state of a running capture, folded from its progress events: for each compile unit, which
pipeline steps started and ended and when; for the run, which phase it is in. The stage strip draws
this; it holds no Qt so it can be tested alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.model.compile_threads import LooseStages, names_compile, step_of
from inspector.core.model.pipeline import BENCHMARK_PHASES, PIPELINE, pipeline_step


@dataclass
class StepState:
    started: float | None = None
    running: bool = False  # the innermost open stage of its unit belongs to this step
    active_s: float = 0.0  # time this step was the innermost one (its own time, nested steps excluded)
    active_since: float | None = None

    def set_running(self, running: bool, now: float) -> None:
        if running and not self.running:
            self.active_since = now
        elif self.running and not running and self.active_since is not None:
            self.active_s += now - self.active_since
            self.active_since = None
        self.running = running

    def elapsed(self, now: float) -> float | None:
        if self.started is None:
            return None
        return self.active_s + (now - self.active_since if self.running and self.active_since is not None else 0.0)


@dataclass
class StageProgress:
    units: dict[str, dict[str, StepState]] = field(default_factory=dict)  # compile id → step → state
    open_stages: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # compile id → (stage, step)
    current_unit: str | None = None  # where stages without a compile id (C++ builds, workers) belong
    phase: str | None = None
    phases_done: list[str] = field(default_factory=list)
    finished: bool = False
    error: str | None = None
    benchmark_s: float = 0.0  # time spent in the runner's measuring phases so far (ended ones)
    benchmark_since: float | None = None  # when the measuring phase now running started
    # compile id → stage → how many ran beside the compile on other threads (compile workers): shown,
    # never counted in a step's own time (`model/compile_threads.py` tells them apart, for
    # `analysis/compile_wall.py` too)
    concurrent: dict[str, dict[str, int]] = field(default_factory=dict)
    _loose: dict[str, LooseStages] = field(default_factory=dict)  # stages naming no compile id, still open

    def apply(self, event: dict) -> None:
        kind, now = event.get("event"), float(event.get("t", 0.0))
        if kind == "stage":
            name = str(event.get("name"))
            step = pipeline_step(name)
            own_id = event.get("compile_id")
            own_id = str(own_id) if names_compile(own_id) else None
            compile_id = own_id or self.current_unit
            if compile_id is None or (step is None and compile_id not in self.units):
                return
            if own_id is None and self._on_worker(compile_id, name, event.get("ph"), now):
                return
            self._compiling_thread_moved(compile_id)
            if own_id and event.get("ph") == "B":
                self.current_unit = own_id
            steps = self.units.setdefault(compile_id, {name: StepState() for name in PIPELINE})
            stack = self.open_stages.setdefault(compile_id, [])
            if event.get("ph") == "B":
                if step is not None and steps[step].started is None:
                    steps[step].started = now
                stack.append((name, step))  # a stage of no step holds the time too: no step's own
            elif event.get("ph") == "E":
                for index in range(len(stack) - 1, -1, -1):
                    if stack[index][0] == name:
                        del stack[index]
                        break
            current = stack[-1][1] if stack else None
            for step_name, state in steps.items():
                state.set_running(step_name == current, now)
        elif kind == "phase":
            if event.get("state") == "start":
                self.phase = event.get("phase")
                self.benchmark_since = now if self.phase in BENCHMARK_PHASES else None
            else:
                if self.benchmark_since is not None:
                    self.benchmark_s += now - self.benchmark_since
                    self.benchmark_since = None
                self.phases_done.append(str(event.get("phase")))
                self.phase = None
        elif kind == "error":
            self.error = event.get("message")
        elif kind == "done":
            self.finished = True

    def _on_worker(self, compile_id: str, name: str, phase, now: float) -> bool:
        """Whether this stage naming no compile id is one begun while the unit's compile is open, or
        its end. Such a stage may be the compiling thread's own or a worker's (`LooseStages` tells
        which when it ends): it is held apart until then. The compiling thread's own gets its time
        moved from the step that was running to its own step (`step_of`: "other", which the strip does
        not draw, for a stage outside the pipeline); a worker's is counted in `concurrent`."""
        loose = self._loose.setdefault(compile_id, LooseStages())
        if phase == "B" and self.open_stages.get(compile_id):
            running = next((step for step, state in self.units[compile_id].items() if state.running), None)
            loose.begin((name, now, running))
            return True
        key = loose.latest(lambda key: key[0] == name)
        if phase != "E" or key is None:
            return False
        if loose.end(key):
            stages = self.concurrent.setdefault(compile_id, {})
            stages[name] = stages.get(name, 0) + 1
            return True
        _, began, running = key
        steps = self.units[compile_id]
        if running is not None:
            steps[running].active_s -= now - began
        step = step_of(name)
        if step in steps:
            steps[step].active_s += now - began
            if steps[step].started is None:
                steps[step].started = began
        return True

    def _compiling_thread_moved(self, compile_id: str) -> None:
        if compile_id in self._loose:
            self._loose[compile_id].compiling_thread_moved()

    def benchmark_elapsed(self, now: float) -> float | None:
        """Time measuring so far (None before the first measuring phase)."""
        if self.benchmark_since is not None:
            return self.benchmark_s + now - self.benchmark_since
        return self.benchmark_s if self.benchmark_state == "done" else None

    @property
    def benchmark_state(self) -> str:
        """'done', 'running' or 'waiting' for the last pipeline step (the runner's measuring phases)."""
        if self.phase in BENCHMARK_PHASES:
            return "running"
        if any(phase in BENCHMARK_PHASES for phase in self.phases_done):
            return "done"
        return "waiting"
