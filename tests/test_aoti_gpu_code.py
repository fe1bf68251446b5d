"""AOTInductor on a GPU: the wrapper is C++ and each Triton kernel is run through a launcher the wrapper
defines (`call_<kernel>`), its cubin loaded from disk; the kernel code is logged empty. The outline must
name the Triton kernels there, with the lines run_impl launches them from and their FX nodes. And what
compiling each Triton kernel cost (torch's `triton_kernel_info`, the stages that benchmark its configs)
shows beside it, on the real CUDA log of the corpus.

No machine here has a GPU, so the wrapper below is written as torch's `CppWrapperGpu` writes it (the
launcher's signature, its Triton source in a comment, its grid, cubin load and launch), in the form of
torch 2.13 and in the 2025 form of the public tlparse fixture `inductor_provenance_aot_cuda_log.txt`."""

from __future__ import annotations

import json
import re

import pytest

from conftest import open_and_wait
from inspector.core.analysis.kernel_index import AUTOTUNE_STAGE, KernelCompile, code_compiles, kernel_compiles
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.compile_id import CompileId
from inspector.core.model.output_code import parse_output_code
from inspector.core.model.session import CodeArtifact, CompileUnit
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path
from inspector.gui.code_highlight import output_code_regions

LAUNCHER_2_13 = "static __attribute__((noinline)) void"
LAUNCHER_2025 = "static inline void"


def gpu_wrapper(launcher: str) -> str:
    return f"""#include <torch/csrc/inductor/aoti_include/cuda.h>
namespace torch::aot_inductor {{
namespace {{
class AOTInductorModelKernels : public AOTInductorModelKernelsBase {{
  public:
    CUfunction triton_poi_fused_addmm_relu_0{{nullptr}};
}};
}}  // namespace
}} // namespace torch::aot_inductor
using namespace torch::aot_inductor;

template <typename in_out_ptr0_type_, typename in_ptr0_type_, typename kernels_type_>
{launcher} call_triton_poi_fused_addmm_relu_0(
    const in_out_ptr0_type_& in_out_ptr0,
    const in_ptr0_type_& in_ptr0,
    int64_t xnumel,
    int32_t device_idx_,
    cudaStream_t stream_,
    kernels_type_& kernels_,
    const std::optional<std::string>& cubin_dir_ = std::nullopt
){{
    /*
    @triton_heuristics.pointwise(size_hints={{'x': 128}}, filename=__file__,
        triton_meta={{'signature': {{'in_out_ptr0': '*fp32', 'in_ptr0': '*fp32', 'xnumel': 'i32'}}}})
    @triton.jit
    def triton_poi_fused_addmm_relu_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):
        xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]
        x0 = xindex % 16
        tmp0 = tl.load(in_out_ptr0 + (xindex), None)
        tl.store(in_out_ptr0 + (xindex), tmp0, None)
    */
    uint32_t grid_0 = ((xnumel + (128 - 1)) / (128));
    uint32_t grid_1 = 1;
    uint32_t grid_2 = 1;
    if (grid_0 == 0 || grid_1 == 0 || grid_2 == 0) return;
    if (kernels_.triton_poi_fused_addmm_relu_0 == nullptr) {{
        kernels_.triton_poi_fused_addmm_relu_0 = loadKernel("/tmp/c4/cn5z.cubin", \
"triton_poi_fused_addmm_relu_0", 0, cubin_dir_);
    }}
    CUdeviceptr var_0 = reinterpret_cast<CUdeviceptr>(in_out_ptr0.data_ptr());
    CUdeviceptr var_1 = reinterpret_cast<CUdeviceptr>(in_ptr0.data_ptr());
    int var_2 = xnumel;
    void* kernel_args_[] = {{&var_0, &var_1, &var_2}};
    launchKernel(kernels_.triton_poi_fused_addmm_relu_0, grid_0, grid_1, grid_2, 4, 0, kernel_args_, stream_);
}}

namespace torch::aot_inductor {{
void AOTInductorModel::run_impl(
    AtenTensorHandle* input_handles,
    AtenTensorHandle* output_handles,
    DeviceStreamType stream,
    AOTIProxyExecutorHandle proxy_executor
) {{
    auto inputs = steal_from_raw_handles_to_raii_handles(input_handles, 1);
    auto arg2_1 = std::move(inputs[0]);
    auto& kernels = static_cast<AOTInductorModelKernels&>(*this->kernels_.get());
    AtenTensorHandle buf0_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_2, int_array_3, cached_torch_dtype_float32, \
cached_torch_device_type_cuda, this->device_idx_, &buf0_handle));
    RAIIAtenTensorHandle buf0(buf0_handle);
    // Topologically Sorted Source Nodes: [], Original ATen: [aten.addmm]
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_mm_out(buf0, arg2_1, fc1_weight));
    auto buf1 = std::move(buf0);  // reuse
    // Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.addmm, aten.relu]
    call_triton_poi_fused_addmm_relu_0(buf1, fc1_bias, 128L, this->device_idx_, stream, kernels, this->cubin_dir_);
    output_handles[0] = buf1.release();
}} // AOTInductorModel::run_impl
}} // namespace torch::aot_inductor
"""


PROVENANCE = {"cppCodeToPost": {"triton_poi_fused_addmm_relu_0": ["relu", "add_tensor_1"],
                                "aoti_torch_cuda_mm_out": ["mm_default_1"]}}


@pytest.mark.parametrize("launcher", [LAUNCHER_2_13, LAUNCHER_2025], ids=["torch-2.13", "2025"])
def test_the_triton_kernels_of_a_gpu_wrapper_are_named_at_their_launchers(launcher):
    text = gpu_wrapper(launcher)
    lines = text.split("\n")
    code = parse_output_code(text, "model.wrapper.cpp", PROVENANCE)
    assert [(kernel.name, kernel.kind) for kernel in code.kernels] == [
        ("triton_poi_fused_addmm_relu_0", "triton"), ("aoti_torch_cuda_mm_out", "extern")]
    triton, mm = code.kernels
    assert code.language == "triton" and code.wrapper == "cpp"
    # the launcher, Triton source and launch included, is the kernel's span; run_impl's call is its call
    assert "call_triton_poi_fused_addmm_relu_0(" in lines[triton.start_line - 1]
    assert lines[triton.end_line - 1] == "}" and "launchKernel(" in lines[triton.end_line - 2]
    assert ([lines[line - 1].strip().split("(")[0] for line in triton.call_lines]
            == ["call_triton_poi_fused_addmm_relu_0"])
    assert triton.source_nodes == ["relu", "add_tensor_1"] and triton.source_origin == "provenance"
    assert mm.source_nodes == ["mm_default_1"] and mm.call_lines
    # the whole text is C++ to the highlighter, the Triton source in its comment included
    assert [(region.first, region.last, region.language) for region in output_code_regions(code, len(lines))] == [
        (0, len(lines) - 1, "cpp")]


def _autotune_spans_in(text: str) -> dict[str, float]:
    """Seconds per kernel of the benchmarking stages, read from the log's text without our reader: each
    B event's time subtracted from its E event's."""
    events = re.findall(r'\t\{\n\t"name": "' + re.escape(AUTOTUNE_STAGE) + r'",\n\t"ts": ([\d.]+),\n\t"args": \{\n'
                        r'\t"kernel_name": "(\w+)",.*?\n\t"ph": "([BE])"', text, re.S)
    begun, seconds = {}, {}
    for ts, kernel, phase in events:
        if phase == "B":
            begun[kernel] = float(ts)
        else:
            seconds[kernel] = seconds.get(kernel, 0.0) + (float(ts) - begun.pop(kernel)) / 1e6
    return seconds


def _kernel_info_in(text: str) -> dict:
    """The `triton_kernel_info` payload, read from the log's text without our reader."""
    (payload,) = re.findall(r'\{"artifact": \{"name": "triton_kernel_info".*\n\t(.*)\n', text)
    return json.loads(payload)


def test_what_compiling_each_triton_kernel_cost_is_torchs_record(corpus):
    """Per kernel: its compile time, the autotune cache's state, its configs and the one it runs with
    (torch's `triton_kernel_info`), and the time its configs were benchmarked (the autotune stages)."""
    log = corpus / "inductor_provenance_jit_cuda_log.txt"
    text = log.read_text()
    (unit,) = open_path(log).units
    info, autotune = _kernel_info_in(text), _autotune_spans_in(text)
    assert sorted(autotune) == ["triton_poi_fused_addmm_gelu_2", "triton_poi_fused_mul_1"] and len(info) == 3
    compiles = {name: facts for (code, name), facts in kernel_compiles(unit).items() if code == 0}
    assert len(unit.output_code) == 1 and len(compiles) == len(kernel_compiles(unit))
    assert set(compiles) == set(info) == {kernel.name for kernel in unit.kernels if kernel.kind == "triton"}
    for name, facts in compiles.items():
        assert facts.compile_s == pytest.approx(info[name]["compile_time_us"] / 1e6)
        assert (facts.cache_state == info[name]["autotune_cache_state"]
                and facts.configs == info[name].get("num_configs"))
        assert facts.autotune_s == (pytest.approx(autotune[name], abs=1e-6) if name in autotune else None)
    only = compiles["triton_poi_fused_addmm_relu_sigmoid_0"]  # one config: it runs with that, untuned
    assert only.config == dict(info["triton_poi_fused_addmm_relu_sigmoid_0"]["only_config"])
    assert "one config: nothing to tune; runs with XBLOCK=128, num_warps=4, num_stages=1" in only.described()

    summary = summarize(SessionAnalysis(open_path(log)))
    rows = summary["kernels"]["compiles"]
    assert [row["kernel"] for row in rows] == sorted(info, key=lambda name: -info[name]["compile_time_us"])
    lines = render_text(summary).splitlines()
    heading = lines.index("  slowest Triton kernels to compile (of 3 torch recorded):")
    assert lines[heading + 1] == ("    [0/0] inference  triton_poi_fused_mul_1: compiled in 1.74 s; "
                                  "autotune cache miss; 2 configs benchmarked for 111 ms")


def _code(role: str) -> CodeArtifact:
    return CodeArtifact(f"{role}.py", lambda: f"# AOT ID: ['0_{role}']\n")


def test_a_forwards_and_its_backwards_kernel_of_one_name_are_two_kernels():
    """Inductor numbers each graph's kernels from 0: the forward and the backward of a training unit can
    both hold `triton_poi_fused_mul_0`, each compiled on its own (the record follows each graph's code)."""
    unit = CompileUnit(compile_id=CompileId.parse("[0/0]"), output_code=[_code("forward"), _code("backward")])
    unit.kernel_info = {(0, "triton_poi_fused_mul_0"): {"compile_time_us": 1_000, "autotune_cache_state": "miss"},
                        (1, "triton_poi_fused_mul_0"): {"compile_time_us": 3_000, "autotune_cache_state": "hit"}}
    forward, backward = (code_compiles(unit, code)["triton_poi_fused_mul_0"] for code in unit.output_code)
    assert (forward.compile_s, forward.cache_state) == (0.001, "miss")
    assert (backward.compile_s, backward.cache_state) == (0.003, "hit")


def test_nonsense_in_a_kernel_compile_record_is_left_out():
    """A hostile or damaged `triton_kernel_info`: a bool, a NaN or a negative is no time or count, a state
    is a short word, a config a few short settings; anything else is left out, not shown as nonsense."""
    unit = CompileUnit(compile_id=CompileId.parse("[0/0]"), output_code=[_code("inference")])
    unit.kernel_info = {
        (0, "bools"): {"compile_time_us": True, "num_configs": False, "autotune_cache_state": {"a": 1}},
        (0, "nan"): {"compile_time_us": float("nan"), "num_configs": -3, "best_config": [["XBLOCK", 1]] * 200_000},
        (0, "sane"): {"compile_time_us": 2_500, "num_configs": 4, "autotune_cache_state": "miss",
                      "best_config": {"XBLOCK": 128, "num_warps": 4, "big": "x" * 10_000}},
    }
    compiles = code_compiles(unit, unit.output_code[0])
    assert compiles["bools"] == compiles["nan"] == KernelCompile()
    assert compiles["sane"] == KernelCompile(0.0025, None, "miss", 4, {"XBLOCK": 128, "num_warps": 4})
    assert compiles["bools"].described() == ""


def test_the_code_outline_says_what_compiling_each_kernel_cost(corpus, qtbot, window):
    log = corpus / "inductor_provenance_jit_cuda_log.txt"
    loaded = open_and_wait(qtbot, window, log)
    (unit,) = loaded.session.units
    window.model.select_unit(unit)
    window.tabs.setCurrentWidget(window.code_view)
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() == len(unit.kernels), timeout=60_000)
    assert code.outline.horizontalHeaderItem(5).text() == "Compile" and not code.outline.isColumnHidden(5)
    cells = {code.outline.item(row, 0).text(): code.outline.item(row, 5) for row in range(code.outline.rowCount())}
    assert cells["triton_poi_fused_mul_1"].text() == "1.74 s"
    assert "autotune cache miss; 2 configs benchmarked for 111 ms" in cells["triton_poi_fused_mul_1"].toolTip()
    assert (cells["extern_kernels.mm"].text() == "—"
            and "says nothing of compiling" in cells["extern_kernels.mm"].toolTip())
