"""Sessions people share: .tcinspect bundles (and hostile ones), the HTML report (with hostile log
content), and the frozen desktop build running its self-test with no Python packages reachable."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from inspector.core.outputs.html_report import render_report
from inspector.core.readers.session_bundle import UnsafeBundle, extract_bundle, save_bundle
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_bundle_round_trip_opens_the_same_session(tmp_path):
    bundle, skipped = save_bundle(BUNDLED, tmp_path / "shared")
    assert bundle.name == "shared.tcinspect" and skipped == []
    session = open_path(bundle)
    original = open_path(BUNDLED)
    assert session.source == bundle and session.kind == "capture"
    assert [str(u.compile_id) for u in session.units] == [str(u.compile_id) for u in original.units]
    assert len(session.breaks) == len(original.breaks) and session.results == original.results


def test_symlinks_are_never_followed_into_a_bundle(tmp_path):
    session = tmp_path / "session"
    shutil.copytree(BUNDLED, session)
    secret = tmp_path / "secret.txt"
    secret.write_text("private key")
    (session / "leak.txt").symlink_to(secret)
    bundle, skipped = save_bundle(session, tmp_path / "out.tcinspect")
    assert skipped == ["leak.txt"]
    with zipfile.ZipFile(bundle) as archive:
        assert "leak.txt" not in archive.namelist()


def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(BUNDLED / "manifest.json", "manifest.json")
        for info, data in entries:
            archive.writestr(info, data)
    return path


def _symlink_entry() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("trace/link.log")
    info.external_attr = (0o120777 << 16)
    return info


@pytest.mark.parametrize("name, entries, reason", [
    ("dotdot", [("../../escaped.txt", b"x")], "points outside"),
    ("absolute", [("/tmp/absolute.txt", b"x")], "absolute path"),
    ("symlink", [(_symlink_entry(), b"/etc/passwd")], "symbolic link"),
    ("bomb", [("trace/big.log", b"\0" * (64 << 20))], "zip bomb"),
])
def test_hostile_bundles_are_refused_with_a_message(tmp_path, name, entries, reason):
    bundle = _zip(tmp_path / f"{name}.tcinspect", entries)
    with pytest.raises(UnsafeBundle, match=reason):
        extract_bundle(bundle, tmp_path / "cache")
    assert not (tmp_path / "escaped.txt").exists() and not Path("/tmp/absolute.txt").exists()
    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(bundle)], capture_output=True, text=True)
    assert done.returncode == 2 and "refused" in done.stderr and "Traceback" not in done.stderr


def test_a_file_that_is_not_a_zip_is_refused(tmp_path):
    fake = tmp_path / "fake.tcinspect"
    fake.write_bytes(b"not a zip at all")
    with pytest.raises(UnsafeBundle, match="not a zip"):
        extract_bundle(fake, tmp_path / "cache")


def _poison_log(source: Path, target: Path, payload: str) -> None:
    """Copy a real log, putting `payload` into every break reason and the user's file names, with
    the md5s recomputed so the log is well-formed (only its content is hostile)."""
    out = []
    lines = source.read_text().split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        body = []
        index += 1
        while index < len(lines) and lines[index].startswith("\t"):
            body.append(lines[index][1:])
            index += 1
        if "dynamo_graph_break_reason" in line or '"str": [' in line or "recompile_reasons" in line:
            line = line.replace("mlp_breaks.py", f"mlp{json.dumps(payload)[1:-1]}.py")  # inside a JSON string
            body = [b.replace("Data-dependent branching", f"Data-dependent {payload}")
                     .replace("mlp_breaks.py", f"mlp{payload}.py").replace("size mismatch", f"size {payload} mismatch")
                    for b in body]
            if body:
                digest = hashlib.md5("\n".join(body).encode()).hexdigest()
                line = re.sub(r'"has_payload": "[0-9a-f]+"', f'"has_payload": "{digest}"', line)
        out.append(line)
        out += ["\t" + b for b in body]
    target.write_text("\n".join(out))


def test_html_report_escapes_everything_taken_from_logs(tmp_path):
    hostile = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
    log = tmp_path / "dedicated_log_torch_trace_hostile.log"
    _poison_log(next((BUNDLED / "trace").glob("*.log")), log, hostile)
    session = open_path(log)
    assert not session.problems
    assert any(hostile in brk.reason for brk in session.breaks)
    html = render_report(session)
    assert "<script" not in html.lower() and "<img" not in html.lower()  # present only as escaped text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Content-Security-Policy" in html


def test_selftest_passes_from_source():
    done = subprocess.run([sys.executable, "-m", "inspector", "--selftest"], capture_output=True, text=True,
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "selftest passed" in done.stdout
