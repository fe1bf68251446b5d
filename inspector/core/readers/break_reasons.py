"""Readers of the texts Dynamo writes about graph breaks and recompiles, turned into plain parts:
where the break is, why, what torch suggests; which guard failed and what that means."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspector.core.model.source_location import SourceLocation
from inspector.core.readers import json_codec

# Where a break is: `Graph break[ (…)] in user code at FILE:LINE`, the line number last on its line. Found by
# `_break_at`, a scan linear in the text (a regex with `(.+):(\d+)\s*$` backtracks over the whole line for every
# "Graph break" on it: quadratic on a hostile log); `_LINE_TAIL` is what follows the last ":" of that line.
_GRAPH_BREAK, _IN_USER_CODE = "Graph break", " in user code at "
_LINE_TAIL = re.compile(r"(\d+)\s*")
_REASON = re.compile(r"^Graph Break Reason:\s*(?P<reason>.*)$", re.M)
# `[^\S\n]*`, not `\s*`, after `^` (re.M): the same "Explanation:" is found (whitespace reaching back to a line
# start), and a run of blank lines is not rescanned from each of its line starts (quadratic).
_EXPLANATION = re.compile(r"^[^\S\n]*Explanation:\s*(?P<text>.*)$", re.M)
_HINT = re.compile(r"^[^\S\n]*Hint:\s*(?P<text>.*)$", re.M)
_TRACE_FRAME = re.compile(r'^[^\S\n]*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\n(?P<code>[^\n]*)',
                          re.M)
# `\s*(?:-\s*)?`, not `\s*-?\s*`: the same text, without splitting a whitespace run between two `\s*` every way.
_GUARD_LINE = re.compile(r"^\s*(?:-\s*)?(?P<against>!?\d+/\d+(?:/\d+)?):\s*(?P<guard>.+)$")

# A tensor guard's words, `tensor 'NAME' size mismatch at index 0. expected 8, actual 16`: found by
# `tensor_mismatch`, linear in the guard (a regex `tensor '(.+?)' size mismatch…` rescans the rest of the line from
# every "tensor '"): the text after NAME (the mark), then what the mark is followed by (the tail).
_TENSOR_START = "tensor '"
_SIZE_MISMATCH = (re.compile(r"' size mismatch at index "),
                  re.compile(r"(?P<dim>\d+)\. expected (?P<expected>\S+), actual (?P<actual>\S+)").match)
_STRIDE_MISMATCH = (re.compile(r"' stride mismatch at index "), _SIZE_MISMATCH[1])
_DTYPE_MISMATCH = (re.compile(r"' dtype mismatch\. expected "),
                   re.compile(r"(?P<expected>\S+), actual (?P<actual>\S+)").match)
_RANK_MISMATCH = (re.compile(r"' rank mismatch\. expected "), _DTYPE_MISMATCH[1])
_REQUIRES_GRAD = (re.compile(r"' requires_grad mismatch\. expected requires_grad="),
                  re.compile(r"(?P<expected>\S+)").match)
# The comment torch appends to a guard, `  # code  # FILE:LINE in FUNCTION`: found by `_guard_comment`, what
# `\s#\s*(\S.*?)\s+#\s*([^\s#][^#]*?):(\d+) in ([\w<>.]+)` found, in time linear in the guard.
_COMMENT_MARK = re.compile(r"(?<=\s)#")
_NON_SPACE = re.compile(r"\S")
_COMMENT_PLACE = re.compile(r":(?P<line>\d+) in (?P<function>[\w<>.]+)")
# Where a guard's comments begin: a "#" between whitespace (`\s+#\s` matched the same "#" but rescanned a
# whitespace run from each of its characters: quadratic).
_ANY_COMMENT = re.compile(r"(?<=\s)#(?=\s)")
_WORD = re.compile(r"\S+")


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
    at = _break_at(text)
    if at:
        parsed.file, parsed.line = at[0].strip(), int(at[1])
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
    parsed.hints = list(dict.fromkeys(hint["text"].strip()
                                      for hint in _HINT.finditer(text.split("User code traceback:", 1)[0])))
    traceback = text.split("User code traceback:", 1)
    if len(traceback) == 2:
        parsed.stack = [(frame["file"], int(frame["line"]), frame["fn"], frame["code"].strip())
                        for frame in _TRACE_FRAME.finditer(traceback[1])]
    parsed.kind = classify_break(parsed.reason + "\n" + parsed.explanation)
    return parsed


def _break_at(text: str) -> tuple[str, str] | None:
    """(file, line) of the first `Graph break[ (…)] in user code at FILE:LINE` whose line ends with the number
    (whitespace after it allowed): what `Graph break(?: \\([^)]*\\))? in user code at (.+):(\\d+)\\s*$` (re.M)
    found, in time linear in the text however many "Graph break" a line repeats.

    FILE runs to the last ":" of its line. Every search for ")" or for a line's end starts where the one before
    it started or later (two kinds of occurrence, each in text order), so each is answered from the last answer
    or scans text no search of its kind scanned; each line's last ":" is looked up once."""
    close = [len(text) + 1, -1]  # (searched from, first ")" from there)
    ends = {False: [len(text) + 1, -1], True: [len(text) + 1, -1]}  # the same for "\n", per kind of occurrence
    lines: dict[int, tuple[int, re.Match | None]] = {}  # line end → (its last ":", the number after it)
    start = text.find(_GRAPH_BREAK)
    while start >= 0:
        at = start + len(_GRAPH_BREAK)
        grouped = text.startswith(" (", at)  # `Graph break (user stack suppressed …) in user code at`
        if grouped:
            closing = _find_onward(text, ")", at + 2, close)
            at = closing + 1 if closing >= 0 else -1
        if at >= 0 and text.startswith(_IN_USER_CODE, at):
            file_start = at + len(_IN_USER_CODE)
            end = _find_onward(text, "\n", file_start, ends[grouped])
            end = len(text) if end < 0 else end
            if end not in lines:
                colon = text.rfind(":", text.rfind("\n", 0, end) + 1, end)
                lines[end] = colon, _LINE_TAIL.fullmatch(text, colon + 1, end) if colon >= 0 else None
            colon, number = lines[end]
            if number and colon > file_start:
                return text[file_start:colon], number[1]
        start = text.find(_GRAPH_BREAK, start + 1)
    return None


def _find_onward(text: str, char: str, position: int, last: list[int]) -> int:
    """`text.find(char, position)`, reusing `last` (searched from, found) when the answer is the same."""
    searched, found = last
    if not (searched <= position and (found < 0 or position <= found)):
        found = text.find(char, position)
        last[:] = position, found
    return found


def classify_break(text: str) -> str:
    lowered = text.lower()
    if "data-dependent" in lowered or "data dependent" in lowered or "jump with tensorvariable" in lowered \
            or "generic_jump tensorvariable" in lowered \
            or "dynamic shape operator" in lowered or "depends on input tensor data" in lowered:  # nonzero, masks
        return "data_dependent"
    if "graph_break()" in lowered or "user-inserted graph break" in lowered:
        return "explicit"
    if "unsupported" in lowered or "not supported" in lowered or "skip" in lowered:
        return "unsupported"
    return "other"


# Frames of code the user did not write: the standard library (``lib/python3.11/``, ``\\Lib\\`` on
# Windows, frozen modules), installed packages (torch among them) and torch's own source tree.
_LIBRARY_FILE = re.compile(r"[/\\]lib[/\\]python\d[\d.]*t?[/\\]|\\Lib\\|[/\\](?:site|dist)-packages[/\\]"
                           r"|^<frozen |[/\\]torch[/\\]_(?:dynamo|functorch|inductor|ops|tensor)\b")


def is_library_file(path: str) -> bool:
    """Whether a traceback frame is in the standard library, an installed package or torch."""
    return bool(_LIBRARY_FILE.search(path))


def user_frame(stack: list[tuple[str, int, str, str]], file: str | None, line: int | None):
    """The frame a break belongs to in the user's eyes, and the library frames between it and the
    break: torch names the innermost traced line ("in user code at …/copy.py:153") even when that
    line is in the standard library; the user's own call into it is the line to show.

    Returns (frame, via): `frame` is the innermost frame of the user's own code (None when the
    traceback holds no frame at `file:line` or no user frame), `via` the frames inward of it, outermost first."""
    at = next((index for index in range(len(stack) - 1, -1, -1)
               if stack[index][0] == file and stack[index][1] == line), None)
    if at is None:
        return None, []
    for index in range(at, -1, -1):
        if not is_library_file(stack[index][0]):
            return stack[index], stack[index + 1:at + 1]
    return stack[at], []


# Frame-level skips: torch's convert_frame raises these before or instead of tracing, so Dynamo runs the
# whole frame eagerly and cuts no graph. They are counted in counters["unimplemented"] beside the breaks.
FRAME_SKIP_TYPES = ("Attempt to trace generator", "Dynamo recompile limit exceeded", "Dynamo cache limit exceeded",
                    "Excessive RestartAnalysis() calls")


def is_frame_skip(text: str) -> bool:
    """Whether a counter key or failure text (its first line is the break type) is a frame skip."""
    return _first_line(text).startswith(FRAME_SKIP_TYPES)


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].strip()


# What torch writes between a break and the break raised while handling it (GB0099, then GB7000 "graph break in
# loop"): the chained message is counted again under its own key, beginning with the first message.
CHAINED_BREAK = "\n\n*** While handling this graph break, another graph break occurred: ***\n\n"


def chained_parts(message: str) -> list[str]:
    """The breaks a message chains, first raised first (one part for an unchained message)."""
    return message.split(CHAINED_BREAK)


def _events(entries: dict) -> dict[str, int]:
    """Counter entries as events: torch counts a chained break twice, once under its first message when it
    is raised and again under the chained message; the first count is the same event as the second."""
    counted = {message: times for message, times in entries.items() if isinstance(times, int)}
    events = dict(counted)
    for message, times in counted.items():  # A, then A chained with B, then A, B chained with C: one event
        earlier = message.rpartition(CHAINED_BREAK)[0]
        if earlier in events:
            events[earlier] = max(0, events[earlier] - times)
    return {message: times for message, times in events.items() if times}


def counted_by_torch(counters: dict) -> tuple[int, dict[str, int]]:
    """torch's own count of graph breaks, and of frame skips by type, from ``torch._dynamo`` counters.
    Both land in ``graph_break`` and ``unimplemented``, keyed by the message (its first line the type):
    a generator skip leaves no record in the log, so only breaks compare with the log's breaks. A
    chained break (its message then holds the first one's) is one event, as the log shows it."""
    breaks, skips = 0, {}
    for group in ("graph_break", "unimplemented"):
        entries = counters.get(group)
        for message, times in (_events(entries).items() if isinstance(entries, dict) else ()):
            if is_frame_skip(message):
                skips[_first_line(message)] = skips.get(_first_line(message), 0) + times
            else:
                breaks += times
    return breaks, skips


# Restarts of analysis that cut no graph: Dynamo traces the frame again with one decision changed
# (specialise a float it could not turn into a tensor, unspecialise a module, …). torch records the
# exception's class as the reason, or one of these fixed texts; a break that restarts records its message.
_NOT_A_BREAK_RESTART = re.compile(r"^<class '[\w.]*RestartAnalysis'>$|^Unknown fail_and_restart_analysis$"
                                  r"|^autograd\.grad consumed grad_fns|^source-less requires_grad_\(\) intermediate")


def restart_is_break(reason: str) -> bool:
    """Whether a ``restart_reasons`` entry reports a graph break (else it is an internal restart)."""
    return not _NOT_A_BREAK_RESTART.search(reason.strip())


def parse_recompile_reasons(payload: str) -> list[tuple[str, str]]:
    """(against compile id, guard text) pairs from a ``recompile_reasons`` artifact.

    Older torch writes a JSON list of strings; 2.13 writes plain text despite ``encoding: json``."""
    entries: list[str]
    try:
        decoded = json_codec.loads(payload)
        entries = [str(item) for item in decoded] if isinstance(decoded, list) else [str(decoded)]
    except ValueError:
        entries = [payload]
    failed: list[tuple[str, list[str]]] = []  # a guard's text in pieces: joined once, not at every line
    for entry in entries:
        in_user_stack = False  # torch ≥ 2.9 follows a guard with "User stack trace:" and its frames
        for raw in entry.split("\n"):
            match = _GUARD_LINE.match(raw)
            if match:
                failed.append((match["against"], [match["guard"].strip()]))
                in_user_stack = False
            elif raw.strip() == "User stack trace:" or in_user_stack:
                in_user_stack = True  # the guard's comment already names the user's line; raw keeps the frames
            elif raw.strip() and failed:
                failed[-1][1].append(raw.strip())
            elif raw.strip():
                failed.append(("", [raw.strip()]))
    return [(against, " ".join(pieces)) for against, pieces in failed]


def split_guard_comment(guard: str) -> tuple[str, SourceLocation | None]:
    """The guard without its trailing comments, and the user line the comment names, where it names
    one (torch appends the line that made the guard: `depth = len(inspect.stack())`)."""
    comment = _guard_comment(guard)
    first = _ANY_COMMENT.search(guard)
    bare = (guard[:first.start()] if first else guard).strip()
    if comment is None:
        return bare, None
    code, file, line, function = comment
    return bare, SourceLocation(file, int(line), function, code.strip())


def _guard_comment(guard: str) -> tuple[str, str, str, str] | None:
    """(code, file, line, function) of `  # code  # FILE:LINE in FUNCTION` in a guard: what
    `\\s#\\s*(\\S.*?)\\s+#\\s*([^\\s#][^#]*?):(\\d+) in ([\\w<>.]+)` found (that regex rescans the rest of the
    guard for each "#" and each end of the code: quadratic or worse), in time linear in the guard.

    Both "#" follow whitespace. The code runs from the first non-space after the first "#" to the whitespace
    before the second, on one line; the second is the first "#" after the code that a place follows
    (`FILE:LINE in FUNCTION`, FILE without "#"), which depends on that "#" alone, so is read once per "#"."""
    marks = [found.start() for found in _COMMENT_MARK.finditer(guard)]
    places: dict[int, tuple[str, str, str] | None] = {}
    line_end = [len(guard) + 1, -1]
    ended = [-1, -1]  # the last mark, where the whitespace before it begins
    second = 0  # the first mark that may end the code of this first mark or of any later one
    for first in marks:
        code = _NON_SPACE.search(guard, first + 1)
        if code is None:
            return None
        start = code.start()
        while second < len(marks) and (marks[second] < start + 2
                                       or _comment_place(guard, marks[second], places) is None):
            second += 1
        if second == len(marks):
            return None
        mark = marks[second]
        if mark != ended[0]:  # the code ends where the whitespace before the mark begins
            end = mark - 1
            while end > start and guard[end - 1].isspace():
                end -= 1
            ended[:] = mark, end
        end = ended[1]
        newline = _find_onward(guard, "\n", start, line_end)
        if newline < 0 or end <= newline:
            return (guard[start:end], *places[mark])
    return None


def _comment_place(guard: str, mark: int, places: dict) -> tuple[str, str, str] | None:
    """(file, line, function) of `\\s*([^\\s#][^#]*?):(\\d+) in ([\\w<>.]+)` after the "#" at `mark`: the file up
    to the first ":" (before the next "#") that the line and function follow."""
    if mark not in places:
        places[mark] = None
        start = _NON_SPACE.search(guard, mark + 1)
        if start is not None and guard[start.start()] != "#":
            start = start.start()
            stop = guard.find("#", start + 1)
            stop = len(guard) if stop < 0 else stop
            colon = guard.find(":", start + 1, stop)
            while colon >= 0:
                place = _COMMENT_PLACE.match(guard, colon)
                if place:
                    places[mark] = guard[start:colon], place["line"], place["function"]
                    break
                colon = guard.find(":", colon + 1, stop)
    return places[mark]


def tensor_mismatch(guard: str, mark: re.Pattern, tail):
    """(name, mark, tail) of the first `tensor 'NAME'MARKTAIL` in a guard, NAME as short as it can be: what
    `tensor '(?P<name>.+?)'MARKTAIL` found (MARK, e.g. `' size mismatch at index `, a pattern matching one "'"
    followed by fixed words; TAIL, `tail(guard, position)`, what follows it), in time linear in the guard.

    NAME is one character or more, on one line: the first "tensor '" of the line of the first mark whose tail
    follows and which that "tensor '" comes before. Each line's first "tensor '" is looked up once."""
    line_end, start = -1, -1
    for found in mark.finditer(guard):
        at = found.start()
        if at > line_end:
            line_start = guard.rfind("\n", 0, at) + 1
            line_end = guard.find("\n", at)
            line_end = len(guard) if line_end < 0 else line_end
            start = guard.find(_TENSOR_START, line_start, line_end)
        if 0 <= start and start + len(_TENSOR_START) < at:
            rest = tail(guard, found.end())
            if rest:
                return guard[start + len(_TENSOR_START):at], found, rest
    return None


def explain_guard(guard: str) -> str:
    """A failed guard in plain words ('x changed size in dim 0: 8 → 16')."""
    for (mark, tail), words in ((_SIZE_MISMATCH, "{name} changed size in dim {dim}: {expected} → {actual}"),
                                (_STRIDE_MISMATCH, "{name} changed stride in dim {dim}: {expected} → {actual}"),
                                (_DTYPE_MISMATCH, "{name} changed dtype: {expected} → {actual}"),
                                (_RANK_MISMATCH, "{name} changed number of dims: {expected} → {actual}"),
                                (_REQUIRES_GRAD, "{name} changed requires_grad (was {expected})")):
        found = tensor_mismatch(guard, mark, tail)
        if found:
            return words.format(name=found[0], **found[2].groupdict())
    value = value_guard(guard)
    if value:
        return f"{value[0]} is no longer {value[1]} (a Python value the graph was specialised on)"
    if "___check_obj_id" in guard or "ID_MATCH" in guard:
        return f"a different object than the one compiled for: {guard}"
    if "TYPE_MATCH" in guard or "___check_type_id" in guard:
        return f"a value of a different type than compiled for: {guard}"
    return guard


def value_guard(guard: str) -> tuple[str, str] | None:
    """(name, expected) of a guard on a Python value, `L['n'] == 3  # comment`: what
    `^(L\\[.*?\\]|G\\[.*?\\]|\\S+) == (.+?)(?:\\s+#.*)?$` matched, in time linear in the guard (that regex
    rescans a whitespace run from each of its characters, and the rest of the guard for each `] == `).

    The name: the shortest `L[…]` (or `G[…]`) on the first line followed by " == ", else the first word when
    " == " follows it. The value: what follows, on that line, up to the first whitespace before a "#" (the
    comment), which on a guard of more lines must be the whitespace holding the last line break but a final one."""
    line_end = guard.find("\n")
    line_end = len(guard) if line_end < 0 else line_end
    inner = guard.rfind("\n", 0, len(guard) - 1)  # the last line break that does not end the guard
    for name_end in _value_names(guard, line_end):
        start = name_end + len(" == ")
        if start >= line_end:  # the value is one character or more, all on the first line
            continue
        if inner < 0:  # one line (and perhaps a final line break): the value ends where a comment begins
            end = line_end
            mark = guard.find("#", start + 2, end)
            while mark >= 0 and not guard[mark - 1].isspace():
                mark = guard.find("#", mark + 1, end)
            if mark >= 0:
                end = start + 1 + len(guard[start + 1:mark].rstrip())
            return guard[:name_end], guard[start:end]
        # Lines after the first: only a comment can end the guard, and only if its "#" ends the whitespace
        # holding the last inner line break, the same whitespace reaching back to the first line.
        space_start = len(guard[:inner].rstrip())
        space_end = len(guard) - len(guard[inner:].lstrip())
        if guard.startswith("#", space_end) and space_start <= line_end:
            return guard[:name_end], guard[start:max(space_start, start + 1)]
        return None
    return None


def _value_names(guard: str, line_end: int):
    """Where the name of `value_guard` may end, in the order the regex tried them."""
    if guard.startswith(("L[", "G[")):
        found = guard.find("] == ", 2, line_end)
        while found >= 0:
            yield found + 1
            found = guard.find("] == ", found + 1, line_end)
    word = _WORD.match(guard)
    if word and guard.startswith(" == ", word.end()):
        yield word.end()


# GB7000: a break inside a for/while loop; torch then skips the whole frame (it runs eagerly).
_LOOP_BREAK = "graph break in loop"
# A custom op traced without a fake kernel: `There was no fake impl registered for <CustomOpDef(lib::op)>`
# (a torch.library.custom_op) or for `lib::op` (an op defined with torch.library.define).
_NO_FAKE_IMPL = re.compile(r"no fake impl registered for (?:<CustomOpDef\((?P<custom>[\w.:]+)\)>|(?P<op>[\w.:]+))")
_FROM_USER_CODE = "from user code:"


def broken_in_loop(text: str) -> str | None:
    """The break that made torch skip the frame because it lay in a loop (GB7000 chained after it), in
    torch's words (its first line), or None when `text` is no such chain."""
    parts = chained_parts(text)
    if len(parts) > 1 and _first_line(parts[-1]) == _LOOP_BREAK:
        return _first_line(parts[0]) or None
    return None


def missing_fake_impl(text: str) -> str | None:
    """The operator (`mylib::gate`) a failure says has no fake kernel, or None."""
    found = _NO_FAKE_IMPL.search(text)
    return (found["custom"] or found["op"]).rstrip(".") if found else None


def user_code_frames(text: str) -> list[tuple[str, int, str, str]]:
    """The frames of an error's `from user code:` part (a ``dynamo_error`` artifact), outermost first:
    where in the user's code the traced call failed."""
    _, found, rest = text.partition(_FROM_USER_CODE)
    if not found:
        return []
    rest = rest.lstrip("\n").split("\n\n", 1)[0]  # the frames end at the first blank line
    return [(frame["file"], int(frame["line"]), frame["fn"], frame["code"].strip())
            for frame in _TRACE_FRAME.finditer(rest)]
