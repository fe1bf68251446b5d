"""The figures behind the kernel plots, from a capture's profile and the session: per-kernel time
(top N call sites of the one table of kernel time, source_time.py, the rest folded into one bar),
eager against compiled per op family, compile time per unit, memory eager against compiled."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.analysis.profile_ops import kernel_name, profile_ops
from inspector.core.analysis.source_time import KernelFigure, SourceTime
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session



@dataclass(frozen=True)
class BarRow:
    label: str
    value: float  # µs per profiled call of its unit
    name: str  # the kernel name, or "" for the folded rest
    share: float | None  # of its unit's profiled time
    site: KernelFigure | None = None  # the call site it is (its unit and kernel to select); None: the folded rest


def kernel_bars(table: SourceTime | None, top: int) -> list[BarRow]:
    """The `top` call sites with the most time, each of its own unit (a kernel name run by several
    units or from several call sites is a bar each), labelled with its unit and share of that unit."""
    if table is None:
        return []
    rows = [row for row in table.kernels if row.total_us > 0]

    def per_call(row: KernelFigure) -> float:
        return row.total_us / max(1, table.unit_figures[row.unit].calls)

    bars = []
    for row in rows[:top]:
        share = f"{row.share:.0%} of [{row.unit}]" if row.share is not None else f"[{row.unit}]"
        bars.append(BarRow(f"{row.name} line {row.call_line} ({share})", per_call(row), row.name, row.share, row))
    rest = rows[top:]
    if rest:
        bars.append(BarRow(f"{len(rest)} more call sites", sum(per_call(row) for row in rest), "", None))
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
