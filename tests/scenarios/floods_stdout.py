"""Prints ~30 MB: the app must not hold it in memory."""

import sys

line = "x" * 1023 + "\n"
for _ in range(30 * 1024):
    sys.stdout.write(line)
