"""The GPU tab as a new user meets it: a profile found with one run leaves when a run without one
opens (a profile the user opened stays, and says when it is another run's); the regions' GPU time
that falls short of the total says why, in the CLI's words; times are told apart from counts; a CPU
run's profile says it is one and shows no GPU zeros as figures."""

from __future__ import annotations


import pytest

pytest.importorskip("PySide6")
from PySide6.QtWidgets import QLabel  # noqa: E402

from conftest import CUDA_LOG, ROOT, open_and_wait  # noqa: E402
from inspector import cli  # noqa: E402
from inspector.core.outputs.gpu_summary import NO_GPU, summarize_profile, unlinked_text  # noqa: E402
from inspector.core.readers.profiler_trace import read_profiler_trace  # noqa: E402

CAPTURE = ROOT / "resources" / "sessions" / "mlp_breaks"  # a CPU run, its own profile in profile/compiled.json
TRAINING_PROFILE = ROOT.parent / "shared" / "corpus" / "hta-traces" / "trace_diff_test.json.gz"
GPU_COLUMNS = ("GPU", "GPU per call", "kernel launches")


@pytest.fixture(autouse=True)
def _corpus():
    if not CUDA_LOG.is_file() or not TRAINING_PROFILE.is_file():
        pytest.skip("../shared/corpus is not present beside this checkout")


def _cells(table) -> list[list[str]]:
    """What the user sees of a table: the shown columns' texts, row by row."""
    return [[table.item(row, column).text() for column in range(table.columnCount())
             if not table.isColumnHidden(column)]
            for row in range(table.rowCount())]


def _labels(view) -> list[str]:
    """The texts of the tab's labels the user can see."""
    return [label.text() for label in view.findChildren(QLabel) if label.isVisibleTo(view) and label.text()]


def _headers(table) -> list[str]:
    return [table.horizontalHeaderItem(column).text() for column in range(table.columnCount())
            if not table.isColumnHidden(column)]


def _open_capture(qtbot, window):
    open_and_wait(qtbot, window, CAPTURE)
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.source_lines.rowCount() > 0, timeout=60_000)  # its own profile, joined
    return view


def test_a_run_s_own_profile_leaves_when_a_run_without_one_opens(qtbot, window, no_slot_errors):
    view = _open_capture(qtbot, window)
    open_and_wait(qtbot, window, CUDA_LOG)  # a log with no profiler trace beside it
    # (the old tab joined the capture's profile to the log instead, and kept it on screen)
    qtbot.waitUntil(lambda: view.profile is None or "None of this profile's" in view.joined_label.text(),
                    timeout=30_000)
    assert view.header.text().startswith("The open run has no profiler trace (no profiler trace beside the log).")
    assert "compiled.json" not in view.header.text()
    assert not view.pages.isVisibleTo(view), "no tables of the capture's profile beside the log"
    assert view.regions.rowCount() == view.source_lines.rowCount() == view.modules.rowCount() == 0
    assert "None of this profile's" not in view.joined_label.text()


def test_a_profile_the_user_opened_stays_and_says_it_belongs_to_another_run(qtbot, window, no_slot_errors):
    view = window.gpu_view
    window.open_path(CAPTURE / "profile" / "compiled.json")  # opened on its own: kept for the next run
    qtbot.waitUntil(lambda: view.profile is not None, timeout=60_000)
    assert "Open the run" in view.joined_label.text()
    open_and_wait(qtbot, window, CUDA_LOG)
    qtbot.waitUntil(lambda: "not of the open run" in view.header.text(), timeout=30_000)
    assert view.header.text().startswith("Profiler trace compiled.json (opened on its own; not of the open run): ")
    assert view.joined_label.text() == ("This profile is of another run: none of its 15 compiled graph call(s) "
                                        "ran the open run's code — it was opened on its own, and is joined to "
                                        "each run opened after it.")
    assert view.profile_trace.path == CAPTURE / "profile" / "compiled.json" and view.source_lines.rowCount() == 0
    open_and_wait(qtbot, window, CAPTURE)  # the run it was taken of: its own profile, joined
    qtbot.waitUntil(lambda: view.source_lines.rowCount() > 0, timeout=60_000)
    assert "found with the open run" in view.header.text()


def test_the_regions_gap_is_explained_as_the_cli_does_and_times_are_told_from_counts(qtbot, window, no_slot_errors,
                                                                                    capsys):
    view = window.gpu_view
    window.open_path(TRAINING_PROFILE)
    qtbot.waitUntil(lambda: view.regions.rowCount() > 0, timeout=60_000)
    summary = summarize_profile(read_profiler_trace(TRAINING_PROFILE))
    regions_us = sum(row["gpu_us"] for row in summary["regions"])
    assert regions_us + summary["unlinked_gpu_us"] == pytest.approx(summary["gpu_us"])
    note = unlinked_text(summary)
    assert note in _labels(view)
    assert note == ("614 GPU event(s), 56.5 ms, carry no correlation to a runtime call: counted in the GPU time "
                    "(964 ms), not in a region (907 ms in all)")
    assert cli.main(["summary", str(TRAINING_PROFILE)]) == 0
    assert note in capsys.readouterr().out  # one sentence, the CLI's and the app's
    header = view.header.text()
    assert "GPU time 964 ms: kernel time 551 ms, collective time 251 ms, copy time 160 ms, fill time 2.21 ms" in header
    assert "kernels 551" not in header
    assert _headers(view.regions) == ["compiled region", "calls", "CPU", "GPU", "GPU per call", "kernel launches"]
    rows = {row[0]: row for row in _cells(view.regions)}
    assert rows["CompiledFunctionBackward"][5] == "5,562" and rows["CompiledFunctionBackward"][3] == "221 ms"


def test_a_cpu_run_s_profile_says_so_and_shows_no_gpu_zeros(qtbot, window, no_slot_errors):
    view = _open_capture(qtbot, window)
    header = view.header.text()
    assert header == (f"Profiler trace compiled.json (found with the open run): {NO_GPU}; kernel time per source line "
                      "below is CPU time")
    assert NO_GPU == "No GPU events: this profile is of a CPU run"
    assert not header.rstrip().endswith("—")
    assert _headers(view.regions) == ["compiled region", "calls", "CPU"]
    cells = _cells(view.regions)
    assert [row[0] for row in cells] == ["compile unit [0/1]", "compile unit [1/1]", "compile unit [2/1]"]
    assert all(value != "0 s" for row in cells for value in row)
    assert not view.profile_kernels.isVisibleTo(view) and not view.devices.isVisibleTo(view)
    assert not any("correlation" in text for text in _labels(view))
    assert "(CPU time of each launch)" in view.joined_label.text()
    window.open_path(TRAINING_PROFILE)  # a GPU profile next: its GPU columns and kernels are back
    qtbot.waitUntil(lambda: view.header.text().startswith("Profiler trace (rank 1) trace_diff_test"), timeout=60_000)
    assert all(column in _headers(view.regions) for column in GPU_COLUMNS)
    assert view.profile_kernels.isVisibleTo(view) and view.profile_kernels.rowCount() > 0
