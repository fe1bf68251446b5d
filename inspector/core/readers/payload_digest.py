"""The md5 of a TORCH_TRACE payload as torch computed it, and the md5 helper's program: run as a script
(`python -I -S payload_digest.py FD`, standard library only), it answers each `START END` line on its
input with the digest of those bytes of the log open at descriptor FD ("-" for a range the file no
longer holds), one line each, so the reader can share the work with a second core
(digest_helper.DigestHelper)."""

from __future__ import annotations

import hashlib
import os
import sys


def strip_tabs(raw: bytes) -> bytes:
    """Payload bytes as torch hashed them: each line's leading tab removed, the lines joined by '\\n'
    (CRLF copies too). Torch starts every line of a payload with a tab (the scanner ends a payload at
    the first line that does not), so where the payload holds no tab of its own, nearly always,
    deleting every tab gives the same bytes in one pass, where replacing each newline and tab copies
    the payload a line at a time (docs/benchmarks.md, "The run history's digest worked out ahead");
    the count of lines tells which case it is."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
    raw = raw.rstrip(b"\r\n")
    leading = raw.startswith(b"\t")
    stripped = raw.translate(None, b"\t")
    if len(raw) - len(stripped) == raw.count(b"\n") + leading:
        return stripped
    return (raw[1:] if leading else raw).replace(b"\n\t", b"\n")


def payload_digest(raw: bytes) -> str:
    """md5 of the payload lines `raw` as torch hashed them (`strip_tabs`); this runs over every payload
    of a log."""
    return hashlib.md5(strip_tabs(raw)).hexdigest()


def main(fd: int) -> None:
    # At the reader's own priority: every digest it answers is one the reader does not work out, so on a
    # machine loaded by others it earns the read a second share of the CPU (at the lowest priority it
    # would get next to none there, and the reader would do all the work itself).
    for line in sys.stdin.buffer:
        if not line.endswith(b"\n"):
            break
        start, end = map(int, line.split())
        raw = os.pread(fd, end - start, start)
        os.write(1, (payload_digest(raw) if len(raw) == end - start else "-").encode() + b"\n")


if __name__ == "__main__":
    main(int(sys.argv[1]))
