"""AOTInductor on a GPU: the wrapper is C++ and each Triton kernel is run through a launcher the wrapper
defines (`call_<kernel>`), its cubin loaded from disk; the kernel code is logged empty. The outline must
name the Triton kernels there, with the lines run_impl launches them from and their FX nodes. And a
Triton kernel's autotuning (the compile stage that benchmarks its configs) shows beside it.

No machine here has a GPU, so the wrapper below is written as torch's `CppWrapperGpu` writes it (the
launcher's signature, its Triton source in a comment, its grid, cubin load and launch), in the form of
torch 2.13 and in the 2025 form of the public tlparse fixture `inductor_provenance_aot_cuda_log.txt`."""

from __future__ import annotations

import re

import pytest

from conftest import open_and_wait
from inspector.core.analysis.kernel_index import AUTOTUNE_STAGE, autotune_seconds
from inspector.core.model.output_code import parse_output_code
from inspector.core.readers.session_loader import open_session
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
        kernels_.triton_poi_fused_addmm_relu_0 = loadKernel("/tmp/c4/cn5z.cubin", "triton_poi_fused_addmm_relu_0", 0, cubin_dir_);
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
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_2, int_array_3, cached_torch_dtype_float32, cached_torch_device_type_cuda, this->device_idx_, &buf0_handle));
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
    assert [lines[line - 1].strip().split("(")[0] for line in triton.call_lines] == ["call_triton_poi_fused_addmm_relu_0"]
    assert triton.source_nodes == ["relu", "add_tensor_1"] and triton.source_origin == "provenance"
    assert mm.source_nodes == ["mm_default_1"] and mm.call_lines
    # the whole text is C++ to the highlighter, the Triton source in its comment included
    assert [(region.first, region.last, region.language) for region in output_code_regions(code, len(lines))] == [
        (0, len(lines) - 1, "cpp")]


def _autotune_spans_in(path) -> dict[str, float]:
    """Seconds per kernel of the benchmarking stages, read from the log's text without our reader: each
    B event's time subtracted from its E event's."""
    events = re.findall(r'\t\{\n\t"name": "' + re.escape(AUTOTUNE_STAGE) + r'",\n\t"ts": ([\d.]+),\n\t"args": \{\n'
                        r'\t"kernel_name": "(\w+)",.*?\n\t"ph": "([BE])"', path.read_text(), re.S)
    begun, seconds = {}, {}
    for ts, kernel, phase in events:
        if phase == "B":
            begun[kernel] = float(ts)
        else:
            seconds[kernel] = seconds.get(kernel, 0.0) + (float(ts) - begun.pop(kernel)) / 1e6
    return seconds


def test_a_triton_kernels_autotuning_time_is_read_from_its_compile_stage(corpus):
    log = corpus / "inductor_provenance_jit_cuda_log.txt"
    (unit,) = open_session(log).units
    expected = _autotune_spans_in(log)
    assert sorted(expected) == ["triton_poi_fused_addmm_gelu_2", "triton_poi_fused_mul_1"]
    found = autotune_seconds(unit)
    assert found.keys() == expected.keys()
    for kernel, value in expected.items():
        assert found[kernel] == pytest.approx(value, abs=1e-6)
    assert {kernel.name for kernel in unit.kernels} >= set(found)


def test_the_code_outline_says_how_long_a_kernel_was_autotuned(corpus, qtbot, window):
    log = corpus / "inductor_provenance_jit_cuda_log.txt"
    loaded = open_and_wait(qtbot, window, log)
    (unit,) = loaded.session.units
    window.model.select_unit(unit)
    window.tabs.setCurrentWidget(window.code_view)
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() == len(unit.kernels), timeout=60_000)
    tips = {code.outline.item(row, 0).text(): code.outline.item(row, 0).toolTip()
            for row in range(code.outline.rowCount())}
    seconds = autotune_seconds(unit)
    assert "autotuned while compiling: its configs benchmarked for 111 ms" in tips["triton_poi_fused_mul_1"]
    assert round(seconds["triton_poi_fused_mul_1"] * 1000) == 111
    assert "autotuned" not in tips["triton_poi_fused_addmm_relu_sigmoid_0"]  # one config: nothing benchmarked
