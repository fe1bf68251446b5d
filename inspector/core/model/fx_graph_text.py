"""Parser of FX graphs from their readable text (``GraphModule.print_readable``), the form in which
TORCH_TRACE and TORCH_COMPILE_DEBUG store every graph: Dynamo's, AOT's and Inductor's post-grad.

The text is never executed: each line is matched against the few shapes print_readable emits, and
lines that match none are kept in `FxGraph.unreadable` so a view can list them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from inspector.core.model.source_location import SourceLocation

_CLASS = re.compile(r"^(\s*)class\s+([^\s(]+)\s*\(.*\)\s*:\s*$")
_DEF_FORWARD = re.compile(r"^(\s*)def\s+forward\s*\((.*)$")
# `# File: /x/model.py:12 in forward, code: y = x + 1`, read by `_source_parts` in one pass (the regex
# `^#\s*File:\s*(.+?):(\d+)(?:\s+in\s+([^,]+))?,\s*code:\s*(.*)$` rescanned the rest of the line for every
# ":" in it: quadratic in a huge comment).
_FILE_COMMENT = re.compile(r"#\s*File:")
_SPACES = re.compile(r"\s*")
_DIGITS = re.compile(r"\d+")
_NAME = re.compile(r"[A-Za-z_]\w*")
_ASSIGN = re.compile(r'^(?P<name>[A-Za-z_]\w*)\s*(?::\s*"(?P<annot>[^"]*)")?\s*=\s*(?P<expr>.+)$')
# A graph whose inputs come through a pytree spec (an exported program, AOTInductor's graphs) declares
# them in its body, `arg4_1: "f32[s77, 16]"; `, then unpacks them: `arg4_1, = fx_pytree.tree_flatten_spec(…)`
_DECLARED_INPUT = re.compile(r'^(?P<name>[A-Za-z_]\w*)\s*:\s*"(?P<annot>[^"]*)"\s*;?$')
_UNPACK_INPUTS = re.compile(r"^[\w\s,]+=\s*fx_pytree\.tree_flatten_spec\(")
_CLEANUP = re.compile(r";\s+(?:[A-Za-z_]\w*\s*=\s*)+None\s*$")
_PARAM = re.compile(r'([A-Za-z_]\w*)\s*(?::\s*"([^"]*)")?')
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?!\s*=[^=])")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_CALL = re.compile(r"^(?P<target>[A-Za-z_][\w.]*)\s*\((?P<args>.*)\)$")
_METHOD = re.compile(r"^(?P<obj>[A-Za-z_]\w*)\.(?P<method>[A-Za-z_]\w*)\((?P<args>.*)\)$")
_BINARY = re.compile(r"^(?P<left>[\w.]+)\s*(?P<op>\*\*|//|>=|<=|==|!=|[-+*/%<>&|^@])\s*(?P<right>[\w.]+)$")
_UNARY = re.compile(r"^(?P<op>[-~]|not\s)\s*(?P<operand>[A-Za-z_]\w*)$")
_GETITEM = re.compile(r"^(?P<obj>[A-Za-z_]\w*)\[(?P<index>.*)\]$")
_ATTR = re.compile(r"^self\.(?P<attr>[\w.]+)$")
_TENSOR_ANNOT = re.compile(r"^(?P<dtype>[a-z]+\d*)\[(?P<shape>[^\]]*)\]"
                           r"(?:\[(?P<stride>[^\]]*)\])?(?P<device>[a-z]*[:\d]*)$")
_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod",
              "**": "pow", ">": "gt", "<": "lt", ">=": "ge", "<=": "le", "==": "eq", "!=": "ne",
              "&": "and_", "|": "or_", "^": "xor", "@": "matmul"}


@dataclass(slots=True)
class FxNode:
    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str
    args: str = ""
    inputs: list[str] = field(default_factory=list)
    annotation: str | None = None
    dtype: str | None = None
    shape: list[str] | None = None
    stride: list[str] | None = None
    device: str | None = None
    source: SourceLocation | None = None
    line_no: int = 0

    @property
    def is_op(self) -> bool:
        """A node that computes something (what graph_op_count counts)."""
        return self.op in ("call_function", "call_method", "call_module")

    @property
    def shape_text(self) -> str:
        """The value as the graph annotates it: `f32[8, 16]`, a bare dtype, or — when neither is known."""
        return f"{self.dtype or ''}[{', '.join(self.shape)}]" if self.shape is not None else (self.dtype or "—")


@dataclass
class FxGraph:
    name: str = ""
    nodes: list[FxNode] = field(default_factory=list)
    subgraphs: dict[str, FxGraph] = field(default_factory=dict)
    unreadable: list[tuple[int, str]] = field(default_factory=list)

    def __post_init__(self):
        self._by_name: dict[str, FxNode] | None = None
        self._users: dict[str, list[str]] | None = None

    def add(self, node: FxNode) -> None:
        self.nodes.append(node)
        if self._by_name is not None:
            self._by_name[node.name] = node
        self._users = None

    def rename(self, node: FxNode, name: str) -> None:
        node.name = name
        self._by_name = None

    def node(self, name: str) -> FxNode | None:
        if self._by_name is None:
            self._by_name = {node.name: node for node in self.nodes}
        return self._by_name.get(name)

    def users(self, name: str) -> list[str]:
        if self._users is None:
            self._users = {}
            for node in self.nodes:
                for source in node.inputs:
                    self._users.setdefault(source, []).append(node.name)
        return self._users.get(name, [])

    @property
    def edges(self) -> list[tuple[str, str]]:
        return [(source, node.name) for node in self.nodes for source in node.inputs]

    @property
    def op_nodes(self) -> list[FxNode]:
        return [node for node in self.nodes if node.is_op]

    @property
    def empty(self) -> bool:
        return not self.op_nodes


def parse_fx_graph(text: str) -> FxGraph:
    """Parse readable graph text into nodes and edges; never raises."""
    parser = _GraphTextParser(text.split("\n"))
    return parser.parse()


def op_node_names(text: str) -> list[str]:
    """The names of the root graph's op nodes, as `parse_fx_graph(text).op_nodes` has them, without
    the edges, shapes and sources a view needs (most of a parse's cost), for the fusion figures, which
    count every unit's graph."""
    parser = _GraphTextParser(text.split("\n"), details=False)
    return [node.name for node in parser.parse().op_nodes]


def first_reader(text: str, placeholder_target: str) -> tuple[FxNode, FxNode] | None:
    """(the root graph's input `placeholder_target`, the first node with a source line that reads it),
    parsing only as far as that node: inputs come first and their first reader is most often near
    the top, and naming a guard's value for every recompile must not parse whole graphs."""
    def the_input(graph: FxGraph, node: FxNode) -> FxNode | None:
        return next((read for name in node.inputs if (read := graph.node(name)) is not None
                     and read.op == "placeholder" and read.target == placeholder_target), None)

    parser = _GraphTextParser(text.split("\n"),
                              until=lambda graph, node: node.source is not None and the_input(graph, node) is not None)
    graph = parser.parse()
    if not parser.stopped:
        return None
    reader = graph.nodes[-1]
    return the_input(graph, reader), reader


class _GraphTextParser:
    def __init__(self, lines: list[str], details: bool = True, until: Callable[[FxGraph, FxNode], bool] | None = None):
        """`until`: stop after the first node of the root graph it accepts (`stopped` then says so)."""
        self.details = details
        self.until = until
        self.stopped = False
        self.lines = lines
        self.root: FxGraph | None = None
        self.classes: list[tuple[int, FxGraph]] = []

    def parse(self) -> FxGraph:
        index = 0
        count = len(self.lines)
        current: FxGraph | None = None
        aliases: dict[str, str] = {}
        source: SourceLocation | None = None
        body_indent = -1
        while index < count:
            raw = self.lines[index]
            stripped = raw.strip()
            index += 1
            if not stripped:
                continue
            indent = len(raw) - len(raw.lstrip())
            class_match = _CLASS.match(raw) if stripped.startswith("class") else None  # the test first: faster
            if class_match:
                current = self._open_class(indent, class_match.group(2))
                body_indent, source, aliases = -1, None, {}
                continue
            def_match = _DEF_FORWARD.match(raw) if stripped.startswith("def") else None
            if def_match:
                if current is None:
                    current = self._open_class(-1, "")
                params_text, index = self._collect_until_closed("(" + def_match.group(2), index)
                self._add_params(current, params_text, index)
                body_indent = indent + 1
                continue
            if current is None or body_indent < 0:
                if stripped.startswith(("#", "import ", "from ")):
                    continue
                self._root().unreadable.append((index, stripped))
                continue
            if stripped.startswith("#"):
                if self.details:
                    source = self._source_comment(stripped, source)
                continue
            if stripped.startswith("return"):
                text, index = self._collect_until_closed(stripped[len("return"):], index)
                self._add_output(current, text, index, aliases)
                continue
            assign = _ASSIGN.match(stripped)
            if assign:
                added = self._add_assignment(current, assign, source, index, aliases)
                if self.until is not None and added is not None and current is self.root and self.until(current, added):
                    self.stopped = True
                    break
                continue
            declared = _DECLARED_INPUT.match(stripped)
            if declared:
                self._add_params(current, f'(self, {declared["name"]}: "{declared["annot"]}")', index)
                continue
            if _UNPACK_INPUTS.match(stripped):
                continue
            current.unreadable.append((index, stripped))
        return self._root()

    def _root(self) -> FxGraph:
        if self.root is None:
            self.root = FxGraph()
        return self.root

    def _open_class(self, indent: int, name: str) -> FxGraph:
        while self.classes and self.classes[-1][0] >= indent:
            self.classes.pop()
        if self.root is None:
            graph = self.root = FxGraph(name=name)
        elif self.classes:
            graph = FxGraph(name=name)
            self.classes[-1][1].subgraphs[name] = graph
        else:  # a second top-level class: keep it beside the first
            graph = FxGraph(name=name)
            self.root.subgraphs[name] = graph
        self.classes.append((indent, graph))
        return graph

    def _collect_until_closed(self, text: str, index: int) -> tuple[str, int]:
        """Join continuation lines until the brackets opened in `text` are closed."""
        parts = [_strip_comment(text)]
        depth = _depth(parts[0])
        while depth > 0 and index < len(self.lines):
            more = _strip_comment(self.lines[index].strip())
            index += 1
            parts.append(more)
            depth += _depth(more)
        return " ".join(parts), index

    @staticmethod
    def _source_comment(comment: str, previous: SourceLocation | None) -> SourceLocation | None:
        source = _source(comment)
        if source:
            return source
        if comment.startswith("# No stacktrace found"):
            return None
        return previous

    @staticmethod
    def _add_params(graph: FxGraph, text: str, line_no: int) -> None:
        inner = text.strip()[1:].rsplit(")", 1)[0]
        for position, match in enumerate(_PARAM.finditer(_without_defaults(inner))):
            name, annotation = match.group(1), match.group(2)
            if position == 0 and name == "self":
                continue
            node = FxNode(name=name, op="placeholder", target=name, line_no=line_no)
            _apply_annotation(node, annotation)
            graph.add(node)

    @staticmethod
    def _add_output(graph: FxGraph, text: str, line_no: int, aliases: dict[str, str]) -> None:
        expression = text.strip()
        graph.add(FxNode(name="output", op="output", target="output", args=expression,
                         inputs=_inputs(expression, graph, aliases), line_no=line_no))

    def _add_assignment(self, graph: FxGraph, assign: re.Match, source: SourceLocation | None,
                        line_no: int, aliases: dict[str, str]) -> FxNode | None:
        """The node the line adds (None where it names an input anew)."""
        name, annotation = assign["name"], assign["annot"]
        expression = assign["expr"]
        expression = (_CLEANUP.sub("", expression) if ";" in expression else expression).strip()
        placeholder = graph.node(expression) if _NAME.fullmatch(expression) else None
        if placeholder is not None and placeholder.op == "placeholder":
            # Dynamo prints `l_x_ = L_x_`: the placeholder node itself, under its FX name.
            aliases[expression] = name
            graph.rename(placeholder, name)
            return None
        if not self.details:  # op names need only whether a line is an op: every line but `self.<attr>` is
            op = "get_attr" if _ATTR.match(expression) else "call_function"
            node = FxNode(name=name, op=op, target="", line_no=line_no)
            graph.add(node)
            return node
        op, target, args = _classify(expression)
        node = FxNode(name=name, op=op, target=target, args=args, source=source, line_no=line_no,
                      inputs=_inputs(args if op != "get_attr" else "", graph, aliases))
        _apply_annotation(node, annotation)
        graph.add(node)
        return node


def _classify(expression: str) -> tuple[str, str, str]:
    """(op, target, argument text) of the right-hand side of a node line."""
    attr = _ATTR.match(expression)
    if attr:
        return "get_attr", attr["attr"], ""
    method = _METHOD.match(expression)
    if method and method["obj"] != "torch" and method["obj"] != "self":
        return "call_method", method["method"], f"{method['obj']}, {method['args']}".rstrip(", ")
    call = _CALL.match(expression)
    if call:
        target = call["target"]
        if target.startswith("self."):
            return "call_module", target[len("self."):], call["args"]
        if target.startswith("torch.ops."):
            target = target[len("torch.ops."):]
        return "call_function", target, call["args"]
    binary = _BINARY.match(expression)
    if binary:
        return "call_function", f"operator.{_OPERATORS[binary['op']]}", f"{binary['left']}, {binary['right']}"
    unary = _UNARY.match(expression)
    if unary:
        name = {"-": "neg", "~": "invert"}.get(unary["op"].strip(), "not_")
        return "call_function", f"operator.{name}", unary["operand"]
    getitem = _GETITEM.match(expression)
    if getitem:
        return "call_function", "operator.getitem", f"{getitem['obj']}, {getitem['index']}"
    return "call_function", expression, expression


def _inputs(args: str, graph: FxGraph, aliases: dict[str, str]) -> list[str]:
    seen: list[str] = []
    for match in _IDENT.finditer(_STRING.sub("", args)):
        name = aliases.get(match.group(1), match.group(1))
        if name not in seen and graph.node(name) is not None:
            seen.append(name)
    return seen


def _apply_annotation(node: FxNode, annotation: str | None) -> None:
    if not annotation:
        return
    node.annotation = annotation
    match = _TENSOR_ANNOT.match(annotation.strip())
    if match:
        node.dtype = match["dtype"]
        node.shape = _dims(match["shape"])
        node.stride = _dims(match["stride"]) if match["stride"] is not None else None
        node.device = match["device"] or None
    elif annotation.startswith("Sym("):
        node.dtype = "sym"


def _dims(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _depth(text: str) -> int:
    text = _STRING.sub("", text)
    return text.count("(") + text.count("[") - text.count(")") - text.count("]")


def first_source(text: str) -> SourceLocation | None:
    """The user line of a graph's first `# File:` comment, found without parsing the graph (a view can
    name many units by it cheaply)."""
    found = _FILE_COMMENT.search(text)
    while found is not None:
        line_end = text.find("\n", found.start())
        source = _source(text[found.start():None if line_end < 0 else line_end])
        if source is not None:
            return source
        found = _FILE_COMMENT.search(text, found.end())
    return None


def _source(comment: str) -> SourceLocation | None:
    parts = _source_parts(comment)
    if parts is None:
        return None
    file, line, function, code = parts
    return SourceLocation(file.strip(), int(line), function.strip() if function else None, code.strip())


def _source_parts(comment: str) -> tuple[str, str, str | None, str] | None:
    """(file, line, function, code) of `# File: FILE:LINE[ in FUNCTION], code: CODE`, as the regex
    `^#\\s*File:\\s*(.+?):(\\d+)(?:\\s+in\\s+([^,]+))?,\\s*code:\\s*(.*)$` read them, in time linear in the
    comment: FILE ends at the first ":" followed by a number and a valid rest. The rest, after the number, is
    ` in FUNCTION` up to the next "," (or nothing), then `, code: CODE`, CODE running to the end."""
    head = _FILE_COMMENT.match(comment)
    if head is None:
        return None
    size = len(comment)
    end = size - 1 if comment.endswith("\n") else size  # `$` stands before a final line break
    inner = comment.rfind("\n", 0, end)  # CODE begins after every other line break
    commas = [size + 1, -1]  # (searched from, the first "," from there): the searches only move on
    codes: dict[int, str | None] = {}

    def code_after(comma: int) -> str | None:  # `,\s*code:\s*(.*)$` at `comma`
        if comma not in codes:
            label = _SPACES.match(comment, comma + 1).end()
            start = _SPACES.match(comment, label + 5).end() if comment.startswith("code:", label) else -1
            codes[comma] = comment[start:end] if start > inner else None
        return codes[comma]

    def rest_after(number_end: int) -> tuple[str | None, str] | None:
        if comment.startswith(",", number_end):
            code = code_after(number_end)
            return None if code is None else (None, code)
        word = _SPACES.match(comment, number_end).end()
        if word == number_end or not comment.startswith("in", word):
            return None
        function = _SPACES.match(comment, word + 2).end()
        if function == word + 2 or function >= size:
            return None
        if comment[function] == ",":  # all spaces up to the ",": the function is the last of them
            if function - (word + 2) < 2:
                return None
            function, comma = function - 1, function
        else:
            searched, found = commas
            if not (searched <= function and (found < 0 or function <= found)):
                commas[:] = function, comment.find(",", function)
            comma = commas[1]
        code = None if comma < 0 else code_after(comma)
        return None if code is None else (comment[function:comma], code)

    def at_colon(file_start: int, colon: int) -> tuple[str, str, str | None, str] | None:
        number = _DIGITS.match(comment, colon + 1)
        rest = rest_after(number.end()) if number else None
        return (comment[file_start:colon], number[0], *rest) if rest else None

    spaces, file_start = head.end(), _SPACES.match(comment, head.end()).end()
    line_end = comment.find("\n", file_start)
    colon = comment.find(":", file_start + 1, size if line_end < 0 else line_end)
    while colon >= 0:
        found = at_colon(file_start, colon)
        if found:
            return found
        colon = comment.find(":", colon + 1, size if line_end < 0 else line_end)
    # The regex then gave a space back to FILE, which lets a ":" right after the spaces end it.
    if file_start > spaces and comment[file_start - 1] != "\n" and comment.startswith(":", file_start):
        return at_colon(file_start - 1, file_start)
    return None


def _strip_comment(text: str) -> str:
    """Drop a trailing `# ...` comment that lies outside string literals."""
    if "#" not in text:
        return text
    cleaned = _STRING.sub(lambda m: "_" * len(m.group(0)), text)
    cut = cleaned.find("#")
    return text[:cut].rstrip() if cut >= 0 else text


def _without_defaults(params: str) -> str:
    """Remove `= default` parts of a parameter list so they are not read as parameters."""
    return re.sub(r"=\s*[^,]+", "", params)
