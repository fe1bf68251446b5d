"""torch.compile beside XLA on the same model: ops before, kernels after, K = N_ops / N_kernels, the
largest fused kernels, and per op family (matmul, elementwise, reduction …) how many ops each compiler
put in a kernel together with other ops (fused) or alone — and the families one fused and the other
did not.

What is counted on each side:
- torch: ops are the op nodes of the graph Inductor generated code from (post-grad, see
  figures.unit_fusion), kernels are the launches of the output code's call function (figures.launch_sites:
  a generated kernel per call to it, a library call per call), as XLA's are; an op is fused when its kernel
  was made from at least two ops (exact with provenance tracking, else from Inductor's comments).
- XLA: ops are the ops of the HLO before optimisation, kernels those after (see hlo_kernels); an op is
  fused when its fusion holds at least two ops. Per-family counts come from the optimised HLO.
"""

from __future__ import annotations

from collections import Counter

from inspector.core.analysis.figures import session_fusion, unit_fusion
from inspector.core.analysis.kernel_index import kernel_nodes
from inspector.core.analysis.op_families import FAMILIES, hlo_family, op_name, torch_family
from inspector.core.model.hlo_kernels import program_ops
from inspector.core.model.session import Session
from inspector.core.readers.xla_dump import XlaModule

LARGEST = 5


def torch_side(session: Session) -> dict:
    stats = session_fusion(session)
    families = {family: Counter() for family in FAMILIES}
    kernels = []
    for unit in session.units:
        if not unit.output_code:
            continue
        stage = unit_fusion(unit).source
        graph = unit.graphs[stage].graph if stage in unit.graphs else None
        in_kernels: set[str] = set()
        for kernel in unit.kernels:
            origins = [origin for origin in kernel_nodes(unit, kernel) if origin.target != "?"]
            targets = [origin.target for origin in origins] or [kernel.name]
            fused = len(targets) > 1
            in_kernels.update(origin.name for origin in origins)
            counted = [torch_family(target) for target in targets]
            for family in counted:
                families[family]["fused" if fused else "alone"] += 1
            kernels.append({"name": kernel.name, "unit": str(unit.compile_id), "kind": kernel.kind,
                            "ops": len(targets), "families": dict(Counter(counted)),
                            "op_names": [op_name(target) for target in targets]})
        for node in graph.op_nodes if graph else []:
            families[torch_family(node.target)]["ops"] += 1
            if node.name not in in_kernels:
                families[torch_family(node.target)]["no_kernel"] += 1
    return {"source": str(session.source), "ops_before": stats.n_ops,
            "kernels": stats.n_launch_sites, "kernel_definitions": stats.n_kernels,
            "fusion_ratio": stats.fusion_ratio, "counted_in": stats.source,
            "largest": sorted(kernels, key=lambda k: -k["ops"])[:LARGEST], "families": _families(families)}


def xla_side(module: XlaModule, source: str = "") -> dict:
    families = {family: Counter() for family in FAMILIES}
    for op in program_ops(module.before) if module.before else []:
        families[hlo_family(op.opcode, op.custom_call_target)]["ops"] += 1
    largest = []
    for kernel in module.kernels:
        for op in kernel.ops:
            families[hlo_family(op.opcode, op.custom_call_target)]["fused" if kernel.fused else "alone"] += 1
    for kernel in module.fusions[:LARGEST]:
        counted = Counter(hlo_family(op.opcode, op.custom_call_target) for op in kernel.ops)
        largest.append({"name": kernel.name, "kind": kernel.fusion_kind, "ops": len(kernel.ops),
                        "families": dict(counted), "op_names": [op.opcode for op in kernel.ops]})
    return {"source": source, "module": module.label, "platform": module.platform, "ops_before": module.n_ops,
            "kernels": module.n_kernels, "fusion_ratio": module.fusion_ratio, "largest": largest,
            "families": _families(families)}


def _families(counts: dict[str, Counter]) -> dict[str, dict]:
    return {family: {key: counts[family][key] for key in ("ops", "fused", "alone", "no_kernel")}
            for family in FAMILIES if sum(counts[family].values())}


def compare_fusion(session: Session, module: XlaModule, xla_source: str = "") -> dict:
    torch, xla = torch_side(session), xla_side(module, xla_source)
    rows = []
    for family in FAMILIES:
        a, b = torch["families"].get(family), xla["families"].get(family)
        if a is not None or b is not None:
            rows.append({"family": family, "torch": a, "xla": b,
                         "torch_status": _status(a), "xla_status": _status(b),
                         "verdict": _verdict(_status(a), _status(b))})
    return {
        "torch": torch, "xla": xla, "families": rows,
        "only_torch_fuses": [row["family"] for row in rows
                             if (row["torch_status"], row["xla_status"]) == ("fused", "alone")],
        "only_xla_fuses": [row["family"] for row in rows
                           if (row["torch_status"], row["xla_status"]) == ("alone", "fused")],
        "note": "ops before: torch post-grad graph vs HLO before optimisation; kernels: Inductor kernels "
                "(generated and library calls) vs XLA fusions and unfused ops. An op is fused when its "
                "kernel holds at least two ops. Per family, XLA counts ops before optimisation but fused/alone "
                "after it (optimisation removes and duplicates ops); torch counts both in the post-grad graph.",
    }


def _status(counts: dict | None) -> str:
    """fused (some op shares a kernel), alone (in kernels of one op only), no kernel (all folded away,
    like views), absent (no op of the family)."""
    if counts is None:
        return "absent"
    return "fused" if counts["fused"] else "alone" if counts["alone"] else "no kernel"


_VERDICTS = {("fused", "fused"): "both fuse", ("fused", "alone"): "only torch.compile fuses",
             ("alone", "fused"): "only XLA fuses", ("alone", "alone"): "neither fuses: one kernel per op"}


def _verdict(torch_status: str, xla_status: str) -> str:
    if (torch_status, xla_status) in _VERDICTS:
        return _VERDICTS[(torch_status, xla_status)]
    return f"torch.compile: {torch_status}; XLA: {xla_status}"
