"""How the command line writes: text that may quote a log, shown safely, and strict JSON."""

from __future__ import annotations

import json
import sys


def say(text: object = "", file=None) -> None:
    """Print text that may quote a log: control and bidi characters are shown as escapes, so a log
    cannot retitle, clear or reorder the terminal."""
    from inspector.core.outputs.plain_text import show_controls

    print(show_controls(str(text)), file=file or sys.stdout)


def dump_json(document) -> None:
    """Strict JSON on stdout: non-finite numbers a log may carry become null (JSON has no Infinity)."""
    from inspector.core.outputs.summary import finite

    json.dump(finite(document), sys.stdout, indent=1, allow_nan=False)
    print()
