"""What a run diff says, as sections: the CLI's `diff` prints them as text and the app's Diff pane
shows them as HTML, so the two never list, order or count a change differently."""

from __future__ import annotations

from inspector.core.analysis.comparison import Speedup
from inspector.core.analysis.run_diff import break_counts, comparison_words
from inspector.core.numbers import number, seconds
from inspector.core.outputs.sections import Section

SHOWN_NAMES = 10  # added/removed kernels named one by one
SHOWN_STAGES = 6  # compile stages with the largest change in own time
SHOWN_DELTAS = 8  # kernels whose time per call is compared


def diff_sections(result: dict) -> list[Section]:
    """The sections of `run_diff.diff_runs(...)`'s document, in the order a reader asks: which runs,
    breaks, recompiles, units, compile time, kernels, steady state."""
    runs, breaks, kernels = result["runs"], result["breaks"], result["kernels"]
    timing, steady = result["compile_time"], result["steady_state"]
    header = [f"A: {runs['a']}", f"B: {runs['b']}"] + ([f"note: {runs['note']}"] if "note" in runs else [])
    return [
        Section("", lines=tuple(header)),
        Section("Graph breaks", break_counts(breaks), tuple(
            [f"new: {site['location']}  {site['reason']}" for site in breaks["new"]]
            + [f"fixed: {site['location']}  {site['reason']}" for site in breaks["fixed"]]
            + [f"moved: {site['from']} → {site['to']}  {site['reason']}" for site in breaks["moved"]])),
        Section("Recompiles", f"{result['recompiles']['count_a']} → {result['recompiles']['count_b']}"),
        Section("Compile units", "graph similarity, added/removed/changed nodes",
                tuple(_unit_line(row) for row in result["units"])),
        Section("Compile time", f"{seconds(timing['total_a'])} → {seconds(timing['total_b'])}{_compile_note(timing)}",
                tuple(
            f"{row['stage']:<40} {row['a_s']:8.3f} s → {row['b_s']:8.3f} s"
            for row in timing["per_stage"][:SHOWN_STAGES])),
        Section("Kernels", f"+{len(kernels['added'])} −{len(kernels['removed'])}, renamed {len(kernels['renamed'])}, "
                           f"{len(kernels['code_diffs'])} with changed code", tuple(
            [f"added: {name}" for name in kernels["added"][:SHOWN_NAMES]]
            + [f"removed: {name}" for name in kernels["removed"][:SHOWN_NAMES]]
            + [f"renamed: {pair['from']} → {pair['to']}" for pair in kernels["renamed"][:SHOWN_NAMES]]
            + [f"[{row['unit']}] {row['kernel']} line {_lines(row)}: {number(row['us_a'])} → "
               f"{number(row['us_b'])} µs per call" + (f" — {row['noise']}" if row.get("noise") else "")
               for row in kernels["time_deltas"][:SHOWN_DELTAS]])),
        Section("Steady state", f"{seconds(steady['a_s'])} → {seconds(steady['b_s'])} per call",
                tuple(f"{side}: {steady[f'verdict_{side.lower()}']['text']}" for side in ("A", "B"))
                + ((comparison_words(Speedup.from_state(steady["b_vs_a"])),) if steady.get("b_vs_a") else ())),
    ]


def _compile_note(timing: dict) -> str:
    """What the two compile-time totals sum, and why they carry no interval — said only when both
    exist (a side without compile time has nothing to compare), from the counts the diff recorded."""
    missing = [side for side in ("A", "B") if timing[f"total_{side.lower()}"] is None]
    if missing:
        return f" ({' and '.join(missing)}: no compile time recorded)"
    sides = [_compiles(timing.get(f"units_{side}"), timing.get(f"ranks_{side}")) for side in ("a", "b")]
    return (f" (A: {sides[0]}, B: {sides[1]}; each compile happened once: no interval, and the load of the machine "
            f"moves compile time too)")


def _compiles(units: int | None, ranks: int | None) -> str:
    if units is None:  # a diff document written before the counts were recorded
        return "its units' compiles"
    where = f" over {ranks} ranks" if ranks and ranks > 1 else ""
    return f"{units} unit compile{'s' if units != 1 else ''}{where}"


def _unit_line(row: dict) -> str:
    graph = row.get("graph")
    detail = (f"{row['stage']}: similarity {graph['similarity']:.2f} (structure {graph['structural_similarity']:.2f}), "
              f"+{len(graph['added'])} -{len(graph['removed'])} ~{len(graph['changed'])}"
              ) if graph else row.get("note", "")
    rank = f"rank {row['rank']} " if row.get("rank") is not None else ""
    return f"{rank}{row['compile_id']:<8} {row['status']:<10} {detail}".rstrip()


def _lines(row: dict) -> str:
    """The call site's line in A's code and in B's ("1025 → 1047"), one number when they agree."""
    a, b = row.get("call_line_a"), row["call_line_b"]
    return f"{a} → {b}" if a is not None and a != b else f"{b}"
