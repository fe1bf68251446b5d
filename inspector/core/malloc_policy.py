"""glibc malloc's thresholds, held fixed while logs are read (the app and the command line).

glibc serves a block of at least its mmap threshold (128 KiB at first) with a mapping of its own, and
when such a block is freed it raises the threshold to that block's size (up to 32 MiB), so later
blocks of the size come from the heap instead. The reader's 2 MiB chunks and a big payload's copies
then land in the heap, and whether the heap shrinks again depends on the order its blocks were freed:
one log's summary peaked at 41 or 52 MiB from run to run (the 110 MB Mixtral bench log: 0.39× or
0.50× the log's size, against a target of 0.5×).

Held at 4 MiB, above a read chunk (chunks are reused from the heap rather than mapped and faulted in
afresh: a threshold below them cost 2.5–3 s on a 1 GB log), with the heap given back once 4 MiB of
its top is free, every run peaks the same, at the low figure."""

from __future__ import annotations

import sys

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 4 << 20


def hold_malloc_thresholds() -> bool:
    """Fix glibc's mmap and trim thresholds for this process; False where the C library is not glibc
    (another allocator keeps its own policy) or refuses."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):  # musl and others: their mallopt does nothing
            return False
        return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES)) and bool(
            libc.mallopt(M_TRIM_THRESHOLD, THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False



def give_back_free_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's malloc_trim), at the end of a phase that
    made and dropped a lot: reading a log (its chunks, its envelopes parsed and let go) and making its
    spans (an event each). Freed memory between blocks still in use stays resident otherwise, and what
    comes next adds to it: 3–4 MB of the 105 MB synthetic bench log's peak. A few milliseconds."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
