"""JSON decoding for the readers: orjson when installed (the ``fast`` extra), the standard library
otherwise, with the same results either way.

orjson is 3–5× faster on the tens of thousands of envelopes and payloads a big log holds, but it is
stricter than `json`: it rejects NaN/Infinity, lone surrogate escapes and invalid UTF-8. Text it
refuses is decoded again by `json`, so the accelerator does not change what a log reads as. The one
difference left: an integer outside the 64-bit range reads as a float (torch writes none; finding
such runs of digits first would cost more than orjson saves). Set TCI_PURE_JSON=1 to turn it off.
"""

from __future__ import annotations

import json
import os

try:
    import orjson
except ImportError:  # the core needs nothing beyond the standard library
    orjson = None

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


def dumps(value) -> bytes:
    """Compact JSON of plain data as ASCII bytes, by `json`: orjson would write NaN as null and
    refuse integers beyond 64 bits, and `loads` must read back exactly what was written."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")
