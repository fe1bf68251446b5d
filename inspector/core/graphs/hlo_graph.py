"""An HLO module as the graph the graph view draws (FxGraph nodes plus a group path per node): the
entry computation at the top, each fusion a group holding the ops it fused, each while body, branch
or called computation a group of its own — so fusions fold and open like modules of an FX graph.

Inside a fusion, its parameters are wired to the fusion's operands and its constants left out (they
are scalars folded into the kernel); users of a fusion are wired to the op that produces its result."""

from __future__ import annotations

from inspector.core.model.fx_graph_text import FxGraph, FxNode
from inspector.core.model.source_location import SourceLocation
from inspector.core.model.hlo_kernels import BOOKKEEPING, program_computations
from inspector.core.model.hlo_text import CONTROL_OPCODES, HloInstruction, HloModule

_MAX_NESTING = 8


def hlo_graph(module: HloModule) -> tuple[FxGraph, dict[str, tuple[str, ...]]]:
    """The module's program as an FxGraph and each node's group path (for graph_hierarchy.build_groups)."""
    graph = FxGraph(name=module.name)
    paths: dict[str, tuple[str, ...]] = {}
    programs = program_computations(module)
    entry = programs[0] if programs else None
    for computation in programs:
        path = () if computation is entry else (computation.name,)
        _add_computation(module, computation.instructions, path, {}, graph, paths, 0)
    return graph, paths


def _add_computation(module: HloModule, instructions: list[HloInstruction], path: tuple[str, ...],
                     wiring: dict[str, str], graph: FxGraph, paths: dict[str, tuple[str, ...]],
                     depth: int) -> str | None:
    """Add `instructions` under `path`; `wiring` maps names to the node that stands for them (fusion
    parameters → the fusion's operands). Returns the node that stands for the computation's root."""
    root = None
    for instruction in instructions:
        wired = [wiring.get(name, name) for name in instruction.operands]  # None: a constant left out
        inputs = [name for name in wired if name is not None]
        if instruction.opcode == "fusion" and depth < _MAX_NESTING:
            inner = _fusion_instructions(module, instruction)
            inner_wiring = {i.name: None for i in inner if i.opcode == "constant"}  # left out: no edge
            inner_wiring.update({i.name: wired[i.parameter_index] for i in inner
                                 if i.parameter_index is not None and i.parameter_index < len(wired)})
            produced = _add_computation(module, [i for i in inner if i.opcode not in ("parameter", "constant")],
                                        path + (instruction.name,), inner_wiring, graph, paths, depth + 1)
            wiring[instruction.name] = produced or instruction.name
        elif depth and instruction.opcode in ("parameter", "constant"):
            continue
        else:
            graph.add(_node(instruction, inputs))
            paths[instruction.name] = path
        if instruction.is_root:
            root = wiring.get(instruction.name, instruction.name)
    if root is None and instructions:
        root = wiring.get(instructions[-1].name, instructions[-1].name)
    return root


def _fusion_instructions(module: HloModule, fusion: HloInstruction) -> list[HloInstruction]:
    names = fusion.called.get("calls", [])
    computation = module.computations.get(names[0]) if names else None
    return computation.instructions if computation else []


def _node(instruction: HloInstruction, inputs: list[str]) -> FxNode:
    if instruction.opcode == "parameter":
        op = "placeholder"
    elif instruction.opcode in BOOKKEEPING or instruction.opcode in CONTROL_OPCODES:
        op = "get_attr"
    else:
        op = "call_function"
    source = instruction.source
    return FxNode(
        name=instruction.name, op=op, target=instruction.opcode, args=instruction.op_name or "",
        inputs=inputs, annotation=instruction.shape, dtype=instruction.dtype, shape=instruction.dims,
        source=SourceLocation(source.file, source.line, source.function, "") if source and source.file else None,
        line_no=instruction.line_no)
