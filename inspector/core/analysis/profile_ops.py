"""The ops of a capture's profile (results.json), read one way for every figure built on them:
torch's own wrappers (compiled-region markers, guard checks, runtime wrappers) left out, times per
call, shares of the same total — so a kernel's share reads the same in the code pane, the kernel plot
and the summary."""

from __future__ import annotations

import re
from dataclasses import dataclass

COMPILED_REGION = "Torch-Compiled Region"
WRAPPERS = (COMPILED_REGION, "TorchDynamo", "## ", "Pregraph bytecode", "AOTDispatcher", "CompiledFunction", "ProfilerStep")
_CPU_KERNEL = re.compile(r"^graph_\d+_")


@dataclass(frozen=True)
class ProfileOps:
    rows: list[dict]  # op and kernel rows, most expensive first
    key: str  # the time field: self_cpu_us on CPU, self_device_us on CUDA
    runs: int  # calls profiled

    @property
    def total(self) -> float:
        return sum(row.get(self.key, 0) for row in self.rows) or 1.0

    def per_call_us(self, row: dict) -> float:
        return row.get(self.key, 0) / self.runs


def profile_ops(results: dict | None, label: str = "compiled") -> ProfileOps | None:
    """The eager or compiled profile's ops without torch's wrappers; None when not profiled."""
    profile = ((results or {}).get("profile") or {}).get(label)
    if not profile:
        return None
    key = profile.get("time_key", "self_cpu_us")
    rows = [row for row in profile.get("ops", []) if not row["name"].startswith(WRAPPERS)]
    rows.sort(key=lambda row: -row.get(key, 0))
    return ProfileOps(rows, key, profile.get("runs") or 1)


def kernel_name(event: str) -> str:
    """A generated CPU kernel is profiled as `graph_N_<kernel>`: the kernel's name in the code."""
    return _CPU_KERNEL.sub("", event)
