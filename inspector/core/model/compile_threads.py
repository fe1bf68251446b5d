"""Which thread ran a stage, and which pipeline step an instant belongs to: the one rule the live stage
strip (`readers/stage_progress.py`, folding events as they come) and the summary's "where it went"
(`analysis/compile_wall.py`, sweeping a finished log) both apply, so they give each step one value.

Why a rule is needed at all: torch writes every stage of one process with pid 0 and tid 0, so the stages
of compile-worker threads (C++/Triton builds) interleave with the compiling thread's. Torch's compile
context lives on the compiling thread, so a stage naming a compile id is the compiling thread's; one
naming none, begun while a compile is open, may be either. It is a worker's when another such stage
overlapped it or the compiling thread began or ended a stage of its own inside it (the compiling thread
was waiting on it, or doing something else); otherwise the compiling thread ran it alone, and its time
is its own stage's, in that stage's step ("other" for a stage outside the pipeline)."""

from __future__ import annotations

from inspector.core.model.pipeline import pipeline_step

NO_COMPILE_ID = (None, "", "None")  # torch writes "None" for a stage outside any compile context
OTHER_STEP = "other"  # the step of the time spent in stages outside the five pipeline steps


def names_compile(compile_id) -> bool:
    """Whether a stage's compile id names a compile (then the compiling thread ran it)."""
    return compile_id not in NO_COMPILE_ID


def step_of(stage_name: str) -> str:
    """The step an instant spent innermost in this stage belongs to."""
    return pipeline_step(stage_name) or OTHER_STEP


class LooseStages:
    """The stages naming no compile id begun while a compile is open, until each ends; `end` says
    whether it ran on a worker. Fed in time order: `begin`, `end`, and `compiling_thread_moved` for
    each begin or end of a stage that names a compile id."""

    def __init__(self) -> None:
        self._open: list[list] = []  # [key, alone so far], in the order begun

    def begin(self, key) -> None:
        for entry in self._open:
            entry[1] = False  # another such stage began inside it: two threads at once
        self._open.append([key, not self._open])

    def compiling_thread_moved(self) -> None:
        for entry in self._open:
            entry[1] = False

    def latest(self, matches):
        """The latest-begun open stage's key that `matches` accepts, or None."""
        return next((entry[0] for entry in reversed(self._open) if matches(entry[0])), None)

    def end(self, key) -> bool:
        """Whether the latest-begun open stage under `key` ran on a worker (it is then closed)."""
        entry = next(entry for entry in reversed(self._open) if entry[0] == key)
        self._open.remove(entry)
        return not entry[1]
