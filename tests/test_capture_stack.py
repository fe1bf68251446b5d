"""In a capture of an entry-point script, the stack that led to each compile names the user's own
files only: the capture's runner and its measurement, which call the user's model, are not the user's
code (a user reading "compiled from" must land on their model, not on our files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, capture

CAPTURE = ROOT / "inspector" / "capture"


@pytest.mark.slow
def test_the_compile_stack_of_a_measured_entry_point_names_no_file_of_the_capture(tmp_path, inductor_cache):
    from inspector.core.analysis.compile_detail import trigger_stack
    from inspector.core.readers.session_loader import open_path

    session = tmp_path / "session"
    process = capture(EXAMPLES / "mlp_breaks.py", session, inductor_cache)
    assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
    units = open_path(session).units
    assert units
    for unit in units:
        files = [Path(frame.file).resolve() for frame in trigger_stack(unit)]
        assert not [file for file in files if file.parent == CAPTURE.resolve()], (unit.compile_id, files)
        assert files[-1].name == "mlp_breaks.py"  # the innermost frame shown is the user's model
    # the measurement's frame is on the raw stack: without the filter it would be shown as the user's
    assert any(Path(frame.file).name == "eager_vs_compiled.py" for unit in units for frame in unit.user_stack)
