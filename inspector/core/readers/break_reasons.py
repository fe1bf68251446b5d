"""Readers of the texts Dynamo writes about graph breaks and recompiles, turned into plain parts:
where the break is, why, what torch suggests; which guard failed and what that means."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspector.core.readers import json_codec

_BREAK_AT = re.compile(r"Graph break(?: \([^)]*\))? in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_REASON = re.compile(r"^Graph Break Reason:\s*(?P<reason>.*)$", re.M)
_EXPLANATION = re.compile(r"^\s*Explanation:\s*(?P<text>.*)$", re.M)
_HINT = re.compile(r"^\s*Hint:\s*(?P<text>.*)$", re.M)
_TRACE_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\n(?P<code>[^\n]*)', re.M)
_GUARD_LINE = re.compile(r"^\s*-?\s*(?P<against>!?\d+/\d+(?:/\d+)?):\s*(?P<guard>.+)$")

_SIZE_MISMATCH = re.compile(r"tensor '(?P<name>[^']+)' size mismatch at index (?P<dim>\d+)\. expected (?P<expected>\S+), actual (?P<actual>\S+)")
_STRIDE_MISMATCH = re.compile(r"tensor '(?P<name>[^']+)' stride mismatch at index (?P<dim>\d+)\. expected (?P<expected>\S+), actual (?P<actual>\S+)")
_DTYPE_MISMATCH = re.compile(r"tensor '(?P<name>[^']+)' dtype mismatch\. expected (?P<expected>\S+), actual (?P<actual>\S+)")
_RANK_MISMATCH = re.compile(r"tensor '(?P<name>[^']+)' rank mismatch\. expected (?P<expected>\S+), actual (?P<actual>\S+)")
_REQUIRES_GRAD = re.compile(r"tensor '(?P<name>[^']+)' requires_grad mismatch\. expected requires_grad=(?P<expected>\S+)")
_VALUE_GUARD = re.compile(r"^(?P<name>L\[.*?\]|G\[.*?\]|\S+) == (?P<expected>.+?)(?:\s+#.*)?$")


@dataclass
class BreakText:
    file: str | None = None
    line: int | None = None
    reason: str = ""
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    stack: list[tuple[str, int, str, str]] = field(default_factory=list)  # file, line, function, code
    kind: str = "other"
    explanation_prefix: str = ""


def parse_break_reason(text: str) -> BreakText:
    """Read a ``dynamo_graph_break_reason`` artifact (or an older ``restart_reasons`` entry)."""
    parsed = BreakText()
    at = _BREAK_AT.search(text)
    if at:
        parsed.file, parsed.line = at["file"].strip(), int(at["line"])
    reason = _REASON.search(text)
    parsed.reason = reason["reason"].strip() if reason else text.strip().split("\n", 1)[0][:300]
    if reason and parsed.reason.endswith(":"):
        # "Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):" is
        # generic; the next line says what it was ("Call to `torch._dynamo.graph_break()`").
        detail = text[reason.end():].strip().split("\n", 1)[0].strip()
        if detail and not detail.startswith(("Explanation:", "Hint:")):
            parsed.explanation_prefix = parsed.reason
            parsed.reason = detail
    explanation = _EXPLANATION.search(text)
    parsed.explanation = explanation["text"].strip() if explanation else ""
    if parsed.explanation_prefix:
        parsed.explanation = f"{parsed.explanation_prefix} {parsed.explanation}".strip()
    parsed.hints = list(dict.fromkeys(hint["text"].strip() for hint in _HINT.finditer(text.split("User code traceback:", 1)[0])))
    traceback = text.split("User code traceback:", 1)
    if len(traceback) == 2:
        parsed.stack = [(frame["file"], int(frame["line"]), frame["fn"], frame["code"].strip())
                        for frame in _TRACE_FRAME.finditer(traceback[1])]
    parsed.kind = classify_break(parsed.reason + "\n" + parsed.explanation)
    return parsed


def classify_break(text: str) -> str:
    lowered = text.lower()
    if "data-dependent" in lowered or "data dependent" in lowered or "jump with tensorvariable" in lowered \
            or "generic_jump tensorvariable" in lowered:  # torch < 2.7 wording
        return "data_dependent"
    if "graph_break()" in lowered or "user-inserted graph break" in lowered:
        return "explicit"
    if "unsupported" in lowered or "not supported" in lowered or "skip" in lowered:
        return "unsupported"
    return "other"


def user_frame(stack: list[tuple[str, int, str, str]], file: str | None, line: int | None):
    """The traceback frame at the break site (the user's own line), if the traceback holds it."""
    for frame in reversed(stack):
        if frame[0] == file and frame[1] == line:
            return frame
    return None


def parse_recompile_reasons(payload: str) -> list[tuple[str, str]]:
    """(against compile id, guard text) pairs from a ``recompile_reasons`` artifact.

    Older torch writes a JSON list of strings; 2.13 writes plain text despite ``encoding: json``."""
    entries: list[str]
    try:
        decoded = json_codec.loads(payload)
        entries = [str(item) for item in decoded] if isinstance(decoded, list) else [str(decoded)]
    except ValueError:
        entries = [payload]
    failed: list[tuple[str, str]] = []
    for entry in entries:
        for raw in entry.split("\n"):
            match = _GUARD_LINE.match(raw)
            if match:
                failed.append((match["against"], match["guard"].strip()))
            elif raw.strip() and failed:
                against, guard = failed[-1]
                failed[-1] = (against, f"{guard} {raw.strip()}")
            elif raw.strip():
                failed.append(("", raw.strip()))
    return failed


def explain_guard(guard: str) -> str:
    """A failed guard in plain words ('x changed size in dim 0: 8 → 16')."""
    for pattern, words in ((_SIZE_MISMATCH, "{name} changed size in dim {dim}: {expected} → {actual}"),
                           (_STRIDE_MISMATCH, "{name} changed stride in dim {dim}: {expected} → {actual}"),
                           (_DTYPE_MISMATCH, "{name} changed dtype: {expected} → {actual}"),
                           (_RANK_MISMATCH, "{name} changed number of dims: {expected} → {actual}"),
                           (_REQUIRES_GRAD, "{name} changed requires_grad (was {expected})")):
        match = pattern.search(guard)
        if match:
            return words.format(**match.groupdict())
    value = _VALUE_GUARD.match(guard)
    if value:
        return f"{value['name']} is no longer {value['expected']} (a Python value the graph was specialised on)"
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return f"a different object than the one compiled for: {guard}"
    if "TYPE_MATCH" in guard or "___check_type_id" in guard:
        return f"a value of a different type than compiled for: {guard}"
    return guard
