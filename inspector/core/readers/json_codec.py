"""JSON decoding for the readers: orjson when installed (the ``fast`` extra), the standard library
otherwise, with the same results either way.

orjson is faster on the tens of thousands of envelopes and payloads a big log holds (docs/benchmarks.md,
"Trace reader on ~100 MB logs"), but it is
stricter than `json`: it rejects NaN/Infinity, lone surrogate escapes and invalid UTF-8. Text it
refuses is decoded again by `json`, so the accelerator does not change what a log reads as. The one
difference left: an integer outside the 64-bit range reads as a float (torch writes none; finding
such runs of digits first would cost more than orjson saves). Set TCI_PURE_JSON=1 to turn it off.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator


def _import_orjson():
    """orjson, or None where it is not installed (the core needs nothing beyond the standard library).

    orjson's module init takes for granted that its own imports succeed, and crashes the process
    (SIGSEGV) where one fails (ijl/orjson#310): a Ctrl-C that lands in them raises KeyboardInterrupt
    there. So a Ctrl-C during this import is held until it is done, then delivered as it would have
    been (Python runs signal handlers on the main thread only, and one set outside Python is left)."""
    held: list[int] = []
    previous = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not None:
        try:
            previous = signal.signal(signal.SIGINT, lambda signum, _frame: held.append(signum))
        except ValueError:  # not the main thread after all (threading first imported on another one)
            previous = None
    holding = previous is not None
    try:
        import orjson
    except ImportError:
        orjson = None
    finally:
        if holding:
            signal.signal(signal.SIGINT, previous)
    if held:
        signal.raise_signal(signal.SIGINT)
    return orjson


orjson = _import_orjson()

ACCELERATED = orjson is not None and not os.environ.get("TCI_PURE_JSON")
_TOO_DEEP = "depth limit exceeded"  # orjson's words for nesting past its limit of 1,024


def loads(data: bytes | memoryview | str):
    """Decode `data` like `json.loads` does (bytes as strict UTF-8); raises ValueError on text that
    is not JSON, and on nesting too deep to decode (the stdlib decoder recurses: 100,000 nested
    brackets would raise RecursionError; orjson refuses them itself)."""
    if ACCELERATED:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as error:
            if str(error).startswith(_TOO_DEEP):  # json would recurse ~1,000 levels deep in C before failing,
                raise ValueError("JSON nested too deeply") from None  # where a collector pass can run finalisers
            # NaN, Infinity, lone surrogates, bad UTF-8, or really not JSON: json decides
    if isinstance(data, memoryview):
        data = data.tobytes()
    if isinstance(data, bytes):  # strict UTF-8, as orjson reads it (json would guess UTF-16 from NULs)
        data = data.decode("utf-8")
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# Items of a list encoded by one call of `json`'s C encoder, which holds the GIL throughout: the index
# of a big log encoded in one call would hold it long enough to freeze the app's UI thread.
DUMPS_SLICE = 20_000


def dumps(value) -> bytes:
    """Compact JSON of plain data as ASCII bytes, by `json`: orjson would write NaN as null and
    refuse integers beyond 64 bits, and `loads` must read back exactly what was written."""
    return "".join(_pieces(value)).encode("ascii")


def dumps_parts(value) -> list[bytes]:
    """The bytes of `dumps(value)` in parts, none longer than the encoding of DUMPS_SLICE items:
    a dict of string keys is written value by value and a long list a slice at a time, so other
    threads get the GIL in between, and a writer need never join the whole."""
    return [piece.encode("ascii") for piece in _pieces(value)]


def _pieces(value) -> Iterator[str]:
    if type(value) is dict and value and all(type(key) is str for key in value):
        yield "{"
        for number, (key, item) in enumerate(value.items()):
            yield ("," if number else "") + _plain(key) + ":"
            yield from _pieces(item)
        yield "}"
    elif type(value) is list and len(value) > DUMPS_SLICE:
        yield "["
        for start in range(0, len(value), DUMPS_SLICE):
            yield ("," if start else "") + _plain(value[start:start + DUMPS_SLICE])[1:-1]
        yield "]"
    else:
        yield _plain(value)


def _plain(value) -> str:
    return json.dumps(value, separators=(",", ":"))
