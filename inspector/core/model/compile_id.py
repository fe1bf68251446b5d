"""Compile ids as torch.compile prints them: ``[frame/compile]``, ``[0/0_1]`` for a restarted attempt,
``[!ca/frame/compile]`` under compiled autograd, and ``[-/-]`` (as tlparse writes it) for what was
compiled outside any Dynamo frame: torch.export, AOTInductor."""

from __future__ import annotations

import re
from dataclasses import dataclass

NO_FRAME = -1  # the frame number of OUTSIDE_DYNAMO: it sorts before every real frame
_ID_TEXT = re.compile(r"^\[?(?:!(?P<ca>\d+)/)?(?P<frame>\d+)/(?P<compile>\d+)(?:_(?P<attempt>\d+))?\]?$")


@dataclass(frozen=True, order=True, slots=True)
class CompileId:
    """Which compilation of which frame; `attempt` counts restarts of the same compilation."""

    frame: int
    compile: int
    attempt: int = 0
    autograd: int | None = None

    @property
    def unit_key(self) -> tuple[int | None, int, int]:
        """Identity of the compile unit: restarts (attempts) belong to the same unit."""
        return (self.autograd, self.frame, self.compile)

    def without_attempt(self) -> CompileId:
        return CompileId(self.frame, self.compile, 0, self.autograd)

    @property
    def outside_dynamo(self) -> bool:
        return self.frame == NO_FRAME

    def __str__(self) -> str:
        if self.outside_dynamo:
            return "[-/-]"
        prefix = f"!{self.autograd}/" if self.autograd is not None else ""
        suffix = f"_{self.attempt}" if self.attempt else ""
        return f"[{prefix}{self.frame}/{self.compile}{suffix}]"

    def get_state(self) -> list[int | None]:
        """The id as plain data (for the index cache): its four numbers."""
        return [self.frame, self.compile, self.attempt, self.autograd]

    @classmethod
    def from_state(cls, state) -> CompileId:
        """`get_state`'s id again; ValueError (or a TypeError) on anything it did not write."""
        frame, compile_, attempt, autograd = state
        if not (type(frame) is int and type(compile_) is int and type(attempt) is int
                and type(autograd) in (int, type(None))):
            raise ValueError("not a compile id's state")
        return cls(frame, compile_, attempt, autograd)

    @classmethod
    def parse(cls, text: str) -> CompileId | None:
        """Read ``0/1``, ``[0/1_2]`` or ``!0/1/2``; None when the text is no compile id."""
        if text.strip() in ("-/-", "[-/-]"):
            return OUTSIDE_DYNAMO
        match = _ID_TEXT.match(text.strip())
        if not match:
            return None
        ca = match["ca"]
        return cls(int(match["frame"]), int(match["compile"]), int(match["attempt"] or 0),
                   int(ca) if ca is not None else None)

    @classmethod
    def from_envelope(cls, envelope: dict) -> CompileId | None:
        """The context keys torch puts on every record made inside a compilation."""
        frame, compile_ = envelope.get("frame_id"), envelope.get("frame_compile_id")
        if not isinstance(frame, int) or not isinstance(compile_, int):
            return None
        attempt = envelope.get("attempt")
        autograd = envelope.get("compiled_autograd_id")
        return cls(frame, compile_, attempt if isinstance(attempt, int) else 0,
                   autograd if isinstance(autograd, int) else None)


OUTSIDE_DYNAMO = CompileId(NO_FRAME, NO_FRAME)  # torch.export and AOTInductor compile no Dynamo frame
