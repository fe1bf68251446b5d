"""A session from anyone: its dynamo_code/ and sources/ indexes may be damaged or name files outside
the folder. The session opens with what is readable, counts the rest, and never reads a file an index
names outside its own folder."""

from __future__ import annotations

import json
import shutil

from conftest import ROOT

from inspector.core.readers.session_loader import open_path
from inspector.core.readers.source_snapshot import captured_sources, source_text

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _session_copy(tmp_path):
    folder = tmp_path / "session"
    shutil.copytree(BUNDLED, folder)
    return folder


def test_a_damaged_dynamo_code_index_is_counted_and_the_session_opens(tmp_path):
    folder = _session_copy(tmp_path)
    (tmp_path / "secret.txt").write_text("not for the app")
    code = folder / "dynamo_code"
    code.mkdir()
    (code / "0.modified_source.txt").write_text("def forward(self, x):\n    return __compiled_fn_1(x)\n")
    (code / "index.json").write_text(json.dumps({"decompiler": "yes", "entries": [
        {"compile_id": "0/0", "function": "forward",
         "files": {"MODIFIED_SOURCE": "0.modified_source.txt", "ORIGINAL_SOURCE": "../../secret.txt",
                   "ORIGINAL_BYTECODE": 42}},
        {"compile_id": "not an id", "function": "forward", "files": {}},
        "a string where an entry should be",
    ]}))
    session = open_path(folder)
    unit = next(unit for unit in session.units if str(unit.compile_id) == "[0/0]")
    texts = {artifact.name: artifact.text for artifact in unit.artifacts if artifact.name.startswith("forward_")}
    assert texts == {"forward_MODIFIED_SOURCE": "def forward(self, x):\n    return __compiled_fn_1(x)\n"}
    assert session.problems.get_state()["bad_record"]["count"] == 2


def test_a_sources_index_naming_files_outside_its_folder_is_not_followed(tmp_path):
    folder = _session_copy(tmp_path)
    script = tmp_path / "model.py"
    script.write_text("x = 1\n")
    sources = folder / "sources"
    sources.mkdir()
    (sources / "index.json").write_text(json.dumps({
        str(script): {"file": "../../model.py"},  # not a copy's name: ignored, the file on disk is read
        "/etc/passwd": {"file": "/etc/passwd"},
        "other.py": "not an entry",
    }))
    assert captured_sources(folder) == {}
    shown = source_text(str(script), folder, captured_sources(folder))
    assert shown.text == "x = 1\n" and shown.note.startswith("Read from disk now")
    (sources / "index.json").write_text("{ not json")
    assert captured_sources(folder) == {}
