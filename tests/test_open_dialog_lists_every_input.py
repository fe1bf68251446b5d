"""File ▸ Open Log, Bundle or Folder… lists every kind of file the app opens under its default filter, as
the registry's kinds name their files: the GPU tab sends the user there for tritonparse and profiler
traces, which it once hid, and a new kind of input is listed without a second edit in the dialog. Each
name a kind declares is backed by a real file of that kind (the bundled session, the corpus, the app's
and the recorder's own outputs) that the registry detects as that kind and the dialog shows."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from inspector.core.readers import sources  # noqa: E402
from inspector.core.readers.session_bundle import save_bundle  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "resources" / "sessions" / "mlp_breaks"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture(scope="module")
def real_files(tmp_path_factory) -> list[Path]:
    """A file of every kind the app opens, each made or written by what makes it for real."""
    if not CORPUS.is_dir():
        pytest.skip(f"no corpus at {CORPUS}")
    made = tmp_path_factory.mktemp("inputs")
    bundle, _ = save_bundle(SESSION, made / "mlp_breaks.tcinspect")
    profile = made / "rank0.pt.trace.json"  # a profiler trace as torch.profiler writes it, uncompressed
    with gzip.open(CORPUS / "hta-traces" / "triton_example.json.gz") as packed, open(profile, "wb") as out:
        shutil.copyfileobj(packed, out)
    recorded = made / "compile-events.jsonl"  # the production recorder's file: its header, no compile yet
    subprocess.run([sys.executable, "-c", "import sys; from inspector.capture.recorder import install; "
                    "install(sys.argv[1]).close()", str(recorded)], cwd=ROOT, check=True, timeout=300)
    return [bundle, SESSION / "manifest.json", profile, recorded, CORPUS / "hta-traces" / "triton_example.json.gz",
            CORPUS / "tlparse-fixtures" / "multi_rank_logs" / "dedicated_log_torch_trace_rank_0.log",
            CORPUS / "tlparse-fixtures" / "inductor_provenance_jit_cuda_log.txt",
            CORPUS / "tritonparse-traces" / "dedicated_log_triton_trace_findhao_.ndjson",
            CORPUS / "tritonparse-traces" / "complex_kernels_mapped.ndjson.gz"]


def shown_patterns(qtbot) -> tuple[str, list[str]]:
    """The dialog's default filter as the user sees it, and the patterns in it."""
    from inspector.gui.qt_open_dialog import QtOpenDialog

    dialog = QtOpenDialog(None, "Open")
    qtbot.addWidget(dialog)
    shown = dialog.selectedNameFilter()
    return shown, shown[shown.index("(") + 1:shown.rindex(")")].split()


def test_the_open_dialogs_default_filter_lists_every_file_name_the_registry_opens(qtbot):
    shown, patterns = shown_patterns(qtbot)
    declared = {pattern: kind.name for kind in sources.KINDS for pattern in kind.patterns}
    assert {"*.tcinspect", "manifest.json", "*.log", "*.ndjson.gz", "*.json.gz", "*.jsonl"} <= declared.keys()
    assert not declared.keys() - set(patterns), f"{shown!r} leaves out {declared.keys() - set(patterns)}"
    assert not any(fnmatch("notes.bin", pattern) for pattern in patterns)


def test_a_real_file_of_every_kind_is_shown_by_the_filter_and_each_declared_name_is_one(qtbot, real_files):
    _, patterns = shown_patterns(qtbot)
    kinds = {path.name: sources.detect(path).kind for path in real_files}
    hidden = [name for name in kinds if not any(fnmatch(name, pattern) for pattern in patterns)]
    assert not hidden, f"the Open dialog hides {hidden}"
    for kind in sources.KINDS:
        for pattern in kind.patterns:  # a name a kind claims is one a real file of that kind has
            assert any(fnmatch(name, pattern) and found is kind for name, found in kinds.items()), (kind.name, pattern)
    files = {kind.name for kind in kinds.values()}
    assert files == {kind.name for kind in sources.KINDS if kind.patterns}, files  # every kind of file, no folder
