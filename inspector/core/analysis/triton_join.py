"""A tritonparse trace joined to the open run: which compile unit and which kernel of its output code
each compilation in the trace is, so a kernel chosen in the run's views can show its Triton IR and a
compilation in the trace can show where the run launched it.

Three keys, strongest first:
- the kernel's file: Inductor writes each Triton kernel to a file of its own and names it in the output
  code (`# kernel path: …`); tritonparse records the file it compiled (`python_source.file_path`);
- the compile unit and the name: tritonparse's `pt_info` names the frame and compile of the unit that
  compiled the kernel, and a unit's kernel names are unique within it;
- the name alone, where exactly one kernel of the run has it (a trace without `pt_info`).
A compilation no key finds is of another run, or of code the run did not compile (a user's own
`@triton.jit` kernel); it is listed as such, never guessed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CompileUnit, Session
from inspector.core.readers.tritonparse_trace import TritonKernel, TritonTrace

BY_FILE, BY_UNIT_AND_NAME, BY_NAME = "kernel file", "compile unit and name", "name (the only kernel of the run so named)"


@dataclass(frozen=True)
class JoinedKernel:
    """A compilation of the trace and the kernel of the run it is."""

    compilation: TritonKernel
    unit: CompileUnit
    kernel: Kernel
    matched_by: str


@dataclass
class TritonJoin:
    joined: list[JoinedKernel]
    not_in_run: list[TritonKernel]  # compilations no key finds in the run

    def of_compilation(self, compilation: TritonKernel) -> JoinedKernel | None:
        return next((join for join in self.joined if join.compilation is compilation), None)

    def of_kernel(self, unit: CompileUnit, kernel: Kernel) -> JoinedKernel | None:
        """The (first) compilation of `kernel`: an autotuned kernel compiles once per config."""
        return next((join for join in self.joined if join.kernel is kernel and join.unit is unit), None)


def join_triton(session: Session, trace: TritonTrace) -> TritonJoin:
    """Each compilation of `trace` matched to a Triton kernel of `session` (see the module)."""
    by_file: dict[str, tuple[CompileUnit, Kernel]] = {}
    by_unit: dict[tuple[int, int, str], tuple[CompileUnit, Kernel]] = {}
    by_name: dict[str, list[tuple[CompileUnit, Kernel]]] = defaultdict(list)
    for unit in session.units:
        for kernel in unit.kernels:
            if kernel.kind != "triton":
                continue
            if kernel.file:
                by_file.setdefault(kernel.file, (unit, kernel))
            by_unit.setdefault((unit.compile_id.frame, unit.compile_id.compile, kernel.name), (unit, kernel))
            by_name[kernel.name].append((unit, kernel))
    joined, not_in_run = [], []
    for compilation in trace.kernels:
        found, how = by_file.get(compilation.python_file or ""), BY_FILE
        if found is None and compilation.compile_id:
            frame, _, compile_ = compilation.compile_id.partition("/")
            found, how = by_unit.get((int(frame), int(compile_), compilation.name)), BY_UNIT_AND_NAME
        if found is None and not compilation.compile_id and len(by_name.get(compilation.name, [])) == 1:
            found, how = by_name[compilation.name][0], BY_NAME
        if found is None:
            not_in_run.append(compilation)
        else:
            joined.append(JoinedKernel(compilation, found[0], found[1], how))
    return TritonJoin(joined, not_in_run)
