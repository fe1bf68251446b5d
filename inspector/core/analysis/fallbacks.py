"""What became of a compile that failed: torch raised the error to the caller, or ran the frame
eagerly without a word (a frame skipped, an error suppressed) — and why, at the user's failing line.

torch decides in convert_frame: `Unsupported` and `UserError` are soft failures (the frame runs
eagerly) unless the code was compiled with fullgraph=True, which the log does not record; any other
error is raised unless `torch._dynamo.config.suppress_errors` is set (the log records that)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PureWindowsPath

from inspector.core.model.session import CompileUnit
from inspector.core.model.source_location import SourceLocation
from inspector.core.readers.break_reasons import (broken_in_loop, is_frame_skip, is_library_file, missing_fake_impl,
                                                  user_code_frames)

SOFT_FAILURES = ("Unsupported", "UserError")  # convert_frame's `soft_fail`: the frame falls back to eager

RAISED = "raised"  # torch raised the error to the code that called the compiled function
EAGER = "eager"  # the frame runs eagerly, and torch said so only in its logs
EAGER_UNLESS_FULLGRAPH = "eager unless fullgraph"  # the log cannot tell these two apart


@dataclass(frozen=True)
class Failure:
    """One failed compile unit: what torch did with the failure, its cause in one line, the user's
    line that failed (not the function's def line), and the fix when the cause has a known one."""

    unit: CompileUnit
    outcome: str  # RAISED | EAGER | EAGER_UNLESS_FULLGRAPH
    cause: str
    where: SourceLocation | None
    fix: str | None = None

    @property
    def runs_eagerly(self) -> bool:
        return self.outcome != RAISED

    @property
    def outcome_text(self) -> str:
        if self.outcome == RAISED:
            return (f"RAISED {self.unit.fail_type} to the caller (no eager fallback: the call failed, unless "
                    f"the program caught the error)")
        if self.outcome == EAGER:
            return "runs EAGERLY (torch fell back without raising)"
        return ("runs EAGERLY (torch falls back without raising), unless it was compiled with fullgraph=True: then "
                f"it raised {self.unit.fail_type} (the log does not record which)")

    @property
    def text(self) -> str:
        """'runs EAGERLY (…): CAUSE at FILE:LINE `code`. Fix: …' — the outcome first."""
        at = ""
        if self.where is not None:
            at = f" at {PureWindowsPath(self.where.file).name}:{self.where.line}"
            at += f" `{self.where.code}`" if self.where.code else ""
        return f"{self.outcome_text}: {self.cause}{at}" + (f". Fix: {self.fix}" if self.fix else "")


def failure(unit: CompileUnit) -> Failure | None:
    """What torch did with `unit`'s failed compile (None when it did not fail)."""
    if not unit.fail_type:
        return None
    reason = unit.fail_reason or ""
    where = _failing_line(unit)
    looped = broken_in_loop(reason)
    if looped:
        code = f"`{where.code}`" if where is not None and where.code else "the call that breaks the graph"
        return Failure(unit, EAGER, f"torch skipped the whole frame: a graph break inside a for/while loop (GB7000), "
                                    f"caused by: {looped}", where,
                       f"move {code} out of the loop (or remove what breaks the graph there): torch cannot resume a "
                       f"graph inside a loop, so one break there runs the whole function eagerly")
    op = missing_fake_impl(reason)
    cause = (f"no fake impl registered for `{op}`: torch.compile traces with fake tensors and cannot know what "
             f"the op returns" if op else unit.fail_summary or unit.fail_type)
    fix = (f"register one with `torch.library.register_fake(\"{op}\")` (for a `torch.library.custom_op`: "
           f"`@{op.rpartition('::')[2]}.register_fake`), a function returning empty tensors of the output's shape "
           f"and dtype" if op else None)
    if unit.metrics.get("config_suppress_errors") is True or is_frame_skip(reason):
        outcome = EAGER
    elif unit.fail_type in SOFT_FAILURES:
        outcome = EAGER_UNLESS_FULLGRAPH
    else:
        outcome = RAISED
    return Failure(unit, outcome, cause, where, fix)


def _failing_line(unit: CompileUnit) -> SourceLocation | None:
    """The user's line the compile failed at: a break of the unit there, the innermost user frame of
    the error's `from user code:` part, or the line compilation_metrics names when it is the user's."""
    line = unit.metric("fail_user_frame_lineno")
    file = unit.metrics.get("fail_user_frame_filename")
    for brk in unit.breaks:
        if brk.location is not None and (line is None or brk.location.line == line):
            return brk.location
    for artifact in unit.artifacts:
        if artifact.name == "dynamo_error":
            frames = [frame for frame in user_code_frames(artifact.text) if not is_library_file(frame[0])]
            if frames:
                return SourceLocation(*frames[-1])
    if isinstance(file, str) and line is not None and not is_library_file(file):
        return SourceLocation(file, int(line), None, None)
    return None
