"""The md5 helper: a child interpreter that checks the payload digests of a big log on the second
core while the reader parses envelopes (its program is payload_digest.py run as a script)."""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.payload_digest import payload_digest
from inspector.core.readers.trace_records import TraceRecord, count_damage, settle, settled_whole

# The helper's command: the script half of payload_digest.py, told the log's descriptor it inherits.
HELPER_COMMAND = [sys.executable, "-I", "-S", str(Path(__file__).with_name("payload_digest.py"))]


# Below this size the helper's start on the other core buys little (docs/benchmarks.md, "Payload md5s
# on the second core"); set TCI_SERIAL=1 to read every log on one core.
HELPER_MIN_BYTES = 16 << 20
# The most work the helper may have outstanding; past it the reader checks payloads itself. The
# count also keeps its answers within what a pipe holds, so neither side ever waits on the other.
HELPER_LAG_BYTES = 8 << 20
HELPER_LAG_RANGES = 1000


class DigestHelper:
    """The payload md5s of a big log, worked out by a child interpreter on the second core while the
    reader parses envelopes (the copy that strips the tabs holds the GIL, so a thread would not
    help). Work is shared, never waited for: what the child has not answered when the reader gets
    ahead of it, or at the end, the reader computes itself (the last ranges first, while the child
    works on the first ones), so a busy or missing second core costs next to nothing and the
    results never depend on the child."""

    def __init__(self, handle, process: subprocess.Popen):
        self.handle, self.process = handle, process
        # Problems noted in order, and where the ranges sent meanwhile go among them: a run of n ranges
        # is one int n (the md5 of nearly every payload matches; a tuple for each adds up on a log of
        # small records: docs/benchmarks.md, "Peak memory of a log of many small records").
        self.events = NotedProblems()
        self.sent = array("q")  # the start and end of each range given to the child, in order
        self.sent_records: list[TraceRecord] = []  # the record of each
        self.cut_short = -1  # the range of the payload the log's end cut off, if it was sent
        self.answered = 0  # how many ranges the child answered; a record whose md5 matched is settled then
        self.mismatched: dict[int, str] = {}  # its digests that did not match, by range
        self.answered_bytes = 0
        self.sent_bytes = 0
        self.unsent = b""  # range lines the pipe did not take yet
        self.partial = b""  # the start of an answer line
        self.closed = False  # the child answers no more (done, dead, or its input closed)
        self.ins, self.outs = process.stdin.fileno(), process.stdout.fileno()
        os.set_blocking(self.ins, False)
        os.set_blocking(self.outs, False)

    @classmethod
    def start(cls, handle) -> DigestHelper | None:
        if not helper_allowed():
            return None
        try:
            fd = handle.fileno()
            if os.fstat(fd).st_size < HELPER_MIN_BYTES:
                return None
            process = subprocess.Popen([*HELPER_COMMAND, str(fd)], pass_fds=(fd,),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except (OSError, ValueError):
            return None
        try:
            return cls(handle, process)
        except (OSError, ValueError):
            process.kill()
            process.communicate()
            return None

    def check(self, record: TraceRecord, data: bytes, start: int, end: int, cut_short: bool) -> None:
        """Note `record`'s payload (`data[start:end]`) for checking: by the child when it keeps up."""
        if self.closed or len(self.sent_records) - self.answered >= HELPER_LAG_RANGES \
                or self.sent_bytes - self.answered_bytes >= HELPER_LAG_BYTES:
            digest = payload_digest(data[start:end])
            if not settled_whole(record, digest):  # counted in order, at the end
                self.events.items.append((record, cut_short, digest))
            return
        items = self.events.items
        if items and type(items[-1]) is int:
            items[-1] += 1
        else:
            items.append(1)
        if cut_short:
            self.cut_short = len(self.sent_records)
        self.sent_records.append(record)
        self.sent.extend((record.payload_start, record.payload_end))
        self.sent_bytes += end - start
        self.unsent += b"%d %d\n" % (record.payload_start, record.payload_end)

    def send(self) -> None:
        """Hand over the ranges found in the last chunk and take the answers in, without waiting."""
        self._receive()
        if self.unsent and not self.closed:
            try:
                written = os.write(self.ins, self.unsent)
                self.unsent = self.unsent[written:]
            except BlockingIOError:
                pass
            except OSError:
                self.closed = True

    def _receive(self) -> None:
        if self.closed and self.partial is None:
            return
        while True:
            try:
                block = os.read(self.outs, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                block = b""
            if not block:
                self.closed, self.partial = True, None
                return
            lines = (self.partial + block).split(b"\n")
            self.partial = lines.pop()
            for line in lines[:len(self.sent_records) - self.answered]:
                index = self.answered
                digest = line.decode("ascii", errors="replace")
                if not settled_whole(self.sent_records[index], digest):  # counted in order, at the end
                    self.mismatched[index] = digest
                self.answered += 1
                self.answered_bytes += self.sent[2 * index + 1] - self.sent[2 * index]

    def finish(self, problems: ReadProblems) -> None:
        """Take the child's answers, computing the rest from the last range down until the two meet,
        then count every problem noted, in the order it was met."""
        self.send()
        try:
            self.process.stdin.close()
        except OSError:
            pass
        mine: dict[int, str] = {}
        low = len(self.sent_records)
        while low > self.answered:
            if self.closed:
                mine.update((index, self._digest(index)) for index in range(self.answered, low))
                break
            low -= 1
            mine[low] = self._digest(low)
            self._receive()
        self.stop()
        sent = 0
        for item in self.events.items:
            if type(item) is int:  # a run of sent ranges: those not settled by the child's answer
                for index in range(sent, sent + item):
                    record = self.sent_records[index]
                    if record.payload_intact is None and not settle(record, mine.get(index) or self.mismatched[index]):
                        count_damage(problems, index == self.cut_short, record.line_no, record.name)
                sent += item
            elif len(item) == 3:
                record, cut_short, digest = item
                if not settle(record, digest):
                    count_damage(problems, cut_short, record.line_no, record.name)
            else:
                problems.add(*item)

    def stop(self) -> None:
        """End the child (also when the read is interrupted: a Ctrl+C, a bug), leaving no process behind."""
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()  # stderr is a pipe rather than /dev/null: opening that would be a write to count
            except OSError:
                pass

    def _digest(self, index: int) -> str:
        """The digest of the range sent as `index`, worked out here."""
        start, end = self.sent[2 * index], self.sent[2 * index + 1]
        try:
            raw = os.pread(self.handle.fileno(), end - start, start)
        except (OSError, ValueError):
            return "-"
        return payload_digest(raw) if len(raw) == end - start else "-"


class NotedProblems:
    """`ReadProblems.add` calls kept in order, to be counted once the helper's digests are in, among the
    payloads whose damage is counted then: (category, example) for a problem, (record, cut_short,
    digest) for a payload checked here that did not match, and an int n for the next n ranges sent."""

    def __init__(self):
        self.items: list[tuple | int] = []

    def add(self, category: str, example: str = "") -> None:
        self.items.append((category, example))


def helper_allowed() -> bool:
    """A second core to run on, an interpreter to run there (a frozen app has none) and a descriptor
    to hand over."""
    if getattr(sys, "frozen", False) or os.name != "posix" or not sys.executable:
        return False
    return second_core()


def second_core() -> bool:
    """Whether work may go to a second core: this process may run on two, and TCI_SERIAL=1 (read and
    summarise every log on one core) is not set."""
    if os.environ.get("TCI_SERIAL"):
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2
