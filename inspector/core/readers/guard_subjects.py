"""What one failed guard names, read from torch's words for it: the guarded value (`x`, `L['self'].training`),
the aspect that failed (a size or stride dim, a dtype, a value, an object's identity or type) and, where
torch says them, the value the graph was built for and the one that came. Linear in the guard's length
(tests/test_linear_parsing.py)."""

from __future__ import annotations

import re

from inspector.core.readers.break_reasons import split_guard_comment, tensor_mismatch

# A tensor guard, `tensor 'NAME' size mismatch at index 0. expected 8, actual 16`: found by `tensor_mismatch`, linear
# in the guard (`tensor '(.+?)' …` rescanned the rest of the line from every "tensor '"), as the text after NAME
# (the mark) and what follows it (the tail).
_TENSOR = (re.compile(r"' (?P<what>size|stride) mismatch at index "),
           re.compile(r"(?P<dim>\d+)\. expected (?P<expected>\S+), actual (?P<actual>\S+)").match)
_TENSOR_PROPERTY = re.compile(r"' (?P<what>dtype|rank|device|requires_grad|dispatch key set) mismatch\. expected ")
_VALUE = re.compile(r"^(?P<name>(?:len\()?[A-Za-z_][\w.\[\]'\"]*\)?) == (?P<expected>\S.*)$")
_CHECKED = re.compile(r"(?<=___check_obj_id\()[^,()]+|(?<=___check_type_id\()[^,()]+")  # `fn.__code__`: no L[...]
_MARKING = "_has_dynamo_dim_marking"  # a tensor marked dynamic where the graph was compiled without a mark
_SOURCE = re.compile(r"[LG]\[['\"][^'\"]+['\"]\](?:\.\w+|\[[^\]]+\])*")


def guarded_value(guard: str) -> tuple[str, str, str | None, str | None]:
    """(subject, aspect, expected, actual) of one failed guard in torch's words; the comments torch
    appends (`  # depth = len(inspect.stack())  # model.py:11 in forward`) are no part of the subject."""
    guard = split_guard_comment(guard)[0]
    if _MARKING in guard:  # torch's words name no tensor: `_has_dynamo_dim_marking is present on runtime tensor …`
        return "a tensor argument", "dynamic marking", None, None
    found = tensor_mismatch(guard, *_TENSOR)
    if found:
        name, mark, tail = found
        return name, f"{mark['what']} dim {tail['dim']}", tail["expected"], tail["actual"]
    found = tensor_mismatch(guard, _TENSOR_PROPERTY, _property_tail(guard))
    if found:
        name, mark, (expected, actual) = found
        return name, mark["what"], expected.strip(), (actual or "").strip() or None
    match = _VALUE.match(guard.strip())
    if match:
        return match["name"], "value", match["expected"].strip(), None
    source = _SOURCE.search(guard) or _CHECKED.search(guard)
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return (source[0] if source else guard), "object identity", None, None
    if "___check_type_id" in guard or "TYPE_MATCH" in guard:
        return (source[0] if source else guard), "type", None, None
    return (source[0] if source else guard.strip()[:120]), "guard", None, None


def _property_tail(guard: str):
    """What follows `dtype mismatch. expected ` in a guard: (expected, actual) of
    `(?P<expected>[^,]+?)(?:, actual (?P<actual>.+?))?$` there, or None, in time independent of the guard's length
    (that regex, tried after each mark, rescans the rest of the guard: cubic on a guard of repeated marks).

    The expected value holds no ",": with a "," after it, it ends there and `, actual ` and the rest of the
    guard's last line follow; with none, it is the rest of the guard (a final line break apart)."""
    commas = [-2]  # the first "," at or after the last mark's tail (-1: none; -2: not looked up), marks in order
    end = len(guard) - 1 if guard.endswith("\n") else len(guard)  # where `$` matches first
    last_newline = guard.rfind("\n", 0, end)

    def tail(text: str, at: int) -> tuple[str, str | None] | None:
        if commas[0] == -2 or 0 <= commas[0] < at:
            commas[0] = text.find(",", at)
        comma = commas[0]
        if comma < 0:
            stop = end if end > at else len(text)
            return (text[at:stop], None) if stop > at else None
        if comma > at and text.startswith(", actual ", comma) and last_newline < comma + 9 < end:
            return text[at:comma], text[comma + 9:end]
        return None

    return tail
