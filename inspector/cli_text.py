"""How the command line writes: text that may quote a log, shown safely, and strict JSON."""

from __future__ import annotations

import json
import sys


def say(text: object = "", file=None) -> None:
    """Print text that may quote a log: control and bidi characters are shown as escapes, so a log
    cannot retitle, clear or reorder the terminal."""
    from inspector.core.outputs.plain_text import show_controls

    print(show_controls(str(text)), file=file or sys.stdout)


def say_interrupted() -> int:
    """Ctrl-C ends a command with one line and 130, the shell's code for SIGINT. CPython marks a
    KeyboardInterrupt that left an `exec` of source text as unhandled even once it is caught (every
    dataclass defined by an import the Ctrl-C cut short runs one), and `python -m inspector` would then
    end by SIGINT instead of with the code returned here (bpo-1054041, bpo-41602). Running source text
    again clears the mark: an empty one, nothing from any input."""
    print("compile-inspector: interrupted", file=sys.stderr)
    exec("")  # noqa: S102
    return 130


def dump_json(document) -> None:
    """Strict JSON on stdout: non-finite numbers a log may carry become null (JSON has no Infinity)."""
    from inspector.core.outputs.summary import finite

    json.dump(finite(document), sys.stdout, indent=1, allow_nan=False)
    print()
