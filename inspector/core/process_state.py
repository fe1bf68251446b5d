"""Whether a process is alive, told apart from a later one that got its pid: its parent and start
time (clock ticks after boot) from /proc. Linux only; elsewhere nothing is known (None). The capture
uses it to follow the processes a run started; a reader uses it to tell a capture still running from
one whose launcher died."""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process, None when it is gone or a zombie."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (OSError, ValueError):
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp … starttime is the 20th
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return int(fields[1]), int(fields[19])


def start_time(pid: int) -> int | None:
    info = stat(pid)
    return info[1] if info else None
