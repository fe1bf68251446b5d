"""The five steps people think of — graph capture, graph optimisation, code generation, backend
compile, benchmark — and which of torch's many stage names belong to each. The live stage strip and
the timeline both group by these; the mapping lives here so both say the same."""

from __future__ import annotations

PIPELINE = ("graph capture", "graph optimisation", "code generation", "backend compile", "benchmark")

_EXACT = {
    "dynamo": "graph capture", "entire_frame_compile": "graph capture", "bytecode_tracing": "graph capture",
    "build_guards": "graph capture", "compile_attempt_0": "graph capture",
    "backend_compile": "graph optimisation", "create_aot_dispatcher_function": "graph optimisation",
    "_recursive_pre_grad_passes": "graph optimisation", "_recursive_joint_graph_passes": "graph optimisation",
    "_recursive_post_grad_passes": "graph optimisation", "aot_trace_joint_graph": "graph optimisation",
    "inductor_compile": "code generation", "fx_codegen_and_compile": "code generation",
    "GraphLowering.run": "code generation", "GraphLowering.compile_to_fn": "code generation",
    "code_gen": "code generation",
    "compile_file": "backend compile", "async_compile.wait": "backend compile",
    "PyCodeCache.load_by_key_path": "backend compile", "TritonBundler.read_and_emit": "backend compile",
    "triton_compile": "backend compile",
}
_PREFIXES = (("compile_attempt_", "graph capture"), ("pass.", "graph optimisation"),
             ("Scheduler.", "code generation"), ("GraphLowering.", "code generation"),
             ("async_compile.", "backend compile"), ("autotune", "backend compile"))
# Runner phases (progress stream) that make the last step: measuring the compiled model. The eager
# baseline runs before compiling and is not part of it.
BENCHMARK_PHASES = ("benchmark", "profile")


def pipeline_step(stage_name: str) -> str | None:
    """The pipeline step a torch stage belongs to, or None for stages outside the pipeline."""
    step = _EXACT.get(stage_name)
    if step:
        return step
    for prefix, prefixed_step in _PREFIXES:
        if stage_name.startswith(prefix):
            return prefixed_step
    if "inductor" in stage_name.lower():
        return "code generation"
    return None
