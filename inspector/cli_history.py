"""The command line's side of the run history (inspector/core/history): the switches that record a
run, the `history` command, and recording the runs that `summary`, `capture` and `modes` read or make."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from inspector.cli_text import dump_json, say


def add_history_switches(command) -> None:
    """--no-history and --store on a command that records the runs it reads or captures."""
    command.add_argument("--no-history", action="store_true",
                         help="do not record this run in the local run history (as TCI_NO_HISTORY=1)")
    command.add_argument("--store", metavar="ADDRESS",
                         help="the run history to record in: a SQLite file or postgresql://… (default: "
                              "TCI_HISTORY_STORE, else $XDG_DATA_HOME/torch-compile-inspector/history.sqlite)")


def add_history_command(commands) -> None:
    history = commands.add_parser("history", help="the runs of a script over time, from the run history")
    history.add_argument("script", nargs="?", help="the script (without it: the scripts the history holds)")
    history.add_argument("--json", action="store_true", help="print the runs as JSON")
    history.add_argument("--limit", type=int, default=50, metavar="N", help="the last N runs (default %(default)s)")
    history.add_argument("--store", metavar="ADDRESS",
                         help="a SQLite file or postgresql://… (default: TCI_HISTORY_STORE, else the local file)")
    history.set_defaults(run=_history)


def _history(args) -> int:
    from pathlib import Path

    from inspector.core.history.history_text import history_document, render_runs, render_scripts
    from inspector.core.history.switches import store_address
    from inspector.core.history.run_store import StoreError, open_store

    script = str(Path(args.script).resolve()) if args.script else None
    try:
        with open_store(store_address(args.store)) as store:
            runs = store.runs_of(script, args.limit) if script else []
            scripts = [] if script else store.scripts()
            address = store.address
    except StoreError as error:
        say(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    if args.json:
        dump_json({**history_document(address, script, runs),
                    **({} if script else {"scripts": [{"script": s, "runs": n, "latest": t} for s, n, t in scripts]})})
    else:
        say(render_runs(script, runs) if script else render_scripts(address, scripts))
    return 0


@contextmanager
def hashed_ahead(args, path: str) -> Iterator[None]:
    """The history's digest of the log at `path` worked out on the second core while the command imports
    and reads (core/history/log_digests.py), when the run it reads will be recorded; stopped once the
    command is done with it."""
    from inspector.core.history.switches import history_enabled

    if getattr(args, "no_history", False) or not history_enabled():
        yield
        return
    from inspector.core.history import log_digests

    log_digests.digest_ahead(path)
    try:
        yield
    finally:
        log_digests.stop_digests()


def record_history(args, session, summary) -> None:
    """Keep the run just read in the history (unless --no-history); only a failure is said."""
    if getattr(args, "no_history", False):
        return
    from inspector.core.history.recording import record_run

    recorded = record_run(session, summary, args.store)
    if recorded.failed:
        say(f"compile-inspector: {recorded.said}", file=sys.stderr)


def record_capture(args, folder) -> None:
    """A capture is recorded in the history as it ends, without being asked (unless --no-history)."""
    if getattr(args, "no_history", False):
        return
    from inspector.core.history.recording import record_run
    from inspector.core.history.switches import history_enabled
    from inspector.core.outputs.cached_summary import session_summary
    from inspector.core.readers.session_loader import open_session
    from inspector.core.readers.sources import detect

    if not history_enabled():
        return
    try:
        session = open_session(detect(folder))
        recorded = record_run(session, session_summary(session), args.store)
    except (OSError, ValueError) as error:  # a capture that left no readable session: nothing to keep
        say(f"compile-inspector: not recorded in the history: {error}", file=sys.stderr)
        return
    if not args.quiet or recorded.failed:
        say(f"compile-inspector: {recorded.said}", file=sys.stderr)
