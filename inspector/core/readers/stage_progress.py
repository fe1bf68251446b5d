"""Live state of a running capture, folded from its progress events: for each compile unit, which
pipeline steps started and ended and when; for the run, which phase it is in. The stage strip draws
this; it holds no Qt so it can be tested alone."""

from __future__ import annotations

from dataclasses import dataclass, field

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

    def apply(self, event: dict) -> None:
        kind, now = event.get("event"), float(event.get("t", 0.0))
        if kind == "stage":
            step = pipeline_step(str(event.get("name")))
            own_id = event.get("compile_id")
            own_id = None if own_id in (None, "", "None") else str(own_id)  # torch writes "None" outside a compile
            compile_id = own_id or self.current_unit
            if step is None or compile_id is None:
                return
            if own_id and event.get("ph") == "B":
                self.current_unit = own_id
            steps = self.units.setdefault(compile_id, {name: StepState() for name in PIPELINE})
            stack = self.open_stages.setdefault(compile_id, [])
            name = str(event.get("name"))
            if event.get("ph") == "B":
                if steps[step].started is None:
                    steps[step].started = now
                stack.append((name, step))
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
