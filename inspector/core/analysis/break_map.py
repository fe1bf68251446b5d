"""The break map: the whole run as compiled regions and the eager gaps between them, in program
order, one row per compilation (the first compile of every frame, then the recompiles). A region is
sized by its run time when a profile measured it, else by its compile time. A distributed run has a
map per rank: every rank runs the same program, so rows of several ranks side by side would mix runs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.core.analysis.profile_ops import COMPILED_REGION
from inspector.core.model.session import CompileUnit, GraphBreak, Rank, Session

_REGION = re.compile(rf"^{COMPILED_REGION}: (?P<id>\d+/\d+)")


@dataclass(frozen=True)
class CompiledRegion:
    """A unit's compiled code on the break map, with its time (run time from the profile, else compile time)."""

    unit: CompileUnit
    seconds: float | None
    measured: bool  # run time from the profile (True) or compile time (False)


@dataclass(frozen=True)
class Gap:
    """Eager code between two compiled regions: the graph break that caused it, and the resume
    function Dynamo compiled to go on after it (None where the log names none)."""

    brk: GraphBreak
    resume: CompileUnit | None = None


_RESUME_AT = re.compile(r"^torch_dynamo_resume_in_\w+?_at_(?P<line>\d+)$")


def resume_units(units: list[CompileUnit]) -> dict[tuple, CompileUnit]:
    """(rank, compile number, file, line it resumes at) → the unit of that resume function: Dynamo
    names one after the line it resumes at (`torch_dynamo_resume_in_forward_at_16`)."""
    found = {}
    for unit in units:
        match = _RESUME_AT.match(unit.function or "")
        if match and unit.location and unit.compile_id.autograd is None:
            found.setdefault((unit.rank, unit.compile_id.compile, unit.location.file, int(match["line"])), unit)
    return found


def resume_after(brk: GraphBreak, unit: CompileUnit, resumes: dict[tuple, CompileUnit]) -> CompileUnit | None:
    """The unit of the resume function that goes on after `brk` (a break of `unit`): the one that
    resumes at the break's line, in the same file, rank and compile."""
    where = brk.location
    if where is None or where.line is None:
        return None
    return resumes.get((unit.rank, unit.compile_id.compile, where.file, where.line))


def region_run_times(session: Session) -> dict[str, float]:
    """Compile id ('0/1') → seconds per call inside that compiled region, from the compiled profile."""
    profile = session.results.profile.get("compiled") if session.results is not None else None
    if profile is None:
        return {}
    runs = profile.runs or 1
    times = {}
    for row in profile.ops:
        match = _REGION.match(row.name)
        if match:
            times[match["id"]] = row.time("cpu_total_us", row.time("self_cpu_us")) / 1e6 / runs
    return times


def break_map(session: Session, rank: Rank | None = None) -> list[list[CompiledRegion | Gap]]:
    """The rows of `rank` (one of `session.ranks`), or of every rank when none is given."""
    run_times = region_run_times(session)
    rows: dict[tuple, list[CompileUnit]] = {}
    for unit in rank.units if rank is not None else session.units:
        rows.setdefault((unit.rank, unit.compile_id.autograd, unit.compile_id.compile), []).append(unit)
    resumes = resume_units(rank.units if rank is not None else session.units)
    result = []
    for key in sorted(rows, key=lambda k: (k[0] or 0, k[1] or -1, k[2])):
        row: list[CompiledRegion | Gap] = []
        for unit in sorted(rows[key], key=lambda u: u.compile_id.frame):
            own = f"{unit.compile_id.frame}/{unit.compile_id.compile}"
            measured = own in run_times
            seconds = run_times.get(own, unit.metric("entire_frame_compile_time_s"))
            row.append(CompiledRegion(unit, seconds, measured))
            row += [Gap(brk, resume_after(brk, unit, resumes)) for brk in unit.breaks[:1]]  # the break ending it
        result.append(row)
    return result
