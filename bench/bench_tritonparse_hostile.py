"""Hostile tritonparse traces against one or more checkouts: the classes of tests/test_tritonparse_hostile.py
(a gzip bomb of real launch events, a 300 MB line, a million launches, an IR of 7M lines), built from
the real traces in ../shared/corpus, each read by `compile-inspector summary` in a child process; prints
the wall time and the child's peak RSS per case, the intact trace first as the anchor.

    python bench/bench_tritonparse_hostile.py [CHECKOUT …]   # default: this one

A case past --timeout seconds prints "> N s"."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_tritonparse_hostile as cases  # noqa: E402

PEAK = ("import re, runpy, sys\nsys.argv = ['compile-inspector', *sys.argv[1:]]\n"
        "try:\n    runpy.run_module('inspector', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "status = open('/proc/self/status').read()\n"
        "print('peak-rss', re.search(r'VmHWM:\\s*(\\d+)', status)[1], file=sys.stderr)\n")


def build(folder: Path) -> dict[str, Path]:
    lines = cases._lines(cases.MAPPED)
    head = lines[0] + b'\n{"event_type": "launch", "name": "'
    return {
        "intact (anchor)": cases.MAPPED,
        "gzip bomb, 4.7 GB of launches": cases._bomb(folder / f"bomb_{cases.NAME}"),
        "one 300 MB line": cases._write(folder / f"line_{cases.NAME}", cases._member(head),
                                        *[cases._member(b"x" * (10 << 20))] * 30,
                                        cases._member(b'"}\n' + b"\n".join(lines[1:11]) + b"\n")),
        "1M launches": cases._many_launches(folder / f"launches_{cases.NAME}", 1_000_000),
        "TTIR of 7M lines": cases._write(folder / f"ir_{cases.NAME}", cases._member(cases._line(cases._long_ir()))),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkouts", nargs="*", default=[str(ROOT)])
    parser.add_argument("--timeout", type=float, default=90)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tritonparse-hostile-") as folder:
        traces = build(Path(folder))
        for checkout in args.checkouts:
            for label, path in traces.items():
                env = dict(os.environ, PYTHONPATH=checkout, TCI_NO_CACHE="1")
                started = time.perf_counter()
                try:
                    done = subprocess.run([sys.executable, "-c", PEAK, "summary", str(path)], capture_output=True,
                                          text=True, timeout=args.timeout, cwd=checkout, env=env)
                except subprocess.TimeoutExpired:
                    print(f"{checkout}\t{label}\t{path.stat().st_size >> 10} KiB\t> {args.timeout:.0f} s", flush=True)
                    continue
                took = time.perf_counter() - started
                peak = int(done.stderr.rsplit("peak-rss", 1)[1].split()[0]) >> 10 if "peak-rss" in done.stderr else -1
                crashed = " TRACEBACK" if "Traceback" in done.stderr else ""
                print(f"{checkout}\t{label}\t{path.stat().st_size >> 10} KiB\t{took:.1f} s\t{peak} MiB{crashed}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
