"""The shapes of a capture's manifest.json and results.json, and the check that holds every field to
them: a field of the wrong type (a list for an object, a string for a number, a non-finite number) is
counted under ``bad_field`` and left out, so the rest of the session opens and no analysis meets a
value it cannot use. Fields this version does not know are kept as they are."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from inspector.core.model.read_problems import ReadProblems


@dataclass(frozen=True)
class Obj:
    """A JSON object: known `fields` are checked; without every `required` one the object is dropped;
    `extra` (if given) checks the fields not named."""

    fields: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    extra: Any = None


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    """An object with free keys, every value of one shape (counters, memory figures)."""

    value: Any


@dataclass(frozen=True)
class Nullable:
    """A field whose null is meaningful (an exit status not known yet, no error)."""

    inner: Any


MAX_DEPTH = 32  # fields this version does not know are kept, but not nested deeper than this
NUMBER = "number"  # a finite int or float, not a bool
ANY_NUMBER = "any number"  # also inf or NaN: an output error of a run whose outputs held NaN is still a mismatch
ANY = "any"

_TIMES = Obj({key: NUMBER for key in ("median_s", "min_s", "max_s", "mean_s", "stdev_s", "p25_s", "p75_s")}
             | {"n": int},
             required=("median_s",))  # a run without its median was not measured
_PROFILE = Obj({"trace": str, "runs": int, "warmup_excluded": int, "wall_s": NUMBER, "time_key": str,
                "compiled_region_s": NUMBER,
                "ops": ListOf(Obj({"name": str}, required=("name",), extra=NUMBER))})
_ERROR = Nullable(Obj({"kind": str, "message": str, "file": str, "line": int}))
_BENCHMARK = Obj({  # the interleaved rounds of newer captures and the machine meanwhile
    "method": str, "round_budget_s": NUMBER,
    "rounds": ListOf(Obj({"order": str, "eager_s": NUMBER, "compiled_s": NUMBER, "eager_calls": int,
                          "compiled_calls": int})),
    "environment": Obj({"cores": Nullable(int), "cpu_count": Nullable(int), "torch_threads": int,
                        "torch_interop_threads": int,
                        "load_before": Nullable(NUMBER), "load_during": Nullable(NUMBER), "benchmark_wall_s": NUMBER,
                        "others_cpu_cores": Nullable(NUMBER), "own_cpu_cores": Nullable(NUMBER),
                        "thread_variables": MapOf(str)}),
})

MANIFEST = Obj({
    "format": str, "format_version": int, "tool_version": str, "command": ListOf(str), "script": Nullable(str),
    "script_args": ListOf(str), "complete": bool, "started": Nullable(NUMBER), "ended": Nullable(NUMBER),
    "exit_status": Nullable(int), "stopped_by": Nullable(str),
    "error": _ERROR,
    "settings": Obj({"mode": str, "dynamic": str, "fullgraph": bool, "backend": str, "device": str, "runs": int,
                     "warmup": int, "profile": bool, "timeout_s": Nullable(NUMBER), "threads": Nullable(int)}),
    "host": MapOf(str), "git_commit": Nullable(str),
    "launcher": Obj({"pid": int, "start": Nullable(int), "node": str}, required=("pid", "node")),
})

RESULTS = Obj({
    "format_version": int,
    "environment": Obj({"torch": str, "python": str, "device": str, "device_name": str, "threads": int}),
    "entry_point": bool, "threads": Nullable(int), "runs": int, "warmup": int,
    "tolerance": Obj({"rtol": NUMBER, "atol": NUMBER}),
    "eager": _TIMES, "compiled": _TIMES, "timing": _BENCHMARK,
    "memory_eager": MapOf(NUMBER), "memory_compiled": MapOf(NUMBER), "memory_compile": MapOf(NUMBER),
    "memory_method": Nullable(str),
    "t_first_call_s": Nullable(NUMBER), "t_compile_s": Nullable(NUMBER), "t_eager_s": Nullable(NUMBER),
    "t_execute_s": Nullable(NUMBER), "speedup": Nullable(NUMBER), "break_even_calls": Nullable(NUMBER),
    "compile_phases_s": MapOf(NUMBER),
    "correctness": ListOf(Obj({"inputs": str, "allclose": bool, "max_abs_error": ANY_NUMBER,
                               "max_rel_error": ANY_NUMBER,
                               "outputs": int}, required=("inputs", "allclose", "max_abs_error", "max_rel_error"))),
    "allclose": Nullable(bool),
    "profile": MapOf(_PROFILE),
    "counters": MapOf(MapOf(NUMBER)),
    "error": _ERROR,
})


TORCH_RECORD = Obj({  # torch's own record of the run, written by the capture at its end
    "format_version": int, "torch": str,
    "counters": MapOf(MapOf(NUMBER)),
    "compilation_metrics": ListOf(Obj({"compile_id": Nullable(str), "co_name": Nullable(str)})),
    "recompiles": ListOf(Obj({"compile_id": Nullable(str), "co_name": Nullable(str), "co_filename": Nullable(str),
                              "co_firstlineno": Nullable(int), "reasons": ListOf(str),
                              "cache_entries": ListOf(Obj({"compile_id": Nullable(str), "failures": ListOf(str)}))})),
    "output_code": ListOf(Obj({"compile_id": Nullable(str), "key": Nullable(str), "kernels": int,
                               "extern_calls": int})),
    "hook_errors": ListOf(str),
})

class _Invalid(Exception):
    def __init__(self, why: str):
        self.why = why


def validated(document: Any, shape: Obj, name: str, problems: ReadProblems) -> dict | None:
    """`document` with every field that does not fit `shape` left out and counted; None when the
    document is not even an object."""
    try:
        return _clean(document, shape, name, problems)
    except _Invalid as invalid:
        problems.add("bad_field", f"{name}: {invalid.why}")
        return None


def _clean(value: Any, shape: Any, where: str, problems: ReadProblems) -> Any:
    """The cleaned value, or _Invalid when `value` itself does not fit (its parent drops it)."""
    if isinstance(shape, Nullable):
        return None if value is None else _clean(value, shape.inner, where, problems)
    if shape is ANY:
        if _deeper_than(value, MAX_DEPTH):
            raise _Invalid(f"nested more than {MAX_DEPTH} levels")
        return value
    if shape in (NUMBER, ANY_NUMBER):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Invalid(f"{_kind(value)}, expected a number")
        if shape is NUMBER and not math.isfinite(value):
            raise _Invalid(f"{value}, expected a finite number")
        return value
    if isinstance(shape, type):
        if not isinstance(value, shape) or (shape is int and isinstance(value, bool)):
            raise _Invalid(f"{_kind(value)}, expected {_TYPE_WORDS[shape]}")
        return value
    if isinstance(shape, ListOf):
        if not isinstance(value, list):
            raise _Invalid(f"{_kind(value)}, expected a list")
        kept = (_keep(item, shape.item, f"{where}[{index}]", problems) for index, item in enumerate(value))
        return [item for item in kept if item is not _DROPPED]
    if not isinstance(value, dict):
        raise _Invalid(f"{_kind(value)}, expected an object")
    if isinstance(shape, MapOf):
        pairs = ((key, _keep(item, shape.value, f"{where}.{key}", problems)) for key, item in value.items())
        return {key: item for key, item in pairs if item is not _DROPPED}
    missing = [key for key in shape.required if key not in value]
    if missing:
        raise _Invalid(f"no {', '.join(missing)}")
    cleaned = {}
    for key, item in value.items():
        item_shape = shape.fields.get(key, shape.extra if shape.extra is not None else ANY)
        try:
            cleaned[key] = _clean(item, item_shape, f"{where}.{key}", problems)
        except _Invalid as invalid:
            if key in shape.required:
                raise _Invalid(f"{key} is {invalid.why}") from None
            problems.add("bad_field", f"{where}.{key}: {invalid.why}")
    return cleaned


_DROPPED = object()


def _keep(item: Any, shape: Any, where: str, problems: ReadProblems) -> Any:
    try:
        return _clean(item, shape, where, problems)
    except _Invalid as invalid:
        problems.add("bad_field", f"{where}: {invalid.why}")
        return _DROPPED


def _deeper_than(value: Any, limit: int) -> bool:
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return True
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


_TYPE_WORDS = {str: "text", bool: "true or false", int: "a whole number", float: "a number"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"
