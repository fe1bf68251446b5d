"""Runs inside the user's Python with the runner: keeps a copy of every user source file the run's
compile stacks name, as it was when Dynamo compiled it, so a session opened after the script changed
still shows its markers on the lines that were compiled. Content-addressed (sources/<sha256>.txt, one
copy of a file however often it is named), size-capped, never executed. Standard library and torch
only; loaded by file path, as options.py is."""

from __future__ import annotations

import hashlib
import json
import os
import sysconfig
import traceback
from pathlib import Path

INDEX = "index.json"
MAX_FILE_BYTES = 4 << 20  # a bigger "source" file is not the user's hand-written code: named, not copied
MAX_TOTAL_BYTES = 64 << 20
MAX_FILES = 2_000


def library_roots(torch) -> tuple[str, ...]:
    """Folders whose files are not the user's: the standard library, installed packages, torch, ours."""
    paths = sysconfig.get_paths()
    roots = {paths.get(key) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots |= {os.path.dirname(os.path.dirname(torch.__file__)), os.path.dirname(os.path.abspath(__file__))}
    return tuple(sorted(os.path.join(os.path.realpath(root), "") for root in roots if root))


def record_sources(torch, folder: Path, warn, script: str) -> None:
    """Register a bytecode hook that copies the user's files on the stack of each compile (the frame
    compiled and every caller of it) the first time each is named. The hook returns nothing."""
    register = getattr(getattr(torch._dynamo, "convert_frame", None), "register_bytecode_hook", None)
    if register is None:
        warn("source files not kept: this torch has no convert_frame.register_bytecode_hook")
        return
    snapshot = SourceSnapshot(folder, library_roots(torch), warn)
    snapshot.add(script)  # the script, whether or not a frame of it compiles

    def hook(old_code, _new_code):
        try:
            snapshot.add(old_code.co_filename)
            for frame in traceback.extract_stack():
                snapshot.add(frame.filename)
        except Exception as error:  # keeping a copy must never change the compile
            warn(f"source files not kept for one compile: {type(error).__name__}: {error}")
        return None

    register(hook)


class SourceSnapshot:
    """sources/: one copy of each file by its content's hash, and index.json mapping each path as the
    stacks name it to its copy (or to why none was kept)."""

    def __init__(self, folder: Path, library: tuple[str, ...], warn):
        self.folder, self.library, self.warn = folder, library, warn
        self.index: dict[str, dict] = {}
        self.total = 0

    def add(self, name: str) -> None:
        if not name or name in self.index or name.startswith("<") or len(self.index) >= MAX_FILES:
            return
        real = os.path.realpath(name)
        if real.startswith(self.library) or not os.path.isfile(real):
            return
        self.index[name] = entry = {}
        size = os.path.getsize(real)
        if size > MAX_FILE_BYTES or self.total + size > MAX_TOTAL_BYTES:
            entry["skipped"] = f"{size:,} bytes: over the size kept per file or per session"
        else:
            with open(real, "rb") as handle:  # read as bytes, never imported
                data = handle.read(MAX_FILE_BYTES + 1)
            digest = hashlib.sha256(data).hexdigest()
            self.folder.mkdir(parents=True, exist_ok=True)
            copy = self.folder / f"{digest}.txt"
            if not copy.exists():
                copy.write_bytes(data)
                self.total += len(data)
            entry.update(sha256=digest, bytes=len(data), file=copy.name)
        temporary = self.folder / (INDEX + ".tmp")
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary.write_text(json.dumps(self.index, indent=1), encoding="utf-8")
        temporary.replace(self.folder / INDEX)
