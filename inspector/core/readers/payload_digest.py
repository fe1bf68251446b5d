"""The md5 of a TORCH_TRACE payload as torch computed it, and the md5 helper's program: run as a script
(`python -I -S payload_digest.py FD`, standard library only), it answers each `START END` line on its
input with the digest of those bytes of the log open at descriptor FD ("-" for a range the file no
longer holds), one line each, so the reader can share the work with a second core
(digest_helper.DigestHelper)."""

from __future__ import annotations

import hashlib
import os
import sys


def payload_digest(raw: bytes) -> str:
    """md5 of the payload lines `raw` with their tabs removed and joined by '\\n' (CRLF copies too),
    with one copy of the payload fewer (the leading tab is skipped through a view), as this runs over
    every payload of a log."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
    joined = raw.rstrip(b"\r\n").replace(b"\n\t", b"\n")
    return hashlib.md5(memoryview(joined)[1:] if joined.startswith(b"\t") else joined).hexdigest()


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
