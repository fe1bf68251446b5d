"""Command line front end: a thin shell over `inspector.core` (and `inspector.capture` for captures)."""

from __future__ import annotations

import argparse
import json
import sys

from inspector import __version__
from inspector.capture.options import DYNAMIC, MODES


COMMANDS = ("summary", "capture", "bundle", "report", "diff", "check")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        from inspector.gui.app import main as gui_main  # `compile-inspector [PATH]` opens the app

        return gui_main(argv)
    parser = argparse.ArgumentParser(prog="compile-inspector",
                                     description="See what torch.compile captured, broke, fused and generated. "
                                                 "Without a command (or with a PATH) it opens the desktop app.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="summarise a TORCH_TRACE log, debug folder or capture session")
    summary.add_argument("path")
    summary.add_argument("--json", action="store_true", help="print the versioned JSON summary")
    summary.add_argument("--strict", action="store_true", help="exit 3 when any part of the input is unreadable")
    summary.set_defaults(run=_summary)
    capture = commands.add_parser(
        "capture", help="run a model script (or any command after --) under TORCH_TRACE and save a session",
        usage="compile-inspector capture SCRIPT [ARGS…] -o DIR [options]\n"
              "       compile-inspector capture -o DIR [options] -- COMMAND [ARGS…]")
    capture.add_argument("-o", "--output", required=True, help="session folder to write")
    capture.add_argument("--python", help="interpreter that runs the script (default: this one; in the frozen app, the first Python found)")
    capture.add_argument("--mode", default="default", choices=MODES)
    capture.add_argument("--dynamic", default="auto", choices=DYNAMIC)
    capture.add_argument("--fullgraph", action="store_true")
    capture.add_argument("--backend", default="inductor")
    capture.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    capture.add_argument("--runs", type=int, default=20, help="timed calls per measurement (default 20)")
    capture.add_argument("--warmup", type=int, default=3)
    capture.add_argument("--threads", type=int, help="OMP_NUM_THREADS for the run (recorded either way)")
    capture.add_argument("--no-profile", dest="profile", action="store_false")
    capture.add_argument("--timeout", type=float, help="stop the run after this many seconds")
    capture.add_argument("--quiet", action="store_true", help="no live progress lines")
    capture.add_argument("--overwrite", action="store_true", help="replace a session already in the output folder")
    capture.set_defaults(run=_capture)
    bundle = commands.add_parser("bundle", help="save a session folder as one .tcinspect file to share")
    bundle.add_argument("path")
    bundle.add_argument("-o", "--output", required=True)
    bundle.set_defaults(run=_bundle)
    report = commands.add_parser("report", help="write a self-contained HTML report of a session")
    report.add_argument("path")
    report.add_argument("-o", "--output", required=True)
    report.set_defaults(run=_report)
    diff = commands.add_parser("diff", help="what changed between two runs: breaks, recompiles, graphs, kernels, times")
    diff.add_argument("a")
    diff.add_argument("b")
    diff.add_argument("--stage", help="graph stage to diff (default: the first of dynamo, post_grad, aot_*)")
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(run=_diff)
    check = commands.add_parser("check", help="CI gate: exit 1 with a reason per failed check")
    check.add_argument("path")
    check.add_argument("--baseline", help="a run this one must not regress from (breaks, speedup)")
    check.add_argument("--max-breaks", type=int)
    check.add_argument("--min-speedup", type=float)
    check.add_argument("--max-compile-time", type=float, help="seconds")
    check.add_argument("--tolerance", type=float, default=0.1, help="allowed speedup drop vs the baseline (0.1 = 10%%)")
    check.set_defaults(run=_check)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    args, extra = parser.parse_known_args(argv)
    if args.command != "capture" and (extra or command):
        parser.error(f"unrecognized arguments: {' '.join(extra + command)}")
    if args.command == "capture":
        args.target, args.any_command = (command, True) if command else (extra, False)
        if not args.target:
            parser.error("capture needs a SCRIPT, or a command after --")
    try:
        return args.run(args)
    except BrokenPipeError:  # `compile-inspector summary … | head` closed the pipe: not an error
        sys.stderr.close()
        return 0


def _capture(args) -> int:
    from pathlib import Path

    from inspector.capture.launcher import CaptureProcess, CaptureSettings, clear_session, plan_command, plan_script
    from inspector.cli_progress import ProgressPrinter

    settings = CaptureSettings(mode=args.mode, dynamic=args.dynamic, fullgraph=args.fullgraph, backend=args.backend,
                               device=args.device, runs=args.runs, warmup=args.warmup, profile=args.profile,
                               timeout_s=args.timeout, threads=args.threads)
    session = Path(args.output)
    if session.exists() and any(session.iterdir()):
        if not args.overwrite:
            print(f"compile-inspector: {session} is not empty; choose a new folder or pass --overwrite",
                  file=sys.stderr)
            return 2
        clear_session(session)
    if args.any_command:
        plan = plan_command(args.target, session, settings)
    else:
        script = Path(args.target[0])
        if not script.is_file():
            print(f"compile-inspector: {script} is not a file", file=sys.stderr)
            return 2
        plan = plan_script(script, args.target[1:], session, settings, args.python)
    try:
        process = CaptureProcess(plan)
    except OSError as error:
        print(f"compile-inspector: cannot start {plan.command[0]}: {error}", file=sys.stderr)
        return 2
    printer = ProgressPrinter(plan.session, sys.stderr, quiet=args.quiet)
    try:
        process.wait(on_tick=printer.tick)
    except KeyboardInterrupt:
        process.stop("cancelled")
        process.poll()
    printer.tick()
    code = process.exit_code
    printer.finish(code)
    return code if code is not None else 1


def _open(path: str):
    """The session at `path`, or None after saying why it cannot be opened."""
    from inspector.core.readers.session_loader import open_session

    try:
        return open_session(path)
    except (FileNotFoundError, ValueError) as error:  # not compile output, or an unsafe bundle
        print(f"compile-inspector: {error}", file=sys.stderr)
        return None


def _bundle(args) -> int:
    from pathlib import Path

    from inspector.core.readers.session_bundle import save_bundle

    folder = Path(args.path)
    if not folder.is_dir():
        print(f"compile-inspector: {folder} is not a folder", file=sys.stderr)
        return 2
    if _open(args.path) is None:
        return 2
    out, skipped = save_bundle(folder, args.output)
    for name in skipped:
        print(f"left out (a symbolic link): {name}", file=sys.stderr)
    print(out)
    return 0


def _report(args) -> int:
    from pathlib import Path

    from inspector.core.outputs.html_report import render_report

    session = _open(args.path)
    if session is None:
        return 2
    Path(args.output).write_text(render_report(session), encoding="utf-8")
    print(args.output)
    return 0


def _diff(args) -> int:
    from inspector.core.analysis.run_diff import diff_runs

    a, b = _open(args.a), _open(args.b)
    if a is None or b is None:
        return 2
    result = diff_runs(a, b, args.stage)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    print(f"A: {result['runs']['a']}\nB: {result['runs']['b']}")
    if "note" in result["runs"]:
        print(f"note: {result['runs']['note']}")
    breaks = result["breaks"]
    print(f"\nGraph breaks: {breaks['count_a']} → {breaks['count_b']}")
    for label, key in (("new", "new"), ("fixed", "fixed")):
        for site in breaks[key]:
            print(f"  {label}: {site['location']}  {site['reason']}")
    for site in breaks["moved"]:
        print(f"  moved: {site['from']} → {site['to']}  {site['reason']}")
    print(f"Recompiles: {result['recompiles']['count_a']} → {result['recompiles']['count_b']}")
    print("\nCompile units (graph similarity, added/removed/changed nodes):")
    for row in result["units"]:
        graph = row.get("graph")
        detail = (f"{row['stage']}: similarity {graph['similarity']:.2f} (structure {graph['structural_similarity']:.2f}), "
                  f"+{len(graph['added'])} "
                  f"-{len(graph['removed'])} ~{len(graph['changed'])}") if graph else row.get("note", "")
        print(f"  {row['compile_id']:<8} {row['status']:<10} {detail}")
    timing = result["compile_time"]
    print(f"\nCompile time: {_s(timing['total_a'])} → {_s(timing['total_b'])}")
    for row in timing["per_stage"][:6]:
        print(f"  {row['stage']:<40} {row['a_s']:8.3f} s → {row['b_s']:8.3f} s")
    kernels = result["kernels"]
    print(f"\nKernels: +{len(kernels['added'])} -{len(kernels['removed'])} renamed {len(kernels['renamed'])}, "
          f"{len(kernels['code_diffs'])} with changed code")
    for name in kernels["added"][:10]:
        print(f"  added: {name}")
    for name in kernels["removed"][:10]:
        print(f"  removed: {name}")
    steady = result["steady_state"]
    print(f"\nSteady state: {_s(steady['a_s'])} → {_s(steady['b_s'])} per call; speedup "
          f"{_x(steady['speedup_a'])} → {_x(steady['speedup_b'])}")
    return 0


def _s(value) -> str:
    return f"{value:.6g} s" if value is not None else "n/a"


def _x(value) -> str:
    return f"{value:.3f}×" if value is not None else "n/a"


def _check(args) -> int:
    from inspector.core.analysis.run_diff import check_run

    session = _open(args.path)
    baseline = _open(args.baseline) if args.baseline else None
    if session is None or (args.baseline and baseline is None):
        return 2
    checks = check_run(session, baseline, args.max_breaks, args.min_speedup, args.max_compile_time, args.tolerance)
    for check in checks:
        print(f"{'PASS' if check.passed else 'FAIL'} {check.name}: {check.reason}")
    return 0 if all(check.passed for check in checks) else 1


def _summary(args) -> int:
    from inspector.core.outputs.cached_summary import session_summary
    from inspector.core.outputs.summary import render_text

    session = _open(args.path)
    if session is None:
        return 2
    summary = session_summary(session)
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
    else:
        print(render_text(summary))
    unreadable = sum(entry["count"] for entry in summary["unreadable"].values())
    if args.strict and unreadable:
        print(f"compile-inspector: --strict: {unreadable} unreadable item(s) in the input",
              file=sys.stderr)
        return 3
    return 0
