"""Mode comparison's captures: one script captured once per compile mode, in turn, each into
`folder/<mode>`. The CLI (`compile-inspector modes`) and the app (Run ▸ Compare Modes) step through
the same `ModeRuns`, so both run the same captures, stop the same way on a cancel and report every
mode's outcome, its error included. Standard library only."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script

COMPARED_MODES = ("default", "reduce-overhead", "max-autotune")


@dataclass(frozen=True)
class ModeStep:
    """One capture of the sequence: its mode, session folder and settings."""

    mode: str
    session: Path
    settings: CaptureSettings


@dataclass(frozen=True)
class ModeOutcome:
    mode: str
    session: Path
    exit_status: int | None  # as a shell reports it (124 timeout, 128+N signal N); None or -1: never started
    error: dict | None  # {kind, message} when the capture did not complete
    stopped_by: str | None = None

    @property
    def complete(self) -> bool:
        return self.exit_status == 0 and self.error is None


class ModeRuns:
    """The sequence: `next_step()` says what to capture, `record()` takes how it ended. A cancel
    (`stopped_by == "cancelled"`) ends the sequence; any other failure moves on to the next mode."""

    def __init__(self, folder: Path, settings: CaptureSettings, modes=COMPARED_MODES):
        self.folder = folder
        self.settings = settings
        self.queue = list(modes)
        self.outcomes: list[ModeOutcome] = []

    def next_step(self) -> ModeStep | None:
        if not self.queue:
            return None
        mode = self.queue.pop(0)
        return ModeStep(mode, self.folder / mode, replace(self.settings, mode=mode))

    def record(self, step: ModeStep, exit_status: int | None, error: dict | None,
               stopped_by: str | None = None) -> ModeOutcome:
        outcome = ModeOutcome(step.mode, step.session, exit_status, error, stopped_by)
        self.outcomes.append(outcome)
        if stopped_by == "cancelled":
            self.queue.clear()
        return outcome

    def cancel(self) -> None:
        self.queue.clear()

    @property
    def sessions(self) -> dict[str, Path]:
        """The session of each mode run so far (one that could not start still has its manifest,
        which says why)."""
        return {outcome.mode: outcome.session for outcome in self.outcomes}


def run_modes(script: Path, args: list[str], folder: Path, settings: CaptureSettings, python: str | None = None,
              modes=COMPARED_MODES, on_tick=None, on_outcome=None) -> ModeRuns:
    """Capture `script` in each mode, one after another (blocking: the CLI's loop). Ctrl-C stops the
    capture under way and ends the sequence."""
    runs = ModeRuns(folder, settings, modes)
    while (step := runs.next_step()) is not None:
        try:
            process = CaptureProcess(plan_script(script, args, step.session, step.settings, python))
        except OSError as error:
            outcome = runs.record(step, None, {"kind": "cannot_start", "message": str(error)})
        else:
            try:
                process.wait(on_tick=on_tick)
            except KeyboardInterrupt:
                process.stop("cancelled")
                process.wait()
            outcome = runs.record(step, process.exit_code, process.error, process.stopped_by)
        if on_outcome:
            on_outcome(outcome)
    return runs
