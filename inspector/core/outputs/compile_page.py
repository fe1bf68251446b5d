"""One compile's page as the app's Code pane lists it beside the graph stages (tlparse's per-compile
page): the call that triggered it, restarts and failure, cache lookups, the code Dynamo wrote, and every
compilation-metrics field as a table. Its lines are the summary's (`summary_text.compile_facts`)."""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.analysis.compile_detail import compile_detail, frame_label, metric_rows, stack_trie
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.session import CompileUnit
from inspector.core.outputs.summary_text import GROUPS_SHOWN, compile_facts, trie_lines

PAGE_LABEL = "compile: trigger, restarts, cache, metrics"
NAME_WIDTH = 44


def compile_page(unit: CompileUnit, units: Sequence[CompileUnit] = ()) -> str:
    """The page of `unit`; with the session's `units`, their trigger stacks folded into one trie too."""
    detail = compile_detail(unit)
    lines = [f"Compile {unit_title(unit)}", "", "Triggered from (the user's frames of the stack, outermost first):"]
    lines += [f"  {frame_label(frame)}"
              for frame in detail.trigger] or ["  (the log records no stack for this compile)"]
    trie = stack_trie(units) if len(units) > 1 else []
    if trie:
        own = str(unit.compile_id) if unit.rank is None else f"{unit.compile_id} (rank {unit.rank})"
        lines += ["", "Every compile of the run, by the call that triggered it (the user's frames, folded):"]
        lines += [f"  {line}" for line in trie_lines(trie, own)[:GROUPS_SHOWN * 5]]
    facts = compile_facts(detail)
    lines += ["", "Restarts, failure, cache lookups:", *(f"  {fact}" for fact in facts or ["  none recorded"])]
    if not detail.code:
        lines += ["", "Code Dynamo wrote: the log carries none for this unit (torch logs the bytecode of resume "
                      "functions only; a capture records every compiled frame's)."]
    known = [row for row in detail.metric_rows if row.known]
    lines += ["", f"Compilation metrics: {len(detail.metric_rows)} fields, in torch's order"]
    lines += [f"  {row.name:<{NAME_WIDTH}} {row.value}" + (f" {row.unit}" if row.unit and row.value else "")
              for row in known] or ["  (the log has no compilation_metrics record for this unit)"]
    unknown = [row for row in detail.metric_rows if not row.known]
    if unknown:
        lines += ["", f"Fields this version does not know ({len(unknown)}, from another torch version), as written:"]
        lines += [f"  {row.name:<{NAME_WIDTH}} {row.value}" for row in unknown]
    backward = metric_rows(unit.backward_metrics)
    if backward:
        lines += ["", f"Backward compilation metrics (the backward graph, compiled at the first backward call): "
                      f"{len(backward)} fields"]
        lines += [f"  {row.name:<{NAME_WIDTH}} {row.value}" for row in backward]
    return "\n".join(lines) + "\n"
