"""The command line's `capture` and `modes`: their options (derived from the one table in
capture/options.py), the session folders they write, and the captures themselves, stopped as Ctrl-C
stops them on SIGTERM and SIGHUP."""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager

from inspector.capture.options import COMPARED_MODES, MODES
from inspector.capture.options import add_arguments as add_capture_options
from inspector.cli_history import add_history_switches, record_capture
from inspector.cli_text import dump_json, say

PYTHON_HELP = "interpreter that runs the script (default: this one; in the frozen app, the first Python found)"


def add_capture_commands(commands) -> None:
    """`capture` and `modes`, their capture options derived from the one table in capture/options.py."""
    capture = commands.add_parser(
        "capture", help="run a model script (or any command after --) under TORCH_TRACE and save a session",
        usage="compile-inspector capture SCRIPT [ARGS…] -o DIR [options]\n"
              "       compile-inspector capture -o DIR [options] -- COMMAND [ARGS…]")
    capture.add_argument("-o", "--output", required=True, help="session folder to write")
    capture.add_argument("--python", help=PYTHON_HELP)
    add_capture_options(capture)
    capture.add_argument("--quiet", action="store_true", help="no live progress lines")
    capture.add_argument("--overwrite", action="store_true", help="replace a session already in the output folder")
    capture.set_defaults(run=_capture)
    add_history_switches(capture)
    modes = commands.add_parser(
        "modes", help="capture a model script once per compile mode and compare them (compile time, speed, breaks)",
        usage="compile-inspector modes SCRIPT [ARGS…] -o DIR [--modes M …] [options]")
    modes.add_argument("-o", "--output", required=True, help="folder for the sessions (one sub-folder per mode)")
    modes.add_argument("--modes", nargs="+", metavar="MODE", choices=MODES, default=list(COMPARED_MODES),
                       help=f"modes to compare (default: {' '.join(COMPARED_MODES)})")
    modes.add_argument("--python", help=PYTHON_HELP)
    add_capture_options(modes, skip=("mode",))
    modes.add_argument("--warm", action="store_true",
                       help="after each mode's cold capture (its own empty compile caches), capture it once more "
                            "from that cache: compile time cold and warm")
    modes.add_argument("--json", action="store_true", help="print the comparison as JSON")
    modes.add_argument("--quiet", action="store_true", help="no live progress lines")
    modes.add_argument("--overwrite", action="store_true", help="replace sessions already in the output folder")
    modes.set_defaults(run=_modes)
    add_history_switches(modes)


def _capture_settings(args):
    """The capture settings the command line chose (every option of the one table)."""
    from inspector.capture.launcher import CaptureSettings
    from inspector.capture.options import OPTIONS

    return CaptureSettings(**{option.name: getattr(args, option.name)
                              for option in OPTIONS if hasattr(args, option.name)})


def _prepare_folder(folder, overwrite: bool, clear) -> bool:
    """False (after saying why) when `folder` holds something and --overwrite was not given, or is a file."""
    if folder.exists() and not folder.is_dir():
        say(f"compile-inspector: {folder} is a file, not a folder; choose a folder for the session", file=sys.stderr)
        return False
    if folder.exists() and any(folder.iterdir()):
        if not overwrite:
            say(f"compile-inspector: {folder} is not empty; choose a new folder or pass --overwrite", file=sys.stderr)
            return False
        clear(folder)
    return True


def _capture(args) -> int:
    from pathlib import Path

    from inspector.capture.launcher import CaptureProcess, clear_session, plan_command, plan_script
    from inspector.cli_progress import ProgressPrinter

    settings = _capture_settings(args)
    session = Path(args.output)
    if not _prepare_folder(session, args.overwrite, clear_session):
        return 2
    if args.any_command:
        plan = plan_command(args.target, session, settings)
    else:
        script = Path(args.target[0])
        if not script.is_file():
            say(f"compile-inspector: {script} is not a file", file=sys.stderr)
            return 2
        plan = plan_script(script, args.target[1:], session, settings, args.python)
    try:
        process = CaptureProcess(plan)
    except OSError as error:
        say(f"compile-inspector: cannot start {plan.command[0]}: {error}", file=sys.stderr)
        return 2
    printer = ProgressPrinter(plan.session, sys.stderr, quiet=args.quiet)
    with _termination_as_interrupt():
        try:
            process.wait(on_tick=printer.tick)
        except KeyboardInterrupt:
            process.stop("cancelled")
            process.wait()
    printer.tick()
    printer.finish(process.exit_code)
    record_capture(args, plan.session)
    return process.exit_code


@contextmanager
def _termination_as_interrupt():
    """SIGTERM and SIGHUP (a `kill`, a closed terminal, a CI job cancelled) stop a capture as Ctrl-C
    does: the whole process tree is stopped and the session's manifest says so. Only the first one
    interrupts; later ones are ignored so the stop itself can finish."""
    def interrupt(signum, frame):
        for number in watched:
            signal.signal(number, signal.SIG_IGN)
        raise KeyboardInterrupt

    watched = [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
    previous = {number: signal.signal(number, interrupt) for number in watched}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _modes(args) -> int:
    """One capture per mode through the same sequence the app runs, each mode's outcome reported as it
    ends, then the comparison; exit 1 when any mode did not complete."""
    from dataclasses import asdict
    from pathlib import Path

    from inspector.capture.launcher import clear_session
    from inspector.capture.mode_runs import WARM_SUFFIX, run_modes
    from inspector.cli_progress import ProgressPrinter
    from inspector.core.analysis.mode_comparison import compare_modes
    from inspector.core.outputs.mode_table import mode_document, render_mode_rows
    from inspector.core.readers.session_loader import detect_modes

    script, folder = Path(args.target[0]), Path(args.output)
    if not script.is_file():
        print(f"compile-inspector: {script} is not a file", file=sys.stderr)
        return 2

    names = [mode + suffix for mode in args.modes for suffix in (("", WARM_SUFFIX) if args.warm else ("",))]
    if not all(_prepare_folder(folder / name, args.overwrite, clear_session) for name in names):
        return 2
    printers = {name: ProgressPrinter((folder / name).resolve(), sys.stderr, quiet=args.quiet) for name in names}

    def tick() -> None:
        for printer in printers.values():
            printer.tick()

    def reported(outcome) -> None:
        printers.pop(outcome.session.name).tick()
        error = outcome.error
        state = "complete" if outcome.complete else \
            f"FAILED ({error.get('kind')}): {error.get('message')}" if error else f"exit status {outcome.exit_status}"
        say(f"{outcome.mode}{' (warm)' if outcome.warm else ''}: {state}", file=sys.stderr)

    settings = _capture_settings(args)
    with _termination_as_interrupt():
        runs = run_modes(script, args.target[1:], folder, settings, args.python, args.modes, tick, reported,
                         warm=args.warm)
    for outcome in runs.outcomes:  # each mode's capture is a run of the script, in the history like any capture
        if Path(outcome.session).is_dir():
            record_capture(args, outcome.session)
    rows = compare_modes(detect_modes(runs.sessions), detect_modes(runs.warm_sessions))
    if args.json:
        dump_json(mode_document(rows, [{**asdict(o), "session": str(o.session)} for o in runs.outcomes]))
    else:
        say(render_mode_rows(rows))
    return 0 if runs.outcomes and all(outcome.complete for outcome in runs.outcomes) else 1
