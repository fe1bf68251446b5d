"""Dynamo's names for the values it guards (`args[0]`, `___stack0`, `self._modules['h']._modules['0']`)
turned back into what the user wrote, so advice can say `mark_dynamic(input_ids, 1)` and not
`mark_dynamic(args[0], 1)`. Only what the log holds is used: the Dynamo graph's placeholders and the
user line of the first node that reads each one, the graph break a resume function continues after,
and the comment torch appends to a guard. Where the log does not tell, the name is said to be Dynamo's,
with what it stands for."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PureWindowsPath
from weakref import WeakKeyDictionary

from inspector.core.model.compile_id import NO_FRAME
from inspector.core.model.fx_graph_text import first_reader, first_source
from inspector.core.model.session import CompileUnit, Frame, GraphBreak, Session
from inspector.core.model.source_location import SourceLocation
from inspector.core.readers.break_reasons import is_library_file

_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<function>\w+?)_at_(?P<line>\d+)$")
_SOURCE = re.compile(r"^(?P<base>[A-Za-z_]\w*)(?P<path>(?:\[[^\]]+\]|\.\w+)*)$")
_LEN = re.compile(r"^len\((?P<inner>.+)\)$")
_PACKED = re.compile(r"^\[(?P<key>\d+|'[^']+')\]")
_MODULE_STEP = re.compile(r"\._(?:modules|parameters|buffers)\['(?P<name>[^']+)'\]")


@dataclass(frozen=True)
class UserName:
    """One guarded value: Dynamo's name, the user's (None when the log does not tell), and in words
    what Dynamo's name stands for ('' when it is the user's own name already)."""

    dynamo: str
    user: str | None = None
    role: str = ""
    seen_at: str = ""  # the user line that shows the name: "modeling_gpt2.py:549 in forward: `input_ids = …`"
    produced_by: GraphBreak | None = None  # for a ___stackN value: the break whose call returned it

    @property
    def in_code(self) -> str:
        """The name to write into an API call."""
        return self.user or self.dynamo

    @property
    def data_dependent(self) -> bool:
        """Its size came out of an op whose output size depends on the data (nonzero, a boolean mask)."""
        return self.produced_by is not None and self.produced_by.kind == "data_dependent"

    @property
    def module_state(self) -> bool:
        """A module's parameter or buffer: Dynamo keeps their shapes static unless told otherwise."""
        return bool(re.search(r"\._(?:parameters|buffers)\[", self.dynamo))

    @property
    def short(self) -> str:
        """"`rows` (Dynamo's `___stack0`)", or "`x`" when the name is the user's own."""
        if self.role and self.user:
            return f"`{self.user}` (Dynamo's `{self.dynamo}`)"
        return f"`{self.in_code}`"

    @property
    def text(self) -> str:
        """The name with what Dynamo's name stands for and where the user's shows."""
        if not self.role:
            return f"`{self.in_code}`"
        seen = f"; seen at {self.seen_at}" if self.seen_at else ""
        if self.user:
            return f"`{self.user}` (Dynamo calls it `{self.dynamo}`: {self.role}{seen})"
        return f"`{self.dynamo}` (Dynamo's name, not one in your code: {self.role}{seen})"


def user_name(session: Session, unit: CompileUnit, dynamo: str, comment: SourceLocation | None = None) -> UserName:
    """The user's name for the value a guard of `unit` names `dynamo` (as torch prints it, `L[...]` dropped)."""
    length = _LEN.match(dynamo)
    if length:
        return _length_name(session, unit, dynamo, length["inner"], comment)
    source = _SOURCE.match(dynamo)
    if source is None:
        return UserName(dynamo)
    base, path = source["base"], source["path"]
    if base.startswith("___stack"):
        produced_by = _break_before(session, unit)
        resumed = _RESUME.match(unit.function or "")
        role = (f"a value Dynamo handed to the code it resumed{f' in {resumed[1]}()' if resumed else ''} "
                "after a graph break")
        if produced_by is not None and produced_by.location is not None:
            where = produced_by.location
            role += f" at {_short(where.file)}:{where.line}" + (f", `{where.code}`" if where.code else "")
        user, seen_at = _first_reader(unit, base, path)
        return UserName(dynamo, user, role, seen_at, produced_by)
    packed = _PACKED.match(path) if base in ("args", "kwargs") else None
    if packed:
        key = packed["key"]
        if base == "kwargs":  # the keyword is the name the caller wrote
            keyword = key.strip("'")
            return UserName(dynamo, keyword + path[packed.end():],
                            f"the keyword argument `{keyword}` that {_frame(unit)} got through **kwargs")
        user, seen_at = _first_reader(unit, base, path)
        role = f"the {_ordinal(int(key) + 1)} value {_frame(unit)} got through *args"
        return UserName(dynamo, user, role, seen_at)
    if _MODULE_STEP.search(path):
        readable = _MODULE_STEP.sub(lambda step: f"[{step['name']}]" if step["name"].isdigit() else f".{step['name']}",
                                    path)
        return UserName(dynamo, base + readable, "Dynamo's spelling of that attribute path")
    return UserName(dynamo)


def _length_name(session: Session, unit: CompileUnit, dynamo: str, inner: str,
                 comment: SourceLocation | None) -> UserName:
    """`len(___stack1)`: the length of a sequence; the guard's comment shows the user's `len(...)`."""
    of = user_name(session, unit, inner)
    if comment is None:
        if not of.role:
            return UserName(dynamo)
        return UserName(dynamo, f"len({of.user})" if of.user else None, f"the length of {of.text}", of.seen_at,
                        of.produced_by)
    role = f"the length of `{inner}`" + (f", {of.role}" if of.role else "")
    seen_at = "" if f"`{comment.code}`" in role else f"{_short(comment.file)}:{comment.line}: `{comment.code}`"
    return UserName(dynamo, _call_in(comment.code, "len"), role, seen_at, of.produced_by)


def _first_reader(unit: CompileUnit, base: str, path: str) -> tuple[str | None, str]:
    """(the user's name, where it shows) from the first node of the unit's Dynamo graph that reads the
    placeholder of `L['base']path`: a method call `l_args_0_.view(...)` made from the code line
    `input_ids = input_ids.view(...)` names `input_ids`."""
    artifact = unit.graphs.get("dynamo")
    if artifact is None:
        return None, ""
    target = re.sub(r"_+", "_", re.sub(r"\W", "_", f"L['{base}']{path}"))
    found = first_reader(artifact.text, target)
    if found is None:
        return None, ""
    placeholder, reader = found
    source = reader.source
    seen_at = f"{_short(source.file)}:{source.line}" + (f" in {source.function}" if source.function else "") \
        + f": `{source.code}`"
    named = set()
    if reader.op == "call_method" and reader.args.split(",")[0].strip() == placeholder.name:
        named = set(re.findall(rf"([A-Za-z_][\w.]*?)\s*\.\s*{re.escape(reader.target)}\s*\(", source.code))
    return (named.pop() if len(named) == 1 else None), seen_at


def _break_before(session: Session, unit: CompileUnit) -> GraphBreak | None:
    """The break a resume function `torch_dynamo_resume_in_<fn>_at_<line>` continues after."""
    resume = _RESUME.match(unit.function or "")
    if resume is None:
        return None
    line = int(resume["line"])
    for other in session.units:
        if other.rank != unit.rank:
            continue
        for brk in other.breaks:
            lines = [brk.location, *brk.via] if brk.location else []
            if any(at.line == line and at.function == resume["function"] for at in lines):
                return brk
    return None


def _call_in(code: str, function: str) -> str | None:
    """The first `function(...)` call written in `code`, with its balanced parentheses."""
    start = code.find(f"{function}(")
    if start < 0:
        return None
    depth = 0
    for index in range(start + len(function), len(code)):
        depth += {"(": 1, ")": -1}.get(code[index], 0)
        if depth == 0:
            return code[start:index + 1]
    return None


def _frame(unit: CompileUnit) -> str:
    where = unit.location
    at = f" at {_short(where.file)}:{where.line}" if where and where.line is not None else ""
    return f"{unit.function or '?'}(){at}"


def _short(path: str) -> str:
    return PureWindowsPath(path).name  # a log from Windows has backslashes; the file name is enough here


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# Per unit, once: lists and the break map name units on every paint, and the answer reads the Dynamo
# graph's text from the log.
_CALLED: WeakKeyDictionary[CompileUnit, SourceLocation | None] = WeakKeyDictionary()


def called_function(unit: CompileUnit) -> SourceLocation | None:
    """The function a user knows a unit by when the frame Dynamo compiled is a library's wrapper around
    it: a Hugging Face model's `forward` under a decorator compiles as `wrapper` (transformers/utils/
    generic.py) or `wrapped_func` (utils/deprecation.py). Read from the Dynamo graph's first user line:
    None when the frame is the user's own, or its first line is in the frame itself (not a wrapper)."""
    if unit not in _CALLED:
        _CALLED[unit] = _called_function(unit)
    return _CALLED[unit]


def _called_function(unit: CompileUnit) -> SourceLocation | None:
    where, graph = unit.location, unit.graphs.get("dynamo")
    if where is None or graph is None or not is_library_file(where.file):
        return None
    first = first_source(graph.text)
    if first is None or not first.function or (first.file, first.function) == (where.file, unit.function):
        return None
    return SourceLocation(first.file, first.line, first.function, None)


def shown_function(unit: CompileUnit) -> str:
    """The unit's function as lists name it: `forward (via wrapper)` where a library wrapped it,
    `forward (resumed at line 19)` for the resume function Dynamo made after a break there (its name,
    `torch_dynamo_resume_in_forward_at_19`, is elided to `t…d_at_19` in a narrow list)."""
    called = called_function(unit)
    if called:
        return f"{called.function} (via {unit.function})"
    return shown_name(unit.function)


def shown_name(function: str | None) -> str:
    """A function's name as lists say it: Dynamo's resume functions after the user's function."""
    resumed = _RESUME.match(function or "")
    if resumed:
        return f"{resumed['function']} (resumed at line {resumed['line']})"
    return function or "?"


def unit_title(unit: CompileUnit) -> str:
    return f"{unit.compile_id} {shown_function(unit)}"


def frame_title(frame: Frame) -> str:
    """A frame as the session tree lists it: the function the user knows it by, since its units' ids
    (`[1/0]`) say the frame's number; what torch.export or AOTInductor compiled says it was outside Dynamo."""
    if not frame.units:
        return frame.title
    name = shown_function(frame.units[0])
    return f"{frame.where}: {name}" if frame.frame_id == NO_FRAME else name
