"""Where TORCH_TRACE logs are and how one is recognised: a file whose first lines are glog-prefixed
JSON records, and the logs of a folder (one per rank of a distributed job)."""

from __future__ import annotations

import re
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.safe_files import check_regular, open_regular

_GLOG_LINE = re.compile(rb"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]]*\] \{")
# How far into a file the first record is looked for: a BOM, leading NULs or a damaged first line
# (counted by the reader) must not hide a log; a file with no record this early is not a log.
HEAD_BYTES = 64 << 10
HEAD_LINES = 8
TRACE_LOG_PREFIX = "dedicated_log_torch_trace"  # what torch names its per-rank logs


def looks_like_trace_log(path: Path, root: Path | None = None) -> bool:
    """Whether one of the first lines of `path` is a TORCH_TRACE record. A BOM, NULs or a damaged
    line before it are let through (the reader counts them); prose, code or binary data are not."""
    try:
        with open_regular(path, root) as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    if not head:
        return path.name.startswith(TRACE_LOG_PREFIX)  # an empty log still opens, empty
    lines = [line for line in head.split(b"\n") if not line.startswith(b"\t")][:HEAD_LINES]  # not payload lines
    return any(_GLOG_LINE.match(line.lstrip(b"\xef\xbb\xbf\x00\r ")) for line in lines)


def find_trace_logs(folder: Path, depth: int = 3, root: Path | None = None,
                    problems: ReadProblems | None = None) -> list[Path]:
    """Trace logs in `folder` and up to `depth` levels below, one per rank, oldest first. Names that
    are not regular files inside `root` (FIFOs, devices, links out of the opened folder) are left out
    and counted in `problems`."""
    root = folder if root is None else root
    problems = ReadProblems() if problems is None else problems
    found: list[Path] = []
    for level in range(depth + 1):
        pattern = "/".join(["*"] * level + [f"{TRACE_LOG_PREFIX}*.log"])
        found.extend(path for path in sorted(folder.glob(pattern)) if _may_read(path, root, problems))
        if found:
            break
    if not found:
        found = [p for p in sorted(folder.glob("*.log")) + sorted(folder.glob("*.txt"))
                 if _may_read(p, root, problems) and looks_like_trace_log(p, root)]
    return found


def _may_read(path: Path, root: Path, problems: ReadProblems) -> bool:
    try:
        check_regular(path, root)
    except OSError as error:
        if path.is_dir() and not path.is_symlink():
            return False
        problems.add("unsafe_file", str(error))
        return False
    return True
