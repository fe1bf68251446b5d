"""Build a large TORCH_TRACE log from a real one by repeating it with shifted frame ids.

Each copy's frame ids (envelopes, chromium compile ids, metrics compile ids) move past the previous
copy's, and every payload that changes gets a fresh md5, so the result reads as one long real run.

    python bench/make_big_log.py SOURCE.log OUT.log --mb 100
"""

from __future__ import annotations

import argparse
import hashlib
import re
from pathlib import Path

_FRAME = re.compile(rb'"frame_id": (\d+)')
_ID_TEXT = re.compile(rb'"compile_id": "(\d+)/')
_MD5 = re.compile(rb'"has_payload": "[0-9a-f]{32}"')
_TS = re.compile(rb'^"ts": (\d+(?:\.\d+)?)')


def shifted_copy(records: list[tuple[bytes, list[bytes]]], shift: int, ts_shift: float) -> bytes:
    """One copy of the log whose frame ids start at `shift` and whose events start `ts_shift` µs later."""
    out = []
    for envelope, payload in records:
        envelope = _FRAME.sub(lambda m: b'"frame_id": %d' % (int(m.group(1)) + shift), envelope)
        envelope = _ID_TEXT.sub(lambda m: b'"compile_id": "%d/' % (int(m.group(1)) + shift), envelope)
        if payload:
            payload = [_ID_TEXT.sub(lambda m: b'"compile_id": "%d/' % (int(m.group(1)) + shift), line)
                       for line in payload]
            payload = [b"\t" + _TS.sub(lambda m: b'"ts": %.1f' % (float(m.group(1)) + ts_shift), line[1:])
                       for line in payload]
            digest = hashlib.md5(b"\n".join(line[1:] for line in payload)).hexdigest().encode()
            envelope = _MD5.sub(b'"has_payload": "' + digest + b'"', envelope)
        out.append(envelope + b"\n" + b"".join(line + b"\n" for line in payload))
    return b"".join(out)


def split_records(data: bytes) -> list[tuple[bytes, list[bytes]]]:
    records: list[tuple[bytes, list[bytes]]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\t") and records:
            records[-1][1].append(line)
        elif line:
            records.append((line, []))
    return records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--mb", type=float, default=100)
    args = parser.parse_args()
    records = split_records(args.source.read_bytes())
    frames = max(int(m.group(1)) for env, _ in records for m in _FRAME.finditer(env)) + 1
    stamps = [float(m.group(1)) for _, payload in records for line in payload for m in [_TS.match(line[1:])] if m]
    span_us = (max(stamps) - min(stamps) + 1e6) if stamps else 0.0
    target = int(args.mb * 1024 * 1024)
    written = 0
    with open(args.out, "wb") as handle:
        copy = 0
        while written < target:
            chunk = shifted_copy(records, copy * frames, copy * span_us)
            handle.write(chunk)
            written += len(chunk)
            copy += 1
    print(f"{args.out}: {written / 1e6:.1f} MB, {copy} copies of {args.source.name}")


if __name__ == "__main__":
    main()
