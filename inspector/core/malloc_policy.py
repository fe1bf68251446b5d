"""Free heap memory handed back to the system at the end of a phase that made and dropped a lot.

glibc serves a block of at least its mmap threshold (128 KiB at first) with a mapping of its own, and
when such a block is freed it raises the threshold to that block's size (up to 32 MiB), so later blocks
of the size come from the heap instead. The reader's 2 MiB chunks, a big payload's copies and the
envelopes it parses and lets go then leave free pages between blocks still in use, and those pages
stay resident: what comes next adds to them, so one log's peak varies from run to run and a log of
small records keeps megabytes it does not use (docs/benchmarks.md holds the measurements).

Handing them back (malloc_trim) after a log is read and after its stage spans are made costs little,
and every run then peaks the same, at the low figure. Holding the thresholds fixed
instead (mallopt) does as much for memory but costs a noticeable share of a read: chunks are trimmed and
faulted in afresh."""

from __future__ import annotations

import sys


# A phase over less of a log than this leaves too little behind to matter, and trimming after each of a
# job's hundreds of small rank logs costs system time for nothing (the pages, handed back, are faulted in
# again by the next log).
MIN_BYTES = 16 << 20


def give_back_free_memory(log_bytes: int) -> None:
    """Return the heap's free pages to the system (glibc's malloc_trim) after a phase over `log_bytes`
    of a log, when that is enough to matter; nothing where the C library is not glibc."""
    if log_bytes < MIN_BYTES or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: its allocator keeps its own policy
        pass
