"""A tritonparse trace joined to the open run: which compile unit and which kernel of its output code
each compilation in the trace is, so a kernel chosen in the run's views can show its Triton IR and a
compilation in the trace can show where the run launched it.

Three keys, strongest first:
- the kernel's file: Inductor writes each Triton kernel to a file of its own and names it in the output
  code (`# kernel path: …`); tritonparse records the file it compiled (`python_source.file_path`).
  The file is named by the kernel's content, so units that made the same kernel share it: the unit
  `pt_info` names then tells them apart;
- the compile unit and the name: tritonparse's `pt_info` names the frame and compile of the unit that
  compiled the kernel (a unit's forward and backward code may both name a kernel so);
- the name alone, for a trace without `pt_info`.
Only the kernels of the trace's rank count, where its file name gives one (`…_rank_3…`). A key that
finds several kernels (ranks of a job, a forward and a backward) or none joins nothing: the compilation
is listed with why, never guessed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from inspector.core.model.compile_id import CompileId
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CompileUnit, Session
from inspector.core.readers.torch_trace import rank_from_filename
from inspector.core.readers.tritonparse_trace import TritonKernel, TritonTrace

BY_FILE, BY_UNIT_AND_NAME, BY_NAME = "kernel file", "compile unit and name", "name"
NOT_IN_RUN = "not a kernel of the open run"


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
    not_joined: list[tuple[TritonKernel, str]]  # compilations no key finds once in the run, and why
    _by_compilation: dict[int, JoinedKernel] = field(default_factory=dict, repr=False)
    _by_kernel: dict[tuple[int, int], JoinedKernel] = field(default_factory=dict, repr=False)
    _why_not: dict[int, str] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        for item in self.joined:  # by identity: a trace may hold thousands of compilations, equal ones too
            self._by_compilation[id(item.compilation)] = item
            self._by_kernel.setdefault((id(item.unit), id(item.kernel)), item)
        self._why_not.update((id(compilation), why) for compilation, why in self.not_joined)

    def of_compilation(self, compilation: TritonKernel) -> JoinedKernel | None:
        return self._by_compilation.get(id(compilation))

    def why_not(self, compilation: TritonKernel) -> str | None:
        """Why `compilation` is joined to no kernel of the run (None when it is)."""
        return self._why_not.get(id(compilation))

    def of_kernel(self, unit: CompileUnit, kernel: Kernel) -> JoinedKernel | None:
        """The (first) compilation of `kernel`: an autotuned kernel compiles once per config."""
        return self._by_kernel.get((id(unit), id(kernel)))


def join_triton(session: Session, trace: TritonTrace) -> TritonJoin:
    """Each compilation of `trace` matched to a Triton kernel of `session` (see the module)."""
    rank = rank_from_filename(trace.path)
    by_file: dict[str, list[tuple[CompileUnit, Kernel]]] = defaultdict(list)
    by_unit: dict[tuple[int, int, str], list[tuple[CompileUnit, Kernel]]] = defaultdict(list)
    by_name: dict[str, list[tuple[CompileUnit, Kernel]]] = defaultdict(list)
    for unit in session.units:
        if rank is not None and unit.rank not in (None, rank):
            continue
        for kernel in unit.kernels:
            if kernel.kind != "triton":
                continue
            if kernel.file:
                by_file[kernel.file].append((unit, kernel))
            by_unit[(unit.compile_id.frame, unit.compile_id.compile, kernel.name)].append((unit, kernel))
            by_name[kernel.name].append((unit, kernel))
    joined, not_joined = [], []
    for compilation in trace.kernels:
        unit_key = _unit_key(compilation)
        found, how = by_file.get(compilation.python_file or "", []), BY_FILE
        if len(found) > 1 and unit_key is not None:  # units that made the same kernel: pt_info's unit
            found = [(unit, kernel) for unit, kernel in found
                     if (unit.compile_id.frame, unit.compile_id.compile) == unit_key]
        if not found and unit_key is not None:
            found, how = by_unit.get((*unit_key, compilation.name), []), BY_UNIT_AND_NAME
        if not found and unit_key is None:
            found, how = by_name.get(compilation.name, []), BY_NAME
        if len(found) == 1:
            joined.append(JoinedKernel(compilation, found[0][0], found[0][1], how))
        else:
            not_joined.append((compilation, _why_not(found, how)))
    return TritonJoin(joined, not_joined)


def _unit_key(compilation: TritonKernel) -> tuple[int, int] | None:
    compile_id = CompileId.parse(compilation.compile_id) if compilation.compile_id else None
    return (compile_id.frame, compile_id.compile) if compile_id is not None else None


def _why_not(found: list[tuple[CompileUnit, Kernel]], how: str) -> str:
    if not found:
        return NOT_IN_RUN
    where = ", ".join(sorted({(f"rank {unit.rank} " if unit.rank is not None else "") + str(unit.compile_id)
                              for unit, _ in found}))
    return f"{len(found)} kernels of the open run have its {how} ({where}): not told apart"
