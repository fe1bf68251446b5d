"""Numbers as people read them: times in s, ms, µs or ns (never "4e+03 s"), counts with thousands
separators and the noun in the singular or the plural ("1 unit", "6,270 ops"). Pure functions, no
Qt: the desktop views and the text summary share them, so one figure reads the same everywhere."""

from __future__ import annotations

import math

TIME_STEPS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
PLURALS = {"calls": "call", "ops": "op", "kernels": "kernel", "units": "unit", "ranks": "rank", "frames": "frame",
           "nodes": "node", "breaks": "break", "recompiles": "recompile", "sites": "site", "attempts": "attempt"}


def number(value: float, digits: int = 3) -> str:
    """`digits` significant digits below 1,000, whole numbers with separators above: 0.0421, 3.14,
    42.5, 6,270, 1,234,567 — no exponent for anything a compile run produces."""
    if value is None:
        return "—"
    if not math.isfinite(value):
        return "∞" if value > 0 else "−∞" if value < 0 else "—"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 10 ** (digits - 1):
        return f"{round(value):,}"
    if abs(value) < 1e-4:
        return f"{value:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def seconds(value: float | None, digits: int = 3) -> str:
    """A duration in the unit that keeps it between 1 and 1,000 where it can: 4,012 s, 3.21 s,
    12.3 ms, 45.6 µs, 820 ns."""
    if value is None:
        return "—"
    if not math.isfinite(value) or value == 0:
        return f"{number(value)} s"
    for scale, unit in TIME_STEPS:
        if abs(value) >= scale or unit == "ns":
            return f"{number(value / scale, digits)} {unit}"
    return "0 s"


def megabytes(size: int) -> str:
    """A file's size as the progress bar and a preview say it: "8 MB", "1,056 MB" (10⁶ bytes)."""
    return f"{number(round(size / 1e6))} MB"


def count(value: float, noun: str, plural: str | None = None) -> str:
    """"1 unit", "2 units", "6,270 ops": `noun` is the singular; `plural` defaults to noun + s."""
    if value is None:
        return f"— {plural or noun + 's'}"
    word = noun if value == 1 else plural or noun + "s"
    return f"{number(value)} {word}"


def quantity(value: float | None, unit: str) -> str:
    """A figure with its unit from the verdict ("s", "s/call", "ops", "×", "%", "ops/kernel")."""
    if value is None:
        return "—"
    if unit == "s" or unit.startswith("s/"):
        return seconds(value) + unit[1:]
    if unit in PLURALS:
        return count(value, PLURALS[unit], unit)
    if unit in ("×", "%"):
        return f"{number(value)}{unit}"
    return f"{number(value)} {unit}".strip()
