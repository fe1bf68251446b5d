"""Lazy parts of an opened session made by a forked copy of this process on the second core while
this process makes other facts: each rank's stage spans, each output code parsed into its kernels,
and the op names of the graphs the kernels come from, about half of a big log's summary. Asked for by
the command line only (`summary`), whose process is its own and runs one thread.

A fork, because the copy starts with the session already read (a fresh interpreter would read the
log again). These parts, because they are made of payloads of a TORCH_TRACE log whose md5s were all
checked as it was read, by the model's own code: the copy makes exactly what this process would, and
reading them settles nothing. Reading can still count a problem (the log's file gone since it was
read): the copy then stops before the part that counted one, which is made here, so every problem is
counted where the summary reads it.

The work is shared, never waited for in vain (as the md5 helper's, digest_helper.py): the parts are
one list, the spans first; the copy makes them from the first and writes each as it is made, and this
process, its own share done, makes them from the last until the two meet. Only the spans are waited
for (the copy starts with them), and for no longer than STUCK_AFTER_S without a word from the copy. A
part the copy did not hand back (it failed, stopped, was killed) is made here on first use, as it
always was: the results never depend on it."""

from __future__ import annotations

import os
import select
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.model.compile_spans import SpanForest
from inspector.core.model.output_code import OutputCode
from inspector.core.model.session import CodeArtifact, GraphArtifact, LazySpans
from inspector.core.readers import json_codec
from inspector.core.readers.digest_helper import HELPER_MIN_BYTES, second_core
from inspector.core.readers.trace_index_format import decode_problems, encode_problems
from inspector.core.readers.payload_texts import reads_checked_payloads
from inspector.core.readers.trace_spans import RankSpans

STUCK_AFTER_S = 60.0  # a copy that hands back nothing for this long is left, and its parts made here


@dataclass(frozen=True)
class PartKind:
    """What one kind of part is, to the copy and to this process: how the copy makes it as plain data,
    how this process keeps that, and how it makes the part itself (None: it waits for the copy's)."""

    name: str
    state: Callable[[Any], Any]
    keep: Callable[[Any, Any], None]
    made_here: Callable[[Any], Any] | None


def _spans_state(builder: RankSpans) -> list:
    forest, problems = builder.forest()
    return [forest.get_state(), encode_problems(problems)]


def _keep_spans(builder: RankSpans, state) -> None:
    forest, problems = state
    builder.made_elsewhere((SpanForest.from_state(forest), decode_problems(problems)))


def _keep_op_names(graph: GraphArtifact, names) -> None:
    if not (type(names) is list and all(type(name) is str for name in names)):
        raise ValueError("op names")
    graph.keep_op_names(names)


SPANS = PartKind("spans", _spans_state, _keep_spans, None)
CODE = PartKind("code", lambda artifact: artifact.code.get_state(),
                lambda artifact, state: artifact.keep_code(OutputCode.from_state(state)),
                lambda artifact: artifact.code)
OPS = PartKind("ops", lambda graph: graph.op_names, _keep_op_names, lambda graph: graph.op_names)


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
    def start(cls, code: list[CodeArtifact], graphs: list[GraphArtifact], spans: list[LazySpans],
              problem_count: Callable[[], int]) -> ForkedParts | None:
        """Fork a copy to make what of `spans`, `code` and `graphs` (their op names) is read from checked
        payloads and not made yet; `problem_count()` is how many problems the session has counted. None
        where that does not pay or cannot be done safely: a session not read from TORCH_TRACE logs or
        from small ones (the fork and the hand-back would cost more than they save), one core, or any
        other thread in the process (a fork copies only this one: a lock another held would stay taken
        in the copy for ever)."""
        builders = [lazy.build for lazy in spans if isinstance(lazy.build, RankSpans)]
        if sum(builder.log.size for builder in builders) < HELPER_MIN_BYTES or not second_core() \
                or not _alone():
            return None
        if not all(builder.settled for builder in builders):  # reading a part would settle payloads: here only
            return None
        parts = [(SPANS, lazy.build) for lazy in spans
                 if not lazy.made and isinstance(lazy.build, RankSpans) and not lazy.build.kept_in_cache()]
        parts += [(CODE, artifact) for artifact in code
                  if not artifact.parsed and reads_checked_payloads(artifact.load_text)]
        parts += [(OPS, graph) for graph in graphs
                  if not graph.op_names_made and reads_checked_payloads(graph.load_text)]
        if not parts:
            return None
        try:
            progress, told = os.pipe()
        except OSError:
            return None
        made = None
        try:
            made = tempfile.TemporaryFile()
            pid = os.fork()
        except OSError:
            for end in (progress, told):
                os.close(end)
            if made is not None:
                made.close()
            return None
        if pid == 0:
            _make(progress, told, made.fileno(), parts, problem_count)  # never returns
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
                if last >= 0 and self.parts[last][0].made_here is not None:
                    left.discard(last)
                    kind, target = self.parts[last]
                    kind.made_here(target)
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
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped already (a SIGCHLD handler of the embedding program)
                pass
            self.pid = 0
            os.close(self.progress)
            self.made.close()

    def _wait(self) -> bool:
        """Wait until the copy writes another part; False when it ended without one (done, failed or
        stopped) or said nothing for STUCK_AFTER_S."""
        waiting = select.poll()
        waiting.register(self.progress, select.POLLIN)
        if not waiting.poll(STUCK_AFTER_S * 1000):
            return False
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
        """Put each part found in place; one that does not decode is left to be made on first use."""
        kept = 0
        for part in found:
            try:
                index, state = part
                if index not in left:
                    continue
                left.discard(index)
                kind, target = self.parts[index]
                kind.keep(target, state)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                continue
            kept += 1
        return kept


def _alone() -> bool:
    """Whether this is the process's only thread: no other Python thread, and no native one either (a
    GUI toolkit's, a library's), which only the kernel knows of. Where it cannot tell (no /proc), no."""
    if threading.current_thread() is not threading.main_thread() or threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _make(progress: int, told: int, made: int, parts: list[tuple], problem_count: Callable[[], int]) -> None:
    """The copy's whole life: make the parts from the first, each written as one JSON line as it is
    made, until one counts a problem; then leave at once (never returning into the caller's stack, whose
    `finally` blocks and exit handlers are this process's to run). Its standard streams go nowhere: a
    pipe this process writes to must not stay open for as long as the copy lives."""
    status = 1
    try:
        os.close(progress)
        nowhere = os.open(os.devnull, os.O_RDWR)
        for stream in (0, 1, 2):
            os.dup2(nowhere, stream)
        counted = problem_count()
        for index, (kind, target) in enumerate(parts):
            state = kind.state(target)
            if problem_count() != counted:  # this process counts it as it makes the part itself
                break
            line = memoryview(json_codec.dumps([index, state]) + b"\n")  # NaN and big integers come back as they were
            while line:
                line = line[os.write(made, line):]
            os.write(told, b"+")
        status = 0
    except BaseException:  # noqa: BLE001 - whatever happens here, the copy only leaves
        pass
    finally:
        os._exit(status)

