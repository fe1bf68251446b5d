"""A session written by an older format version reaches its migration as that version wrote it: the
loader upgrades first and holds the result to today's shapes after, so a field an older version wrote
in its own shape is carried over instead of being counted as damaged and dropped before the
migration could see it.

Only format 1 has ever been written, so no older session exists to read: the test declares a format 2
whose migration from 1 reads `script` as format 1 writes it here (an object with its path), the one
way to hold the order of upgrade and validation before a real format 2 exists."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inspector.core.readers import session_format
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _script_from_object(manifest: dict, results):
    """Format 1 → 2 (declared by the test): `script` was an object holding the path; it is the path."""
    script = manifest.get("script")
    if isinstance(script, dict):
        manifest = {**manifest, "script": script.get("path")}
    return {**manifest, "format_version": 2}, results


def test_a_migration_receives_the_field_as_the_older_version_wrote_it(tmp_path, monkeypatch):
    monkeypatch.setattr(session_format, "FORMAT_VERSION", 2)
    monkeypatch.setitem(session_format.MIGRATIONS, 1, _script_from_object)
    session_folder = tmp_path / "session"
    shutil.copytree(BUNDLED, session_folder)
    manifest = json.loads((session_folder / "manifest.json").read_text())
    manifest.update(format_version=1, script={"path": "/home/me/train_mlp.py"})
    (session_folder / "manifest.json").write_text(json.dumps(manifest))

    session = open_path(session_folder)

    assert session.manifest.script == "/home/me/train_mlp.py"
    assert "bad_field" not in session.load_problems.get_state()  # nothing of it counted as damaged


def test_a_field_that_fits_no_version_is_still_counted_after_the_upgrade(tmp_path):
    session_folder = tmp_path / "session"
    shutil.copytree(BUNDLED, session_folder)
    manifest = json.loads((session_folder / "manifest.json").read_text())
    manifest["script"] = {"path": "/home/me/train_mlp.py"}  # format 1 (today's) writes a string
    (session_folder / "manifest.json").write_text(json.dumps(manifest))

    session = open_path(session_folder)

    assert session.manifest.script is None
    assert session.load_problems.get_state()["bad_field"]["count"] == 1
