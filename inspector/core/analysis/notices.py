"""What a reader must see before any figure: code that silently runs eagerly (a suppressed compile
error, the recompile limit, a frame skipped), a compile error raised to the caller, and a break count
that torch's own counters contradict. The text summary
prints these first and the dashboard shows them under its headline, because every figure below them
reads differently once they are known."""

from __future__ import annotations

import platform
from dataclasses import dataclass

from inspector.core.analysis.break_types import failure_type
from inspector.core.analysis.fallbacks import failure
from inspector.core.model.records import Record
from inspector.core.model.session import Session
from inspector.core.process_state import start_time
from inspector.core.readers.break_reasons import counted_by_torch, is_frame_skip


@dataclass(frozen=True)
class CountersCheck:
    """The log's graph breaks against torch's own counters of the same run (a capture keeps them):
    breaks with breaks, frame skips apart, since a skipped generator frame leaves no record in the log."""

    torch_breaks: int | None  # None: the run kept no counters
    torch_frame_skips: dict[str, int]
    log_breaks: int

    @property
    def agree(self) -> bool | None:
        return None if self.torch_breaks is None else self.torch_breaks == self.log_breaks

    @property
    def note(self) -> str | None:
        if self.agree is not False:
            return None
        return (f"torch's counters saw {self.torch_breaks} graph break(s) (frame skips apart), the log shows "
                f"{self.log_breaks}: figures built on breaks follow the log")


def counters_check(session: Session) -> CountersCheck:
    """torch's counters (of the measured run, else of the whole process from torch's record of a
    captured script) against the log's breaks, where a compile that failed at a break of its own type
    (fullgraph=True, no fake kernel) counts as the one break torch counts for it."""
    counters = session.results.counters if session.results is not None else {}
    recorded = not counters and session.torch_record is not None  # torch's record: no counter is a count of 0
    if recorded:
        counters = session.torch_record.counters
    torch_breaks, skips = counted_by_torch(counters) if counters or recorded else (None, {})
    failed_at_break = sum(1 for unit in session.units if unit.fail_type and not unit.breaks
                          and not is_frame_skip(unit.fail_reason or "") and failure_type(unit, None) is not None)
    return CountersCheck(torch_breaks, skips, len(session.breaks) + failed_at_break)


@dataclass(frozen=True)
class Notice(Record):
    """Something to read before any figure (an eager fallback, a break count torch contradicts)."""

    key: str  # fallback | counters | capture
    compile_id: str | None
    text: str


def notices(session: Session, counters_note: str | None) -> list[Notice]:
    """The fallbacks of `session` in unit order, then `counters_note` (the break-count check's
    disagreement with torch, None when they agree or the run kept no counters)."""
    ranked = len(session.ranks) > 1  # [0/0] of rank 0 and [0/0] of rank 2 are two fallbacks
    found = [Notice("fallback", str(unit.compile_id),
                    (f"rank {unit.rank} " if ranked and unit.rank is not None else "")
                    + f"{unit.compile_id} {unit.function or '?'}"
                    + (f" ({unit.location})" if unit.location else "") + f" {failed.text}")
             for unit in session.units if (failed := failure(unit)) is not None]
    if counters_note:
        found.append(Notice("counters", None, counters_note))
    capture = capture_state(session)
    if capture:
        found.append(Notice("capture", None, capture))
    return found


def capture_state(session: Session) -> str | None:
    """What a capture that never recorded its end is doing: still running on this machine, or left
    behind by a launcher that died (killed, the machine went down). None when it ended, or for a
    session of a version that did not record its launcher."""
    manifest = session.manifest
    if manifest is None or manifest.ended is not None or manifest.launcher is None:
        return None
    launcher = manifest.launcher
    pid, node = launcher.pid, launcher.node
    if node != platform.node():
        return (f"The capture never recorded its end: it was still running on {node}, or its launcher died there. "
                f"What it had captured is shown.")
    if launcher.start is not None and start_time(pid) == launcher.start:
        return f"This capture is still running (launcher pid {pid}): open it again later for the rest."
    return (f"The capture's launcher (pid {pid}) died before the run ended — killed, or the machine went down; "
            f"the traced program was stopped with it. What it had captured is shown.")
