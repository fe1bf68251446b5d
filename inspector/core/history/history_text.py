"""The history of a script as text and JSON: one line per run with its figures, oldest first, and
the scripts the history holds; what `compile-inspector history` prints."""

from __future__ import annotations

import time
from pathlib import Path

from inspector.core.history.alerts import new_causes, new_sites
from inspector.core.history.run_record import RunRecord
from inspector.core.numbers import seconds

SCHEMA = "torch-compile-inspector/history"
SCHEMA_VERSION = 1


def history_document(store: str, script: str | None, runs: list[RunRecord]) -> dict:
    return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "store": store, "script": script,
            "runs": [run.get_state() for run in runs]}


def changes(runs: list[RunRecord]) -> list[tuple[int, str]]:
    """(index of the run where it happened, what changed) for each change of torch version or git
    commit between consecutive runs: the markers of the History tab and of `history`."""
    found = []
    for index in range(1, len(runs)):
        before, after = runs[index - 1], runs[index]
        words = []
        if before.torch_version != after.torch_version:
            words.append(f"torch {before.torch_version} → {after.torch_version}")
        if before.git_commit and after.git_commit and before.git_commit != after.git_commit:
            words.append(f"commit {before.git_commit[:7]} → {after.git_commit[:7]}")
        if words:
            found.append((index, "; ".join(words)))
    return found


def first_seen(runs: list[RunRecord]) -> dict[str, list[tuple[int, str]]]:
    """Where a graph-break site or a recompile cause first appeared (after the first run): the drift a
    trend shows as an event. {"breaks": [(index, words)], "recompiles": [(index, words)]}."""
    found: dict[str, list[tuple[int, str]]] = {"breaks": [], "recompiles": []}
    seen_sites = list(runs[0].sites) if runs else []
    seen_causes = list(runs[0].causes) if runs else []
    for index, run in enumerate(runs[1:], start=1):
        sites, causes = new_sites(run.sites, seen_sites), new_causes(run.causes, seen_causes)
        if sites:
            found["breaks"].append((index, f"new break site: {Path(sites[0].location).name}"
                                           + (f" (+{len(sites) - 1})" if len(sites) > 1 else "")))
        if causes:
            found["recompiles"].append((index, f"new recompile cause: {causes[0].cause}"
                                               + (f" (+{len(causes) - 1})" if len(causes) > 1 else "")))
        seen_sites += sites
        seen_causes += causes
    return found


def render_runs(script: str, runs: list[RunRecord]) -> str:
    """The runs of `script`, one line each; a change of torch version or commit, and a break site or
    recompile cause first seen, are marked where they happen."""
    if not runs:
        return f"No run of {script} in the history."
    header = (f"{'run':>6}  {'when':<16}  {'torch':<14} {'commit':<10} {'mode':<16} {'compile':>9} {'breaks':>9} "
              f"{'recomp.':>7} {'cache hit':>9} {'kernels':>7}  {'S [95 % interval]':<22} {'memory':>9}")
    lines = [f"{len(runs)} run(s) of {script}", header]
    marks: dict[int, list[str]] = {}
    events = first_seen(runs)
    for index, words in [*changes(runs), *events["breaks"], *events["recompiles"]]:
        marks.setdefault(index, []).append(words)
    for index, run in enumerate(runs):
        rate = run.cache_hit_rate
        lines.append(
            f"{'#' + str(run.run_id):>6}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(run.run_at)):<16}  "
            f"{(run.torch_version or '?')[:14]:<14} {(run.git_commit or '-')[:7]:<10} {(run.mode or '-')[:16]:<16} "
            f"{seconds(run.compile_s):>9} {f'{run.breaks} @ {run.break_sites}':>9} {run.recompiles:>7} "
            f"{f'{rate:.0%}' if rate is not None else '-':>9} {run.kernels:>7}  {speedup_text(run):<22} "
            f"{f'{run.memory_mb:.0f} MB' if run.memory_mb is not None else '-':>9}"
            + (f"  ← {'; '.join(marks[index])}" if index in marks else ""))
    return "\n".join(lines)


def speedup_text(run: RunRecord) -> str:
    estimate = run.speedup_estimate
    if estimate is None or estimate.value is None:
        return "-"
    if estimate.has_interval:
        return f"{estimate.value:.2f}× [{estimate.low:.2f}–{estimate.high:.2f}]"
    return f"{estimate.value:.2f}× (no interval)"


def render_scripts(store: str, scripts: list[tuple[str, int, float]]) -> str:
    if not scripts:
        return f"The history at {store} holds no run yet."
    lines = [f"{len(scripts)} script(s) in the history at {store}:"]
    for script, count, latest in scripts:
        lines.append(f"  {count:>4} run(s), latest {time.strftime('%Y-%m-%d %H:%M', time.localtime(latest))}  "
                     f"{script}")
    lines.append(f"compile-inspector history SCRIPT shows the runs of one ({Path(scripts[0][0]).name}, …)")
    return "\n".join(lines)
