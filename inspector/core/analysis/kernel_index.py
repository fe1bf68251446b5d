"""Joins kernels to where they came from: the FX nodes each kernel was made from, with the user's
source line of each node, the names a kernel runs under in a profile (`aten::op` for library calls),
and what compiling it cost. Their profiled time, per launch and call site, is source_time.py's."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CodeArtifact, CompileUnit, base_stage
from inspector.core.numbers import seconds

# The compile stage in which Inductor benchmarks a Triton kernel's configs; its args name the kernel.
AUTOTUNE_STAGE = "CachingAutotuner.benchmark_all_configs"

# Graphs whose node names kernels refer to: provenance names post-grad nodes, comments name the
# nodes of the graph Dynamo captured (as Inductor saw it before its own passes).
NODE_STAGES = {"provenance": ("post_grad", "after_post_grad_graph", "aot_inference", "aot_forward"),
               "comment": ("before_pre_grad_graph", "dynamo", "after_pre_grad_graph")}


@dataclass(frozen=True)
class NodeOrigin:
    name: str
    target: str
    file: str | None
    line: int | None
    code: str | None


def aten_name(kernel_name: str) -> str:
    """`extern_kernels.addmm` and `aten.addmm.default` run as `aten::addmm` in the profiler."""
    if kernel_name.startswith("extern_kernels."):
        return "aten::" + kernel_name.split(".", 1)[1]
    if kernel_name.startswith("aten."):
        return "aten::" + kernel_name.split(".")[1]
    return kernel_name


@dataclass(frozen=True)
class KernelCompile:
    """What compiling one Triton kernel cost, as torch recorded it: its compile (`triton_kernel_info`,
    written on a GPU) and the benchmarking of its configs (the AUTOTUNE_STAGE spans)."""

    compile_s: float | None = None  # compiling the kernel, every config of it
    autotune_s: float | None = None  # benchmarking its configs to choose one
    cache_state: str | None = None  # the autotune cache: hit, miss, only 1 config, force_disabled
    configs: int | None = None  # how many configs there were to choose from
    config: dict | None = None  # the one it runs with, where torch names it (cached best, or the only one)

    def described(self) -> str:
        """In words, for a tooltip or a line of the summary: "compiled in 1.74 s; autotune cache miss;
        2 configs benchmarked for 111 ms"."""
        said = [f"compiled in {seconds(self.compile_s)}"] if self.compile_s is not None else []
        if self.cache_state == "only 1 config":
            said.append("one config: nothing to tune")
        elif self.cache_state is not None:
            said.append(f"autotune cache {self.cache_state}")
        configs = f"{self.configs} configs" if self.configs is not None else "configs"
        if self.autotune_s is not None:
            said.append(f"{configs} benchmarked for {seconds(self.autotune_s)}")
        elif self.configs is not None:
            said.append(configs)
        if self.config:
            said.append("runs with " + ", ".join(f"{key}={value}" for key, value in self.config.items()))
        return "; ".join(said)


def kernel_compiles(unit: CompileUnit) -> dict[tuple[int, str], KernelCompile]:
    """(index of the unit's output code, kernel name) → what compiling that kernel cost (kernels torch
    recorded nothing of are left out). By code too: Inductor numbers each graph's kernels from 0, so a
    forward and its backward can both hold a `triton_poi_fused_mul_0`."""
    tuned = [(span.args.get("is_backward") is True, name, span.duration_us() / 1e6)
             for root in unit.spans for span in root.walk()
             if span.name == AUTOTUNE_STAGE and isinstance(name := span.args.get("kernel_name"), str)
             and not span.is_open]
    if not tuned and not unit.kernel_info:  # every CPU log: no output code is looked at
        return {}
    roles = [code.code.role for code in unit.output_code]
    backward = roles.index("backward") if "backward" in roles else None
    forward = next((index for index, role in enumerate(roles) if role != "backward"), 0)
    autotune: dict[tuple[int, str], float] = {}
    for is_backward, name, seconds_tuned in tuned:
        key = (backward if is_backward and backward is not None else forward, name)
        autotune[key] = autotune.get(key, 0.0) + seconds_tuned
    compiles = {}
    for key in dict.fromkeys([*unit.kernel_info, *autotune]):
        info = unit.kernel_info.get(key, {})
        compile_us, state = _amount(info.get("compile_time_us")), info.get("autotune_cache_state")
        configs = info.get("num_configs")
        compiles[key] = KernelCompile(
            compile_us / 1e6 if compile_us is not None else None, autotune.get(key),
            state if isinstance(state, str) and len(state) <= STATE_CHARS else None,
            configs if type(configs) is int and configs >= 0 else None,
            _config(info.get("best_config") or info.get("only_config")))
    return compiles


def code_compiles(unit: CompileUnit, artifact: CodeArtifact) -> dict[str, KernelCompile]:
    """Kernel name → what compiling it cost, for the kernels of `artifact`, one of `unit`'s output codes."""
    index = next((at for at, code in enumerate(unit.output_code) if code is artifact), None)
    return {name: facts for (at, name), facts in kernel_compiles(unit).items() if at == index}


STATE_CHARS = 40  # an autotune cache state is a word or three (hit, miss, only 1 config): so is a config's key or value
CONFIG_ITEMS = 16  # a Triton config's block sizes, warps and stages: more is not a config


def _amount(value) -> float | None:
    """A count or duration as a log may hold it: finite and not negative (a bool is no number here)."""
    if type(value) not in (int, float) or not 0 <= value < float("inf"):
        return None
    return value


def _config(value) -> dict | None:
    """A Triton config as torch logs it (a dict, or its hashable form, a list of [key, value] pairs):
    its short scalar settings, or None for anything else."""
    if isinstance(value, list) and len(value) <= CONFIG_ITEMS and all(
            isinstance(pair, list) and len(pair) == 2 for pair in value):
        value = {str(key): item for key, item in value}
    if not isinstance(value, dict) or not 0 < len(value) <= CONFIG_ITEMS:
        return None
    return {str(key): item for key, item in value.items()
            if len(str(key)) <= STATE_CHARS and isinstance(item, (int, float, str)) and len(str(item)) <= STATE_CHARS}


def kernel_nodes(unit: CompileUnit, kernel: Kernel) -> list[NodeOrigin]:
    """The FX nodes `kernel` came from, found in the graph its source names refer to."""
    stages = NODE_STAGES.get(kernel.source_origin or "", ())
    graphs = [artifact.graph for name, artifact in unit.graphs.items() if base_stage(name) in stages]
    origins = []
    for name in kernel.source_nodes:
        node = next((graph.node(name) for graph in graphs if graph.node(name) is not None), None)
        if node is None:
            origins.append(NodeOrigin(name, "?", None, None, None))
            continue
        source = node.source
        origins.append(NodeOrigin(name, node.target, source.file if source else None,
                                  source.line if source else None, source.code if source else None))
    return origins


def kernels_of_node(unit: CompileUnit, node_name: str, stage: str | None = None) -> list[Kernel]:
    """The other direction: the kernels an FX node ended up in. With `stage`, only kernels whose node
    names refer to that stage's graph: a post-grad `mul_3` is not the Dynamo graph's `mul_3`."""
    return kernels_by_node(unit, stage).get(node_name, []) if stage else \
        [kernel for kernel in unit.kernels if node_name in kernel.source_nodes]


def names_stage(kernel: Kernel, stage: str) -> bool:
    """Whether `kernel`'s source node names are names of the graph at `stage`."""
    return base_stage(stage) in NODE_STAGES.get(kernel.source_origin or "", ())


def naming_stage(unit: CompileUnit, kernel: Kernel) -> str | None:
    """The first of `unit`'s graphs whose node names `kernel`'s source names are (None when the log
    holds none of them), as the stage list names it."""
    stages = NODE_STAGES.get(kernel.source_origin or "", ())
    return next((name for name in unit.graphs if base_stage(name) in stages), None)


def kernels_by_node(unit: CompileUnit, stage: str) -> dict[str, list[Kernel]]:
    """Node name → the kernels made from it, for the graph at `stage` only (in kernel order)."""
    by_node: dict[str, list[Kernel]] = {}
    for kernel in unit.kernels:
        if names_stage(kernel, stage):
            for name in dict.fromkeys(kernel.source_nodes):
                by_node.setdefault(name, []).append(kernel)
    return by_node
