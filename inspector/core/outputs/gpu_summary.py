"""What `compile-inspector summary` (text and `--json`) and the app's GPU tab say about the GPU files
of a run: a tritonparse trace (each kernel's IR stages, compile metadata, the torch.compile unit that
compiled it, its launches and what varies between them) and a torch.profiler trace (GPU time per
kernel, per kind and per compiled region, device idle time); and a profiler trace beside the
TORCH_TRACE log of its run: kernel time per kernel, compile unit, FX node, module and source line of
the user's model (`source_time`), a section of the log's summary; and a tritonparse trace of the run
joined to its kernels (`triton_join`), another section. JSON and text come from one dict each."""

from __future__ import annotations

from pathlib import Path

from inspector.core.analysis.gpu_profile import gpu_profile, microseconds, region_label
from inspector.core.analysis.profile_ranks import RankRun, Times, compare_profiles
from inspector.core.analysis.profile_join import source_time
from inspector.core.analysis.source_time import RowTime
from inspector.core.analysis.triton_join import join_triton
from inspector.core.model.read_problems import said_of
from inspector.core.numbers import number
from inspector.core.readers.profiler_trace import ProfilerTrace, RankTraces, paired_profile, read_profiler_trace
from inspector.core.readers.input_kind import Source
from inspector.core.readers.tritonparse_trace import TritonKernel, TritonTrace

TRITON_SCHEMA = "tritonparse-trace-summary/1"
PROFILE_SCHEMA = "gpu-profile-summary/1"
PROFILE_RANKS_SCHEMA = "profile-ranks-summary/1"
SOURCE_TIME_SCHEMA = "profile-source-time/2"  # 2: kernels[] per call site, units[] with what shares divide
SOURCE_TIME_KEY = "profile_source_time"  # the section of the log's summary JSON
TRITON_JOIN_SCHEMA = "tritonparse-join/1"
TRITON_JOIN_KEY = "triton_ir"  # the section of the log's summary JSON
APPORTIONING = ("a launch's time is measured; a launch made from k FX nodes gives each node 1/k of it; a line "
                "or module's time is measured for launches wholly its own, apportioned for shares of launches "
                "split with other lines or modules")
TOP = 15
KIND_TIME = {"kernels": "kernel time", "copies": "copy time", "fills": "fill time", "collectives": "collective time"}
REGION_EVENTS = "kernel launches"  # a region's count of the kernels, copies and fills queued while it ran
NO_GPU = "No GPU events: this profile is of a CPU run"
METADATA = ("arch", "num_warps", "num_stages", "shared", "cache_hit", "triton_version")


def summarize_triton(trace: TritonTrace) -> dict:
    return {
        "schema": TRITON_SCHEMA, "kind": "tritonparse_trace", "source": str(trace.path),
        "kernels": [{"name": kernel.name, "hash": kernel.hash, "compile_id": kernel.compile_id,
                     **{key: kernel.metadata.get(key) for key in METADATA},
                     "stages": _stage_lines(kernel),
                     "python": {"file": kernel.python_file, "line": kernel.python_start_line},
                     "mapped_stages": sorted(kernel.mappings),
                     "launches": kernel.launches,
                     "grids": [{"grid": list(grid) if isinstance(grid, tuple) else grid, "launches": n}
                               for grid, n in kernel.grids.most_common()],
                     "other_grid_launches": kernel.other_grid_launches,
                     "varying": kernel.varying}
                    for kernel in trace.kernels],
        "launches": trace.launches,
        "unknown_events": dict(trace.unknown_events),
        "problems": trace.problems.get_state(),
    }


def _stage_lines(kernel: TritonKernel) -> dict[str, int]:
    """Each IR stage's length in lines, as an editor counts them (counted, not split: an IR may be
    millions of short lines)."""
    return {stage: _line_count(kernel.ir[stage]) for stage in kernel.stages}


def _line_count(text: str) -> int:
    return text.count("\n") + (not text.endswith("\n")) if text else 0


def render_triton_text(summary: dict) -> str:
    kernels = summary["kernels"]
    lines = [f"tritonparse trace: {summary['source']}",
             f"{len(kernels)} kernel compilation(s), {number(summary['launches'])} launch(es)", ""]
    for kernel in kernels:
        origin = f"torch.compile unit [{kernel['compile_id']}]" if kernel["compile_id"] else "not from torch.compile"
        where = f"{Path(kernel['python']['file']).name}:{kernel['python']['line']}" if kernel["python"]["file"] else "?"
        lines.append(f"{kernel['name']}  ({origin}; source {where}; hash {kernel['hash'][:12]})")
        meta = ", ".join(f"{key} {kernel[key]}" for key in METADATA if kernel[key] is not None)
        lines.append(f"  {meta}")
        stages = ", ".join(f"{stage.upper()} {n} lines" for stage, n in kernel["stages"].items())
        lines.append(f"  IR: {stages or 'none'}"
                     + (f"; lines mapped for {', '.join(kernel['mapped_stages'])}" if kernel["mapped_stages"] else
                        "; no source mappings (run tritonparse's parser on the trace to add them)"))
        if kernel["launches"]:
            grids = ", ".join([f"{entry['launches']}× {entry['grid']}" for entry in kernel["grids"][:4]]
                              + ([f"{number(kernel['other_grid_launches'])}× other or unreadable grids"]
                                 if kernel["other_grid_launches"] else []))
            lines.append(f"  {number(kernel['launches'])} launch(es); grids: {grids}")
        for name, how in kernel["varying"].items():
            lines.append(f"  varies between launches: {name}: {how}")
    lines += _problems(summary["problems"])
    return "\n".join(lines)


def summarize_profile_ranks(traces: RankTraces) -> dict:
    """A distributed run's profiler traces side by side (`profile_ranks`). Raises ValueError when no
    trace could be read."""
    ranks = compare_profiles(traces)
    if not ranks.runs:
        raise ValueError(f"{traces.folder}: no profiler trace could be read ("
                         + "; ".join(f"{name}: {why}" for name, why in ranks.unreadable.items()) + ")")
    return {
        "schema": PROFILE_RANKS_SCHEMA, "kind": "profiler_traces", "source": ranks.source,
        "times_from": "device" if ranks.on_gpu else "cpu",
        "ranks": [_rank_row(run, ranks.times(run)) for run in ranks.runs],
        "not_compared": ranks.not_compared,
        "differences": [{"kind": difference.kind, "ranks": list(difference.ranks), "text": difference.text}
                        for difference in ranks.differences],
        "unreadable": ranks.unreadable,
        "problems": ranks.problems.get_state(), "unreadable_events": ranks.unreadable_events,
    }


def _rank_row(run: RankRun, times: Times) -> dict:
    return {"rank": run.rank, "name": run.name, "source": run.source, "profiled_us": times.profiled_us,
            "busy_us": times.busy_us, "collective_us": times.collective_us, "compute_us": times.compute_us,
            "regions": {name: {"calls": calls, "cpu_us": cpu_us} for name, (calls, cpu_us) in run.regions.items()}}


RANK_COLUMNS = ("rank", "profiled", "in collectives", "share", "outside collectives", "compiled regions (calls)")


def profile_rank_rows(summary: dict) -> list[tuple[str, ...]]:
    """The cells of each rank's row (RANK_COLUMNS), for the text and the GPU tab alike."""
    return [(rank["name"].removeprefix("rank "), microseconds(rank["profiled_us"]), microseconds(rank["collective_us"]),
             f"{rank['collective_us'] / rank['busy_us']:.0%}" if rank["busy_us"] else "—",
             microseconds(rank["compute_us"]),
             ", ".join(f"{region_label(name)} ×{entry['calls']}" for name, entry in rank["regions"].items()) or "—")
            for rank in summary["ranks"]]


def profile_ranks_verdict(summary: dict) -> str:
    """What the comparison found, in a line: not compared and why, or whether the ranks differ."""
    if summary["not_compared"]:
        return f"Not compared: {summary['not_compared']}."
    return "What differs between the ranks:" if summary["differences"] else "The ranks do not differ."


def render_profile_ranks_text(summary: dict) -> str:
    where = ("the device's events (NCCL kernels are the collectives)" if summary["times_from"] == "device"
             else "the CPU calls")
    def line(cells) -> str:  # the rank left, the times right, the regions as long as they are
        return (f"  {cells[0]:<6}" + "".join(f"  {cell:>{width}}" for cell, width in zip(cells[1:5], (10, 14, 5, 19)))
                + f"  {cells[5]}")

    lines = [f"Profiler traces of {len(summary['ranks'])} rank(s): {summary['source']}", f"  times from {where}",
             line(RANK_COLUMNS)] + [line(cells) for cells in profile_rank_rows(summary)]
    lines += ["", profile_ranks_verdict(summary)]
    lines += [f"  - {difference['text']}" for difference in summary["differences"]]
    if summary["unreadable"]:
        lines += ["", f"{len(summary['unreadable'])} trace(s) could not be read (left out):"]
        lines += [f"  {name}: {why}" for name, why in summary["unreadable"].items()]
    if damage := trace_damage_text(summary):
        lines += ["", damage]
    return "\n".join(lines)


def summarize_profile(trace: ProfilerTrace) -> dict:
    profile = gpu_profile(trace)
    total = profile.total_gpu_us or 1.0
    return {
        "schema": PROFILE_SCHEMA, "kind": "profiler_trace", "source": str(trace.path), "rank": profile.rank,
        "gpu_us": profile.total_gpu_us, "by_kind_us": profile.by_kind,
        "devices": [{"device": device.device, "name": device.name, "busy_us": device.busy_us, "span_us": device.span_us,
                     "idle_share": device.idle_share} for device in profile.devices],
        "regions": [{"region": row.name, "calls": row.calls, "cpu_us": row.cpu_us, "gpu_us": row.gpu_us,
                     "kernels": row.kernels, "gpu_us_per_call": row.gpu_us / row.calls if row.calls else None}
                    for row in profile.regions],
        "kernels": [{"name": row.name, "kind": row.kind, "count": row.count, "total_us": row.total_us,
                     "mean_us": row.mean_us, "share": row.total_us / total, "kernel_file": row.kernel_file,
                     "grid": row.grid} for row in profile.kernels],
        "unlinked_gpu_events": profile.unlinked,
        "unlinked_gpu_us": max(0.0, profile.total_gpu_us - sum(row.gpu_us for row in profile.regions)),
        "unreadable_events": trace.unreadable, "problems": trace.problems.get_state(),
    }


def render_profile_text(summary: dict) -> str:
    rank = f" (rank {summary['rank']})" if summary["rank"] is not None else ""
    lines = [f"Profiler trace{rank}: {summary['source']}", profile_totals_text(summary)]
    for device in summary["devices"]:
        lines.append(f"  device {device['device']} {device['name']}: busy {microseconds(device['busy_us'])} of "
                     f"{microseconds(device['span_us'])} ({device['idle_share']:.0%} idle)")
    gpu = bool(summary["kernels"])  # a CPU run's profile: no GPU columns of zeros
    if summary["regions"]:
        lines += ["", "Compiled regions (GPU time of the kernels queued while each ran):" if gpu
                  else "Compiled regions:",
                  f"  {'region':<34} {'calls':>7} {'CPU':>10}"
                  + (f" {'GPU':>10} {'GPU/call':>10} {REGION_EVENTS:>15}" if gpu else "")]
        for row in summary["regions"]:
            per_call = microseconds(row["gpu_us_per_call"]) if row["gpu_us_per_call"] is not None else "—"
            cpu = microseconds(row["cpu_us"]) if row["calls"] else "—"
            lines.append(f"  {region_label(row['region'])[:34]:<34} {row['calls'] or '—':>7} {cpu:>10}"
                         + (f" {microseconds(row['gpu_us']):>10} {per_call:>10} {number(row['kernels']):>15}"
                            if gpu else ""))
    if gpu:
        lines += ["", f"Kernels by GPU time (top {min(TOP, len(summary['kernels']))} of {len(summary['kernels'])}):"]
    for row in summary["kernels"][:TOP]:
        source = f"  [{Path(row['kernel_file']).name}, {row['grid']}]" if row["kernel_file"] else ""
        lines.append(f"  {row['share']:>5.1%} {microseconds(row['total_us']):>10} ×{row['count']:<6} "
                     f"{row['name'][:70]}{source}")
    if summary["unlinked_gpu_events"]:
        lines.append(f"\n{unlinked_text(summary)}")
    if damage := trace_damage_text(summary):
        lines.append(f"\n{damage}")
    return "\n".join(lines)


def trace_damage_text(summary: dict) -> str:
    """What of a profiler trace (or of a folder's traces) could not be read, each kind of damage with
    the file it was found in ("" when all of it was read)."""
    parts = [f"{entry['count']:,} {said_of(entry['count'], entry['meaning'])}"
             + (f" ({entry['examples'][0]})" if entry["examples"] else "")
             for entry in (summary.get("problems") or {}).values()]
    if summary.get("unreadable_events"):
        parts.append(f"{summary['unreadable_events']:,} event(s) that are no readable span (no name, a time that is "
                     "not a finite number, or a negative duration; left out)")
    return "Could not read all of the trace: " + "; ".join(parts) if parts else ""


def profile_totals_text(summary: dict) -> str:
    """"GPU time 964 ms: kernel time 551 ms, collective time 251 ms, …", or that the profile holds
    no GPU event at all (a CPU run's)."""
    if not summary["kernels"]:
        return NO_GPU
    return f"GPU time {microseconds(summary['gpu_us'])}: " + ", ".join(
        f"{KIND_TIME.get(kind, kind)} {microseconds(us)}"
        for kind, us in sorted(summary["by_kind_us"].items(), key=lambda i: -i[1]))


def unlinked_text(summary: dict) -> str:
    """Why the regions' GPU time falls short of the total ("" when it does not)."""
    count = summary["unlinked_gpu_events"]
    if not count:
        return ""
    unlinked = summary.get("unlinked_gpu_us", 0.0)
    return (f"{number(count)} GPU event(s), {microseconds(unlinked)}, carry no correlation to a runtime call: counted "
            f"in the GPU time ({microseconds(summary['gpu_us'])}), not in a region "
            f"({microseconds(summary['gpu_us'] - unlinked)} in all)")


def summarize_triton_join(session, trace: TritonTrace) -> dict:
    """The section of the log's summary that joins a tritonparse trace of the run to its kernels."""
    join = join_triton(session, trace)
    return {
        "schema": TRITON_JOIN_SCHEMA, "trace": str(trace.path), "compilations": len(trace.kernels),
        "joined": [{"kernel": item.kernel.name, "rank": item.unit.rank, "compile_id": str(item.unit.compile_id)[1:-1],
                    "matched_by": item.matched_by, "kernel_file": item.kernel.file,
                    "stages": _stage_lines(item.compilation),
                    **{key: item.compilation.metadata.get(key) for key in METADATA},
                    "launches": item.compilation.launches} for item in join.joined],
        "not_joined": [{"name": compilation.name, "compile_id": compilation.compile_id, "file": compilation.python_file,
                        "why": why} for compilation, why in join.not_joined],
        "problems": trace.problems.get_state(),
    }


def render_triton_join_text(section: dict) -> str:
    joined = section["joined"]
    lines = [f"Triton IR from the tritonparse trace {section['trace']}: {len(joined)} of its "
             f"{section['compilations']} compilation(s) are kernels of this run"]
    for item in joined:
        stages = ", ".join(f"{stage.upper()} {n} lines" for stage, n in item["stages"].items()) or "no IR"
        meta = ", ".join(f"{key} {item[key]}" for key in ("num_warps", "num_stages", "shared") if item[key] is not None)
        rank = f"rank {item['rank']} " if item["rank"] is not None else ""
        launches = f"; {number(item['launches'])} launch(es)" if item["launches"] else ""
        lines.append(f"  {item['kernel']}  ({rank}[{item['compile_id']}], by {item['matched_by']}): {stages}"
                     + (f"; {meta}" if meta else "") + launches)
    for compilation in section["not_joined"]:
        origin = f"unit [{compilation['compile_id']}]" if compilation["compile_id"] else "no torch.compile unit named"
        lines.append(f"  not joined: {compilation['name']} ({origin}): {compilation['why']}")
    lines += _problems(section["problems"])
    return "\n".join(lines)


def with_triton(summary: dict, session, trace: Source) -> tuple[dict, str]:
    """`summary` (the log's) with the tritonparse trace detected at `trace` joined to its kernels, and
    that section's text."""
    section = summarize_triton_join(session, trace.open())
    return {**summary, TRITON_JOIN_KEY: section}, render_triton_join_text(section)


def profile_section(session, profile: str | Path | None = None) -> tuple[dict | None, str]:
    """The source-time section for `session` and the profile trace at `profile` (else the one
    paired with the session: `paired_profile`), or None with why there is none."""
    path, why = (Path(profile), "") if profile is not None else paired_profile(session)
    if path is None:
        return None, why
    try:  # a trace found beside the log is read only inside the folder it was found in (no link out)
        trace = read_profiler_trace(path, root=None if profile is not None else path.parent)
    except (OSError, ValueError) as error:
        return None, f"profiler trace not readable: {error}"
    return summarize_source_time(session, trace), ""


def with_profile(summary: dict, session, profile: str | Path | None = None) -> tuple[dict, str]:
    """`summary` (the log's) with the section of its run's profile, and that section's text ("" when
    the run has no profile). A `profile` the user named that cannot be read raises ValueError."""
    section, why = profile_section(session, profile)
    if section is None:
        if profile is not None:
            raise ValueError(why)
        return summary, ""
    return {**summary, SOURCE_TIME_KEY: section}, render_source_time_text(section)


def summarize_source_time(session, trace: ProfilerTrace) -> dict:
    joined = source_time(session, trace)
    return {
        "schema": SOURCE_TIME_SCHEMA, "profile": str(trace.path), "device": joined.device,
        "graph_calls": joined.graph_calls, "unmatched_graph_calls": joined.unmatched_calls,
        "unseen_launch_calls": joined.unseen_launch_calls,
        "total_us": joined.total_us, "graph_us": joined.graph_us, "unattributed_us": joined.unattributed_us,
        "apportioning": APPORTIONING,
        "units": [{"compile_id": unit, "us": us, "calls": joined.unit_figures[unit].calls,
                   "profiled_us": joined.unit_figures[unit].profiled_us}
                  for unit, us in sorted(joined.units.items(), key=lambda item: -item[1])],
        "units_not_profiled": joined.units_not_profiled,
        "kernels": [{"compile_id": row.unit, "name": row.name, "kind": row.kind, "code": row.code,
                     "call_line": row.call_line, "launches": row.events, "us": row.total_us,
                     "per_launch_us": row.per_launch_us, "share_of_unit": row.share, "basis": "measured",
                     "launch_us_min_median_max": list(row.spread_us) if row.spread_us else None,
                     "nodes": row.nodes} for row in joined.kernels],
        "nodes": [{"compile_id": row.unit, "node": row.origin.name, "target": row.origin.target, "module": row.module,
                   "file": row.origin.file, "line": row.origin.line, **_figure(row.figure)} for row in joined.nodes],
        "modules": [{"module": module, **_figure(figure)} for module, figure in joined.modules.items()],
        "lines": [{"file": row.file, "line": row.line, "code": row.code, **_figure(row.figure), "nodes": row.nodes}
                  for row in joined.lines],
        "not_profiled": joined.not_profiled, "notes": joined.notes,
        "unreadable_events": trace.unreadable, "problems": trace.problems.get_state(),
    }


def _figure(figure: RowTime) -> dict:
    return {"us": figure.total_us, "measured_us": figure.measured_us, "apportioned_us": figure.apportioned_us,
            "basis": figure.basis}


def render_source_time_text(section: dict) -> str:
    total = section["total_us"] or 1.0
    what = "GPU time of the kernels each launch queued" if section["device"] == "GPU" else "CPU time of each launch"
    lines = [f"Profile of this run: {section['profile']}",
             f"  {section['graph_calls']} compiled graph call(s) tied to the log's code ({what}); kernel time "
             f"{microseconds(section['total_us'])}"
             + (f" of the calls' {microseconds(section['graph_us'])}" if section["device"] == "CPU"
                and section["graph_us"] else "")
             + (f"; {section['unmatched_graph_calls']} call(s) of code the log does not hold"
                if section["unmatched_graph_calls"] else "")
             + (f"; {section['unseen_launch_calls']} call(s) of code the log holds (its cache key) with none of its "
                f"launches in the profile" if section.get("unseen_launch_calls") else "")]
    if section["units"]:
        lines.append("  per compile unit (kernels of its profiled graph calls): " + ", ".join(
            f"{row['compile_id']} {microseconds(row['us'])}"
            + (f" of {microseconds(row['profiled_us'])}" if row.get("profiled_us") else "")
            for row in section["units"]))
    lines += ["", "Kernel time per source line (measured: launches wholly on the line; apportioned: shares of launches "
              "made from nodes on several lines):"]
    for row in section["lines"][:TOP]:
        where = f"{Path(row['file']).name}:{row['line']}" if row["file"] else "no source line"
        lines.append(f"  {row['us'] / total:>5.1%} {microseconds(row['us']):>10}  {row['basis']:<18} {where:<28} "
                     f"{(row['code'] or '')[:60]}")
    if section["unattributed_us"]:
        lines.append(f"  {section['unattributed_us'] / total:>5.1%} {microseconds(section['unattributed_us']):>10}  "
                     f"{'measured':<18} {'kernels the log names no nodes for'}")
    lines += ["", "Per module:"]
    for row in section["modules"][:TOP]:
        lines.append(f"  {row['us'] / total:>5.1%} {microseconds(row['us']):>10}  {row['basis']:<18} {row['module']}")
    lines += ["", "Per FX node (of the graph Dynamo captured):"]
    for row in section["nodes"][:TOP]:
        where = f"{Path(row['file']).name}:{row['line']}" if row["file"] else "—"
        lines.append(f"  {row['us'] / total:>5.1%} {microseconds(row['us']):>10}  {row['basis']:<18} "
                     f"{row['compile_id']} {row['node']:<20} {where:<24} {row['module']}")
    lines += ["", "Per kernel call site (measured; share of its unit's profiled graph calls):"]
    for row in [row for row in section["kernels"] if row["launches"]][:TOP]:  # the others: "not in the profile"
        share = f"{row['share_of_unit']:>5.1%}" if row.get("share_of_unit") is not None else "    —"
        per_launch = microseconds(row["per_launch_us"]) if row.get("per_launch_us") is not None else "—"
        lines.append(f"  {share} {microseconds(row['us']):>10} = {per_launch:>9} ×{row['launches']:<5} "
                     f"{row['compile_id']} {row['name'][:50]} line {row['call_line']}  "
                     f"← {', '.join(row['nodes'][:6]) or '?'}")
    if section.get("units_not_profiled"):
        lines.append(f"  units not profiled (their code ran in no profiled call): "
                     f"{', '.join(section['units_not_profiled'])}")
    if section["not_profiled"]:
        lines.append(f"  not in the profile: {', '.join(section['not_profiled'])}")
    lines += [f"Note: {note}" for note in section["notes"]]
    if damage := trace_damage_text(section):
        lines.append(damage)
    return "\n".join(lines)


def _problems(problems: dict) -> list[str]:
    if not problems:
        return []
    return ["", "Could not read:"] + [f"  {entry['count']} {said_of(entry['count'], entry['meaning'])}"
                                      for entry in problems.values()]
