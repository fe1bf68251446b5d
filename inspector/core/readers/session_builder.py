"""Assemble a `Session` from TORCH_TRACE records.

One handler per record kind, registered in `HANDLERS` (the tlparse way): each handler reads one record
into the rank under construction. A handler that fails on an odd record is counted under
``bad_record`` and the load goes on; kinds nobody claims are kept raw and counted as unknown.
"""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from inspector.core.readers.break_reasons import (
    explain_guard, is_library_file, parse_break_reason, parse_recompile_reasons, restart_is_break, user_frame,
)
from inspector.core.model.compile_id import OUTSIDE_DYNAMO, CompileId
from inspector.core.model.session import (
    CacheEvent, CodeArtifact, CompileUnit, ExportIssue, FailedGuard, Frame, GraphArtifact, GraphBreak, LazySpans, Rank,
    RecordArtifact, Recompile, Session, SourceLocation, TextArtifact, backward_stage,
)
from inspector.core.readers import index_cache
from inspector.core.readers.payload_texts import FullMeta, JoinedAotCode, PayloadText
from inspector.core.readers.torch_trace import TraceLog, read_trace_log, resolve_stack
from inspector.core.readers.trace_records import TraceRecord
from inspector.core.readers.trace_scanner import is_small_value
from inspector.core.readers.trace_spans import RankSpans

# Record kinds whose payload is a readable FX graph, and the stage name a view shows for them.
GRAPH_STAGES = {
    "dynamo_output_graph": "dynamo",
    "aot_joint_graph": "aot_joint",
    "aot_forward_graph": "aot_forward",
    "aot_backward_graph": "aot_backward",
    "aot_inference_graph": "aot_inference",
    "inductor_pre_grad_graph": "pre_grad",
    "inductor_post_grad_graph": "post_grad",
}
BACKWARD_METRICS_KINDS = ("bwd_compilation_metrics", "aot_autograd_backward_compilation_metrics")
METRICS_KINDS = ("compilation_metrics", *BACKWARD_METRICS_KINDS, "compilation_metrics_runtime")
GUARD_KINDS = ("dynamo_guards", "dynamo_cpp_guards_str")
SYMBOLIC_KINDS = ("create_symbol", "create_unbacked_symbol", "guard_added", "guard_added_fast",
                  "expression_created", "symbolic_shape_specialization", "propagate_real_tensors",
                  "unbacked_symbol_rebinding")
DESCRIBE_KINDS = ("describe_storage", "describe_tensor", "describe_source")
LEFT_ON_DISK = frozenset(DESCRIBE_KINDS)  # records the reader and the index cache do not keep
EXPORT_ISSUE_KINDS = {"propagate_real_tensors_provenance": "data_dependent",
                      "missing_fake_kernel": "missing_fake_kernel",
                      "mismatched_fake_kernel": "mismatched_fake_kernel"}
EXPORT_GUARD = "guard_added"  # an issue too, outside Dynamo only (see _on_symbolic)


class RankBuilder:
    """Everything one log says about one rank, gathered before the model is frozen into a `Rank`."""

    def __init__(self, log: TraceLog, session: Session):
        self.log = log
        self.session = session
        self.units: dict[tuple, CompileUnit] = {}
        self.chromium_events: list[TraceRecord] = []
        self.aot_code: dict[CompileUnit, dict] = {}  # per unit: AOTInductor's code dumps, joined into one output code
        self.executions: list[TextArtifact] = []  # the rank's graph_execution records
        # each unit's export issues by (unit, kind, subject, user line): torch logs one each time it meets it
        self.export_issues: dict[tuple, ExportIssue] = {}

    def unit(self, record: TraceRecord, outside_dynamo: bool = False) -> CompileUnit | None:
        """The unit `record` belongs to; a record of compile work with no compile id (torch.export,
        AOTInductor: graphs, code, metrics) goes to the one `[-/-]` unit when `outside_dynamo`."""
        compile_id = record.compile_id or _metrics_compile_id(record)
        if compile_id is None:
            if not outside_dynamo:
                return None
            compile_id = OUTSIDE_DYNAMO
        unit = self.units.get(compile_id.unit_key)
        if unit is None:
            unit = CompileUnit(compile_id=compile_id.without_attempt(), rank=self.log.rank)
            self.units[compile_id.unit_key] = unit
        unit.attempts = max(unit.attempts, compile_id.attempt + 1)
        if compile_id.outside_dynamo and unit.location is None:
            _name_from_stack(unit, self.log.stack(record))
        return unit

    def lazy_text(self, record: TraceRecord) -> Callable[[], str]:
        return PayloadText(self.log, record)

    def text_artifact(self, record: TraceRecord, name: str | None = None) -> TextArtifact:
        return TextArtifact(name or record.name, self.lazy_text(record), str(record.meta.get("encoding", "string")))

    def keep(self, record: TraceRecord, artifact: TextArtifact, outside_dynamo: bool = False) -> None:
        """`artifact` on its record's unit (see `unit`), or among the session's own where it has none."""
        unit = self.unit(record, outside_dynamo)
        if unit is not None:
            unit.artifacts.append(artifact)
        else:
            self.session.global_artifacts.append(artifact)


def _name_from_stack(unit: CompileUnit, stack: list[dict]) -> None:
    """A unit outside Dynamo is named after the API the user's code called (aoti_compile_and_package,
    export) and located at that call: the last frame of the user's own code in the record's stack."""
    user = [index for index, frame in enumerate(stack) if not is_library_file(frame["file"])]
    if not user:
        return
    call = stack[user[-1]]
    unit.location = SourceLocation(call["file"], call["line"], call["function"], call["code"])
    unit.function = stack[user[-1] + 1]["function"] if user[-1] + 1 < len(stack) else call["function"]


def _metrics_compile_id(record: TraceRecord) -> CompileId | None:
    text = record.meta.get("compile_id")
    return CompileId.parse(text) if isinstance(text, str) else None


# --- handlers -------------------------------------------------------------------------------------

def _on_dynamo_start(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record)
    if unit is None:
        return
    unit.started = True
    stack = resolve_stack(record.meta.get("stack"), builder.log.strings, builder.log.problems)
    unit.user_stack = [SourceLocation(f["file"], f["line"], f["function"], f["code"]) for f in stack]
    if unit.user_stack:
        unit.location = unit.user_stack[-1]
        unit.function = unit.function or unit.location.function


def _on_graph(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record, outside_dynamo=True)
    if unit is None:
        return
    stage = GRAPH_STAGES.get(record.name, record.name)
    if stage in unit.graphs:
        stage = _next_free(unit.graphs, stage)
    unit.graphs[stage] = GraphArtifact(stage, builder.lazy_text(record))


def _next_free(graphs: dict, stage: str) -> str:
    """The name of a second graph at `stage`: Inductor compiles a training unit's backward graph (on the
    first backward call) through the same stages as its forward one, so after an AOT backward graph it is
    that stage's backward graph; any other repeat is numbered."""
    if "aot_backward" in graphs and backward_stage(stage) not in graphs:
        return backward_stage(stage)
    number = 2
    while f"{stage} #{number}" in graphs:
        number += 1
    return f"{stage} #{number}"


def _on_output_code(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record, outside_dynamo=True)
    if unit is None:
        return
    path = record.meta.get("filename") or record.meta.get("file_path")
    unit.output_code.append(CodeArtifact(str(path) if path else None, builder.lazy_text(record),
                                         lambda: unit.provenance))


def _on_guards(builder: RankBuilder, record: TraceRecord) -> None:
    builder.keep(record, builder.text_artifact(record, "guards"))


def _on_metrics(builder: RankBuilder, record: TraceRecord) -> None:
    # AOTInductor writes its metrics with no compile id, after the graphs and code of its [-/-] unit
    unit = builder.unit(record, outside_dynamo=OUTSIDE_DYNAMO.unit_key in builder.units)
    if unit is None:
        return
    metrics = record.meta
    if record.kind in BACKWARD_METRICS_KINDS:
        unit.backward_metrics.update(metrics)
        return
    unit.finished = unit.finished or record.kind == "compilation_metrics"
    unit.metrics_records.append(FullMeta(builder.log, record))
    for key, value in metrics.items():
        if value is not None or key not in unit.metrics:
            unit.metrics[key] = value
    unit.function = unit.function or metrics.get("co_name")
    if unit.location is None and metrics.get("co_filename"):
        unit.location = SourceLocation(str(metrics["co_filename"]), metrics.get("co_firstlineno"),
                                       metrics.get("co_name"), None)
    if metrics.get("fail_type"):
        unit.fail_type = str(metrics["fail_type"])
        reason = metrics.get("fail_reason")
        if reason is None:  # the index keeps short strings only: a chained break's reason is a few KiB
            reason = builder.log.full_meta(record).get("fail_reason")
        unit.fail_reason = _interpreted(builder, record, str(reason or ""))
        if metrics.get("config_suppress_errors"):
            unit.warnings.append(f"error suppressed, frame fell back to eager: {unit.fail_type}")
        if "limit" in (unit.fail_reason or "").lower() and "recompile" in (unit.fail_reason or "").lower():
            unit.warnings.append("recompile limit hit: this frame now runs eagerly")
    reasons = metrics.get("restart_reasons")
    if isinstance(reasons, list):
        unit.restart_reasons = [str(reason) for reason in reasons] or unit.restart_reasons
    if metrics.get("cudagraph_skip_reason"):
        unit.warnings.append(f"CUDA graphs skipped: {metrics['cudagraph_skip_reason']}")


def _on_artifact(builder: RankBuilder, record: TraceRecord) -> None:
    handler = ARTIFACT_HANDLERS.get(record.name)
    if handler is not None:
        handler(builder, record)
    elif record.name.endswith("_graph"):
        _on_graph(builder, record)
    else:
        builder.keep(record, builder.text_artifact(record))


# The most of a break or recompile reason its interpreters read: the longest real ones are a few KiB
# (a stack trace); past this a reason is read on its head only and counted, so the time one record can
# cost is bounded whatever its text (each interpreter is linear: tests/test_linear_parsing.py).
INTERPRETED_CHARS = 1 << 20


def _interpreted(builder: RankBuilder, record: TraceRecord, text: str) -> str:
    if len(text) <= INTERPRETED_CHARS:
        return text
    builder.log.problems.add("oversized_text", f"line {record.line_no} ({record.name}): {len(text)} characters")
    return text[:INTERPRETED_CHARS]


def _on_graph_execution(builder: RankBuilder, record: TraceRecord) -> None:
    """The order the rank's compiled graphs ran in: the rank's (compared across ranks), and shown
    with the other records outside a compile unit."""
    artifact = builder.text_artifact(record)
    builder.executions.append(artifact)
    builder.keep(record, artifact)


def _on_break_reason(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record)
    if unit is None:
        return
    text = builder.log.payload(record)
    unit.breaks.append(_graph_break(record.compile_id or unit.compile_id, _interpreted(builder, record, text), text))


def _graph_break(compile_id: CompileId, text: str, whole: str | None = None) -> GraphBreak:
    """The break `text` describes (`whole`, when given, is the record's full text, kept raw)."""
    parsed = parse_break_reason(text)
    frame, via = user_frame(parsed.stack, parsed.file, parsed.line)
    location = None
    if frame:
        location = SourceLocation(*frame)
    elif parsed.file:
        location = SourceLocation(parsed.file, parsed.line, None, None)
    stack = [SourceLocation(*f) for f in parsed.stack]
    return GraphBreak(compile_id, parsed.reason, location, parsed.explanation, parsed.hints, stack,
                      parsed.kind, text=text if whole is None else whole, via=[SourceLocation(*f) for f in via])


def _on_recompile(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record)
    if unit is None:
        return
    text = builder.log.payload(record)
    guards = [FailedGuard(against, guard, explain_guard(guard))
              for against, guard in parse_recompile_reasons(_interpreted(builder, record, text))]
    unit.recompile = Recompile(unit.compile_id, guards, text)


def _on_cache(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record, outside_dynamo=True)
    if unit is None:
        return
    cache, _, outcome = record.name.rpartition("_cache_")
    log = builder.log

    def small_detail() -> dict:
        detail = log.payload_json(record)
        return {key: value for key, value in detail.items() if is_small_value(value)} if isinstance(detail,
                                                                                                    dict) else {}

    unit.cache_events.append(CacheEvent(cache, outcome, small_detail))
    unit.artifacts.append(builder.text_artifact(record))  # the whole record, as tlparse links it per compile


def _on_provenance(builder: RankBuilder, record: TraceRecord) -> None:
    unit = builder.unit(record, outside_dynamo=True)
    mapping = builder.log.payload_json(record)
    if unit is not None and isinstance(mapping, dict):
        unit.provenance = {**(unit.provenance or {}), **mapping}


def _on_kernel_info(builder: RankBuilder, record: TraceRecord) -> None:
    """What compiling each Triton kernel of a graph cost (written on a GPU after the graph's output code)."""
    unit = builder.unit(record, outside_dynamo=True)
    info = builder.log.payload_json(record)
    if unit is not None and isinstance(info, dict):
        code = max(0, len(unit.output_code) - 1)
        unit.kernel_info.update(((code, name), facts) for name, facts in info.items() if isinstance(facts, dict))
    builder.keep(record, builder.text_artifact(record), outside_dynamo=True)


def _on_torch_version(builder: RankBuilder, record: TraceRecord) -> None:
    info = builder.log.payload_json(record)
    if isinstance(info, dict) and info.get("pytorch_version"):
        builder.session.torch_version = str(info["pytorch_version"])
    builder.keep(record, builder.text_artifact(record))


def _on_chromium_event(builder: RankBuilder, record: TraceRecord) -> None:
    builder.chromium_events.append(record)  # read when a view first asks for spans


def _on_symbolic(builder: RankBuilder, record: TraceRecord) -> None:
    log = builder.log

    def fields(shown: bool = False) -> dict:
        """The record's fields, its stacks' files named; the Python `stack` (a hundred frames, read by
        no analysis) only in the text that is `shown`."""
        meta = log.full_meta(record)
        if not shown:
            meta.pop("stack", None)
        for key in ("stack", "user_stack"):
            if key in meta:
                meta[key] = resolve_stack(meta[key], log.strings)
        return meta

    artifact = RecordArtifact(record.kind, lambda: json.dumps(fields(shown=True), indent=1), "json", fields)
    if record.kind == "guard_added" and record.compile_id is None and _restricts_an_input(log.full_meta(record)):
        _on_export_issue(builder, record, EXPORT_GUARD, artifact)  # outside Dynamo, a guard on an input is export's
        return
    builder.keep(record, artifact)


def _restricts_an_input(meta: dict) -> bool:
    """A guard that draft export reports (GUARD_ADDED): on a symbol that stands for an input (it has
    a source), and not a runtime assert, which export checks in the graph instead."""
    return bool(meta.get("symbol_to_sources")) and meta.get("prefix") != "runtime_assert"


def _on_export_issue(builder: RankBuilder, record: TraceRecord, kind: str | None = None,
                     artifact: TextArtifact | None = None) -> None:
    """An issue export worked around, once per kind, subject and user line (torch logs each time it
    meets it; draft export counts them the same way); its record is kept as `artifact` (by default
    the record's fields as JSON text)."""
    meta = builder.log.full_meta(record)
    unit = builder.unit(record, outside_dynamo=True)
    kind = kind or EXPORT_ISSUE_KINDS[record.kind]
    subject = str(meta.get("expr") or meta.get("op") or "?")
    stack = resolve_stack(meta.get("user_stack"), builder.log.strings, builder.log.problems)
    user = [frame for frame in stack if not is_library_file(frame["file"])] or stack
    location = SourceLocation(user[-1]["file"], user[-1]["line"], user[-1]["function"],
                              user[-1]["code"]) if user else None
    key = (id(unit), kind, subject, str(location))
    met = builder.export_issues.get(key)
    if met is not None:
        met.count += 1
        return
    frame_locals = meta.get("frame_locals") if isinstance(meta.get("frame_locals"), dict) else {}
    names = frame_locals.get("locals") if isinstance(frame_locals.get("locals"), dict) else {}
    sources = meta.get("symbol_to_sources") if isinstance(meta.get("symbol_to_sources"), dict) else {}
    issue = builder.export_issues[key] = ExportIssue(
        kind, subject, location, str(meta["result"]) if meta.get("result") is not None else None,
        {str(name): [str(symbol) for symbol in symbols] for name, symbols in names.items()
         if isinstance(symbols, list)},
        {str(symbol): str(source) for symbol, source in sources.items()}, str(meta.get("reason") or ""))
    unit.export_issues.append(issue)
    unit.artifacts.append(artifact or TextArtifact(record.kind, lambda: json.dumps(meta, indent=1), "json"))


def _on_exported_program(builder: RankBuilder, record: TraceRecord) -> None:
    """The program torch.export produced: its graph module as a graph stage, the whole text (graph
    signature, range constraints) as an artifact."""
    unit = builder.unit(record, outside_dynamo=True)
    unit.function = unit.function or "torch.export"
    text = builder.lazy_text(record)
    unit.graphs.setdefault("exported_program", GraphArtifact("exported_program", lambda: _graph_module_part(text())))
    unit.artifacts.append(TextArtifact("exported_program", text))


def _graph_module_part(text: str) -> str:
    """`ExportedProgram:` + an indented graph module + `Graph signature:` …: the module, unindented."""
    lines = text.split("\n")
    body = lines[1:] if lines and lines[0].startswith("ExportedProgram") else lines
    end = next((index for index, line in enumerate(body) if line.startswith("Graph signature")), len(body))
    return textwrap.dedent("\n".join(body[:end]))


def _on_describe(builder: RankBuilder, record: TraceRecord) -> None:
    """Fake-tensor descriptions of graph inputs: known, and left on disk (the graphs carry the shapes).
    A session's logs are read without them (LEFT_ON_DISK); a log read whole by a tool still holds them."""


def _on_dump_file(builder: RankBuilder, record: TraceRecord) -> None:
    builder.keep(record, builder.text_artifact(record, f"file: {record.meta.get('name', '?')}"))


AOT_CODE_DUMPS = ("inductor_aot_wrapper_code", "inductor_aot_kernel_code")


def _on_graph_dump(builder: RankBuilder, record: TraceRecord) -> None:
    """AOTInductor's C++ wrapper and kernel code become one output code of the unit, the wrapper
    first: its calls name the kernels the kernel code defines, as one Python output code would."""
    name = record.meta.get("name")
    if name not in AOT_CODE_DUMPS:
        builder.keep(record, builder.text_artifact(record, f"graph_dump: {name or '?'}"))
        return
    unit = builder.unit(record, outside_dynamo=True)
    parts = builder.aot_code.setdefault(unit, {})
    parts[name] = (record.meta.get("filename"), builder.lazy_text(record))
    if len(parts) == 1:
        unit.output_code.append(CodeArtifact(str(parts[name][0] or name), JoinedAotCode(parts, AOT_CODE_DUMPS),
                                             lambda: unit.provenance))


def _on_link(builder: RankBuilder, record: TraceRecord) -> None:
    name, url = record.meta.get("name", "link"), record.meta.get("url", "")
    builder.keep(record, TextArtifact(f"link: {name}", lambda: str(url)))


HANDLERS: dict[str, Callable[[RankBuilder, TraceRecord], None]] = {
    "dynamo_start": _on_dynamo_start,
    "inductor_output_code": _on_output_code,
    "artifact": _on_artifact,
    "chromium_event": _on_chromium_event,
    "dump_file": _on_dump_file,
    "link": _on_link,
    "graph_dump": _on_graph_dump,
    "exported_program": _on_exported_program,
    **{kind: _on_export_issue for kind in EXPORT_ISSUE_KINDS},
    **{kind: _on_graph for kind in GRAPH_STAGES},
    **{kind: _on_guards for kind in GUARD_KINDS},
    **{kind: _on_metrics for kind in METRICS_KINDS},
    **{kind: _on_symbolic for kind in SYMBOLIC_KINDS},
    **{kind: _on_describe for kind in DESCRIBE_KINDS},
}
ARTIFACT_HANDLERS: dict[str, Callable[[RankBuilder, TraceRecord], None]] = {
    "dynamo_graph_break_reason": _on_break_reason,
    "recompile_reasons": _on_recompile,
    "inductor_provenance_tracking_node_mappings": _on_provenance,
    "triton_kernel_info": _on_kernel_info,
    "torch_version": _on_torch_version,
    "graph_execution": _on_graph_execution,
    **{f"{cache}_cache_{outcome}": _on_cache for cache in ("fx_graph", "aotautograd")
       for outcome in ("hit", "miss", "bypass")},
}


# --- assembly -------------------------------------------------------------------------------------

def build_rank(log: TraceLog, session: Session) -> Rank:
    builder = RankBuilder(log, session)
    unknown: Counter = Counter()
    for record in log.records:
        handler = HANDLERS.get(record.kind)
        if handler is None:
            unknown[record.kind] += 1
            builder.keep(record, builder.text_artifact(record, f"unknown: {record.kind}"))
            continue
        try:
            handler(builder, record)
        except Exception as error:  # one odd record must not lose the rest of the log
            log.problems.add("bad_record", f"line {record.line_no} ({record.name}): {type(error).__name__}: {error}")
    for kind, count in unknown.items():
        session.unknown_kinds[kind] = session.unknown_kinds.get(kind, 0) + count
    spans = LazySpans(RankSpans(builder.chromium_events, log, OUTSIDE_DYNAMO.unit_key in builder.units))
    for unit in builder.units.values():
        unit.span_source = spans
    _finish_breaks(builder)
    return Rank(rank=log.rank, log_path=log.path, frames=_frames(builder.units.values()), span_source=spans,
                problems=log.problems, executions=builder.executions)


def _finish_breaks(builder: RankBuilder) -> None:
    """Mark breaks after which Dynamo restarted and give each its rank, and add the breaks that only a restart reason
    reports (older torch wrote no artifact). A restart that is no break (a float Dynamo could not turn into a
    tensor) stays a restart of the unit: its status says so and its attempts count it."""
    for unit in builder.units.values():
        for brk in unit.breaks:
            brk.restarted = brk.compile_id.attempt < unit.attempts - 1
        unit.analysis_restarts = [reason for reason in unit.restart_reasons if not restart_is_break(reason)]
        if not unit.breaks and unit.restart_reasons:
            for reason in filter(restart_is_break, unit.restart_reasons):
                brk = _graph_break(unit.compile_id, reason)
                brk.restarted = True
                unit.breaks.append(brk)
        for brk in unit.breaks:
            brk.rank = unit.rank


def _frames(units) -> list[Frame]:
    frames: dict[tuple, Frame] = {}
    for unit in sorted(units, key=lambda u: (u.compile_id.autograd or -1, u.compile_id.frame, u.compile_id.compile)):
        key = (unit.compile_id.autograd, unit.compile_id.frame)
        frame = frames.get(key)
        if frame is None:
            frame = frames[key] = Frame(unit.compile_id.frame, unit.function, unit.location)
        frame.units.append(unit)
    for frame in frames.values():
        _name_from_siblings(frame)
    return list(frames.values())


def _name_from_siblings(frame: Frame) -> None:
    """Units of one frame id compile one code object (torch numbers frames per code object), so a unit
    torch wrote no code details for — a recompile-limit skip has no dynamo_start and no co_name — is
    named after its siblings."""
    named = next((unit for unit in frame.units if unit.function), None)
    if named is None:
        return
    for unit in frame.units:
        if not unit.function:
            unit.function, unit.location = named.function, unit.location or named.location
    frame.function, frame.location = frame.function or named.function, frame.location or named.location


def build_trace_session(log_paths: list[Path], source: Path, kind: str = "torch_trace",
                        verify_md5: bool = True, progress: Callable[[int, int], None] | None = None) -> Session:
    """One session from one or more logs (one log per rank in a distributed run).

    With `verify_md5` False the session is an index: payload checksums, spans, graphs and kernels
    are all read on first use. A log opened before comes from the index cache (`index_cache`);
    `progress(bytes_done, bytes_total)` follows the reading of the others."""
    session = Session(source=source, kind=kind)
    total = sum(_size(path) for path in log_paths)
    done = 0
    for path in log_paths:
        log = indexed_log(path, verify_md5, (lambda read, base=done: progress(base + read, total)) if progress
                          else None)
        done += log.size
        if progress:
            progress(done, total)
        rank = build_rank(log, session)
        session.ranks.append(rank)
    session.ranks.sort(key=lambda rank: (rank.rank is None, rank.rank or 0))
    return session


def build_preview_session(log_path: Path, source: Path, limit: int) -> Session:
    """The session of a log's whole records within its first `limit` bytes, its payloads unchecked:
    what the app shows while it reads the whole of a big log (never kept in the index cache)."""
    session = Session(source=source, kind="torch_trace")
    log = read_trace_log(log_path, verify_md5=False, limit=limit, skip_kinds=LEFT_ON_DISK)
    session.ranks.append(build_rank(log, session))
    session.preview = (log.size, _size(log_path))
    return session


def indexed_log(path: Path, verify_md5: bool = True, progress: Callable[[int], None] | None = None) -> TraceLog:
    """The index of one log: from the index cache when this log was read before, else read — and
    kept there when every payload was checked, so the next open of it reads nothing again."""
    log = index_cache.load_log(Path(path))
    if log is None:
        log = read_trace_log(path, verify_md5=verify_md5, progress=progress, skip_kinds=LEFT_ON_DISK)
        index_cache.store_log(log)
    return log


def _size(path: Path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0
