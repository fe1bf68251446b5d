"""Open a folder written with ``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text`` (by JAX or
torch_xla): one module per compiled program, with its HLO before and after optimisation, the kernels
it became and K = N_ops / N_kernels. Needs neither jax nor XLA: the dump is read as text.

A damaged dump (a run killed mid-write, a missing file, bytes that are not UTF-8) opens with what is
readable and counts what was not in `XlaDump.problems`, as torch logs do."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.model.hlo_kernels import HloKernel, module_kernels, program_ops
from inspector.core.model.hlo_text import HloModule, parse_hlo_module
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.safe_files import MAX_TEXT_BYTES, UnsafeFile, is_readable_file, read_bytes
from inspector.core.readers.input_kind import InputKind, Match

# module_0008.jit_f.before_optimizations.txt, module_0008.jit_f.cpu_after_optimizations.txt,
# module_0001.jit_f.sm_8.0_gpu_after_optimizations.txt, module_0000.SyncTensorsGraph.12.after_optimizations.txt
_DUMP_FILE = re.compile(r"^module_(?P<id>\d+)\.(?P<name>.+?)\."
                        r"(?:(?P<before>before_optimizations)|(?:(?P<platform>[\w.]+?)_)?after_optimizations)\.txt$")


@dataclass
class XlaModule:
    id: str
    name: str
    platform: str | None = None  # cpu, gpu, sm_8.0_gpu … (from the after-optimisation file name)
    before: HloModule | None = None
    after: HloModule | None = None
    before_file: Path | None = None
    after_file: Path | None = None
    kernels: list[HloKernel] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"module_{self.id}.{self.name}"

    @property
    def n_ops(self) -> int | None:
        """Ops before optimisation (see hlo_kernels for what counts)."""
        return len(program_ops(self.before)) if self.before is not None and self.before.entry is not None else None

    @property
    def n_kernels(self) -> int | None:
        return len(self.kernels) if self.after is not None and self.after.entry is not None else None

    @property
    def fusion_ratio(self) -> float | None:
        """K = N_ops / N_kernels."""
        return self.n_ops / self.n_kernels if self.n_ops is not None and self.n_kernels else None

    @property
    def fusions(self) -> list[HloKernel]:
        """Fusion kernels, the most ops inside first."""
        return sorted((k for k in self.kernels if k.opcode == "fusion"), key=lambda k: -len(k.ops))


@dataclass
class XlaDump:
    source: Path
    modules: list[XlaModule] = field(default_factory=list)
    problems: ReadProblems = field(default_factory=ReadProblems)

    def module(self, name_or_id: str) -> XlaModule | None:
        return next((m for m in self.modules if name_or_id in (m.id, m.name, m.label)), None)

    @property
    def main_module(self) -> XlaModule | None:
        """The biggest program in the dump (jax also dumps the tiny programs of array creation)."""
        return max(self.modules, key=lambda m: (m.n_ops or 0, m.n_kernels or 0), default=None)


def dump_files(path: Path) -> list[Path]:
    path = Path(path)
    if not path.is_dir():
        return []
    return sorted(file for file in path.iterdir() if _DUMP_FILE.match(file.name) and is_readable_file(file, path))


def looks_like_xla_dump(path: str | Path) -> bool:
    """A folder holding HLO text of XLA modules (a file of one, too: its folder is opened)."""
    path = Path(path)
    if path.is_file() and _DUMP_FILE.match(path.name):
        return True
    return bool(dump_files(path))


def open_xla_dump(path: str | Path) -> XlaDump:
    path = Path(path).expanduser()
    if path.is_file():
        path = path.parent
    dump = XlaDump(path)
    by_id: dict[str, XlaModule] = {}
    for file in dump_files(path):
        match = _DUMP_FILE.match(file.name)
        module = by_id.setdefault(match["id"], XlaModule(match["id"], match["name"]))
        parsed = _read_module(file, path, dump.problems)
        if match["before"]:
            module.before, module.before_file = parsed, file
        else:
            module.after, module.after_file, module.platform = parsed, file, match["platform"]
    for key in sorted(by_id):
        module = by_id[key]
        if module.after is not None:
            module.kernels = module_kernels(module.after)
        if module.before is None or module.after is None:
            missing = "before" if module.before is None else "after"
            dump.problems.add("missing_hlo", f"{module.label}: no HLO {missing} optimisation")
        dump.modules.append(module)
    return dump


def _read_module(file: Path, root: Path, problems: ReadProblems) -> HloModule | None:
    try:
        data = read_bytes(file, MAX_TEXT_BYTES, root)
    except UnsafeFile as error:
        problems.add("unsafe_file", str(error))
        return None
    except OSError as error:
        problems.add("unreadable_file", f"{file}: {error}")
        return None
    if not data.strip():
        problems.add("empty_file", file.name)
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        problems.add("non_utf8", file.name)
    module = parse_hlo_module(text)
    for line_no, line in module.unreadable:
        problems.add("unreadable_hlo_lines", f"{file.name}:{line_no}: {line[:120]}")
    if module.truncated:
        problems.add("truncated_hlo", file.name)
    return module


XLA_DUMP = InputKind("xla_dump", "an XLA dump (--xla_dump_to with --xla_dump_hlo_as_text)",
                     lambda path: Match(path) if looks_like_xla_dump(path) else None,
                     lambda source, progress: open_xla_dump(source.path), opens_session=False, shown_in="xla",
                     elsewhere="`compile-inspector summary` and `diff` read it, and the app opens it in the XLA tab")
