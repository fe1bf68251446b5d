"""Live progress lines for `compile-inspector capture`: one line when a compile unit reaches a new
pipeline step or the runner starts or ends a phase, read from the session's progress stream."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from inspector.capture.launcher import tail_progress
from inspector.core.model.pipeline import pipeline_step
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.capture_session import read_run


class ProgressPrinter:
    def __init__(self, session: Path, out: TextIO, quiet: bool = False):
        self.session, self.out, self.quiet = session, out, quiet
        self.offset = 0
        self.seen: set[tuple] = set()

    def tick(self) -> None:
        events, self.offset = tail_progress(self.session, self.offset)
        for event in events:
            line = self._line(event)
            if line and not self.quiet:
                print(line, file=self.out, flush=True)

    def _line(self, event: dict) -> str | None:
        kind = event.get("event")
        if kind == "stage" and event.get("ph") == "B":
            step = pipeline_step(str(event.get("name")))
            key = (event.get("compile_id"), step)
            if step and key not in self.seen:
                self.seen.add(key)
                return f"  [{event.get('compile_id')}] {step}"
        elif kind == "phase":
            extra = {k: v for k, v in event.items() if k not in ("t", "event", "phase", "state")}
            return f"{event['phase']}: {event['state']}" + (f" {json.dumps(extra)}" if extra else "")
        elif kind in ("warning", "error"):
            return f"{kind}: {event.get('message')}"
        elif kind == "environment":
            return f"python {event.get('python')}, torch {event.get('torch')}, device {event.get('device')}, " \
                   f"{event.get('threads')} threads"
        return None

    def finish(self, code: int | None) -> None:
        manifest, _ = read_run(self.session, ReadProblems())
        error = manifest.error
        state = "complete" if manifest.complete else "INCOMPLETE"
        if error is not None:
            print(f"capture failed ({error.kind}): {error.message}", file=self.out)
        print(f"session {state}, exit status {code}: {self.session}\n"
              f"  compile-inspector summary {self.session}", file=self.out)
