"""The texts of a TORCH_TRACE log's artifacts, read back from the log when first asked for: objects of
two slots rather than closures (a closure each costs more memory, and a log holds thousands of
artifacts), which also say what they read (`reads_checked_payloads`)."""

from __future__ import annotations

from collections.abc import Callable

from inspector.core.readers.torch_trace import TraceLog
from inspector.core.readers.trace_records import TraceRecord


class _RecordRead:
    """One record of one log, to read back from it on use."""

    __slots__ = ("log", "record")

    def __init__(self, log: TraceLog, record: TraceRecord):
        self.log, self.record = log, record


class PayloadText(_RecordRead):
    """A record's payload text, read from its log when a view asks."""

    __slots__ = ()

    def __call__(self) -> str:
        return self.log.payload(self.record)

    def head(self, chars: int) -> tuple[str, int]:
        return self.log.payload_head(self.record, chars)


class FullMeta(_RecordRead):
    """A record's whole meta, read back from its log when a view asks."""

    __slots__ = ()

    def __call__(self) -> dict:
        return self.log.full_meta(self.record)


class JoinedAotCode:
    """AOTInductor's code dumps of one unit joined into one text, in the order `names` gives: `parts` is
    name → (file name, its PayloadText), filled as the log's records come."""

    __slots__ = ("parts", "names")

    def __init__(self, parts: dict, names: tuple[str, ...]):
        self.parts, self.names = parts, names

    def __call__(self) -> str:
        texts = []
        for name in self.names:
            if name in self.parts:
                path, text = self.parts[name]
                texts.append(f"// ---- {name}: {path or '?'} ----\n{text()}")
        return "\n".join(texts)


def reads_checked_payloads(load: Callable) -> bool:
    """Whether `load` (an artifact's text) reads nothing but payloads of a TORCH_TRACE log whose md5s are
    checked: reading it then settles nothing and counts nothing unless the log's file fails, so a forked
    copy of this process may read it (forked_parts.py)."""
    if isinstance(load, JoinedAotCode):
        return all(reads_checked_payloads(text) for _path, text in load.parts.values())
    return isinstance(load, PayloadText) and load.record.payload_intact is not None
