"""A tritonparse trace joined to the TORCH_TRACE log of its run: each compilation is found among the
run's kernels by the kernel's file, else by compile unit and name, else by a name only one kernel
has, and one of another run is said to be so.

No machine here can make a tritonparse trace and a TORCH_TRACE log of one run (tritonparse hooks
Triton's compiler, and the CPU wheel has no Triton), and the corpus holds none. The run is the
corpus's real CUDA log; the trace is the corpus's real tritonparse trace of an Inductor kernel, with
the fields that say which kernel it is (its name, file and `pt_info`) set to one of that log's
kernels, as a trace of that run would hold them. Its IR, metadata and times are the real trace's."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from inspector.core.analysis.triton_join import BY_FILE, BY_NAME, BY_UNIT_AND_NAME, NOT_IN_RUN, join_triton
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.tritonparse_trace import read_tritonparse

SHARED = ROOT.parent / "shared" / "corpus"
CUDA_LOG = SHARED / "tlparse-fixtures" / "inductor_provenance_jit_cuda_log.txt"
TRITONPARSE = SHARED / "tritonparse-traces" / "dedicated_log_triton_trace_findhao_.ndjson"
KERNEL = "triton_poi_fused_mul_1"  # the log's unit [0/0] launches it; its file is named above its definition
KERNEL_FILE = "/var/tmp/torchinductor_shangdiy/xv/cxvodz4jp2qjhzrnaaxr5fulka74yzwr6wu6wgxi333rw4eyszpy.py"


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, list[dict]]:
    if not (CUDA_LOG.is_file() and TRITONPARSE.is_file()):
        pytest.skip("../shared/corpus is not present beside this checkout")
    return tmp_path, [json.loads(line) for line in TRITONPARSE.read_text().splitlines() if line.strip()]


def _as_kernel_of_the_run(event: dict, name: str = KERNEL, file: str | None = KERNEL_FILE,
                          unit: tuple[int, int] | None = (0, 0)) -> dict:
    """The real Inductor compilation `event`, named as a compilation of `name` in the log's run is."""
    event = copy.deepcopy(event)
    payload = event["payload"]
    old = payload["metadata"]["name"]
    payload["metadata"]["name"] = name
    payload["file_content"] = {key.replace(old, name, 1): text for key, text in payload["file_content"].items()}
    payload["python_source"]["file_path"] = file
    if unit is None:
        payload.pop("pt_info", None)
    else:
        payload["pt_info"] = {"frame_id": unit[0], "frame_compile_id": unit[1], "attempt": 0}
    return event


def _trace(folder: Path, events: list[dict], name: str = "dedicated_log_triton_trace_run_.ndjson") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


def _inductor_and_user_kernels(events: list[dict]) -> tuple[dict, dict]:
    inductor = next(e for e in events if e["payload"]["metadata"]["name"].startswith("triton_"))
    user = next(e for e in events if e["payload"]["metadata"]["name"] == "add_kernel")
    return inductor, user


@pytest.mark.parametrize("key", [BY_FILE, BY_UNIT_AND_NAME, BY_NAME])
def test_each_compilation_is_found_among_the_runs_kernels_by_the_strongest_key_it_has(inputs, key):
    folder, events = inputs
    inductor, user = _inductor_and_user_kernels(events)
    mine = {BY_FILE: _as_kernel_of_the_run(inductor),
            BY_UNIT_AND_NAME: _as_kernel_of_the_run(inductor, file="/elsewhere/c.py"),
            BY_NAME: _as_kernel_of_the_run(inductor, file=None, unit=None)}[key]
    elsewhere = _as_kernel_of_the_run(inductor, name="triton_poi_fused_add_0", file=None, unit=(5, 0))
    trace = read_tritonparse(_trace(folder, [user, mine, elsewhere]))
    session = build_trace_session([CUDA_LOG], CUDA_LOG)
    join = join_triton(session, trace)
    assert [(item.compilation.name, str(item.unit.compile_id), item.kernel.name, item.matched_by)
            for item in join.joined] == [(KERNEL, "[0/0]", KERNEL, key)]
    assert join.joined[0].kernel in session.units[0].kernels  # the kernel the Code tab lists
    assert [(compilation.name, why) for compilation, why in join.not_joined] == [
        ("add_kernel", NOT_IN_RUN), ("triton_poi_fused_add_0", NOT_IN_RUN)]


def test_a_key_that_finds_several_kernels_joins_none_and_says_so(inputs, tmp_path):
    """Names repeat across recompiles, and a kernel's file across the units that made the same kernel:
    the unit `pt_info` names tells those apart; without it, nothing is guessed."""
    folder, events = inputs
    inductor, _ = _inductor_and_user_kernels(events)
    text = CUDA_LOG.read_text()
    twice = tmp_path / "dedicated_log_torch_trace_twice.log"  # the unit again as [1/0]: the same kernels
    twice.write_text(text + text.replace('"frame_id": 0,', '"frame_id": 1,'))
    session = build_trace_session([twice], twice)
    assert {str(unit.compile_id) for unit in session.units} >= {"[0/0]", "[1/0]"}
    named = read_tritonparse(_trace(folder, [_as_kernel_of_the_run(inductor, unit=(1, 0))]))
    assert [(str(item.unit.compile_id), item.matched_by) for item in join_triton(session, named).joined] == [
        ("[1/0]", BY_FILE)]
    unnamed = read_tritonparse(_trace(folder, [_as_kernel_of_the_run(inductor, unit=None)]))
    join = join_triton(session, unnamed)
    assert not join.joined
    assert join.not_joined[0][1] == f"2 kernels of the open run have its {BY_FILE} ([0/0], [1/0]): not told apart"


def test_a_trace_of_one_rank_joins_that_rank_s_kernels(inputs, tmp_path):
    """In a job every rank has the same kernels: the trace's file name says whose it is."""
    folder, events = inputs
    inductor, _ = _inductor_and_user_kernels(events)
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):  # the CUDA run as a job of two ranks
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(CUDA_LOG.read_bytes())
    session = build_trace_session(sorted(job.glob("*.log")), job)
    assert {unit.rank for unit in session.units} == {0, 1}
    ranked = read_tritonparse(_trace(folder, [_as_kernel_of_the_run(inductor)],
                                     "dedicated_log_triton_trace_user_rank_1_.ndjson"))
    assert [(item.unit.rank, item.kernel.name) for item in join_triton(session, ranked).joined] == [(1, KERNEL)]
    unranked = read_tritonparse(_trace(folder, [_as_kernel_of_the_run(inductor)]))
    (_compilation, why), = join_triton(session, unranked).not_joined
    assert why == f"2 kernels of the open run have its {BY_FILE} (rank 0 [0/0], rank 1 [0/0]): not told apart"


def test_the_summary_joins_a_trace_named_with_triton(inputs):
    folder, events = inputs
    inductor, user = _inductor_and_user_kernels(events)
    path = _trace(folder, [user, _as_kernel_of_the_run(inductor)])

    def summary(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "inspector", "summary", str(CUDA_LOG), *options],
                              capture_output=True, text=True, cwd=ROOT, env={"TCI_NO_CACHE": "1", "PATH": ""})

    done = summary("--triton", str(path), "--json")
    assert done.returncode == 0, done.stderr
    section = json.loads(done.stdout)["triton_ir"]
    ir = inductor["payload"]["file_content"]
    stage_lines = {name.rsplit(".", 1)[1]: len(text.splitlines())
                   for name, text in ir.items() if not name.endswith(".json")}
    assert section["joined"] == [{
        "kernel": KERNEL, "rank": None, "compile_id": "0/0", "matched_by": BY_FILE, "kernel_file": KERNEL_FILE,
        "stages": stage_lines, **{key: inductor["payload"]["metadata"].get(key)
                                  for key in ("arch", "num_warps", "num_stages", "shared", "cache_hit",
                                              "triton_version")},
        "launches": 0}]
    assert section["not_joined"] == [{"name": "add_kernel", "compile_id": None,
                                      "file": user["payload"]["python_source"]["file_path"], "why": NOT_IN_RUN}]
    text = summary("--triton", str(path)).stdout
    assert f"Triton IR from the tritonparse trace {path}: 1 of its 2 compilation(s) are kernels of this run" in text
    assert f"{KERNEL}  ([0/0], by kernel file): TTIR {stage_lines['ttir']} lines" in text
    assert f"not joined: add_kernel (no torch.compile unit named): {NOT_IN_RUN}" in text
    wrong = summary("--triton", str(CUDA_LOG))
    assert wrong.returncode == 2 and "is not a tritonparse trace" in wrong.stderr
    markdown = summary("--triton", str(path), "--markdown")
    assert markdown.returncode == 2 and "not --markdown" in markdown.stderr
    damaged = folder / "dedicated_log_triton_trace_cut_.ndjson"
    damaged.write_text(path.read_text() + "{not json\n")
    assert summary("--triton", str(damaged)).returncode == 0
    assert summary("--triton", str(damaged), "--strict").returncode == 3  # the trace's damage counts


def test_the_gpu_tab_joins_a_trace_to_the_open_run_both_ways(qtbot, window, no_slot_errors, inputs):
    """Opened beside the run, each compilation says which kernel of the run it is; "Show in Code" selects
    that kernel and shows the Code tab on it; a kernel selected in the run brings its IR back up."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import Qt

    from conftest import open_and_wait

    folder, events = inputs
    inductor, user = _inductor_and_user_kernels(events)
    path = _trace(folder, [user, _as_kernel_of_the_run(inductor)])
    loaded = open_and_wait(qtbot, window, CUDA_LOG)
    view = window.gpu_view
    window.open_path(path)
    qtbot.waitUntil(lambda: view.trace is not None and view.join is not None, timeout=30_000)
    assert [view.kernels.item(row, 1).text() for row in range(view.kernels.rowCount())] == [
        "not from torch.compile, not in the open run", "[0/0] in the open run"]
    assert f"Not joined to the open run: {NOT_IN_RUN}." in view.kernel_info.text()
    assert not view.show_in_code.isEnabled()

    view.kernels.setCurrentCell(1, 0)
    assert view.kernel_info.text().endswith(f"In the open run: {KERNEL} of [0/0] (found by {BY_FILE}).")
    ttir = next(text for name, text in inductor["payload"]["file_content"].items() if name.endswith(".ttir"))
    assert view.stage.currentText() == "TTIR" and view.ir.toPlainText() == ttir
    qtbot.mouseClick(view.show_in_code, Qt.MouseButton.LeftButton)
    assert window.tabs.currentWidget() is window.code_view
    assert window.model.kernel.name == KERNEL and window.model.unit is loaded.session.units[0]
    code = window.code_view
    qtbot.waitUntil(lambda: code.code is not None and code.outline.currentRow() >= 0, timeout=30_000)
    assert code.code.kernels[code.outline.currentRow()].name == KERNEL
    assert f"def {KERNEL}(" in code.editor.toPlainText()

    view.kernels.setCurrentCell(0, 0)  # the user's own kernel: then the run's kernel chosen in the Code tab
    unit = loaded.session.units[0]
    window.model.select_kernel(unit, next(kernel for kernel in unit.kernels if kernel.name == KERNEL))
    assert view.kernels.currentRow() == 0  # the hidden tab is not redrawn until it is shown
    window.tabs.setCurrentWidget(view)
    assert view.kernels.currentRow() == 1 and view.ir.toPlainText() == ttir
    assert not no_slot_errors


def test_the_gpu_tab_says_why_a_compilation_joins_no_kernel(qtbot, window, no_slot_errors, inputs, tmp_path):
    """A compilation two ranks' kernels match is not joined to either, and the tab says so and why."""
    pytest.importorskip("PySide6")
    from conftest import open_and_wait

    folder, events = inputs
    inductor, _ = _inductor_and_user_kernels(events)
    job = tmp_path / "job"
    job.mkdir()
    for rank in (0, 1):
        (job / f"dedicated_log_torch_trace_rank_{rank}.log").write_bytes(CUDA_LOG.read_bytes())
    open_and_wait(qtbot, window, job)
    view = window.gpu_view
    window.open_path(_trace(folder, [_as_kernel_of_the_run(inductor)]))
    qtbot.waitUntil(lambda: view.trace is not None and view.join is not None, timeout=30_000)
    assert view.kernels.item(0, 1).text() == "0/0, ambiguous in the open run"
    assert view.kernel_info.text().endswith(
        f"Not joined to the open run: 2 kernels of the open run have its {BY_FILE} (rank 0 [0/0], rank 1 [0/0]): "
        "not told apart.")
    assert not view.show_in_code.isEnabled() and not no_slot_errors
