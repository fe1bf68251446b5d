"""The fuzz suite's long run: thousands of mutated logs, capture sessions and bundles, with the same
checks as tests/test_fuzz.py (no exception, no hang, no write outside the case's folder, no read of
/dev, /proc or the planted secret's folder, the secret in no output).

    python bench/bench_fuzz.py [--cases 1000] [--start 100000] [--kinds logs,sessions,bundles]

Seeds start past the ones CI runs; a failure prints its kind and seed, and
`run_case(<kind>_case, seed, folder)` from tests/test_fuzz.py rebuilds it exactly. Exits 1 when any
case fails.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fuzz_cases import bundle_case, log_case, session_case  # noqa: E402
from test_fuzz import run_case  # noqa: E402

KINDS = {"logs": log_case, "sessions": session_case, "bundles": bundle_case}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="cases of each kind")
    parser.add_argument("--start", type=int, default=100_000, help="first seed")
    parser.add_argument("--kinds", default="logs,sessions,bundles")
    args = parser.parse_args()
    failures: list[str] = []
    for kind in args.kinds.split(","):
        make = KINDS[kind]
        started = time.perf_counter()
        for seed in range(args.start, args.start + args.cases):
            root = Path(tempfile.mkdtemp(prefix=f"fuzz-{kind}-{seed}-"))
            try:
                run_case(make, seed, root)
            except BaseException as error:  # pytest.fail raises an OutcomeException, a BaseException
                if isinstance(error, KeyboardInterrupt):
                    raise
                failures.append(f"{kind} seed {seed}: {str(error)[:2000]}")
                print(failures[-1], file=sys.stderr)
            finally:
                shutil.rmtree(root, ignore_errors=True)
        seconds = time.perf_counter() - started
        print(f"{kind}: {args.cases} cases in {seconds:.1f} s ({seconds / max(1, args.cases) * 1000:.0f} ms/case)")
    print(f"{len(failures)} failing case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
