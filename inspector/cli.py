"""Command line front end: a thin shell over `inspector.core` (and `inspector.capture` for captures)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from inspector import __version__
from inspector.cli_capture import add_capture_commands
from inspector.cli_history import add_history_command, add_history_switches, hashed_ahead, record_history
from inspector.cli_text import dump_json as _dump_json, say as _say, say_interrupted
from inspector.core.analysis.dask_engine import DEFAULT_TIMEOUT_S
from inspector.core.gc_policy import collector_paused

COMMANDS = ("summary", "capture", "modes", "bundle", "report", "diff", "check", "history")
READS_SESSIONS = ("summary", "report", "diff", "check")  # run with the collector paused (core/gc_policy.py)
EXIT_INCONCLUSIVE = 4  # `check`: nothing failed, but a speedup check could not tell


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        from inspector.gui.app import main as gui_main  # `compile-inspector [PATH]` opens the app

        return gui_main(argv)
    parser = _parser()
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    args, extra = parser.parse_known_args(argv)
    if args.command not in ("capture", "modes") and (extra or command):
        parser.error(f"unrecognized arguments: {' '.join(extra + command)}")
    if args.command == "capture":
        args.target, args.any_command = (command, True) if command else (extra, False)
        if not args.target:
            parser.error("capture needs a SCRIPT, or a command after --")
    if args.command == "modes":
        args.target = extra + command
        if not args.target:
            parser.error("modes needs a SCRIPT")
    cache_setting = os.environ.get("TCI_NO_CACHE")
    if getattr(args, "no_cache", False):
        os.environ["TCI_NO_CACHE"] = "1"  # the one switch the index cache reads
    reads = args.command in READS_SESSIONS
    try:
        with _ctrl_c_noted() if reads else nullcontext(), collector_paused() if reads else nullcontext():
            return args.run(args)
    except BrokenPipeError:  # `compile-inspector summary … | head` closed the pipe: not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:  # Ctrl-C during a long read
        return say_interrupted()
    finally:
        if cache_setting is None:
            os.environ.pop("TCI_NO_CACHE", None)


def _parser() -> argparse.ArgumentParser:
    """Every command, its arguments and their help: what `compile-inspector --help` lists."""
    parser = argparse.ArgumentParser(prog="compile-inspector",
                                     description="See what torch.compile captured, broke, fused and generated. "
                                                 "Without a command (or with a PATH) it opens the desktop app.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="summarise a TORCH_TRACE log, debug folder or capture session")
    summary.add_argument("path")
    summary.add_argument("--json", action="store_true", help="print the versioned JSON summary")
    summary.add_argument("--strict", action="store_true", help="exit 3 when any part of the input is unreadable")
    summary.add_argument("--markdown", action="store_true", help="print a Markdown summary for a pull-request comment")
    summary.add_argument("--dask", metavar="ADDRESS",
                         help="with a folder of rank logs: read them on the Dask cluster at ADDRESS (tls://host:8786 "
                              "with --dask-tls-*), one task per log where the logs lie, and print the job's rank "
                              "overview (needs the dask extra)")
    summary.add_argument("--dask-tls-ca", metavar="FILE", default="",
                         help="the CA certificate that signed the Dask scheduler's certificate")
    summary.add_argument("--dask-tls-cert", metavar="FILE", default="",
                         help="this client's certificate for the Dask cluster (may hold its key too)")
    summary.add_argument("--dask-tls-key", metavar="FILE", default="", help="this client's private key")
    summary.add_argument("--dask-allow-insecure", action="store_true",
                         help="allow a plain tcp:// scheduler: unencrypted and unauthenticated, so the scheduler (or "
                              "anyone on the network answering for it) can run code on this machine, in this "
                              "process; only tls:// with your certificates prevents that")
    summary.add_argument("--dask-timeout", metavar="SECONDS", type=_dask_seconds, default=DEFAULT_TIMEOUT_S,
                         help="how long to try reaching the Dask scheduler before giving up (default %(default)g)")
    summary.add_argument("--profile", metavar="TRACE",
                         help="a torch.profiler trace of the same run: kernel time per kernel, FX node, module and "
                              "source line (without it, a profiler trace beside the log is read)")
    summary.add_argument("--triton", metavar="TRACE",
                         help="a tritonparse trace of the same run: which of the run's kernels each compilation is, "
                              "with its IR stages and compile metadata")
    _add_no_cache(summary)
    summary.set_defaults(run=_summary)
    add_history_switches(summary)
    add_capture_commands(commands)
    bundle = commands.add_parser("bundle", help="save a session folder as one .tcinspect file to share")
    bundle.add_argument("path", help="the session folder (a capture's, a TORCH_TRACE folder, a debug folder)")
    bundle.add_argument("-o", "--output", required=True, help="the .tcinspect file to write (never over an input)")
    bundle.set_defaults(run=_bundle)
    report = commands.add_parser("report", help="write a self-contained HTML report of a session")
    report.add_argument("path")
    report.add_argument("-o", "--output", required=True)
    _add_no_cache(report)
    report.set_defaults(run=_report)
    diff = commands.add_parser("diff", help="what changed between two runs: breaks, recompiles, graphs, kernels, times")
    diff.add_argument("a")
    diff.add_argument("b")
    diff.add_argument("--stage", help="graph stage to diff (default: the first of dynamo, post_grad, aot_*)")
    diff.add_argument("--json", action="store_true")
    diff.add_argument("--xla-module", help="with an XLA dump: the module to compare (default: the largest)")
    _add_no_cache(diff)
    diff.set_defaults(run=_diff)
    check = commands.add_parser("check", help="CI gate: exit 1 with a reason per failed check, 4 when a speedup "
                                              "check is inconclusive (noisy timing) and nothing failed")
    check.add_argument("path")
    check.add_argument("--baseline", help="a run this one must not regress from (breaks, speedup)")
    check.add_argument("--max-breaks", type=int)
    check.add_argument("--min-speedup", type=float)
    check.add_argument("--max-compile-time", type=float, help="seconds")
    check.add_argument("--max-rank-divergence", type=int, metavar="N",
                       help="fail when the ranks of a distributed run differ in more than N ways")
    check.add_argument("--max-export-issues", type=int, metavar="N",
                       help="fail when torch.export met more than N issues (data-dependent expressions, fake kernels)")
    check.add_argument("--tolerance", type=float, default=0.1, help="allowed speedup drop vs the baseline (0.1 = 10%%)")
    check.add_argument("--junit", metavar="FILE", help="also write the checks as JUnit XML (one testcase per check)")
    check.add_argument("--sarif", metavar="FILE",
                       help="also write graph breaks and recompiles as SARIF 2.1.0 at your source lines "
                            "(code scanning)")
    check.add_argument("--source-root", metavar="DIR",
                       help="repository root that SARIF paths are relative to (default: the current folder)")
    _add_no_cache(check)
    check.set_defaults(run=_check)
    add_history_check(check)
    add_history_command(commands)
    return parser


@contextmanager
def _ctrl_c_noted() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt, as Python's own handler does, and is noted: one that lands in a
    finaliser (a `__del__`, a weakref callback, run as a read's objects go) is dropped there by Python,
    which prints a traceback and goes on, so the command would end as if never interrupted. It is
    raised again once the command returns. (A command that handles Ctrl-C itself, capture, is left
    out.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted = []

    def interrupt(_signum, _frame):
        noted.append(True)
        raise KeyboardInterrupt

    def unraisable(unraised):
        if not (unraised.exc_type and issubclass(unraised.exc_type, KeyboardInterrupt)):  # noted already
            previous_hook(unraised)

    previous, previous_hook = signal.signal(signal.SIGINT, interrupt), sys.unraisablehook
    sys.unraisablehook = unraisable
    try:
        yield
        if noted:
            raise KeyboardInterrupt
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = previous_hook


def _add_no_cache(command) -> None:
    command.add_argument("--no-cache", action="store_true",
                         help="read the input again instead of using (or writing) the index cache (as TCI_NO_CACHE=1)")


def _detect(path: str):
    """The detected input at `path`, or None after saying why nothing there can be opened."""
    from inspector.core.readers.sources import detect

    try:
        return detect(path)
    except (OSError, ValueError) as error:  # missing, not compile output, refused
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return None


def _open(path: str):
    """The session at `path`, detected here (at the edge) and read, or None after saying why it cannot be opened."""
    source = _detect(path)
    return None if source is None else _read(source)


def _read(source):
    """The session a detected Source holds, or None after saying why it cannot be opened."""
    from inspector.core.readers.session_loader import open_session

    try:
        return open_session(source)
    except (FileNotFoundError, ValueError) as error:  # not compile output, or an unsafe bundle
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return None


def _bundle(args) -> int:
    from pathlib import Path

    from inspector.core.readers.session_bundle import save_bundle

    folder = Path(args.path)
    if not folder.is_dir():
        _say(f"compile-inspector: {folder} is not a folder", file=sys.stderr)
        return 2
    if _open(args.path) is None:
        return 2
    try:
        out, skipped = save_bundle(folder, args.output)
    except (OSError, ValueError) as error:  # ValueError: OutputRefused, the path cannot or must not be written
        _say(f"compile-inspector: {_write_failure(args.output, error)}", file=sys.stderr)
        return 2
    for name in skipped:
        _say(f"left out (a link, FIFO or device, not a regular file): {name}", file=sys.stderr)
    _say(out)
    return 0


def _report(args) -> int:
    from inspector.core.output_file import checked_target, write_text
    from inspector.core.outputs.html_report import render_report

    try:
        checked_target(args.output, [args.path])  # before the read: a refused path is known at once
    except ValueError as error:
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    session = _open(args.path)
    if session is None:
        return 2
    try:
        write_text(args.output, render_report(session), [args.path, session.source])
    except (OSError, ValueError) as error:
        _say(f"compile-inspector: {_write_failure(args.output, error)}", file=sys.stderr)
        return 2
    _say(args.output)
    return 0


def _write_failure(target: str, error: Exception) -> str:
    """Why `target` was not written, in one line (nothing was left half-written)."""
    if isinstance(error, OSError):
        return f"cannot write {target}: {error.strerror or error}"
    return str(error)


def _diff(args) -> int:
    from inspector.core.analysis.run_diff import diff_runs
    from inspector.core.outputs.diff_report import diff_sections
    from inspector.core.outputs.kind_documents import run_comparison
    from inspector.core.outputs.sections import as_text

    sources = _detect(args.a), _detect(args.b)
    if None in sources:
        return 2
    if any(run_comparison(source.kind) for source in sources):
        return _diff_with_document(args, *sources)
    a, b = _read(sources[0]), _read(sources[1])
    if a is None or b is None:
        return 2
    result = diff_runs(a, b, args.stage)
    if args.json:
        _dump_json(result)
        return 0
    _say(as_text(diff_sections(result)))
    return 0


def _check(args) -> int:
    """`check`, and with --history the checks against the run history too, both of the one session
    opened here: the record the history keeps is the run the gate judged. The exit code is the worse
    of the two (2 usage, 1 failed, 4 inconclusive, 0 passed)."""
    with hashed_ahead(args, args.path) if args.history else nullcontext():
        return _check_of(args)


def _check_of(args) -> int:
    from inspector.core.analysis.session_analysis import SessionAnalysis

    session = _open(args.path)
    baseline = _open(args.baseline) if args.baseline else None
    if session is None or (args.baseline and baseline is None):
        return 2
    code = _gate(args, SessionAnalysis(session), baseline)
    if not args.history or code == 2:
        return code
    return _gate_on_history(args, session, code)


def _gate(args, analysis, baseline) -> int:
    """The checks the options ask for, said one a line and written as the CI reports asked for."""
    from inspector.core.analysis.run_diff import check_run

    try:
        checks = check_run(analysis, baseline, args.max_breaks, args.min_speedup, args.max_compile_time,
                           args.tolerance, args.max_rank_divergence, args.max_export_issues)
    except ValueError as error:  # a negative minimum or tolerance: nonsense, not a gate
        _say(f"compile-inspector: check: {error}", file=sys.stderr)
        return 2
    for check in checks:
        _say(f"{check.word} {check.name}: {check.reason}")
    failure = _write_ci_reports(args, analysis, checks)
    if failure:  # an unwritable or refused report path is a usage error, not a failed gate
        _say(f"compile-inspector: check: {failure}", file=sys.stderr)
        return 2
    if any(check.passed is False for check in checks):
        return 1
    return EXIT_INCONCLUSIVE if any(check.passed is None for check in checks) else 0


def _write_ci_reports(args, analysis, checks) -> str | None:
    """`check --junit/--sarif`: the same checks and findings in the formats CI systems read; returns
    why one could not be written (None when all were)."""
    from pathlib import Path

    from inspector.core.output_file import write_text
    from inspector.core.outputs.ci_reports import junit_xml, sarif_log
    from inspector.core.outputs.summary import summarize

    inputs = [path for path in (args.path, args.baseline, analysis.session.source) if path]
    renders = ((args.junit, lambda: junit_xml(checks, str(analysis.session.source))),
               (args.sarif, lambda: json.dumps(sarif_log(summarize(analysis),
                                                         Path(args.source_root) if args.source_root else None),
                                               indent=1)))
    # every report made before any is written: a CI job never finds a PASS JUnit beside a missing SARIF
    reports = [(target, render()) for target, render in renders if target]
    for target, text in reports:
        try:
            write_text(target, text, inputs)
        except (OSError, ValueError) as error:
            return _write_failure(target, error)
    return None


def _summary(args) -> int:
    with hashed_ahead(args, args.path):  # first: the digest is worked out while the command imports and reads
        return _summary_of(args)


def _summary_of(args) -> int:
    from inspector.core.analysis.session_analysis import SessionAnalysis
    from inspector.core.outputs.cached_summary import session_summary
    from inspector.core.outputs.gpu_summary import with_profile, with_triton
    from inspector.core.outputs.kind_documents import session_unreadable
    from inspector.core.outputs.summary_text import render_text
    from inspector.core.readers.sources import TRITON_TRACE, detect_as

    if args.markdown and args.triton:
        _say("compile-inspector: --triton goes with the text and --json summaries, not --markdown", file=sys.stderr)
        return 2
    source = _detect(args.path)
    if source is None:
        return 2
    if args.dask:
        return _rank_overview_on_dask(args, source)
    if args.dask_tls_ca or args.dask_tls_cert or args.dask_tls_key or args.dask_allow_insecure:
        _say("compile-inspector: --dask-tls-* and --dask-allow-insecure go with --dask ADDRESS", file=sys.stderr)
        return 2
    if not source.kind.opens_session:
        return _summary_document(args, source)
    session = _read(source)
    if session is None:
        return 2
    from inspector.core.history.log_digests import wait_for_digests

    wait_for_digests()  # the summary below forks a copy, which must start with one thread
    if args.markdown:
        from inspector.core.outputs.ci_reports import markdown
        from inspector.core.outputs.summary import summarize

        analysis = SessionAnalysis(session)
        analysis.make_summary_facts(two_cores=True)  # this process is the command's own, one thread
        summary = summarize(analysis)
        _say(markdown(summary).rstrip("\n"))
    else:
        try:  # from the index cache when this log was summarised before; the profile read anew
            summary, profile_text = with_profile(session_summary(session, two_cores=True), session, args.profile)
        except ValueError as error:
            _say(f"compile-inspector: --profile: {error}", file=sys.stderr)
            return 2
        triton_text = ""
        if args.triton:
            try:
                summary, triton_text = with_triton(summary, session, detect_as(args.triton, TRITON_TRACE))
            except ValueError as error:
                _say(f"compile-inspector: --triton: {error}", file=sys.stderr)
                return 2
        if args.json:
            _dump_json(summary)
        else:
            _say("\n\n".join(text for text in (render_text(summary), profile_text, triton_text) if text))
    record_history(args, session, summary)
    return _strict_exit(args, session_unreadable(summary), "in the input")


def _strict_exit(args, unreadable: int, where: str) -> int:
    """`summary --strict`: exit 3, saying how many, when any part of the input was unreadable."""
    if args.strict and unreadable:
        _say(f"compile-inspector: --strict: {unreadable} unreadable item(s) {where}", file=sys.stderr)
        return 3
    return 0


def _dask_seconds(text: str) -> float:
    """--dask-timeout: a finite number of seconds above 0 (argparse turns the error into exit 2)."""
    from inspector.core.analysis.dask_engine import DaskSetupError, checked_timeout

    try:
        return checked_timeout(text)
    except DaskSetupError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _rank_overview_on_dask(args, source) -> int:
    """`summary JOB --dask ADDRESS`: the per-rank figures and divergence report of a folder of rank
    logs, each log read by a worker of the cluster (which must see the logs at the same paths, as on
    a shared filesystem), only the small figures sent back."""
    from inspector.core.analysis.dask_engine import INSECURE_WARNING, DaskSetupError, DaskTarget, EngineUnavailable
    from inspector.core.loading import rank_overview
    from inspector.core.outputs.summary_text import render_ranks

    if not source.kind.per_rank:
        _say(f"compile-inspector: --dask reads a folder of rank logs; {source.path} is {source.kind.expected}",
             file=sys.stderr)
        return 2
    try:
        target = DaskTarget(args.dask, args.dask_tls_ca, args.dask_tls_cert, args.dask_tls_key,
                            args.dask_allow_insecure).checked()
    except DaskSetupError as error:
        _say(f"compile-inspector: --dask: {error}", file=sys.stderr)
        return 2
    if not target.uses_tls:
        _say(f"compile-inspector: warning: {INSECURE_WARNING} ({target.address}, allowed by --dask-allow-insecure)",
             file=sys.stderr)
    try:
        cluster = rank_overview(source.files, target, fall_back=False, timeout_s=args.dask_timeout).cluster
    except EngineUnavailable as error:
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    document = {"schema": "rank-overview/1", "source": str(source.path), "kind": source.kind.name,
                "engine": {"dask": cluster.address, "workers": cluster.workers}, "per_rank": cluster.report.get_state()}
    if args.json:
        _dump_json(document)
    else:
        _say(f"{source.path}: {cluster.said(len(cluster.report.figures))}")
        _say(render_ranks(cluster.report))
    return 0


def _summary_document(args, source) -> int:
    """`summary` of an input that is no torch.compile session (an XLA dump, a tritonparse trace, a
    profiler trace, a folder of profiler traces one per rank, a mode comparison's folder): the summary
    its kind offers (core/outputs/kind_documents.py), as JSON or text."""
    from inspector.core.outputs.kind_documents import document_of

    offered = document_of(source.kind)
    try:
        summary = offered.summarize(source.open())
    except (OSError, ValueError) as error:  # the file as a whole is not what its start promised
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    document = offered.as_json(summary)
    if args.json:
        _dump_json(document)
    else:
        _say(offered.as_text(summary))
    return _strict_exit(args, offered.unreadable(document), f"in {source.path}")


def _diff_with_document(args, a, b) -> int:
    """`diff` of a torch.compile run against an input its kind compares with one (either order), as an
    XLA dump's fusion comparison."""
    from inspector.core.outputs.kind_documents import run_comparison

    run, other = (b, a) if run_comparison(a.kind) else (a, b)
    comparison = run_comparison(other.kind)
    if run_comparison(run.kind):
        print(f"compile-inspector: {comparison.both_alike}", file=sys.stderr)
        return 2
    session = _read(run)
    if session is None:
        return 2
    try:
        result = comparison.compare(session, other, args.xla_module)
    except ValueError as error:  # e.g. no such module in the dump
        _say(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    if args.json:
        _dump_json(result)
    else:
        _say(comparison.render(result))
    return 0


# --- the run history (inspector/core/history) ------------------------------------------------------

def add_history_check(check) -> None:
    """`check RUN --history`: the run against the recent runs of its script."""
    check.add_argument("--history", action="store_true",
                       help="also compare the run with the recent runs of the same script in the run history: fail "
                            "on new graph breaks or recompile causes, slower compile or speed beyond the noise, or "
                            "a cache hit rate that fell")
    check.add_argument("--store", metavar="ADDRESS", help="the run history to read (as for `history`)")


def _gate_on_history(args, session, code: int) -> int:
    """`check --history`: the opened `session` against the recent runs of its script, after the gate
    that gave `code`; the worse of the two exit codes."""
    from inspector.core.history.recording import check_session
    from inspector.core.outputs.cached_summary import session_summary

    checks, recorded = check_session(session, session_summary(session), args.store, args.tolerance,
                                     failed_elsewhere=code == 1)
    for check in checks:
        _say(f"{check.word} {check.name}: {check.reason}")
    if recorded.failed:
        _say(f"compile-inspector: {recorded.said}", file=sys.stderr)
    if code == 1 or any(check.passed is False for check in checks):
        return 1
    return EXIT_INCONCLUSIVE if code == EXIT_INCONCLUSIVE or any(check.passed is None for check in checks) else code
