"""Parser of XLA HLO modules from their text form (what ``--xla_dump_hlo_as_text`` writes before and
after optimisation), so a dump folder can be read without jax or XLA installed.

Each instruction line is matched against the one shape HLO text has (``[ROOT] %name = TYPE opcode(
operands), attributes``); lines inside a computation that match nothing are kept in
`HloModule.unreadable`, and a computation cut off by the end of the file marks the module truncated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inspector.core.model.source_location import SourceLocation

_MODULE = re.compile(r"^HloModule\s+(?P<name>[^\s,]+)")
# A computation's header, `ENTRY %main (p: f32[4]) -> f32[4] {`. Matched only on a line that ends with "{" (else
# `.*` in it backtracks over the rest of the line for every ")"), with one `\s*` after the name where
# `\s*(?:\(.*\))?\s*` split a run of spaces between two: both quadratic in the line.
_COMPUTATION = re.compile(r"^(?P<entry>ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*(?:\(.*\)\s*)?(?:->\s*.*)?\{\s*$")
_INSTRUCTION_HEAD = re.compile(r"^(?P<root>ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*")
_OPCODE = re.compile(r"\s*(?P<opcode>[a-z][\w\-]*)\(")
_OPERAND_NAME = re.compile(r"%([\w.\-]+)")
# The name that ends an operand without "%" (`f32[4] x`): see `_bare_name`.
_NAME_CHARS = re.compile(r"[\w.\-]*")
_NAME_START = re.compile(r"[A-Za-z_]")
# Every attribute the reader keeps, in one pattern so each instruction's attributes are scanned once.
_ATTRIBUTE = re.compile(
    r"\b(?:(?P<multi>calls|branch_computations|called_computations)=\{(?P<names>[^}]*)\}"
    r"|(?P<role>calls|to_apply|body|condition|true_computation|false_computation)=%?(?P<name>[\w.\-]+)"
    r"|kind=(?P<kind>k\w+)"
    r'|custom_call_target="(?P<target>[^"]*)"'
    r'|op_name="(?P<op_name>(?:[^"\\]|\\.)*)"'
    r"|stack_frame_id=(?P<frame>\d+)"
    r'|source_file="(?P<file>(?:[^"\\]|\\.)*)"'
    r"|source_line=(?P<line>\d+))")
_BRACKET = re.compile(r'[()\[\]{}"]')
_TABLE_ROW = re.compile(r'^(?P<id>\d+)\s+(?P<value>".*"|\{.*\})\s*$')
_FIELD = re.compile(r"(\w+)=(-?\d+)")
_SHAPE = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<dims>[^\]]*)\]")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")

# Opcodes whose parenthesised text is a literal or an index, not operand names.
_LITERAL_OPCODES = {"constant", "parameter", "iota"}
# Opcodes that run the computations they name as part of the program (their bodies are program code);
# every other `to_apply` names a scalar function applied inside one op (a reducer, a comparator).
CONTROL_OPCODES = {"call", "while", "conditional", "async-start"}


@dataclass(slots=True)
class HloInstruction:
    name: str
    opcode: str
    shape: str
    operands: list[str] = field(default_factory=list)
    called: dict[str, list[str]] = field(default_factory=dict)  # role (calls, to_apply, body…) → computations
    fusion_kind: str | None = None  # kLoop | kInput | kOutput | kCustom for a fusion
    op_name: str | None = None  # the framework op it came from (jax: "jit(f)/dot_general")
    source: SourceLocation | None = None
    is_root: bool = False
    line_no: int = 0
    literal: str | None = None  # the value of a constant, the index of a parameter
    custom_call_target: str | None = None  # the library routine of a custom-call (__cublas$gemm …)

    @property
    def parameter_index(self) -> int | None:
        return int(self.literal) if self.opcode == "parameter" and self.literal and self.literal.isdigit() else None

    @property
    def dtype(self) -> str | None:
        match = _SHAPE.match(self.shape)
        return match["dtype"] if match else None

    @property
    def dims(self) -> list[str] | None:
        match = _SHAPE.match(self.shape)
        return [d for d in match["dims"].split(",") if d] if match else None

    def calls(self) -> list[str]:
        return [name for names in self.called.values() for name in names]


@dataclass
class HloComputation:
    name: str
    is_entry: bool = False
    instructions: list[HloInstruction] = field(default_factory=list)
    line_no: int = 0
    closed: bool = False  # False when the file ended inside it


@dataclass
class HloModule:
    name: str = ""
    computations: dict[str, HloComputation] = field(default_factory=dict)
    unreadable: list[tuple[int, str]] = field(default_factory=list)

    @property
    def entry(self) -> HloComputation | None:
        """The ENTRY computation; None when the text holds none (a dump cut off before it)."""
        return next((c for c in self.computations.values() if c.is_entry), None)

    @property
    def truncated(self) -> bool:
        return any(not computation.closed for computation in self.computations.values())


def parse_hlo_module(text: str) -> HloModule:
    """Parse HLO text into computations and instructions; never raises."""
    module = HloModule()
    tables: dict[str, dict[int, str]] = {}
    table: str | None = None
    current: HloComputation | None = None
    for line_no, raw in enumerate(text.split("\n"), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if current is not None:
            if stripped == "}":
                current.closed = True
                current = None
                continue
            instruction = _parse_instruction(stripped, line_no)
            if instruction is None:
                module.unreadable.append((line_no, stripped))
            else:
                current.instructions.append(instruction)
            continue
        header = _MODULE.match(stripped)
        if header:
            module.name = header["name"]
            continue
        if stripped in _TABLES:
            table = stripped
            continue
        row = _TABLE_ROW.match(stripped)
        if row and table:
            tables.setdefault(table, {})[int(row["id"])] = row["value"]
            continue
        opened = _COMPUTATION.match(stripped) if stripped.endswith("{") else None
        if opened:
            current = HloComputation(opened["name"], bool(opened["entry"]), line_no=line_no)
            module.computations[current.name] = current
            table = None
            continue
        module.unreadable.append((line_no, stripped))
    _resolve_sources(module, tables)
    return module


def _parse_instruction(line: str, line_no: int) -> HloInstruction | None:
    head = _INSTRUCTION_HEAD.match(line)
    if not head:
        return None
    rest = line[head.end():]
    shape, rest = _take_shape(rest)
    opcode = _OPCODE.match(rest)
    if shape is None or not opcode:
        return None
    inside, attributes = _take_parenthesised(rest[opcode.end() - 1:])
    if inside is None:
        return None
    instruction = HloInstruction(head["name"], opcode["opcode"], shape, is_root=bool(head["root"]), line_no=line_no)
    if instruction.opcode in _LITERAL_OPCODES:
        instruction.literal = inside.strip()
    else:
        instruction.operands = _operand_names(inside)
    file = line = frame = None
    for match in _ATTRIBUTE.finditer(attributes):
        group = match.lastgroup
        if group == "names":
            names = [name.strip().lstrip("%") for name in match["names"].split(",") if name.strip()]
            instruction.called.setdefault(match["multi"], []).extend(names)
        elif group == "name":
            instruction.called.setdefault(match["role"], []).append(match["name"])
        elif group == "kind" and instruction.opcode == "fusion":
            instruction.fusion_kind = match["kind"]
        elif group == "target":
            instruction.custom_call_target = match["target"]
        elif group == "op_name" and instruction.op_name is None:
            instruction.op_name = match["op_name"]
        elif group == "frame":
            frame = int(match["frame"])
        elif group == "file":
            file = match["file"]
        elif group == "line":
            line = int(match["line"])
    if frame is not None:
        instruction.source = SourceLocation("", -frame, None, None)  # resolved once the tables are read
    elif file and line is not None:
        instruction.source = SourceLocation(file, line, None, None)
    return instruction


def _take_shape(text: str) -> tuple[str | None, str]:
    """The result type: a token like `f32[4,8]{1,0}`, or a (possibly nested) tuple in parentheses."""
    text = text.lstrip()
    if text.startswith("("):
        inside, rest = _take_parenthesised(text)
        return (None, text) if inside is None else (f"({inside})", rest)
    parts = text.split(None, 1)
    return (parts[0], parts[1] if len(parts) > 1 else "") if parts else (None, "")


def _take_parenthesised(text: str) -> tuple[str | None, str]:
    """Split `(…)rest` at the bracket that closes the first one; None when it never closes."""
    depth = 0
    quoted = False
    for match in _BRACKET.finditer(text):
        char, index = match.group(), match.start()
        if char == '"' and (index == 0 or text[index - 1] != "\\"):
            quoted = not quoted
        elif quoted:
            continue
        elif char in "({[":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return text[1:index], text[index + 1:]
    return None, text


def _operand_names(text: str) -> list[str]:
    if "%" in text:
        return _OPERAND_NAME.findall(text)
    names = []
    for part in _split_top_level(text):
        name = _bare_name(part.strip())
        if name:
            names.append(name)
    return names


def _bare_name(text: str) -> str | None:
    """The name `([A-Za-z_][\\w.\\-]*)\\s*$` found in `text`, in time linear in it (that search runs to the end
    of a long name from each of its characters): of the name characters that end the text, from the first
    letter or "_" on."""
    text = text.rstrip()
    tail = len(_NAME_CHARS.match(text[::-1]).group())
    start = _NAME_START.search(text, len(text) - tail)
    return text[start.start():] if start else None


def _split_top_level(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "({[":
            depth += 1
        elif char in ")}]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part for part in parts if part.strip()]


def _resolve_sources(module: HloModule, tables: dict[str, dict[int, str]]) -> None:
    """Newer XLA prints `stack_frame_id=N` and the file/line tables once at the top of the module."""
    def fields(value: str) -> dict[str, int]:
        return {key: int(number) for key, number in _FIELD.findall(value)}

    files = {key: value.strip('"') for key, value in tables.get("FileNames", {}).items()}
    functions = {key: value.strip('"') for key, value in tables.get("FunctionNames", {}).items()}
    locations = {key: fields(value) for key, value in tables.get("FileLocations", {}).items()}
    frames = {key: fields(value) for key, value in tables.get("StackFrames", {}).items()}
    resolved: dict[int, SourceLocation | None] = {}
    for computation in module.computations.values():
        for instruction in computation.instructions:
            if instruction.source is None or instruction.source.line >= 0:
                continue
            frame_id = -instruction.source.line
            if frame_id not in resolved:
                location = locations.get(frames.get(frame_id, {}).get("file_location_id", -1))
                resolved[frame_id] = SourceLocation(files.get(location.get("file_name_id", -1), "?"),
                                                    location.get("line", 0),
                                                    functions.get(location.get("function_name_id", -1)), None
                                                    ) if location else None
            instruction.source = resolved[frame_id]
