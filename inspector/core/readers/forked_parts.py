"""Lazy parts of an opened session made by a forked copy of this process on the second core while
this process makes other facts: each rank's stage spans, each output code parsed into its kernels,
and the op names of the graphs the kernels come from, about half of a big log's summary.

A fork, because the copy starts with the session already read (a fresh interpreter would read the
log again). These parts, because they are made of the log's bytes alone, by the model's own code,
with nothing settled as they are read (the copy is made only where every payload's md5 was checked
as the log was read): the copy makes exactly what this process would, and counts no damage this
process would not.

The work is shared, never waited for in vain (as the md5 helper's, digest_helper.py): the parts are
one list, the spans first; the copy makes them from the first and writes each as it is made, and this
process, its own share done, makes them from the last until the two meet. Only the spans are waited
for (the copy starts with them). A part the copy did not hand back (it failed, was killed, or the
machine has one core) is made here on first use, as it always was: the results never depend on it."""

from __future__ import annotations

import json
import os
import select
import tempfile
import threading

from inspector.core.model.compile_spans import SpanForest
from inspector.core.model.output_code import OutputCode
from inspector.core.model.session import CodeArtifact, GraphArtifact, LazySpans
from inspector.core.readers import json_codec
from inspector.core.readers.digest_helper import HELPER_MIN_BYTES, second_core
from inspector.core.readers.index_cache import decode_problems, encode_problems
from inspector.core.readers.trace_spans import RankSpans

SPANS, CODE, OPS = "spans", "code", "ops"  # the kinds of part


class ForkedParts:
    """A forked copy of this process making some of a session's lazy parts; `take` puts them in place.
    `parts` is the work, (kind, the thing it makes a part of) each; the copy writes one JSON line per
    part it makes to `made` (a file, so the copy never waits on a reader), and one byte to the
    `progress` pipe after each whole line."""

    def __init__(self, pid: int, progress: int, made, parts: list[tuple]):
        self.pid, self.progress, self.made, self.parts = pid, progress, made, parts
        self.read_to = 0  # how far into `made` this process has read
        self.partial = b""  # the start of a line the copy is still writing

    @classmethod
    def start(cls, code: list[CodeArtifact], graphs: list[GraphArtifact], spans: list[LazySpans]) -> ForkedParts | None:
        """Fork a copy to make what of `spans`, `code` and `graphs` (their op names) is not made yet; None
        where that does not pay or cannot be done safely: a session not read from TORCH_TRACE logs (whose
        reads a copy shares safely: torch_trace.py reads at an offset) or from small ones (the fork and
        the hand-back would cost more than they save), one core, or other threads running (a fork copies
        only this one, and a lock another held would never be let go)."""
        builders = [lazy.build for lazy in spans if isinstance(lazy.build, RankSpans)]
        if sum(builder.log.size for builder in builders) < HELPER_MIN_BYTES or not hasattr(os, "fork") \
                or threading.active_count() != 1 or not second_core():
            return None
        if not all(builder.settled for builder in builders):  # reading a part would settle payloads: here only
            return None
        parts = [(SPANS, lazy.build) for lazy in spans if not lazy.made and isinstance(lazy.build, RankSpans)]
        parts += [(CODE, artifact) for artifact in code if not artifact.parsed]
        parts += [(OPS, graph) for graph in graphs if not graph.op_names_made]
        if not parts:
            return None
        try:
            made = tempfile.TemporaryFile()
        except OSError:
            return None
        progress, told = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for end in (progress, told):
                os.close(end)
            made.close()
            return None
        if pid == 0:
            _make(progress, told, made.fileno(), parts)  # never returns
        os.close(told)
        return cls(pid, progress, made, parts)

    def take(self) -> int:
        """Keep what the copy made, each part where it is still unmade, making here the parts it has not
        reached (from the last, while it goes on from the first); wait only for the spans. How many
        parts the copy handed back."""
        kept = 0
        try:
            left = set(range(len(self.parts)))
            while self.pid and left:
                found = self._read_made()
                if found is None:
                    break
                kept += self._keep(found, left)
                last = max(left, default=-1)
                if last >= 0 and self.parts[last][0] != SPANS:
                    left.discard(last)
                    _made_here(*self.parts[last])
                elif left and not self._wait():
                    break
        finally:
            self.stop()
        return kept

    def stop(self) -> None:
        """End the copy (its work is all taken, or this process is leaving it, e.g. on Ctrl+C), reap it
        and let go of what it wrote."""
        if self.pid:
            try:
                os.kill(self.pid, 9)
            except OSError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0
            os.close(self.progress)
            self.made.close()

    def _wait(self) -> bool:
        """Wait until the copy writes another part; False when it ended without one (failed or done)."""
        select.select([self.progress], [], [])
        return bool(os.read(self.progress, 1 << 10))

    def _read_made(self) -> list | None:
        """The parts the copy wrote since the last read, decoded; None when what it wrote is not what it
        would write (the copy is then no longer trusted: the rest is made here)."""
        fd = self.made.fileno()
        size = os.fstat(fd).st_size
        if size <= self.read_to:
            return []
        data = self.partial + os.pread(fd, size - self.read_to, self.read_to)
        self.read_to = size
        *lines, self.partial = data.split(b"\n")
        try:
            return [json_codec.loads(line) for line in lines]
        except ValueError:
            return None

    def _keep(self, found: list, left: set) -> int:
        kept = 0
        for part in found:
            try:
                index, state = part
                if index not in left:
                    continue
                kind, target = self.parts[index]
                if kind == SPANS:
                    forest, problems = state
                    target.made_apart = (SpanForest.from_state(forest), decode_problems(problems))
                elif kind == CODE:
                    target.keep_code(OutputCode.from_state(state))
                elif type(state) is list and all(type(name) is str for name in state):
                    target.keep_op_names(state)
                else:
                    continue
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                continue  # that part is made here on first use
            left.discard(index)
            kept += 1
        return kept


def _made_here(kind: str, target) -> None:
    """Make a part in this process, as its first use would."""
    if kind == CODE:
        target.code
    elif kind == OPS:
        target.op_names


def _make(progress: int, told: int, made: int, parts: list[tuple]) -> None:
    """The copy's whole life: make the parts from the first, each written as one JSON line as it is
    made, and leave at once (never returning into the caller's stack, whose `finally` blocks and exit
    handlers are this process's to run)."""
    status = 1
    try:
        os.close(progress)
        for index, (kind, target) in enumerate(parts):
            # `json` rather than orjson: NaN and integers beyond 64 bits must come back as they were
            line = memoryview(json.dumps([index, _state(kind, target)], separators=(",", ":")).encode() + b"\n")
            while line:
                line = line[os.write(made, line):]
            os.write(told, b"+")
        status = 0
    except BaseException:  # noqa: BLE001 - whatever happens here, the copy only leaves
        pass
    finally:
        os._exit(status)


def _state(kind: str, target):
    """A part made, as plain data."""
    if kind == SPANS:
        forest, problems = target.forest()
        return [forest.get_state(), encode_problems(problems)]
    if kind == CODE:
        return target.code.get_state()
    return target.op_names
