"""The figures behind the kernel plots, from a capture's profile and the session: per-kernel time
(top N, the rest folded into one bar), eager against compiled per op family, compile time per unit,
memory eager against compiled."""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.core.session import Session

_CPU_KERNEL = re.compile(r"^graph_\d+_")
WRAPPERS = ("Torch-Compiled Region", "TorchDynamo", "## ", "Pregraph bytecode", "AOTDispatcher", "CompiledFunction")


@dataclass(frozen=True)
class BarRow:
    label: str
    value: float  # µs per call
    name: str  # the kernel name to select, or "" for the folded rest
    share: float


def kernel_bars(results: dict, top: int) -> list[BarRow]:
    profile = (results.get("profile") or {}).get("compiled")
    if not profile:
        return []
    key, runs = profile.get("time_key", "self_cpu_us"), profile.get("runs") or 1
    rows = [row for row in profile.get("ops", []) if not row["name"].startswith(WRAPPERS) and row.get(key, 0) > 0]
    rows.sort(key=lambda row: -row.get(key, 0))
    total = sum(row[key] for row in rows) or 1.0
    bars = [BarRow(f"{row['name']} ({row[key] / total:.0%})", row[key] / runs, _CPU_KERNEL.sub("", row["name"]),
                   row[key] / total) for row in rows[:top]]
    rest = rows[top:]
    if rest:
        folded = sum(row[key] for row in rest)
        bars.append(BarRow(f"{len(rest)} more ({folded / total:.0%})", folded / runs, "", folded / total))
    return bars


def op_family(name: str) -> str:
    """`aten::addmm` → `addmm`; generated kernels → `generated kernels`; the rest by their own name."""
    if name.startswith("aten::"):
        return name[len("aten::"):]
    if _CPU_KERNEL.match(name) or name.startswith(("triton_", "cpp_fused")):
        return "generated kernels"
    return name


def op_family_bars(results: dict, top: int = 12) -> list[tuple[str, float | None, float | None]]:
    """(family, eager µs/call, compiled µs/call), the families costing most in either run first."""
    profiles = results.get("profile") or {}
    totals: dict[str, list[float]] = {}
    for column, label in enumerate(("eager", "compiled")):
        profile = profiles.get(label)
        if not profile:
            continue
        key, runs = profile.get("time_key", "self_cpu_us"), profile.get("runs") or 1
        for row in profile.get("ops", []):
            if row["name"].startswith(WRAPPERS):
                continue
            family = totals.setdefault(op_family(row["name"]), [0.0, 0.0])
            family[column] += row.get(key, 0) / runs
    ranked = sorted(totals.items(), key=lambda item: -max(item[1]))[:top]
    return [(family, values[0], values[1]) for family, values in ranked]


def compile_time_per_unit(session: Session) -> list[tuple[str, float]]:
    return [(f"{unit.compile_id} {unit.function or ''}"[:40], unit.metric("entire_frame_compile_time_s"))
            for unit in session.units if unit.metric("entire_frame_compile_time_s") is not None]


def memory_bars(results: dict) -> list[tuple[str, float | None, float | None]]:
    eager, compiled = results.get("memory_eager") or {}, results.get("memory_compiled") or {}
    return [(key.replace("_mb", ""), eager.get(key), compiled.get(key)) for key in compiled if key in eager]
