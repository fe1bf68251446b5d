"""What counts as an op and as a kernel in an HLO module, so K = N_ops / N_kernels means the same for
every dump (and beside torch.compile's K).

- Program computations are the entry computation and those it runs as program code: bodies and
  conditions of `while`, branches of `conditional`, the callee of `call` and of `async-start`.
  Computations named by `to_apply` of any other op (the scalar reducer of a `reduce`, a sort's
  comparator) are part of that op, and fusion computations are the inside of one kernel.
- An op is an instruction of a program computation that computes something: everything except
  BOOKKEEPING (parameters, constants, tuples, get-tuple-element, bitcasts, dependency tokens) and the
  control ops above, whose bodies are counted instead.
- After optimisation, each op of a program computation is one kernel (one launch on GPU, one emitted
  function or library call on CPU): a `fusion` counts once however many ops it holds; a `custom-call`
  (cuBLAS, oneDNN, YNNPACK) and an unfused op count once too.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model.hlo_text import CONTROL_OPCODES, HloComputation, HloInstruction, HloModule

BOOKKEEPING = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all", "add-dependency",
               "opt-barrier", "domain", "partition-id", "replica-id", "async-done", "async-update"}
_PROGRAM_ROLES = ("body", "condition", "branch_computations", "true_computation", "false_computation",
                  "to_apply", "calls")


def is_op(instruction: HloInstruction) -> bool:
    return instruction.opcode not in BOOKKEEPING and instruction.opcode not in CONTROL_OPCODES


def program_computations(module: HloModule) -> list[HloComputation]:
    """The entry computation and every computation it runs as program code, entry first."""
    entry = module.entry
    if entry is None:
        return []
    found, queue = [entry], [entry]
    while queue:
        for instruction in queue.pop(0).instructions:
            if instruction.opcode not in CONTROL_OPCODES:
                continue
            for role in _PROGRAM_ROLES:
                for name in instruction.called.get(role, []):
                    computation = module.computations.get(name)
                    if computation is not None and computation not in found:
                        found.append(computation)
                        queue.append(computation)
    return found


def program_ops(module: HloModule) -> list[HloInstruction]:
    return [i for computation in program_computations(module) for i in computation.instructions if is_op(i)]


@dataclass(frozen=True)
class HloKernel:
    """One kernel of an optimised module: a fusion with the ops inside it, or one unfused op."""

    name: str
    opcode: str  # "fusion", "custom-call", or the unfused op's opcode
    fusion_kind: str | None
    computation: str | None  # the fusion computation it runs
    ops: tuple[HloInstruction, ...]  # the ops it computes (the op itself when unfused)

    @property
    def fused(self) -> bool:
        """Several ops in one kernel (a fusion around a single op is that op wrapped, not fused)."""
        return len(self.ops) > 1


def module_kernels(module: HloModule) -> list[HloKernel]:
    kernels = []
    for instruction in program_ops(module):
        if instruction.opcode == "fusion":
            inner = fusion_ops(module, instruction)
            kernels.append(HloKernel(instruction.name, "fusion", instruction.fusion_kind,
                                     (instruction.called.get("calls") or [None])[0], tuple(inner)))
        else:
            kernels.append(HloKernel(instruction.name, instruction.opcode, None, None, (instruction,)))
    return kernels


def fusion_ops(module: HloModule, fusion: HloInstruction, depth: int = 0) -> list[HloInstruction]:
    """The ops a fusion computes, through nested fusions (bounded, in case a damaged dump loops)."""
    ops: list[HloInstruction] = []
    for name in fusion.called.get("calls", []):
        computation = module.computations.get(name)
        for instruction in computation.instructions if computation else []:
            if instruction.opcode == "fusion" and depth < 8:
                ops += fusion_ops(module, instruction, depth + 1)
            elif is_op(instruction):
                ops.append(instruction)
    return ops
