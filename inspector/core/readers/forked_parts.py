"""Lazy parts of an opened session made by a forked copy of this process on the second core while
this process makes other facts: each output code parsed into its kernels, and each rank's stage
spans, about a third of a big log's summary.

A fork, because the copy starts with the session already read (a fresh interpreter would read the
log again), and what it makes comes back as plain data through a pipe. These parts, because they are
made of the log's bytes alone, by the model's own code, with nothing settled as they are read (the
copy is made only where every payload's md5 was checked as the log was read): it makes exactly what
this process would, and counts no damage this process would not.
The results never depend on the copy: a part it did not hand back (it failed, was killed, or the
machine has one core) is made here on first use, as it always was."""

from __future__ import annotations

import json
import os
import threading

from inspector.core.model.compile_spans import SpanForest
from inspector.core.model.output_code import OutputCode
from inspector.core.model.session import CodeArtifact, LazySpans
from inspector.core.readers import json_codec
from inspector.core.readers.digest_helper import HELPER_MIN_BYTES, second_core
from inspector.core.readers.index_cache import decode_problems, encode_problems
from inspector.core.readers.trace_spans import RankSpans


class ForkedParts:
    """A forked copy of this process making some of a session's lazy parts; `take` puts them in place."""

    def __init__(self, pid: int, answer: int, code: list[CodeArtifact], spans: list[RankSpans]):
        self.pid, self.answer = pid, answer
        self.code, self.spans = code, spans

    @classmethod
    def start(cls, code: list[CodeArtifact], spans: list[LazySpans]) -> ForkedParts | None:
        """Fork a copy to make what of `code` and `spans` is not made yet; None where that does
        not pay or cannot be done safely: a session not read from TORCH_TRACE logs (whose reads a copy
        shares safely: torch_trace.py reads at an offset) or from small ones (the fork and the hand-back
        would cost more than they save), one core, or other threads running (a fork copies only this
        one, and a lock another held would never be let go)."""
        builders = [lazy.build for lazy in spans if isinstance(lazy.build, RankSpans)]
        if sum(builder.log.size for builder in builders) < HELPER_MIN_BYTES or not hasattr(os, "fork") \
                or threading.active_count() != 1 or not second_core():
            return None
        if not all(builder.settled for builder in builders):  # reading a part would settle payloads: here only
            return None
        builders = [lazy.build for lazy in spans if not lazy.made and isinstance(lazy.build, RankSpans)]
        code = [artifact for artifact in code if not artifact.parsed]
        if not (code or builders):
            return None
        answer, told = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(answer)
            os.close(told)
            return None
        if pid == 0:
            _make(answer, told, code, builders)  # never returns
        os.close(told)
        return cls(pid, answer, code, builders)

    def take(self) -> int:
        """Wait for the copy and keep what it made, each part where it is still unmade; how many parts
        it handed back (0 when it handed back nothing whole: they are made here on first use)."""
        state = self._answer()
        if state is None:
            return 0
        try:
            code = [OutputCode.from_state(item) for item in state["code"]]
            spans = [(SpanForest.from_state(forest), decode_problems(problems)) for forest, problems in state["spans"]]
            if not (len(code) == len(self.code) and len(spans) == len(self.spans)):
                return 0
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            return 0
        for artifact, parsed in zip(self.code, code):
            artifact.keep_code(parsed)
        for builder, made in zip(self.spans, spans):
            builder.made_apart = made
        return len(code) + len(spans)

    def stop(self) -> None:
        """End the copy without taking anything (this process is leaving the work, e.g. on Ctrl+C)."""
        if self.pid:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass
        self._answer()

    def _answer(self):
        """What the copy wrote, decoded (None when it wrote nothing whole); the copy reaped."""
        if not self.pid:
            return None
        parts = []
        try:
            while part := os.read(self.answer, 1 << 20):
                parts.append(part)
        except OSError:
            parts = []
        finally:
            os.close(self.answer)
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
        if status != 0 or not parts:
            return None
        try:
            return json_codec.loads(b"".join(parts))
        except ValueError:
            return None


def _make(answer: int, told: int, code: list[CodeArtifact], spans: list[RankSpans]) -> None:
    """The copy's whole life: make the parts, write them as JSON, and leave at once (never returning
    into the caller's stack, whose `finally` blocks and exit handlers are this process's to run)."""
    status = 1
    try:
        os.close(answer)
        made = {"code": [artifact.code.get_state() for artifact in code],
                "spans": [[forest.get_state(), encode_problems(found)] for forest, found in
                          (builder.forest() for builder in spans)]}
        # `json` rather than orjson: NaN and integers beyond 64 bits must come back as they were
        data = memoryview(json.dumps(made, separators=(",", ":")).encode())
        while data:
            data = data[os.write(told, data):]
        status = 0
    except BaseException:  # noqa: BLE001 - whatever happens here, the copy only leaves
        pass
    finally:
        os._exit(status)
