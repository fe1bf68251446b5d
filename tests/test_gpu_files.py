"""GPU truth without a GPU (issue 25): tritonparse traces and torch.profiler traces of real GPU runs
(../shared/corpus, written on other machines) open in the CLI and the app — each kernel's IR stages
with lines mapped both ways, the torch.compile unit a kernel came from, launches and what varies
between them; GPU time per kernel and per compiled region, device idle time."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inspector.core.analysis.gpu_profile import OUTSIDE, gpu_profile
from inspector.core.readers.profiler_trace import read_profiler_trace
from inspector.core.readers.sources import PROFILER_TRACE, TRITON_TRACE, detect
from inspector.core.readers.tritonparse_trace import read_tritonparse
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpus"
TORCH_KERNELS = SHARED / "tritonparse-traces" / "dedicated_log_triton_trace_findhao_.ndjson"
MAPPED = SHARED / "tritonparse-traces" / "complex_kernels_mapped.ndjson.gz"
TRITON_PROFILE = SHARED / "hta-traces" / "triton_example.json.gz"
TRAINING_PROFILE = SHARED / "hta-traces" / "trace_diff_test.json.gz"


@pytest.fixture(autouse=True)
def _corpus():
    if not SHARED.joinpath("tritonparse-traces").is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")


def _events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_the_registry_tells_each_gpu_file_apart():
    assert detect(TORCH_KERNELS).kind is TRITON_TRACE and detect(MAPPED).kind is TRITON_TRACE
    assert detect(TRITON_PROFILE).kind is PROFILER_TRACE and detect(TRAINING_PROFILE).kind is PROFILER_TRACE


def test_a_kernel_compiled_by_torch_compile_names_its_unit_and_keeps_every_ir_stage():
    trace = read_tritonparse(TORCH_KERNELS)
    by_name = {kernel.name: kernel for kernel in trace.kernels}
    assert by_name["triton_poi_fused_add_0"].compile_id == "0/0"
    assert by_name["add_kernel"].compile_id is None  # a hand-written kernel
    raw = {event["payload"]["metadata"]["name"]: event["payload"] for event in _events(TORCH_KERNELS)}
    for name, kernel in by_name.items():
        assert kernel.stages == ["ttir", "ttgir", "llir", "ptx"]
        assert kernel.ir["ptx"] == raw[name]["file_content"][f"{name}.ptx"]
        assert kernel.python_start_line == raw[name]["python_source"]["start_line"]


def test_source_lines_map_to_ir_lines_both_ways_as_the_trace_says():
    kernel = read_tritonparse(MAPPED).kernels[0]
    raw = next(event for event in _events(MAPPED) if event["event_type"] == "compilation")
    mappings = raw["payload"]["source_mappings"]
    for line, entry in list(mappings["python"].items())[:5]:
        for stage in ("ttir", "ttgir", "ptx"):
            assert (kernel.lines_for("python", int(line), stage)
                    == sorted(int(value) for value in entry[f"{stage}_lines"]))
    for line, entry in list(mappings["ttgir"].items())[:20]:
        assert kernel.lines_for("ttgir", int(line), "python") == [entry["line"]]
        assert kernel.lines_for("ttgir", int(line), "ptx") == sorted(entry["ptx_lines"])


def test_launches_are_counted_per_compilation_and_agree_with_the_launch_diff():
    trace = read_tritonparse(MAPPED)
    events = _events(MAPPED)
    assert trace.launches == sum(event["event_type"] == "launch" for event in events)
    totals = {event["hash"]: event["total_launches"] for event in events if event["event_type"] == "launch_diff"}
    for kernel in trace.kernels:
        assert kernel.launches == totals[kernel.hash]
        assert sum(kernel.grids.values()) == kernel.launches
    assert "grid" in trace.kernels[0].varying and "timestamp" not in trace.kernels[0].varying


def test_a_damaged_trace_opens_with_what_is_readable_and_counts_the_rest(tmp_path):
    lines = gzip.open(MAPPED, "rt").read().splitlines()
    damaged = tmp_path / "dedicated_log_triton_trace_damaged.ndjson.gz"
    data = gzip.compress(("\n".join(lines[:40] + ["{not json", lines[40][: len(lines[40]) // 2]]) + "\n").encode())
    damaged.write_bytes(data[: len(data) - 20])  # and the gzip stream cut short
    trace = read_tritonparse(damaged)
    assert trace.kernels and trace.problems.counts["bad_json"] >= 1
    assert trace.problems.counts["truncated"] + trace.problems.counts["bad_json"] >= 2
    done = run_cli("summary", damaged, "--strict")
    assert done.returncode == 3 and "kernel compilation(s)" in done.stdout


def test_profile_splits_gpu_time_by_compiled_region_and_names_inductor_kernels():
    profile = gpu_profile(read_profiler_trace(TRITON_PROFILE))
    (region,) = [row for row in profile.regions if row.name != OUTSIDE]
    assert region.name == "0/0" and region.calls == 1 and region.kernels == 1
    (kernel,) = profile.kernels
    assert kernel.name == "triton_poi_fused_add_cos_sin_0" and kernel.grid == "grid(100,)"
    assert kernel.kernel_file.endswith("cqaokwf2bph4egogzevc22vluasiyuui4i54zpemp6knbsggfbuu.py")
    assert region.gpu_us == pytest.approx(kernel.total_us)


def test_a_training_profile_accounts_for_every_gpu_event():
    document = json.loads(gzip.open(TRAINING_PROFILE, "rt").read())
    gpu = [event for event in document["traceEvents"] if event.get("ph") == "X"
           and event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    profile = gpu_profile(read_profiler_trace(TRAINING_PROFILE))
    assert profile.total_gpu_us == pytest.approx(sum(event["dur"] for event in gpu))
    assert sum(row.count for row in profile.kernels) == len(gpu)
    linked = sum(row.kernels for row in profile.regions)
    assert linked + profile.unlinked == len(gpu)
    calls = {row.name: row.calls for row in profile.regions}
    assert calls["CompiledFunction"] == calls["CompiledFunctionBackward"] == 6
    assert profile.by_kind["collectives"] > 0 and profile.rank == 1
    (device,) = profile.devices
    assert 0 < device.busy_us <= device.span_us


def test_cli_summary_text_and_json_of_both_kinds():
    text = run_cli("summary", TORCH_KERNELS).stdout
    assert "triton_poi_fused_add_0  (torch.compile unit [0/0]" in text and "PTX" in text
    summary = json.loads(run_cli("summary", TRAINING_PROFILE, "--json").stdout)
    assert summary["schema"] == "gpu-profile-summary/1" and summary["rank"] == 1
    assert {row["region"] for row in summary["regions"]} >= {"CompiledFunction", "CompiledFunctionBackward"}
    text = run_cli("summary", TRITON_PROFILE).stdout
    assert "compile unit [0/0]" in text and "triton_poi_fused_add_cos_sin_0" in text


def test_the_gpu_tab_links_source_and_ir_lines(qtbot, window):
    window.open_path(MAPPED)
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.kernels.rowCount() == 5 and view.source.toPlainText() != "", timeout=60_000)
    assert window.tabs.currentWidget() is view
    assert view.kernels.item(0, 0).text() == "matmul_kernel" and view.kernels.item(0, 2).text() == "441"
    kernel = view.kernel
    view.stage.setCurrentText("TTGIR")
    assert view.ir.toPlainText() == kernel.ir["ttgir"]
    python_line = next(int(line) for line in kernel.mappings["python"])
    cursor = view.source.textCursor()
    cursor.setPosition(view.source.document().findBlockByNumber(python_line - kernel.python_start_line).position())
    view.source.setTextCursor(cursor)  # as a click on that line does
    tinted = sorted(selection.cursor.blockNumber() + 1 for selection in view.ir.extraSelections())
    assert tinted == kernel.lines_for("python", python_line, "ttgir") and tinted
    ir_line = tinted[0]
    cursor = view.ir.textCursor()
    cursor.setPosition(view.ir.document().findBlockByNumber(ir_line - 1).position())
    view.ir.setTextCursor(cursor)
    (source_line,) = [selection.cursor.blockNumber() + 1 for selection in view.source.extraSelections()]
    assert source_line + kernel.python_start_line - 1 in kernel.lines_for("ttgir", ir_line, "python")
    view.kernels.setCurrentCell(3, 0)  # another kernel: its own code, not the previous one's
    qtbot.waitUntil(lambda: view.kernel is view.trace.kernels[3])
    assert view.source.toPlainText() == view.trace.kernels[3].python_code
    assert view.ir.toPlainText() == view.trace.kernels[3].ir["ttgir"]


def test_a_second_trace_opened_shows_its_own_first_kernel(qtbot, window, no_slot_errors):
    """Row 0 was current already: the second trace's first kernel is still the one shown, info and code."""
    view = window.gpu_view
    window.open_path(MAPPED)
    qtbot.waitUntil(lambda: view.trace is not None and view.trace.path == MAPPED and view.kernel is not None,
                    timeout=60_000)
    window.open_path(TORCH_KERNELS)
    qtbot.waitUntil(lambda: view.trace is not None and view.trace.path == TORCH_KERNELS, timeout=60_000)
    first = view.trace.kernels[0]
    assert view.kernel is first and view.kernel_info.text().startswith(f"{first.name} — ")
    assert view.source.toPlainText() == first.python_code


def test_the_gpu_tab_shows_a_profile_by_region(qtbot, window):
    window.open_path(TRAINING_PROFILE)
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.regions.rowCount() > 0, timeout=60_000)
    regions = {view.regions.item(row, 0).text(): view.regions.item(row, 1).text()
               for row in range(view.regions.rowCount())}
    assert regions["CompiledFunction"] == "6" and regions["CompiledFunctionBackward"] == "6"
    assert "ncclKernel" in view.profile_kernels.item(0, 5).text()
    assert "rank 1" in view.header.text() and "idle" in view.devices.text()
