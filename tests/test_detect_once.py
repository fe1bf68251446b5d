"""Detect once, at the edge: a path becomes a `Source` where it comes in (the CLI's arguments, the
app's open, `session_loader.open_path` for scripts and tests), and everything past that takes the
`Source`. A function that takes "a path or a Source" lets detection run again at any level, so a
caller cannot tell where a path was decided (or decided twice, differently, as a log grows); this
finds such a function by its signature or by its `isinstance(…, Source)` test."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATH_OR_SOURCE = [
    re.compile(r"\bSource\s*\|[^:=)\n]*\bPath\b"),  # source: Source | Path
    re.compile(r"\bPath\s*\|[^:=)\n]*\bSource\b"),  # path: str | Path | Source
    re.compile(r"isinstance\(\w+,\s*Source\)"),  # source if isinstance(source, Source) else detect(source)
]


def test_no_function_takes_a_path_or_a_source():
    found = [f"{path.relative_to(ROOT).as_posix()}: {line.strip()}"
             for path in sorted((ROOT / "inspector").rglob("*.py"))
             for line in path.read_text(encoding="utf-8").splitlines()
             if any(pattern.search(line) for pattern in PATH_OR_SOURCE)]
    assert not found, f"detected again past the edge: {found}"
