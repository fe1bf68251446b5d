"""Recording a run in the history as it is opened or captured: on unless switched off (TCI_NO_HISTORY=1,
the command line's --no-history, the app's setting), to the store named by TCI_HISTORY_STORE or the
default file. A failure to record is said, never raised: the history must not stop a read."""

from __future__ import annotations

import time
from dataclasses import dataclass

from inspector.core.history.run_record import RunRecord, record_of, run_identity
from inspector.core.history.run_store import StoreError, open_store
from inspector.core.history.switches import SWITCH, history_enabled, store_address
from inspector.core.model.session import Session
from inspector.core.outputs.summary_model import Summary

@dataclass(frozen=True)
class Recorded:
    """What became of a request to record a run: the run as stored (None when it was not), whether it
    is new, and why not when it was not."""

    run: RunRecord | None
    new: bool
    reason: str = ""
    failed: bool = False  # True: it should have been kept and could not be (worth saying); False: kept, or off


    @property
    def said(self) -> str:
        if self.run is None:
            return f"not recorded in the history: {self.reason}"
        if not self.new:
            return f"in the history already as {self.run.label}"
        return f"recorded in the history as {self.run.label}"


def record_run(session: Session, summary: Summary | dict, store: str | None = None,
               force: bool = False) -> Recorded:
    """Keep the run of `session` (its summary made already) in the history, once per version of its
    files. Nothing is written when the history is switched off (unless `force`), and a session still
    changing (a capture running, a preview) is left for when it settles."""
    if not (force or history_enabled()):
        return Recorded(None, False, f"the history is off ({SWITCH}=1)")
    identity = run_identity(session)
    if identity is None:
        # not a failure: the next open of the settled files records it
        return Recorded(None, False, "the run is still changing (or its files cannot be read)")
    typed = summary if isinstance(summary, Summary) else Summary.from_state(summary)
    try:
        with open_store(store_address(store)) as opened:
            run, new = opened.add(record_of(session, typed, identity, time.time()))
    except StoreError as error:
        return Recorded(None, False, str(error), failed=True)
    except Exception as error:  # noqa: BLE001 - a database driver's error of any kind: said, not raised
        return Recorded(None, False, f"{type(error).__name__}: {error}", failed=True)
    return Recorded(run, new)


def check_session(session: Session, summary: Summary | dict, store: str | None = None,
                  tolerance: float = 0.1, failed_elsewhere: bool = False) -> tuple[list, Recorded]:
    """`check RUN --history`: the run's checks against the recent runs of its script that did not fail
    this gate, and what became of recording it. The run is kept at once, even a log written a moment
    ago: a gate runs after its producer has exited, and a run it does not keep could never become a
    baseline. What the gate said of it (with `failed_elsewhere`: the other checks of the same `check`)
    is kept too, so a failed run is never the baseline of the next. A run that cannot be kept (the
    history off, a capture not ended) is compared, not kept; a store that cannot be opened is one
    failed check: a gate must not pass on a history it could not read."""
    from inspector.core.analysis.run_diff import Check
    from inspector.core.history.alerts import check_against_history, earlier_runs

    identity = run_identity(session, settled_only=False)
    typed = summary if isinstance(summary, Summary) else Summary.from_state(summary)
    run = record_of(session, typed, identity or f"unsettled {session.source}", time.time())
    try:
        with open_store(store_address(store)) as opened:
            recorded = Recorded(None, False, f"the history is off ({SWITCH}=1)")
            if identity is None:
                recorded = Recorded(None, False, "the run is still changing: compared, not kept", failed=True)
            elif history_enabled():
                run, new = opened.add(run)
                recorded = Recorded(run, new)
            history = opened.runs_of(run.script) if run.script else []
            checks = check_against_history(run, earlier_runs(run, history), tolerance)
            if recorded.run is not None:
                failed = failed_elsewhere or any(check.passed is False for check in checks)
                recorded = Recorded(opened.set_gate(recorded.run.run_id, not failed), recorded.new)
    except StoreError as error:
        return [Check("history", False, str(error))], Recorded(None, False, str(error), failed=True)
    return checks, recorded


def record_and_read(session: Session, store: str | None = None, record: bool = True,
                    limit: int = 200) -> tuple[Recorded, str | None, list[RunRecord]]:
    """The app's way in, on its load worker: keep the opened run (unless `record` is off or the
    history is), then read the last `limit` runs of its script. (what became of recording, the
    script, its runs oldest first)."""
    from inspector.core.outputs.cached_summary import session_summary

    if session.preview is not None:
        return Recorded(None, False, "a preview is not a run"), None, []
    summary = Summary.from_state(session_summary(session))
    recorded = record_run(session, summary, store) if record else Recorded(None, False, "recording is off")
    script = recorded.run.script if recorded.run else record_of(session, summary, "", time.time()).script
    if not script:
        return recorded, None, []
    try:
        with open_store(store_address(store)) as opened:
            return recorded, script, opened.runs_of(script, limit)
    except StoreError as error:
        return Recorded(None, False, str(error), failed=True), script, []
