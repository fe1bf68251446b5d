"""Everything tlparse shows on a compile's own page, for one unit: the user's call that triggered it,
its failures and restarts, every compilation-metrics field (those this version does not know listed,
not dropped), its cache lookups with their reasons, and the code Dynamo wrote that the log carries
(transformed bytecode of resume functions, the guards); and the trigger stacks of all units folded into
one trie, as tlparse's index page folds them."""

from __future__ import annotations

import re
from functools import cache
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.model.records import Record, live
from inspector.core.model.session import CacheEvent, CompileUnit, TextArtifact
from inspector.core.model.source_location import SourceLocation
from inspector.core.analysis.user_names import shown_name
from inspector.core.readers.break_reasons import is_library_file

# The fields of torch 2.13's CompilationMetrics (torch/_dynamo/utils.py), in its order: a field a log
# carries that is not here comes from another torch version and is listed as not known, with its value
KNOWN_METRICS = tuple("""
compile_id frame_key co_name co_filename co_firstlineno cache_size accumulated_cache_size guard_count
shape_env_guard_count graph_op_count graph_node_count graph_input_count start_time entire_frame_compile_time_s
backend_compile_time_s inductor_compile_time_s code_gen_time_s fail_type fail_reason fail_user_frame_filename
fail_user_frame_lineno non_compliant_ops compliant_custom_ops restart_reasons dynamo_time_before_restart_s
stack_trace exception_stack_trace graph_node_shapes has_guarded_code remote_cache_time_saved_s
structured_logging_overhead_s config_suppress_errors config_inline_inbuilt_nn_modules specialize_float
dynamo_config compiler_config is_forward num_triton_bundles remote_fx_graph_cache_get_time_ms
remote_fx_graph_cache_put_time_ms start_time_us duration_us dynamo_cumulative_compile_time_us
aot_autograd_cumulative_compile_time_us inductor_cumulative_compile_time_us
inductor_code_gen_cumulative_compile_time_us triton_compile_time_us runtime_cudagraphify_time_us
runtime_triton_autotune_time_us dynamo_compile_time_before_restart_us distributed_ephemeral_timeout_us
structured_logging_overhead_us remote_fx_graph_cache_get_time_us remote_fx_graph_cache_put_time_us
backward_cumulative_compile_time_us end_time_us pre_grad_pass_time_us post_grad_pass_time_us
joint_graph_pass_time_us log_format_version inductor_config remote_cache_version
inductor_fx_remote_cache_hit_count inductor_fx_remote_cache_miss_count inductor_fx_remote_cache_backend_type
inductor_fx_remote_cache_hit_keys inductor_fx_remote_cache_miss_keys inductor_fx_local_cache_hit_count
inductor_fx_local_cache_miss_count aotautograd_remote_cache_hit_count aotautograd_remote_cache_miss_count
aotautograd_local_cache_hit_count aotautograd_local_cache_miss_count cuda_version triton_version feature_usage
compile_time_autotune_time_us is_runtime gc_time_us tensorify_float_attempt tensorify_float_success
tensorify_float_failure guard_latency_us recompile_reason num_graph_breaks triton_kernel_compile_times_us
ir_count cudagraph_skip_reason python_version pgo_put_remote_code_state_time_us
pgo_get_remote_code_state_time_us param_numel param_bytes param_count recompile_user_contexts
inline_inbuilt_nn_modules_candidate pytorch_version inductor_provenance functorch_config
""".split())
_KNOWN = frozenset(KNOWN_METRICS)
_UNITS = (("_s", "s"), ("_ms", "ms"), ("_us", "µs"), ("_bytes", "bytes"))
VALUE_CHARS = 2000  # a table cell shows this much of a long value (a config dump, a stack); the rest is counted
CODE_JSON_CHARS = 1 << 16  # of one code text in the summary JSON (the app shows it whole)
# torch's own link to a break type's page, which names its id: ".../compile-graph-break-site/gb/gb0099.html"
_GB_ID = re.compile(r"/gb/(gb\d{4})\.html", re.IGNORECASE)
# "<class 'torch._dynamo.exc.X'>" → "X"
_EXC_CLASS = re.compile(r"<class '(?:[\w]+\.)*(\w+)'>")
# torch's names for a resume function's bytecode; the capture names its own records the same way
CODE_SUFFIXES = {"_ORIGINAL_SOURCE": "original Python (decompiled)",
                 "_MODIFIED_SOURCE": "transformed Python (decompiled)",
                 "_ORIGINAL_BYTECODE": "original bytecode", "_MODIFIED_BYTECODE": "transformed bytecode",
                 "_NOT_DECOMPILED": "why there is no Python source"}
# our capture's files on the stack of a compile: the runner, and its measurement calling the entry point
CAPTURE_CALLERS = ("inspector/capture/runner.py", "inspector/capture/eager_vs_compiled.py")
GUARD_ARTIFACTS = {"guards": "guards"}  # the name the reader gives dynamo_guards and dynamo_cpp_guards_str


@dataclass(frozen=True)
class MetricRow:
    """One compilation-metrics field as the log wrote it: `known` False for a field of another torch."""

    name: str
    raw: object = field(repr=False)  # as torch wrote it, for the JSON (what `value` shows)
    unit: str = ""
    known: bool = True

    @property
    def value(self) -> str:
        """As shown: a long value cut at VALUE_CHARS. Worked out when shown, not when the row is made:
        the text of a unit's provenance field alone runs to ~170 KB, and a summary shows none."""
        return _shown_value(self.raw)

    def get_state(self) -> dict:
        return {"name": self.name, "value": self.value, "unit": self.unit, "known": self.known}


@dataclass(frozen=True)
class CacheLookup(Record):
    """One lookup of the FX graph or AOTAutograd cache: hit, miss or bypass, and why where torch says."""

    cache: str  # fx_graph | aotautograd
    outcome: str  # hit | miss | bypass
    reason: str | None  # a bypass's cause ("Can't cache HigherOrderOperator: cond")
    key: str | None
    time_saved_ms: float | None

    @property
    def described(self) -> str:
        saved = f", saved {self.time_saved_ms:g} ms" if self.time_saved_ms is not None else ""
        why = f": {self.reason}" if self.reason else ""
        return f"{self.cache.replace('_', ' ')} cache {self.outcome}{why}{saved}"


@dataclass(frozen=True)
class FailureLink(Record):
    """One link of a failure or restart chain: what torch raised, its break type where it names one."""

    kind: str  # "failure" (fail_type/fail_reason) | "restart" (a restart_reasons entry)
    type: str
    break_type: str | None  # "GB0099"
    summary: str  # the text in one line with its root cause (`CompileUnit.fail_summary`)
    text: str


@dataclass(frozen=True)
class CodeText(Record):
    """A piece of the code Dynamo wrote that the log carries: a resume function's bytecode, the guards.
    Its text cut at CODE_JSON_CHARS, the cut marked with how much more there was (a unit's guards run
    to megabytes in a big model: the app shows them whole, from `artifact`)."""

    title: str  # "torch_dynamo_resume_in_f_at_6: transformed bytecode"
    function: str | None
    kind: str  # original bytecode | transformed bytecode | guards …
    text: str | None = None
    artifact: TextArtifact | None = live(None)  # the log's record (a text read back from a summary: None)


def _code_text(title: str, function: str | None, kind: str, artifact: TextArtifact) -> CodeText:
    text, length = artifact.head(CODE_JSON_CHARS)
    if length > CODE_JSON_CHARS:
        text = f"{text}\n# … cut: {length - CODE_JSON_CHARS:,} more characters\n"
    return CodeText(title, function, kind, text, artifact=artifact)


@dataclass(frozen=True)
class UnitCompile(Record):
    """One unit's page, what tlparse shows on a compile's page: the trigger stack, restarts and failure,
    every metrics field (`unknown_metrics` names those of another torch version), cache lookups,
    Dynamo's code; every list in the order the log wrote it."""

    trigger: tuple[SourceLocation, ...]  # the user's frames of the dynamo_start stack, outermost first
    failures: tuple[FailureLink, ...]
    metrics: Mapping[str, Any]  # as torch wrote them
    unknown_metrics: list[str]
    cache_lookups: tuple[CacheLookup, ...]
    code: tuple[CodeText, ...]
    metric_rows: tuple[MetricRow, ...] = live()  # the metrics as shown (a page read back from a summary: none)

    NESTED = {"trigger": [SourceLocation], "failures": [FailureLink], "cache_lookups": [CacheLookup],
              "code": [CodeText]}


def trigger_stack(unit: CompileUnit) -> list[SourceLocation]:
    """The frames of the user's own files in the stack that led to this compile, outermost first; the
    whole stack where none is the user's (a compile of library code called from the interpreter)."""
    user = [frame for frame in unit.user_stack if not is_library_file(frame.file) and not _capture_runner(frame.file)]
    return user or list(unit.user_stack)


def _capture_runner(path: str) -> bool:
    """Our capture's runner, which calls the user's entry point: its frames are not the user's."""
    return path.replace("\\", "/").endswith(CAPTURE_CALLERS)


def metric_rows(metrics: dict) -> list[MetricRow]:
    """Every field of a unit's compilation metrics: torch's order for the known ones, then the others."""
    present = [name for name in KNOWN_METRICS if name in metrics]
    present += sorted(name for name in metrics if name not in _KNOWN)
    return [MetricRow(name, metrics[name], _unit_of(name), name in _KNOWN) for name in present]


@cache  # a hundred names, each met once per unit
def _unit_of(name: str) -> str:
    return next((unit for suffix, unit in _UNITS if name.endswith(suffix)), "")


def _shown_value(value) -> str:
    text = "" if value is None else str(value)
    if len(text) > VALUE_CHARS:
        return f"{text[:VALUE_CHARS]}… ({len(text) - VALUE_CHARS:,} more characters)"
    return text


def cache_lookups(events: Iterable[CacheEvent]) -> list[CacheLookup]:
    lookups = []
    for event in events:
        detail = event.detail
        reason = detail.get("reason") or detail.get("cache_bypass_reason") or detail.get("cache_status_detailed") or ""
        saved = detail.get("time_saved_ms")
        lookups.append(CacheLookup(event.cache, event.outcome, " ".join(str(reason).split()) or None,
                                   str(detail.get("key") or detail.get("cache_key") or "") or None,
                                   float(saved) if isinstance(saved, (int, float)) else None))
    return lookups


def failure_chain(unit: CompileUnit) -> list[FailureLink]:
    """The restarts in the order Dynamo made them, then the failure that ended the compile."""
    chain = [_failure("restart", reason) for reason in unit.restart_reasons]
    if unit.fail_type:
        chain.append(_failure("failure", unit.fail_reason or unit.fail_type, unit.fail_type, unit.fail_summary))
    return chain


def _failure(kind: str, text: str, type_name: str | None = None, summary: str = "") -> FailureLink:
    found = _GB_ID.search(text)
    if type_name is None:
        named = _EXC_CLASS.match(text.strip())  # older torch: "<class '…Unsupported'>: …"
        type_name = named.group(1) if named else text.strip().splitlines()[0][:120] if text.strip() else "?"
    if not summary and text.strip():
        summary = " ".join(text.strip().splitlines()[0].split())
    return FailureLink(kind, _EXC_CLASS.sub(r"\1", type_name), found.group(1).upper() if found else None, summary, text)


def code_texts(unit: CompileUnit) -> list[CodeText]:
    """The code Dynamo wrote that this unit's records carry, in log order."""
    found = []
    for artifact in unit.artifacts:
        name = artifact.name
        if name in GUARD_ARTIFACTS:
            found.append(_code_text(GUARD_ARTIFACTS[name], unit.function, GUARD_ARTIFACTS[name], artifact))
            continue
        for suffix, kind in CODE_SUFFIXES.items():
            if name.endswith(suffix):
                function = name[:-len(suffix)]
                found.append(_code_text(f"{shown_name(function)}: {kind}", function, kind, artifact))
    return found


def compile_detail(unit: CompileUnit) -> UnitCompile:
    rows = metric_rows(unit.full_metrics)
    return UnitCompile(tuple(trigger_stack(unit)),
                       tuple(failure_chain(unit)), {row.name: row.raw for row in rows},
                       [row.name for row in rows if not row.known], tuple(cache_lookups(unit.cache_events)),
                       tuple(code_texts(unit)), metric_rows=tuple(rows))


# --- the stack trie -------------------------------------------------------------------------------

@dataclass(frozen=True)
class StackTrieNode(Record):
    """A frame of the trigger-stack trie, the compiles whose stack ends there, and the frames it called."""

    frame: str  # "demo.py:14 in <module>: f(x)"
    compile_ids: list[str]
    children: tuple[StackTrieNode, ...]


StackTrieNode.NESTED = {"children": [StackTrieNode]}


@dataclass
class _Fold:
    """A trie node as `stack_trie` folds the stacks into it, before it is a record."""

    frame: str
    units: list[str] = field(default_factory=list)
    children: dict[tuple, _Fold] = field(default_factory=dict)  # by (file, line, function)

    def record(self) -> StackTrieNode:
        return StackTrieNode(self.frame, self.units, tuple(child.record() for child in self.children.values()))


def frame_label(frame: SourceLocation) -> str:
    """"file:line in function: code", a resume function named as lists name it."""
    code = f": {frame.code.strip()}" if frame.code and frame.code.strip() else ""
    where = f"{frame.file}:{frame.line}" if frame.line is not None else frame.file
    return f"{where} in {shown_name(frame.function)}{code}" if frame.function else f"{where}{code}"


def stack_trie(units: Iterable[CompileUnit]) -> list[StackTrieNode]:
    """The trigger stacks of `units` folded on their common frames (tlparse's stack trie): each unit's
    compile id sits on the frame where its stack ends."""
    roots: dict[tuple, _Fold] = {}
    for unit in units:
        stack = trigger_stack(unit)
        if not stack:
            continue
        level, node = roots, None
        for frame in stack:  # folded on where the frame is: its code line is as the log read it then
            node = level.get((frame.file, frame.line, frame.function))
            if node is None:
                node = level[(frame.file, frame.line, frame.function)] = _Fold(frame_label(frame))
            level = node.children
        node.units.append(str(unit.compile_id) if unit.rank is None else f"{unit.compile_id} (rank {unit.rank})")
    return [root.record() for root in roots.values()]

