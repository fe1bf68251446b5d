"""Entry point of the frozen app: the same `run` as the `compile-inspector` console script."""

import multiprocessing
import sys

from inspector.__main__ import run

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the per-rank index spawns worker processes: in a frozen app they start here
    sys.exit(run())
