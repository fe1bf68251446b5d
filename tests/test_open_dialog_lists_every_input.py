"""File ▸ Open Log, Bundle or Folder… lists every kind of file the app opens under its default filter:
the GPU tab sends the user there for tritonparse and profiler traces, which it used to hide (only
*.log, *.txt, *.tcinspect and manifest.json were listed)."""

from __future__ import annotations

from fnmatch import fnmatch

import pytest

pytest.importorskip("PySide6")

# names as the real files in the corpus and the app's own outputs are named
OPENED = ["dedicated_log_torch_trace_rank_0.log", "inductor_provenance_jit_cuda_log.txt", "mlp_breaks.tcinspect",
          "manifest.json", "dedicated_log_triton_trace_findhao_.ndjson", "complex_kernels_mapped.ndjson.gz",
          "triton_example.json.gz", "rank0.pt.trace.json", "compile_events.jsonl"]


def test_the_open_dialogs_default_filter_lists_every_file_the_app_opens(qtbot):
    from inspector.gui.qt_open_dialog import QtOpenDialog

    dialog = QtOpenDialog(None, "Open")
    qtbot.addWidget(dialog)
    shown = dialog.selectedNameFilter()
    patterns = shown[shown.index("(") + 1:shown.rindex(")")].split()
    hidden = [name for name in OPENED if not any(fnmatch(name, pattern) for pattern in patterns)]
    assert not hidden, f"{shown!r} hides {hidden}"
    assert not any(fnmatch("notes.bin", pattern) for pattern in patterns)
