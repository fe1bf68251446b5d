"""Runs inside the user's Python with the runner: records the code Dynamo writes for every frame it
compiles and every resume function after a break — its original and transformed bytecode, and both as
Python source where the decompiler depyf is importable — into the session's dynamo_code/ folder.
Standard library and torch only (depyf optional); loaded by file path, as options.py is.

What a TORCH_TRACE log already carries is disassembly of resume functions only; this adds the frames
themselves and readable Python. The hook returns nothing, so Dynamo runs the code it made unchanged,
and it only disassembles, which is cheap: decompiling costs far more a frame, which would land inside
torch's compile-time figures, so it waits for the interpreter's exit."""

from __future__ import annotations

import atexit
import dis
import json
from pathlib import Path

INDEX = "index.json"
MAX_TEXT_CHARS = 1 << 20  # a decompiled or disassembled text past this is cut (and says so)
MAX_ENTRIES = 10_000  # code objects recorded per run; past it the run goes on unrecorded (and says so)


def record_dynamo_code(torch, folder: Path, warn) -> None:
    """Register a bytecode hook that writes each (original, transformed) code pair Dynamo makes, and
    an index naming them by compile id. `warn(message)` reports what could not be done."""
    convert_frame = getattr(torch._dynamo, "convert_frame", None)
    register = getattr(convert_frame, "register_bytecode_hook", None)
    if register is None:
        warn("Dynamo's code not recorded: this torch has no convert_frame.register_bytecode_hook")
        return
    decompile, decompiler = _decompiler()
    folder.mkdir(parents=True, exist_ok=True)
    index = {"decompiler": decompiler, "entries": []}
    pending: list[tuple[int, dict, object, object]] = []  # (number, index entry, original code, transformed code)

    def write_index() -> None:
        temporary = folder / (INDEX + ".tmp")
        temporary.write_text(json.dumps(index, indent=1), encoding="utf-8")
        temporary.replace(folder / INDEX)

    def hook(old_code, new_code):
        try:
            entries = index["entries"]
            if len(entries) >= MAX_ENTRIES:
                return None
            number = len(entries)
            compile_id = _compile_id(torch)
            texts = {"ORIGINAL_BYTECODE": _disassembly(old_code), "MODIFIED_BYTECODE": _disassembly(new_code)}
            entry = {"compile_id": compile_id, "function": old_code.co_name, "file": old_code.co_filename,
                     "first_line": old_code.co_firstlineno, "files": _write(folder, number, texts)}
            entries.append(entry)
            if decompile is not None:
                pending.append((number, entry, old_code, new_code))
            if len(entries) == MAX_ENTRIES:
                warn(f"Dynamo's code recorded for the first {MAX_ENTRIES:,} code objects only")
            write_index()
        except Exception as error:  # recording must never change the compile
            warn(f"Dynamo's code not recorded for one frame: {type(error).__name__}: {error}")
        return None  # keep Dynamo's code as it is

    def decompile_pending() -> None:
        """At exit, after every measurement: each recorded pair as Python."""
        try:
            for number, entry, old_code, new_code in pending:
                texts = {"ORIGINAL_SOURCE": _decompiled(decompile, old_code),
                         "MODIFIED_SOURCE": _decompiled(decompile, new_code)}
                entry["files"].update(_write(folder, number, texts))
            pending.clear()
            write_index()
        except Exception as error:
            warn(f"Dynamo's code not decompiled: {type(error).__name__}: {error}")

    write_index()
    register(hook)
    if decompile is not None:
        atexit.register(decompile_pending)


def _write(folder: Path, number: int, texts: dict[str, str]) -> dict[str, str]:
    files = {}
    for kind, text in texts.items():
        name = f"{number}.{kind.lower()}.txt"
        (folder / name).write_text(_capped(text), encoding="utf-8")
        files[kind] = name
    return files


def _decompiler():
    """(decompile function or None, what the index says about it)."""
    try:
        import depyf
    except Exception as error:  # not installed, or broken in this Python: say so, record bytecode only
        return None, {"name": "depyf", "available": False,
                      "reason": f"depyf is not importable in this Python ({type(error).__name__}: {error}); "
                                "`pip install depyf` there to see Dynamo's code as Python source"}
    return depyf.decompile, {"name": "depyf", "available": True, "version": getattr(depyf, "__version__", None)}


def _compile_id(torch) -> str | None:
    try:
        current = torch._guards.CompileContext.current_compile_id()
    except Exception:
        return None
    return str(current) if current is not None else None


def _disassembly(code) -> str:
    return dis.Bytecode(code).dis()


def _decompiled(decompile, code) -> str:
    try:
        return decompile(code)
    except Exception as error:  # depyf cannot read every code object; the bytecode is still there
        return f"# depyf could not decompile {code.co_name}: {type(error).__name__}: {error}\n"


def _capped(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return text[:MAX_TEXT_CHARS] + f"\n# … cut: {len(text) - MAX_TEXT_CHARS:,} more characters\n"
