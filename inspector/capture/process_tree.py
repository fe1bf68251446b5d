"""Every process a capture started, so that a timeout or a cancel leaves none running: the runner's
process group, its descendants by parent links (also those that left the group with
`start_new_session`), and any process that carries the capture's mark in its environment (so a
double-forked daemon whose parent is gone is found too). Linux reads /proc; elsewhere only the
process group is signalled. Standard library only."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass

from inspector.core.process_state import PROC
from inspector.core.process_state import stat as _stat

MARK = "TORCH_COMPILE_INSPECTOR_CAPTURE"


@dataclass(frozen=True)
class Member:
    """A process of the tree; `start` (clock ticks after boot) tells it from a later one with its pid."""

    pid: int
    start: int


def new_mark() -> str:
    return secrets.token_hex(8)


def _carries(pid: int, marker: bytes) -> bool:
    try:
        return marker in (PROC / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:  # another user's process, or gone
        return False


def members(root: int | None, mark: str | None, since: int = 0) -> set[Member]:
    """The live processes of the tree under `root` (root included; None once the root has been
    reaped, as its pid may then belong to someone else) and those carrying `mark` (only processes
    started at or after `since` are read for it: older ones cannot carry it)."""
    if not PROC.is_dir():
        return set()
    table: dict[int, tuple[int, int]] = {}
    mine = os.getuid()
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid != mine:
                    continue
            except OSError:
                continue
            info = _stat(int(entry.name))
            if info:
                table[int(entry.name)] = info
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, queue = set(), [root] if root is not None else []
    while queue:
        pid = queue.pop()
        if pid in table and pid not in found:
            found.add(pid)
            queue.extend(children.get(pid, ()))
    if mark:
        marker = f"{MARK}={mark}".encode()
        for pid in table.keys() - found - {os.getpid()}:
            if table[pid][1] >= since and _carries(pid, marker):
                found.add(pid)
                queue = list(children.get(pid, ()))
                while queue:  # a marked process's own children may have been started with a clean environment
                    child = queue.pop()
                    if child not in found:
                        found.add(child)
                        queue.extend(children.get(child, ()))
    return {Member(pid, table[pid][1]) for pid in found}


def signal_tree(root: int | None, known: set[Member], sig: int) -> None:
    """Send `sig` to the process group led by `root` (unless None) and to each of `known` still alive
    as itself."""
    if root is not None:
        try:
            os.killpg(root, sig)
        except OSError:  # the group is gone, or not ours
            pass
    for member in known:
        info = _stat(member.pid)
        if info and info[1] == member.start:
            try:
                os.kill(member.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def alive(known: set[Member]) -> set[Member]:
    return {member for member in known if (info := _stat(member.pid)) and info[1] == member.start}

