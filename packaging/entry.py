"""Entry point of the frozen app: the same `main` as the `compile-inspector` console script."""

import sys

from inspector.cli import main

if __name__ == "__main__":
    sys.exit(main())
