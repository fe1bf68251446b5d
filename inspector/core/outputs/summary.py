"""The session summary: one versioned JSON document (documented in docs/summary-schema.md) for
scripts and CI, kept by the summary cache. Every human output renders it through its typed model
(`summary_model.Summary`): the terminal text, the report, the Markdown, SARIF and the app's dashboard."""

from __future__ import annotations

import math
import re

from inspector import __version__
from inspector.core.analysis.break_map import resume_after, resume_units
from inspector.core.analysis.compile_detail import stack_trie
from inspector.core.analysis.kernel_index import kernel_compiles
from inspector.core.analysis.kernel_plots import memory_measured
from inspector.core.analysis.recompile_groups import recompiled_units
from inspector.core.analysis.session_analysis import SessionAnalysis, as_analysis
from inspector.core.analysis.unit_origin import eager_trigger
from inspector.core.analysis.user_names import called_function, shown_function
from inspector.core.model.records import state_of
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session
from inspector.core.outputs.explanations import explanations
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.break_reasons import broken_in_loop, is_frame_skip

SCHEMA = "torch-compile-inspector/summary"
SCHEMA_VERSION = 5  # 2: `speedup`, `run.profile_check`; 3: ceilings from the eager share, backward compile time;
# 4: `units[].called`, `run.eager_profile_check`, backward stages named `… (backward)`; 5: S_max over the whole
# part of a call outside compiled graphs, `regions` per timed call, K = n_ops / launch sites, guards in `code[]`
TOP_KERNELS = 10
LOOP_SKIP = "graph break in loop (GB7000)"  # a break inside a loop: torch skipped the frame, which runs eagerly
_RESTART_CLASS = re.compile(r"^<class '(?:[\w]+\.)*(\w+)'>$")  # "<class 'torch._dynamo.exc.X'>" → "X"


def summarize(subject: Session | SessionAnalysis) -> dict:
    """The summary document of an analysis (a bare session is analysed first)."""
    analysis = as_analysis(subject)
    session = analysis.session
    return {
        **_about(analysis),
        "units": [_unit(unit, analysis.fusion_of(unit), analysis.compile_pages[unit]) for unit in session.units],
        "graph_breaks": _breaks(session),
        "break_sites": _break_sites(analysis),
        "stack_trie": [node.get_state() for node in stack_trie(session.units)],
        "export_issues": [finding.get_state() for finding in analysis.export_issues],
        "shapes": [{"compile_id": str(unit.compile_id), "rank": unit.rank,
                    "events": [event.get_state() for event in events]}
                   for unit, events in analysis.shapes],
        **_not_breaks(session),
        "recompiles": _recompiles(analysis),
        "compile_time": analysis.compile_time.get_state(),
        "kernels": _kernels(analysis),
        "cache": {cache: counted.get_state() for cache, counted in analysis.cache.items()},
        "warnings": analysis.warnings,
        "unknown_record_kinds": dict(session.unknown_kinds),
        "unreadable": session.problems.get_state(),
        **_outcome(analysis),
        "run": _run(analysis),
        "measurements": state_of(session.results),
        **explanations(analysis),
        "regions": _regions(analysis),
        "per_rank": _per_rank(analysis),
    }


def at_a_glance(subject: Session | SessionAnalysis) -> Summary:
    """The summary's parts the app's Summary dashboard shows, typed: the headline and its counts, the
    verdict, the run, where compile and call time went, the ranks. Made from the same parts as the
    document, without the per-unit figures, shapes and break types (those parse every graph and read
    torch's break registry, and the dashboard does not show them)."""
    return Summary.from_state(glance_document(as_analysis(subject)))


def glance_document(analysis: SessionAnalysis) -> dict:
    """`at_a_glance` as a document: a partial summary, as the index cache keeps it."""
    return {
        **_about(analysis), "break_sites": _break_sites(analysis), "recompiles": _recompiles(analysis),
        "compile_time": analysis.compile_time.get_state(), "kernels": _kernels(analysis), **_outcome(analysis),
        "run": _run(analysis), "slowness": analysis.slowness.get_state(), "regions": _regions(analysis),
        "per_rank": _per_rank(analysis)}


def _about(analysis: SessionAnalysis) -> dict:
    """What the summary is of: the schema, the tool, the input, and the notices to read first."""
    session = analysis.session
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool_version": __version__,
        "source": str(session.source),
        "kind": session.kind,
        "torch_version": session.torch_version,
        "complete": session.complete,
        "ranks": [rank.rank for rank in session.ranks],
        "notices": [notice.get_state() for notice in analysis.notices],
    }


def _break_sites(analysis: SessionAnalysis) -> list[dict]:
    return [site.get_state() for site in analysis.break_sites]


def _recompiles(analysis: SessionAnalysis) -> list[dict]:
    return [recompiled.get_state() for recompiled in recompiled_units(analysis.session)]


def _kernels(analysis: SessionAnalysis) -> dict:
    fusion = analysis.fusion
    compiles = _kernel_compiles(analysis.session)
    return {
        "total": fusion.n_kernels,
        "fused": fusion.n_fused_kernels,
        "by_kind": _kernel_kinds(analysis.session),
        "n_ops": fusion.n_ops,
        "n_eliminated": fusion.n_eliminated,
        "n_fused_ops": fusion.n_fused,
        "fusion_ratio": fusion.fusion_ratio,
        "launch_sites": fusion.n_launch_sites,
        "ops_counted_in": fusion.source,
        **({"compiles": compiles} if compiles else {}),
    }


def _kernel_compiles(session: Session) -> list[dict]:
    """What compiling each Triton kernel cost where torch recorded it (a GPU log), the slowest to
    compile first, then those only autotuned, the longest first."""
    rows = [{"compile_id": str(unit.compile_id), "rank": unit.rank,
             "graph": unit.output_code[code].code.role if code < len(unit.output_code) else None, "kernel": name,
             "compile_time_s": facts.compile_s, "autotune_s": facts.autotune_s, "autotune_cache": facts.cache_state,
             "configs": facts.configs, "config": facts.config}
            for unit in session.units for (code, name), facts in kernel_compiles(unit).items()]
    return sorted(rows, key=lambda row: (row["compile_time_s"] is None, -(row["compile_time_s"] or 0.0),
                                         -(row["autotune_s"] or 0.0)))


def _outcome(analysis: SessionAnalysis) -> dict:
    """The verdict's figures and the speedup estimate."""
    return {"verdict": [figure.get_state() for figure in analysis.verdict], "speedup": analysis.speedup.get_state()}


def _per_rank(analysis: SessionAnalysis) -> dict | None:
    return analysis.ranks.get_state() if len(analysis.session.ranks) > 1 else None


def _run(analysis: SessionAnalysis) -> dict | None:
    """What the capture recorded about the run itself (None for logs made without our capture)."""
    session = analysis.session
    manifest = session.manifest
    if manifest is None:
        return None
    results = session.results or RunResults()
    check = analysis.counters_check
    return {
        "complete": manifest.complete,
        "exit_status": manifest.exit_status,
        "error": state_of(manifest.error),
        "settings": manifest.settings,
        "environment": state_of(results.environment),
        "correctness": [row.get_state() for row in results.correctness] if results.correctness is not None else None,
        "allclose": results.allclose,
        "memory": {"eager": results.memory_eager, "compiled": results.memory_compiled,
                   **({"compile": results.memory_compile} if results.memory_compile is not None else {}),
                   **({"measured": memory_measured(results)} if results.memory_eager or results.memory_compiled
                      else {})},
        "t_first_call_s": results.t_first_call_s,
        "top_kernels": [row.get_state() for row in analysis.top_kernels],
        "profile_check": analysis.profile_check.get_state(),
        "eager_profile_check": analysis.eager_profile_check.get_state(),
        "torch_counted_breaks": check.torch_breaks,
        "breaks_agree_with_torch": check.agree,
        **({"torch_counted_frame_skips": check.torch_frame_skips} if check.torch_frame_skips else {}),
    }


def _regions(analysis: SessionAnalysis) -> dict | None:
    """The per-region accounting of the compiled profile; None for logs without a capture's profile."""
    results = analysis.session.results
    if results is None or "compiled" not in results.profile:
        return None
    accounting, why = analysis.regions
    return accounting.get_state() if accounting else {"reason": why}


def _unit(unit, fusion, page) -> dict:
    return {
        "compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
        "location": str(unit.location) if unit.location else None,
        "called": {"function": called.function, "location": str(called)} if (called := called_function(unit)) else None,
        "shown": shown_function(unit),
        "triggered_by": eager_trigger(unit),  # the eager operator call that made torch compile it, if any
        "status": unit.status.value,
        "attempts": unit.attempts, "breaks": len(unit.breaks), "recompile": unit.recompile is not None,
        "graph_ops": unit.metric("graph_op_count"), "kernels": fusion.n_kernels,
        "fusion_ratio": fusion.fusion_ratio, "compile_time_s": unit.compile_s,
        "backward_compile_time_s": unit.backward_compile_s, "backward_graph": "aot_backward" in unit.graphs,
        "stages": list(unit.graphs),
        "kernel_names": [kernel.name for kernel in unit.kernels],
        "compile": page.get_state(),
    }


def _breaks(session: Session) -> list[dict]:
    """Every break, with the compile id of the resume function that goes on after it."""
    resumes = resume_units(session.units)
    rows = []
    for unit in session.units:
        for brk in unit.breaks:
            resume = resume_after(brk, unit, resumes)
            rows.append(_break(brk, unit.rank, str(resume.compile_id) if resume is not None else None))
    return rows


def _break(brk, rank, resumed_in: str | None = None) -> dict:
    location = brk.location
    return {"compile_id": str(brk.compile_id), "rank": rank, "file": location.file if location else None,
            "line": location.line if location else None, "function": location.function if location else None,
            "code": location.code if location else None, "reason": brk.reason, "kind": brk.kind,
            "hints": brk.hints, "restarted": brk.restarted, "resumed_in": resumed_in,
            **({"via": [str(frame) for frame in brk.via]} if brk.via else {})}


def _not_breaks(session: Session) -> dict:
    """What the log holds beside the breaks and must not be counted with them: restarts of analysis that
    cut no graph, and frames Dynamo skipped whole (run eagerly). Keys only where there are some."""
    restarts = [{"compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
                 "shown": shown_function(unit),
                 "reason": _RESTART_CLASS.sub(r"\1", reason)}
                for unit in session.units for reason in unit.analysis_restarts]
    skips = [{"compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
              "shown": shown_function(unit),
              "location": str(unit.location) if unit.location else None,
              "type": LOOP_SKIP if broken_in_loop(unit.fail_reason) else unit.fail_summary}
             for unit in session.units if unit.fail_reason and (is_frame_skip(unit.fail_reason)
                                                               or broken_in_loop(unit.fail_reason))]
    return {**({"analysis_restarts": restarts} if restarts else {}), **({"frame_skips": skips} if skips else {})}


def _kernel_kinds(session: Session) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for unit in session.units:
        for kernel in unit.kernels:
            kinds[kernel.kind] = kinds.get(kernel.kind, 0) + 1
    return kinds


def finite(document):
    """`document` with every non-finite number (a log may carry Infinity or NaN) replaced by None,
    so it can be written as strict JSON."""
    if isinstance(document, float):
        return document if math.isfinite(document) else None
    if isinstance(document, dict):
        return {key: finite(value) for key, value in document.items()}
    if isinstance(document, (list, tuple)):
        return [finite(value) for value in document]
    return document
