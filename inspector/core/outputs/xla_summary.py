"""What `compile-inspector summary` and `diff` say about an XLA dump: per module the ops before
optimisation, the kernels after, K and the largest fusions; and the torch.compile-vs-XLA fusion
comparison as text. JSON and text come from the same dict, so they never disagree."""

from __future__ import annotations

from inspector.core.model.read_problems import said_of
from inspector.core.readers.xla_dump import XlaDump, XlaModule

SCHEMA = "xla-dump-summary/1"
LARGEST = 5


def summarize_dump(dump: XlaDump) -> dict:
    main = dump.main_module
    return {"schema": SCHEMA, "kind": "xla_dump", "source": str(dump.source),
            "main_module": main.label if main else None,
            "modules": [summarize_module(module) for module in dump.modules],
            "problems": dump.problems.get_state()}


def summarize_module(module: XlaModule) -> dict:
    fusions = module.fusions
    return {
        "id": module.id, "name": module.name, "label": module.label, "platform": module.platform,
        "ops_before": module.n_ops, "kernels": module.n_kernels, "fusion_ratio": module.fusion_ratio,
        "fusions": len(fusions), "fused_kernels": sum(1 for kernel in module.kernels if kernel.fused),
        "computations": {"before": len(module.before.computations) if module.before else None,
                         "after": len(module.after.computations) if module.after else None},
        "truncated": any(m is not None and m.truncated for m in (module.before, module.after)),
        "largest_fusions": [{"name": kernel.name, "kind": kernel.fusion_kind, "ops": len(kernel.ops),
                             "op_names": [op.opcode for op in kernel.ops]} for kernel in fusions[:LARGEST]],
    }


def render_dump_text(summary: dict) -> str:
    lines = [f"XLA dump: {summary['source']}", f"{len(summary['modules'])} module(s); "
             f"the largest: {summary['main_module'] or 'none'}", "",
             f"{'module':<44} {'ops':>6} {'kernels':>8} {'K':>6} {'fusions':>8}"]
    for module in summary["modules"]:
        lines.append(f"{module['label'][:44]:<44} {format_count(module['ops_before']):>6} "
                     f"{format_count(module['kernels']):>8} "
                     f"{format_ratio(module['fusion_ratio']):>6} {module['fusions']:>8}"
                     + ("  (truncated)" if module["truncated"] else ""))
    main = next((m for m in summary["modules"] if m["label"] == summary["main_module"]), None)
    if main and main["largest_fusions"]:
        lines += ["", f"Largest fusions in {main['label']}:"]
        for fusion in main["largest_fusions"]:
            lines.append(f"  {fusion['name']:<32} {fusion['kind'] or '':<8} {fusion['ops']:>3} ops: "
                         f"{_ops(fusion['op_names'])}")
    if summary["problems"]:
        lines += ["", "Could not read everything:"]
        lines += [f"  {entry['count']} {said_of(entry['count'], entry['meaning'])}"
                  for entry in summary["problems"].values()]
    lines += ["",
              "K = ops before optimisation / kernels after (a fusion, a library call or an unfused op is one kernel)."]
    return "\n".join(lines)


def render_comparison_text(result: dict) -> str:
    torch, xla = result["torch"], result["xla"]
    lines = [f"torch.compile: {torch['source']}", f"XLA:           {xla['source']} ({xla['module']})", "",
             f"{'':<16} {'torch.compile':>14} {'XLA':>10}",
             f"{'ops before':<16} {format_count(torch['ops_before']):>14} {format_count(xla['ops_before']):>10}",
             f"{'kernels after':<16} {format_count(torch['kernels']):>14} {format_count(xla['kernels']):>10}",
             f"{'K':<16} {format_ratio(torch['fusion_ratio']):>14} {format_ratio(xla['fusion_ratio']):>10}", "",
             "Op families (ops in a kernel with other ops / in a kernel alone):"]
    for row in result["families"]:
        lines.append(f"  {row['family']:<14} torch {format_share(row['torch']):<12} XLA {format_share(row['xla']):<12} "
                     f"{row['verdict']}")
    for label, side in (("torch.compile", torch), ("XLA", xla)):
        lines += ["", f"Largest kernels, {label}:"]
        for kernel in side["largest"]:
            lines.append(f"  {kernel['name'][:40]:<40} {kernel['ops']:>3} ops: {_ops(kernel['op_names'])}")
    lines += ["", result["note"]]
    return "\n".join(lines)


def format_share(counts: dict | None) -> str:
    """An op family's ops in a kernel with others / alone."""
    return f"{counts['fused']} / {counts['alone']}" if counts else "—"


def _ops(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", … (+{len(names) - limit})" if len(names) > limit else "")


def format_count(value) -> str:
    return "n/a" if value is None else str(value)


def format_ratio(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"
