"""Command line front end: a thin shell over `inspector.core` (and `inspector.capture` for captures)."""

from __future__ import annotations

import argparse
import json
import sys

from inspector import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compile-inspector",
                                     description="See what torch.compile captured, broke, fused and generated.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="summarise a TORCH_TRACE log, debug folder or capture session")
    summary.add_argument("path")
    summary.add_argument("--json", action="store_true", help="print the versioned JSON summary")
    summary.add_argument("--strict", action="store_true", help="exit 3 when any part of the input is unreadable")
    summary.set_defaults(run=_summary)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # `compile-inspector summary … | head` closed the pipe: not an error
        sys.stderr.close()
        return 0


def _summary(args) -> int:
    from inspector.core.session_loader import NotCompileOutput, open_session
    from inspector.core.summary import render_text, summarize

    try:
        session = open_session(args.path)
    except (FileNotFoundError, NotCompileOutput) as error:
        print(f"compile-inspector: {error}", file=sys.stderr)
        return 2
    summary = summarize(session)
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
    else:
        print(render_text(summary))
    if args.strict and session.problems:
        print(f"compile-inspector: --strict: {session.problems.total} unreadable item(s) in the input",
              file=sys.stderr)
        return 3
    return 0
