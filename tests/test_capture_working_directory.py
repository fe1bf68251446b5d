"""The capture runs a script where `python script.py` typed in the same place would: in the caller's
working directory, not the script's folder, so a relative path among its arguments and a file it
opens by a relative name mean the same thing with and without the capture."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = '''
import json, os, sys
import torch

f = torch.compile(lambda x: x + 1, backend="eager")
f(torch.ones(2))
with open(sys.argv[1]) as handle:
    said = handle.read()
print(json.dumps({"cwd": os.getcwd(), "read": said}))
'''


@pytest.mark.slow
def test_a_capture_runs_the_script_in_the_callers_working_directory(tmp_path, inductor_cache):
    script_folder, caller = tmp_path / "m", tmp_path / "caller"
    script_folder.mkdir()
    caller.mkdir()
    (script_folder / "s.py").write_text(SCRIPT)
    (caller / "data.txt").write_text("next to the caller")
    (script_folder / "data.txt").write_text("next to the script")
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=str(inductor_cache),
               TCI_NO_HISTORY="1")
    plain = subprocess.run([sys.executable, str(script_folder / "s.py"), "data.txt"], cwd=caller, env=env,
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == 0, plain.stderr[-3000:]
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", "--quiet", "-o", str(tmp_path / "session"),
                           str(script_folder / "s.py"), "data.txt"], cwd=caller, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = (tmp_path / "session" / "stdout.txt").read_text()
    under_capture = json.loads([line for line in printed.splitlines() if line.startswith("{")][-1])
    expected = json.loads(plain.stdout.strip().splitlines()[-1])
    assert expected == {"cwd": str(caller), "read": "next to the caller"}
    assert under_capture == expected
