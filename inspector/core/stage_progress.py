"""Live state of a running capture, folded from its progress events: for each compile unit, which
pipeline steps started and ended and when; for the run, which phase it is in. The stage strip draws
this; it holds no Qt so it can be tested alone."""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.pipeline import BENCHMARK_PHASES, PIPELINE, pipeline_step


@dataclass
class StepState:
    started: float | None = None
    ended: float | None = None
    open_stages: int = 0  # torch stages of this step begun and not yet ended

    @property
    def running(self) -> bool:
        return self.started is not None and self.open_stages > 0

    def elapsed(self, now: float) -> float | None:
        if self.started is None:
            return None
        return (self.ended if not self.running and self.ended else now) - self.started


@dataclass
class StageProgress:
    units: dict[str, dict[str, StepState]] = field(default_factory=dict)  # compile id → step → state
    phase: str | None = None
    phases_done: list[str] = field(default_factory=list)
    finished: bool = False
    error: str | None = None

    def apply(self, event: dict) -> None:
        kind, now = event.get("event"), float(event.get("t", 0.0))
        if kind == "stage":
            step = pipeline_step(str(event.get("name")))
            compile_id = str(event.get("compile_id") or "?")
            if step is None:
                return
            state = self.units.setdefault(compile_id, {name: StepState() for name in PIPELINE})[step]
            if event.get("ph") == "B":
                state.started = state.started if state.started is not None else now
                state.open_stages += 1
            elif event.get("ph") == "E":
                state.open_stages = max(0, state.open_stages - 1)
                state.ended = now
        elif kind == "phase":
            if event.get("state") == "start":
                self.phase = event.get("phase")
            else:
                self.phases_done.append(str(event.get("phase")))
                self.phase = None
        elif kind == "error":
            self.error = event.get("message")
        elif kind == "done":
            self.finished = True

    @property
    def benchmark_state(self) -> str:
        """'done', 'running' or 'waiting' for the last pipeline step (the runner's measuring phases)."""
        if self.phase in BENCHMARK_PHASES:
            return "running"
        if any(phase in BENCHMARK_PHASES for phase in self.phases_done):
            return "done"
        return "waiting"
