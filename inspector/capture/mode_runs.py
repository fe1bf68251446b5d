"""Mode comparison's captures: one script captured once per compile mode, in turn, each into
`folder/<mode>`. The CLI (`compile-inspector modes`) and the app (Run ▸ Compare Modes) step through
the same `ModeRuns`, so both run the same captures, stop the same way on a cancel and report every
mode's outcome, its error included. Each mode compiles cold, in its own empty compile caches (a mode
run after another would otherwise load the first one's FX graphs and kernels and look several times
cheaper to compile), and, when asked, once more warm from that cache. Standard library only."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path

from inspector.capture.launcher import CapturePlan, CaptureProcess, CaptureSettings, plan_script
from inspector.capture.options import COMPARED_MODES

CACHES = "compile-caches"  # beside the modes' sessions: one folder per mode, emptied before its cold run
WARM_SUFFIX = "-warm"  # the session of a mode's second, warm, capture: folder/<mode>-warm


def cache_env(cache: Path) -> dict[str, str]:
    """The environment that points every compile cache torch 2.x keeps on disk into `cache`: Inductor's
    (FX graph cache `fxgraph/`, AOTAutograd cache `aotautograd/`, C++ builds, autotuning) and Triton's."""
    return {"TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"), "TRITON_CACHE_DIR": str(cache / "triton")}


@dataclass(frozen=True)
class ModeStep:
    """One capture of the sequence: its mode, session folder and settings."""

    mode: str
    session: Path
    settings: CaptureSettings
    cache: Path  # this mode's compile caches
    warm: bool = False  # the second capture, from the cache the cold one filled

    def plan(self, script: Path, args: list[str], python: str | None = None) -> CapturePlan:
        """The capture of this step, its compile caches this mode's own; a cold step empties them first."""
        if not self.warm:
            shutil.rmtree(self.cache, ignore_errors=True)
        self.cache.mkdir(parents=True, exist_ok=True)
        plan = plan_script(script, args, self.session, self.settings, python)
        plan.env.update(cache_env(self.cache))
        return plan


@dataclass(frozen=True)
class ModeOutcome:
    mode: str
    session: Path
    exit_status: int | None  # as a shell reports it (124 timeout, 128+N signal N); None or -1: never started
    error: dict | None  # {kind, message} when the capture did not complete
    stopped_by: str | None = None
    warm: bool = False

    @property
    def complete(self) -> bool:
        return self.exit_status == 0 and self.error is None


class ModeRuns:
    """The sequence: `next_step()` says what to capture, `record()` takes how it ended. A cancel
    (`stopped_by == "cancelled"`) ends the sequence; any other failure moves on to the next mode."""

    def __init__(self, folder: Path, settings: CaptureSettings, modes=COMPARED_MODES, warm: bool = False):
        self.folder = folder
        self.settings = settings
        self.queue = [(mode, again) for mode in modes for again in ((False, True) if warm else (False,))]
        self.outcomes: list[ModeOutcome] = []

    def next_step(self) -> ModeStep | None:
        if not self.queue:
            return None
        mode, warm = self.queue.pop(0)
        return ModeStep(mode, self.folder / (mode + WARM_SUFFIX if warm else mode), replace(self.settings, mode=mode),
                        self.folder / CACHES / mode, warm)

    def record(self, step: ModeStep, exit_status: int | None, error: dict | None,
               stopped_by: str | None = None) -> ModeOutcome:
        outcome = ModeOutcome(step.mode, step.session, exit_status, error, stopped_by, step.warm)
        self.outcomes.append(outcome)
        if stopped_by == "cancelled":
            self.queue.clear()
        return outcome

    def cancel(self) -> None:
        self.queue.clear()

    @property
    def sessions(self) -> dict[str, Path]:
        """The session of each mode's cold capture so far (one that could not start still has its
        manifest, which says why)."""
        return {outcome.mode: outcome.session for outcome in self.outcomes if not outcome.warm}

    @property
    def warm_sessions(self) -> dict[str, Path]:
        """The session of each mode's warm capture so far."""
        return {outcome.mode: outcome.session for outcome in self.outcomes if outcome.warm}


def run_modes(script: Path, args: list[str], folder: Path, settings: CaptureSettings, python: str | None = None,
              modes=COMPARED_MODES, on_tick=None, on_outcome=None, warm: bool = False) -> ModeRuns:
    """Capture `script` in each mode, one after another (blocking: the CLI's loop). Ctrl-C stops the
    capture under way and ends the sequence."""
    runs = ModeRuns(folder, settings, modes, warm)
    while (step := runs.next_step()) is not None:
        try:
            process = CaptureProcess(step.plan(script, args, python))
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
