"""Inductor output code split into kernels: Triton and C++ kernels defined through ``async_compile``,
extern calls (``extern_kernels.mm``) and ATen fallbacks, each with its text span, call sites and the
FX nodes it came from — from the provenance maps when the run recorded them, else from the
``Topologically Sorted Source Nodes`` comments, which over-include (the kernel says which it used)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_DEFINITION = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*async_compile\.(?P<how>\w+)\(")
_STRING_END = re.compile(r"^\s*(?:'''|\"\"\")")
_SOURCE_NODES = re.compile(r"(?:#|//)\s*Topologically Sorted Source Nodes:\s*\[(?P<nodes>[^\]]*)\]"
                           r"(?:,\s*Original ATen:\s*\[(?P<aten>[^\]]*)\])?")  # Python or C++ comments
_HANDLES = re.compile(r"(?:#|//)\s*\[Provenance debug handles\]\s*(?P<handles>.+)$")
# `call()`, where the graph's kernels are launched, and the subgraphs of higher-order ops (a torch.cond's
# branches, a while_loop's body), which Inductor writes as `def true_graph_0(args):` and runs from `call()`
_CALL_FUNCTION = re.compile(r"^\s*def (?:call\(|\w+\(args\):)")
_SUBGRAPH = re.compile(r"^def (?P<name>\w+)\(args\):")  # a higher-order op's subgraph, at the top of the module
_CALLED = re.compile(r"\b(\w+)\(")
_LAUNCH = re.compile(r"^\s*(?:\w+\s*=\s*)?(?P<name>[A-Za-z_]\w*)(?:\.run)?\(")
_EXTERN = re.compile(r"\bextern_kernels\.(?P<op>\w+)\(")
_FALLBACK = re.compile(r"^\s*(?:\w+(?:,\s*\w+)*\s*=\s*)?(?:torch\.ops\.)?(?P<op>aten\.\w+(?:\.\w+)?)\(")
_AOT_ID = re.compile(r"^# AOT ID: \[(?P<ids>[^\]]*)\]", re.M)
_KERNEL_PATH = "# kernel path:"  # the comment above each kernel Inductor wrote to a file of its own
_KIND_BY_HOW = {"triton": "triton", "cpp_pybinding": "cpp", "cpp": "cpp", "halide": "halide"}
# AOTInductor's C++: kernels are `extern "C"` functions, run from AOTInductorModel::run_impl, with
# library ops called as aoti_torch_<device>_<op> shims (allocation helpers have no device in the name)
_AOT_RUN = re.compile(r"^[^\S\n]*void\s+AOTInductorModel::run_impl\(", re.M)  # no newline in the indent: linear
_CPP_FUNCTION = re.compile(r'^extern "C"\s+[\w\s*&:<>]*?\b(?P<name>[A-Za-z_]\w*)\s*\(')
_CPP_CALL = re.compile(r"^\s*(?P<name>[A-Za-z_]\w*)\(")
_AOT_SHIM = re.compile(r"\b(?P<name>aoti_torch_(?:cpu|cuda|xpu|mps)_(?P<op>[A-Za-z_]\w*?)(?:_out)?)\(")
# On a GPU, run_impl runs each Triton kernel through a launcher the wrapper defines, `call_<kernel>`: it loads
# the kernel's cubin and launches it (`static inline void` in 2025, `static __attribute__((noinline)) void` in 2.13)
_TRITON_LAUNCHER = re.compile(r"^\s*static\s+(?:inline\s+|__attribute__\(\(\w+\)\)\s+)*void\s+"
                              r"call_(?P<name>[A-Za-z_]\w*)\s*\(")


@dataclass
class Kernel:
    name: str
    kind: str  # triton | cpp | extern | fallback | other
    start_line: int  # 1-based first line of its definition (or its call, for extern and fallback)
    end_line: int
    call_lines: list[int] = field(default_factory=list)
    source_nodes: list[str] = field(default_factory=list)
    source_origin: str | None = None  # provenance | comment | None when unknown
    aten_ops: list[str] = field(default_factory=list)
    debug_handles: list[str] = field(default_factory=list)
    file: str | None = None  # the kernel's own source file (`# kernel path:`): what tritonparse names it by

    @property
    def fused(self) -> bool:
        """A kernel Inductor generated (as opposed to a library call)."""
        return self.kind in ("triton", "cpp", "halide")

    def get_state(self) -> list:
        return [self.name, self.kind, self.start_line, self.end_line, self.call_lines, self.source_nodes,
                self.source_origin, self.aten_ops, self.debug_handles, self.file]

    @classmethod
    def from_state(cls, state: list) -> Kernel:
        name, kind, start_line, end_line, call_lines, source_nodes, origin, aten_ops, handles, file = state
        if not (type(name) is str and type(kind) is str and type(start_line) is int and type(end_line) is int
                and _ints(call_lines) and _strings(source_nodes) and origin in (None, "provenance", "comment")
                and _strings(aten_ops) and _strings(handles) and (file is None or type(file) is str)):
            raise ValueError("kernel")
        return cls(name, kind, start_line, end_line, call_lines, source_nodes, origin, aten_ops, handles, file)


@dataclass
class OutputCode:
    """The kernels of one output code, without its text: a session keeps the parse of every unit's code
    (its figures are made of it) and reads the text from the log again when a view shows it."""

    path: str | None = None
    aot_id: str | None = None
    kernels: list[Kernel] = field(default_factory=list)
    wrapper: str = "python"  # the language of the code around the kernels: AOTInductor's is C++
    # each subgraph of a higher-order op: (its `def` line, its last line, the line that runs it or None)
    subgraphs: list[tuple[int, int, int | None]] = field(default_factory=list)

    def get_state(self) -> list:
        return [self.path, self.aot_id, [kernel.get_state() for kernel in self.kernels], self.wrapper,
                [list(subgraph) for subgraph in self.subgraphs]]

    @classmethod
    def from_state(cls, state: list) -> OutputCode:
        """`get_state`'s parse again (ValueError, TypeError on a list it did not write)."""
        path, aot_id, kernels, wrapper, subgraphs = state
        if not ((path is None or type(path) is str) and (aot_id is None or type(aot_id) is str)
                and type(wrapper) is str and all(len(subgraph) == 3 and _ints(subgraph[:2])
                                                 and (subgraph[2] is None or type(subgraph[2]) is int)
                                                 for subgraph in subgraphs)):
            raise ValueError("output code")
        return cls(path, aot_id, [Kernel.from_state(kernel) for kernel in kernels], wrapper,
                   [tuple(subgraph) for subgraph in subgraphs])

    def run_order(self, line: int) -> tuple[int, ...]:
        """Where `line` falls in the order one graph call runs the code: a line of `call()` at itself, a
        line of a subgraph (written above `call()`, run from inside it) at the line that runs the
        subgraph, then at itself. The k-th launch of a kernel name is the k-th site in this order."""
        order, seen = (line,), set()
        while True:
            outer = next((run_from for start, end, run_from in self.subgraphs
                          if start <= line <= end and run_from is not None and not start <= run_from <= end), None)
            if outer is None or outer in seen:  # a log may hold anything: never loop
                return order
            seen.add(outer)
            line, order = outer, (outer, *order)

    @property
    def role(self) -> str | None:
        """`forward`, `backward` or `inference`: which AOT graph this code runs, from its AOT ID."""
        role = (self.aot_id or "").rpartition("_")[2]
        return role if role in ("forward", "backward", "inference") else None

    @property
    def language(self) -> str:
        kinds = {kernel.kind for kernel in self.kernels}
        return "triton" if "triton" in kinds else "cpp" if "cpp" in kinds else "python"


def _ints(values) -> bool:
    return type(values) is list and all(type(value) is int for value in values)


def _strings(values) -> bool:
    return type(values) is list and all(type(value) is str for value in values)


def parse_output_code(text: str, path: str | None = None, provenance: dict | None = None) -> OutputCode:
    """Split `text` into kernels; `provenance` is an ``inductor_provenance_tracking_node_mappings``."""
    if "AOTInductorModel::run_impl(" in text and _AOT_RUN.search(text):  # the substring first: far cheaper
        return _parse_aot_code(text, path, provenance)
    lines = text.split("\n")
    kernels: list[Kernel] = []
    by_name: dict[str, Kernel] = {}
    index, in_call = 0, False
    pending_nodes: re.Match | None = None
    pending_handles: list[str] = []
    pending_file: str | None = None
    subgraphs: dict[str, list] = {}  # name → [def line, last line, the line that runs it]
    open_subgraph: list | None = None
    while index < len(lines):
        line = lines[index]
        line_no = index + 1
        index += 1
        stripped = line.strip()
        if stripped and not line[0].isspace():  # a line at the top of the module ends a subgraph's body
            open_subgraph = None
            subgraph = _SUBGRAPH.match(line)
            if subgraph:
                open_subgraph = subgraphs[subgraph["name"]] = [line_no, line_no, None]
        elif stripped and open_subgraph is not None:
            open_subgraph[1] = line_no
        if in_call and stripped and subgraphs and "(" in stripped and not stripped.startswith(("#", "def ")):
            for bounds in (subgraphs.get(name) for name in _CALLED.findall(stripped)):
                if bounds is not None and bounds[2] is None:
                    bounds[2] = line_no
        if stripped.startswith("#"):
            if stripped.startswith(_KERNEL_PATH):
                pending_file = stripped[len(_KERNEL_PATH):].strip() or None
            pending_nodes = _SOURCE_NODES.search(stripped) or pending_nodes
            handles = _HANDLES.search(stripped)
            if handles:
                pending_handles = handles["handles"].split()
            continue
        definition = _DEFINITION.match(line)
        if definition:
            end = _definition_end(lines, index)
            kernel = Kernel(definition["name"], _KIND_BY_HOW.get(definition["how"], "other"), line_no, end,
                            file=pending_file)
            _apply_comment(kernel, pending_nodes)
            kernels.append(kernel)
            by_name[kernel.name] = kernel
            index = end
            pending_nodes, pending_handles, pending_file = None, [], None
            continue
        if _CALL_FUNCTION.match(line):
            in_call = True
        if in_call and stripped:
            kernel = _launched_kernel(line, line_no, by_name, kernels, pending_nodes, pending_handles)
            if kernel is not None:
                pending_nodes, pending_handles = None, []
        if not stripped:
            pending_nodes = pending_file = None
    match = _AOT_ID.search(text)
    aot_id = match["ids"].strip().strip("'\"") if match else None
    code = OutputCode(path=path, aot_id=aot_id, kernels=kernels,
                      subgraphs=[tuple(bounds) for bounds in subgraphs.values()])
    if provenance:
        apply_provenance(code, provenance)
    return code


def _parse_aot_code(text: str, path: str | None, provenance: dict | None) -> OutputCode:
    """AOTInductor's C++ (wrapper, then kernel code): each `extern "C"` kernel at its definition (or
    its declaration, when the kernel code is absent), each Triton kernel at its launcher (on a GPU the
    kernel code is compiled to cubins and logged empty), with the lines run_impl calls it from, and each
    library shim run_impl calls, with the source nodes and debug handles of the comments above."""
    lines = text.split("\n")
    by_name: dict[str, Kernel] = {}  # by the name run_impl calls it with
    for index, line in enumerate(lines):
        launcher = _TRITON_LAUNCHER.match(line) if "call_" in line else None
        if launcher:
            end, _ = _cpp_function_end(lines, index)
            by_name[f"call_{launcher['name']}"] = Kernel(launcher["name"], "triton", index + 1, end)
            continue
        function = _CPP_FUNCTION.match(line)
        if not function:
            continue
        end, has_body = _cpp_function_end(lines, index)
        known = by_name.get(function["name"])
        if known is None or (has_body and known.start_line == known.end_line):
            by_name[function["name"]] = Kernel(function["name"], "cpp", index + 1, end if has_body else index + 1)
    kernels = list(by_name.values())
    run = _AOT_RUN.search(text)
    start = text.count("\n", 0, run.start()) if run else len(lines)
    end, _ = _cpp_function_end(lines, start)
    pending_nodes, pending_handles = None, []
    for index in range(start + 1, min(end, len(lines))):
        stripped = lines[index].strip()
        if stripped.startswith("//"):
            pending_nodes = _SOURCE_NODES.search(stripped) or pending_nodes
            handles = _HANDLES.search(stripped)
            pending_handles = handles["handles"].split() if handles else pending_handles
            continue
        call, shim = _CPP_CALL.match(lines[index]), _AOT_SHIM.search(stripped)
        if call and call["name"] in by_name:
            kernel = by_name[call["name"]]
            kernel.call_lines.append(index + 1)
        elif shim:
            kernel = Kernel(shim["name"], "extern", index + 1, index + 1, [index + 1], aten_ops=[f"aten.{shim['op']}"])
            kernels.append(kernel)
        else:
            continue
        kernel.debug_handles.extend(handle for handle in pending_handles if handle not in kernel.debug_handles)
        if not kernel.source_nodes:
            _apply_comment(kernel, pending_nodes)
        pending_nodes, pending_handles = None, []
    code = OutputCode(path=path, kernels=[kernel for kernel in kernels if kernel.kind != "cpp" or kernel.call_lines
                                                     or kernel.end_line > kernel.start_line], wrapper="cpp")
    if provenance:
        apply_provenance(code, provenance)
    return code


def _cpp_function_end(lines: list[str], index: int) -> tuple[int, bool]:
    """The 1-based last line of the C++ function starting at `index`, and whether it has a body (a
    declaration ends at its `;`). Braces are counted as written, comments left out (kernels hold no
    braces in strings; the Python source a Triton launcher holds in a /* … */ comment has its braces
    in pairs)."""
    depth, opened = 0, False
    for probe in range(index, len(lines)):
        for char in lines[probe].split("//", 1)[0]:
            if char == "{":
                depth, opened = depth + 1, True
            elif char == "}":
                depth -= 1
            elif char == ";" and not opened:
                return probe + 1, False
        if opened and depth <= 0:
            return probe + 1, True
    return len(lines), opened


def _definition_end(lines: list[str], index: int) -> int:
    """Line number that closes the kernel's source string (the definition's last line)."""
    for probe in range(index, len(lines)):
        line = lines[probe]
        if ("'''" in line or '"""' in line) and _STRING_END.match(line):
            return probe + 1
    return len(lines)


def _launched_kernel(line: str, line_no: int, by_name: dict[str, Kernel], kernels: list[Kernel],
                     pending_nodes: re.Match | None, handles: list[str]) -> Kernel | None:
    if "(" not in line:  # every kind of launch is a call
        return None
    extern = _EXTERN.search(line) if "extern_kernels." in line else None
    if extern:
        kernel = Kernel(f"extern_kernels.{extern['op']}", "extern", line_no, line_no, [line_no])
    else:
        launch = _LAUNCH.match(line)
        if launch and launch["name"] in by_name:
            kernel = by_name[launch["name"]]
            kernel.call_lines.append(line_no)
            kernel.debug_handles.extend(h for h in handles if h not in kernel.debug_handles)
            if not kernel.source_nodes:
                _apply_comment(kernel, pending_nodes)
            return kernel
        fallback = _FALLBACK.match(line)
        if not fallback:
            return None
        kernel = Kernel(fallback["op"], "fallback", line_no, line_no, [line_no])
    kernel.debug_handles = list(handles)
    _apply_comment(kernel, pending_nodes)
    kernels.append(kernel)
    return kernel


def _apply_comment(kernel: Kernel, comment: re.Match | None) -> None:
    if comment is None:
        return
    kernel.source_nodes = _names(comment["nodes"])
    kernel.aten_ops = _names(comment["aten"] or "")
    kernel.source_origin = "comment"


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def apply_provenance(code: OutputCode, provenance: dict) -> None:
    """Replace comment-derived source nodes with the exact post-grad nodes from provenance tracking.

    Keys are ``kernel:debug_handle`` (torch ≥ 2.8) or bare kernel names (older logs, where all calls of
    one extern kernel share a key)."""
    mapping = provenance.get("cppCodeToPost") or provenance.get("tritonCodeToPost") or {}
    if not isinstance(mapping, dict):
        return
    keys_of: dict[str, list[str]] = {}  # kernel name → its keys, in the mapping's order
    for key in mapping:
        keys_of.setdefault(key.split(":")[0], []).append(key)
    for kernel in code.kernels:
        keys = [handle for handle in kernel.debug_handles if handle in mapping]
        if not keys:
            keys = keys_of.get(kernel.name, [])
            if kernel.kind in ("extern", "fallback") and len(keys) > 1:
                continue  # several calls of one library kernel: a handle is needed to tell them apart
        nodes = dict.fromkeys(node for key in keys if isinstance(mapping.get(key), list)
                              for node in mapping[key] if isinstance(node, str))  # each once, in order
        if nodes:
            kernel.source_nodes = list(nodes)
            kernel.source_origin = "provenance"
