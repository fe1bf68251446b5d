"""A line of code, one type wherever the log names one: where a break, a compile's call or a failure
is, a frame of a stack, the user line an FX node was traced from, the user line a guard's comment
names."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model.records import Record


@dataclass(frozen=True)
class SourceLocation(Record):
    """A line of code: where a break, a compile's call or a failure is, one frame of a stack, the user
    line of an FX node or of a guard's comment. A record, so the summary writes a compile's trigger stack
    as these very frames and reads it back into them; every field is written, None where the log does
    not say."""

    file: str
    line: int | None
    function: str | None
    code: str | None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where} in {self.function}" if self.function else where
