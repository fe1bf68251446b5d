"""The figures behind the kernel plots, from a capture's profile and the session: per-kernel time
(top N, the rest folded into one bar), eager against compiled per op family, compile time per unit,
memory eager against compiled."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.analysis.profile_ops import kernel_name, profile_ops
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session



@dataclass(frozen=True)
class BarRow:
    label: str
    value: float  # µs per call
    name: str  # the kernel name to select, or "" for the folded rest
    share: float


def kernel_bars(results: RunResults | None, top: int) -> list[BarRow]:
    ops = profile_ops(results)
    if ops is None:
        return []
    key, total = ops.key, ops.total
    rows = [row for row in ops.rows if row.time(key) > 0]
    bars = [BarRow(f"{row.name} ({row.time(key) / total:.0%})", ops.per_call_us(row), kernel_name(row.name),
                   row.time(key) / total) for row in rows[:top]]
    rest = rows[top:]
    if rest:
        folded = sum(row.time(key) for row in rest)
        bars.append(BarRow(f"{len(rest)} more ({folded / total:.0%})", folded / ops.runs, "", folded / total))
    return bars


def op_family(name: str) -> str:
    """`aten::addmm` → `addmm`; generated kernels → `generated kernels`; the rest by their own name."""
    if name.startswith("aten::"):
        return name[len("aten::"):]
    if kernel_name(name) != name or name.startswith(("triton_", "cpp_fused")):
        return "generated kernels"
    return name


def op_family_bars(results: RunResults | None, top: int = 12) -> list[tuple[str, float | None, float | None]]:
    """(family, eager µs/call, compiled µs/call), the families costing most in either run first."""
    totals: dict[str, list[float]] = {}
    for column, label in enumerate(("eager", "compiled")):
        ops = profile_ops(results, label)
        for row in ops.rows if ops else []:
            family = totals.setdefault(op_family(row.name), [0.0, 0.0])
            family[column] += ops.per_call_us(row)
    ranked = sorted(totals.items(), key=lambda item: -max(item[1]))[:top]
    return [(family, values[0], values[1]) for family, values in ranked]


def compile_time_per_unit(session: Session) -> list[tuple[str, float]]:
    """(the unit as the session tree names it, whole: a view elides it to its room; its compile seconds).
    In a distributed run each name starts with its rank: ranks share compile ids."""
    ranked = len(session.ranks) > 1
    return [((f"rank {unit.rank} " if ranked and unit.rank is not None else "") + unit_title(unit), unit.compile_s)
            for unit in session.units if unit.compile_s is not None]


def slowest_units(rows: list[tuple[str, float]], top: int) -> list[tuple[str, float]]:
    """The `top` slowest of `compile_time_per_unit`'s rows, in the session's order (a 1,024-rank job
    has ~7,000 units: a bar each is neither readable nor cheap to draw)."""
    if len(rows) <= top:
        return rows
    kept = sorted(sorted(range(len(rows)), key=lambda index: -rows[index][1])[:top])
    return [rows[index] for index in kept]


def memory_bars(results: RunResults | None) -> list[tuple[str, float | None, float | None]]:
    if results is None:
        return []
    eager, compiled = results.memory_eager or {}, results.memory_compiled or {}
    return [(key.replace("_mb", ""), eager.get(key), compiled.get(key)) for key in compiled
            if key in eager and not key.endswith("_start_mb")]  # the peaks, not what each phase began with


RUNNING_PEAK = ("the process's running peak, taken one after the other: the compiled run includes the eager "
                "run's peak, so it can never come out lower")


def memory_measured(results: RunResults | None) -> str:
    """What the memory figures are, in words: a peak per phase, or (older captures, or where the reset
    was refused) the process's running peak."""
    return (results.memory_method if results is not None and results.memory_method else RUNNING_PEAK)
