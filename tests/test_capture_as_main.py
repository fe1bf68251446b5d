"""The capture runs a script as `python script.py` would: as `__main__` in sys.modules, its folder
first on sys.path, its argv and __file__, so eager torch.cond, a compiled function storing a global
and pickling a class of the script behave as they do without the capture."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import SCENARIOS, capture

from inspector.core.readers.session_loader import open_path


def _last_json_line(text: str) -> dict:
    return json.loads([line for line in text.splitlines() if line.startswith("{")][-1])


def test_a_script_prints_under_capture_what_it_prints_under_python(tmp_path, inductor_cache):
    script = SCENARIOS / "as_main_script.py"
    env = dict(os.environ, OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(inductor_cache))
    plain = subprocess.run([sys.executable, str(script), "--flag", "7"], capture_output=True, text=True, env=env,
                           timeout=600)
    assert plain.returncode == 0, plain.stderr[-3000:]
    from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script

    plan = plan_script(script, ["--flag", "7"], tmp_path / "s", CaptureSettings(threads=1), None)
    plan.env.update(TORCHINDUCTOR_CACHE_DIR=str(inductor_cache))
    process = CaptureProcess(plan)
    process.wait()
    assert process.exit_code == 0, (tmp_path / "s" / "stderr.txt").read_text()[-3000:]
    under_capture = _last_json_line((tmp_path / "s" / "stdout.txt").read_text())
    expected = _last_json_line(plain.stdout)
    assert expected["name"] == "__main__" and expected["box"] == 3 and not expected["runner_on_path"]
    assert under_capture == expected


def test_an_entry_point_storing_a_global_and_calling_cond_eagerly_is_measured(tmp_path, inductor_cache):
    process = capture(SCENARIOS / "as_main_entry_point.py", tmp_path / "s", inductor_cache, profile=False)
    assert process.exit_code == 0, (tmp_path / "s" / "stderr.txt").read_text()[-3000:]
    session = open_path(tmp_path / "s")
    assert session.manifest.error is None
    assert session.results.allclose is True
