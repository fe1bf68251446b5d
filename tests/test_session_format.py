"""The session format: a session written by a newer tool is refused with a message that says so
(never misread); the current and earlier versions open."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.readers.session_format import FORMAT_VERSION, NewerSessionFormat
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _copy_with_version(tmp_path: Path, version) -> Path:
    session = tmp_path / "session"
    shutil.copytree(BUNDLED, session)
    manifest = json.loads((session / "manifest.json").read_text())
    if version is None:
        manifest.pop("format_version")
    else:
        manifest["format_version"] = version
    (session / "manifest.json").write_text(json.dumps(manifest))
    return session


def test_a_newer_session_format_is_refused_with_a_message(tmp_path):
    session = _copy_with_version(tmp_path, FORMAT_VERSION + 1)
    with pytest.raises(NewerSessionFormat, match=r"update compile-inspector"):
        open_path(session)
    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(session)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"session format {FORMAT_VERSION + 1}" in done.stderr


@pytest.mark.parametrize("version", [None, "garbage", 1])
def test_the_first_format_and_an_unversioned_manifest_open(tmp_path, version):
    session = open_path(_copy_with_version(tmp_path, version))
    assert session.manifest.get_state()["format_version"] == FORMAT_VERSION
    assert len(session.breaks) == 4 and session.results is not None

