"""Hostile and broken input (issue 13): nothing is read from outside the opened folder, nothing is
written outside a private folder, nothing hangs and nothing ends in a traceback. Each test rebuilds
one finding of the review from the bundled real session or a corpus log."""

from __future__ import annotations

import json
import os
import shutil
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from inspector.core.readers.session_bundle import UnsafeBundle, extract_bundle, save_bundle
from inspector.core.readers.session_loader import open_path
from inspector.core.readers.sources import NotCompileOutput
from cli_runner import run_cli, run_cli_process

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LOG = next((BUNDLED / "trace").glob("*.log"))
SECRET = "s3cr3t-0f-an0ther-f0lder"
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def session(tmp_path) -> Path:
    copy = tmp_path / "session"
    shutil.copytree(BUNDLED, copy)
    return copy


@pytest.fixture
def secret(tmp_path) -> Path:
    file = tmp_path / "outside" / "secret.txt"
    file.parent.mkdir()
    file.write_text(f"V1202 11:01:22.649000 1 x.py:1] {{\"str\": [\"{SECRET}\", 0]}}\n{SECRET}\n")
    return file


def _edit_json(file: Path, change) -> None:
    document = json.loads(file.read_text())
    file.write_text(json.dumps(change(document)))


# --- 4, 9: FIFOs, devices and links named like logs -------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "dev_urandom"])
def test_a_fifo_or_device_named_like_a_log_is_skipped_and_counted(tmp_path, session, kind):
    target = session / "trace" / "dedicated_log_torch_trace_rank_9.log"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero" if kind == "dev_zero" else "/dev/urandom")
    opened = open_path(session)
    assert opened.problems.counts["unsafe_file"] == 1
    assert len(opened.units) == len(open_path(BUNDLED).units)
    done = run_cli("summary", session)
    assert done.returncode == 0 and "left out" in done.stdout
    assert run_cli("report", session, "-o", tmp_path / "r.html").returncode == 0
    assert run_cli("diff", session, BUNDLED).returncode == 0
    done = run_cli("bundle", session, "-o", tmp_path / "b")
    assert done.returncode == 0 and "dedicated_log_torch_trace_rank_9.log" in done.stderr
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / target.name).symlink_to(target) if kind != "fifo" else os.mkfifo(alone / target.name)
    done = run_cli("summary", alone)
    assert done.returncode == 2 and "left out" in done.stderr
    done = run_cli("summary", alone / target.name)
    assert done.returncode == 2 and "not a regular file" in done.stderr


def test_a_log_linked_from_outside_the_session_is_not_read(tmp_path, session, secret):
    (session / "trace" / "dedicated_log_torch_trace_rank_1.log").symlink_to(secret)
    opened = open_path(session)
    assert opened.problems.counts["unsafe_file"] == 1
    done = run_cli("summary", session)
    assert SECRET not in done.stdout and "outside the opened folder" in done.stdout
    run_cli("report", session, "-o", tmp_path / "r.html")
    assert SECRET not in (tmp_path / "r.html").read_text()
    json_out = run_cli("summary", "--json", session).stdout
    assert SECRET not in json_out


def test_a_manifest_or_results_linked_from_outside_is_not_read(session, secret):
    (session / "results.json").unlink()
    (session / "results.json").symlink_to(secret)
    opened = open_path(session)
    assert opened.results is None and opened.problems.counts["unsafe_file"] == 1


# --- 10: lenient first line -------------------------------------------------------------------

@pytest.mark.parametrize("damage", [b"\xef\xbb\xbf", b"\0" * 16, b"V1202 11:01:22.6490"])
def test_a_log_with_a_bom_nuls_or_a_damaged_first_line_opens(tmp_path, damage):
    file = tmp_path / "damaged.log"
    file.write_bytes(damage + LOG.read_bytes())
    opened = open_path(file)
    assert len(opened.units) == len(open_path(LOG).units)
    assert opened.problems  # the damage is counted


@pytest.mark.parametrize("text", [b"# a README\n\nsome prose\n", b"import torch\nprint(1)\n", os.urandom(4096)])
def test_a_file_that_is_not_a_log_is_still_refused(tmp_path, text):
    file = tmp_path / "notes.txt"
    file.write_bytes(text)
    with pytest.raises(NotCompileOutput):
        open_path(file)


# --- 5: wrong-typed fields --------------------------------------------------------------------

WRONG_FIELDS = [
    ("manifest.json", lambda m: [m]),
    ("manifest.json", lambda m: {**m, "error": "boom"}),
    ("manifest.json", lambda m: {**m, "settings": ["mode"]}),
    ("manifest.json", lambda m: {**m, "script": ["/etc/passwd"]}),
    ("results.json", lambda r: [r]),
    ("results.json", lambda r: {**r, "eager": [1, 2]}),
    ("results.json", lambda r: {**r, "compiled": {**r["compiled"], "median_s": "fast"}}),
    ("results.json", lambda r: {**r, "correctness": [{"inputs": "x", "allclose": False, "max_abs_error": "big",
                                                       "max_rel_error": 1}]}),
    ("results.json", lambda r: {**r, "profile": {"compiled": {**r["profile"]["compiled"],
                                                              "ops": [{"name": 5}, "op"]}}}),
    ("results.json", lambda r: {**r, "counters": {"graph_break": {"x": "2"}}, "memory_eager": {"rss": "lots"}}),
    ("results.json", lambda r: {**r, "tolerance": [], "environment": "2.13", "profile": "on"}),
    ("results.json", lambda r: {**r, "compiled": {**r["compiled"], "min_s": None, "median_s": float("inf")}}),
]


@pytest.mark.parametrize("name, change", WRONG_FIELDS)
def test_a_wrong_typed_field_is_counted_and_the_session_opens(tmp_path, session, name, change):
    _edit_json(session / name, change)
    opened = open_path(session)
    assert opened.problems.counts["bad_field"] >= 1
    assert len(opened.units) == len(open_path(BUNDLED).units)
    summary = run_cli("summary", session)
    assert summary.returncode == 0 and "unexpected type" in summary.stdout
    json.loads(run_cli("summary", "--json", session).stdout, parse_constant=_no_constants)
    assert run_cli("report", session, "-o", tmp_path / "r.html").returncode == 0
    assert run_cli("check", session, "--baseline", BUNDLED, "--max-breaks", "9").returncode in (0, 1, 4)


def _no_constants(name):
    raise ValueError(f"{name} is not JSON")


# --- 6: nesting -------------------------------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_json_in_envelopes_payloads_manifest_and_results_is_counted(tmp_path, session):
    lines = LOG.read_text().split("\n")
    lines.insert(3, 'V1202 11:01:22.649000 1 x.py:1] {"artifact": ' + DEEP + "}")
    chromium = 'V1202 11:01:22.649000 1 x.py:1] {"chromium_event": {}, "has_payload": "%s"}'
    import hashlib
    lines.insert(3, chromium % hashlib.md5(DEEP.encode()).hexdigest() + "\n\t" + DEEP)
    log = session / "trace" / LOG.name
    log.write_text("\n".join(lines))
    (session / "manifest.json").write_text(DEEP)
    (session / "results.json").write_text('{"eager": ' + DEEP + "}")
    opened = open_path(session)
    assert opened.problems.counts["bad_json"] >= 3  # manifest, results, the envelope
    assert len(opened.units) == len(open_path(BUNDLED).units)
    done = run_cli("summary", session)
    assert done.returncode == 0 and "nested too deeply" in done.stdout
    assert run_cli("report", session, "-o", tmp_path / "r.html").returncode == 0


def test_unknown_results_fields_nested_deep_are_left_out(session):
    _edit_json(session / "results.json", lambda r: {**r, "extra": json.loads("[" * 200 + "]" * 200)})
    opened = open_path(session)
    assert "extra" not in opened.results.get_state() and opened.problems.counts["bad_field"] == 1
    json.loads(run_cli("summary", "--json", session).stdout)


# --- 7, 12: numbers and arguments -------------------------------------------------------------

@pytest.mark.parametrize("name", ["inductor_provenance_jit_cuda_log.txt",
                                  "multi_rank_logs/dedicated_log_torch_trace_rank_0.log"])
def test_text_summary_of_logs_cut_anywhere_never_divides_by_zero(tmp_path, corpus, name):
    from inspector.core.outputs.summary import summarize
    from inspector.core.outputs.summary_text import render_text

    data = (corpus / name).read_bytes()  # cut at 1/60 and 10/60 of their length, both divided by zero
    for index in range(1, 60, 3):
        cut = tmp_path / f"dedicated_log_torch_trace_{index}.log"
        cut.write_bytes(data[: len(data) * index // 60])
        assert "Compile time" in render_text(summarize(open_path(cut)))


def test_a_zero_stage_time_renders_without_dividing_by_zero():
    from inspector.core.outputs.summary import summarize
    from inspector.core.outputs.summary_text import render_text

    summary = summarize(open_path(LOG))
    summary["compile_time"]["self_s"] = {stage: 0.0 for stage in summary["compile_time"]["self_s"]}
    assert "compile time" in render_text(summary).lower()


def test_json_outputs_are_strict_json_with_infinite_values_in_the_log(tmp_path):
    text = LOG.read_text()
    log = tmp_path / "dedicated_log_torch_trace_inf.log"
    log.write_text(text.replace('"entire_frame_compile_time_s": ', '"entire_frame_compile_time_s": Infinity, "was": ')
                   .replace('"graph_op_count": ', '"graph_op_count": NaN, "was_count": '))
    for args in (("summary", "--json", log), ("diff", "--json", log, LOG)):
        done = run_cli(*args)
        assert done.returncode == 0
        json.loads(done.stdout, parse_constant=_no_constants)


def test_a_negative_tolerance_is_refused():
    done = run_cli("check", BUNDLED, "--baseline", BUNDLED, "--tolerance", "-5")
    assert done.returncode == 2 and "--tolerance" in done.stderr


def test_a_diff_of_two_ranks_names_the_rank(corpus):
    ranks = corpus / "multi_rank_logs"
    done = run_cli("diff", ranks / "dedicated_log_torch_trace_rank_0.log",
                   ranks / "dedicated_log_torch_trace_rank_1.log")
    only = [line for line in done.stdout.splitlines() if "only in" in line]
    assert only and all("rank " in line for line in only)


# --- 14: text that reaches a terminal or a page -----------------------------------------------

def test_log_text_cannot_drive_the_terminal_or_reorder_text(tmp_path):
    hostile = "\x1b]0;pwned\x07\x1b[2J\u202eevil"
    text = LOG.read_text()
    log = tmp_path / "dedicated_log_torch_trace_esc.log"
    log.write_text(text.replace("mlp_breaks.py", "mlp" + json.dumps(hostile)[1:-1] + ".py"))
    done = run_cli("summary", log)
    assert "\\x1b]0;pwned" in done.stdout
    assert "\x1b" not in done.stdout and "\u202e" not in done.stdout and "\x07" not in done.stdout
    run_cli("report", log, "-o", tmp_path / "r.html")
    assert "\u202e" not in (tmp_path / "r.html").read_text()


# --- 2, 3, 8: bundles -------------------------------------------------------------------------

def _zip(path: Path, entries: list[tuple[zipfile.ZipInfo | str, bytes]], with_manifest: bool = True) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        if with_manifest:
            archive.write(BUNDLED / "manifest.json", "manifest.json")
        for info, data in entries:
            archive.writestr(info, data)
    return path


def test_each_open_extracts_into_a_fresh_private_folder(tmp_path):
    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    first, second = extract_bundle(bundle, tmp_path / "x"), extract_bundle(bundle, tmp_path / "x")
    assert first != second and (first / "manifest.json").is_file()
    assert oct(first.stat().st_mode & 0o777) == "0o700"
    assert bundle.stem in first.name and len(first.name) > len(bundle.stem) + 8  # unguessable suffix


def test_a_link_planted_at_the_old_predictable_place_is_not_followed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # a temp dir of this test's own
    (tmp_path / "tmp").mkdir()
    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    victim = tmp_path / "victim"
    victim.mkdir()
    old_place = Path(tempfile.gettempdir()) / "torch-compile-inspector" / "bundles"
    old_place.mkdir(parents=True, exist_ok=True)
    import hashlib
    planted = old_place / f"shared-{hashlib.sha256(bundle.read_bytes()).hexdigest()[:16]}"
    planted.unlink(missing_ok=True)
    planted.symlink_to(victim)
    try:
        session = open_path(bundle)
        assert session.units and not any(victim.iterdir())
    finally:
        planted.unlink()


def _one_entry_many_times(path: Path, names: list[str], data: bytes) -> Path:
    """What `_zip` writes for `data` under each of `names`, with `data` deflated once: deflating it anew
    for each name costs seconds for a thousand MiB of zeros, and gives the same bytes each time."""
    packer = zlib.compressobj(zlib.Z_DEFAULT_COMPRESSION, zlib.DEFLATED, -15)  # as ZipFile.writestr does
    packed, crc = packer.compress(data) + packer.flush(), zlib.crc32(data)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.write(BUNDLED / "manifest.json", "manifest.json")
        for name in names:
            info = zipfile.ZipInfo(name, time.localtime()[:6])
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o600 << 16
            info.file_size, info.compress_size, info.CRC = len(data), len(packed), crc
            info.header_offset = archive.fp.tell()
            archive.fp.write(info.FileHeader() + packed)
            archive.filelist.append(info)
            archive.NameToInfo[name] = info
        archive.start_dir = archive.fp.tell()  # where close() writes the central directory
    return path


def test_a_thousand_one_mib_entries_are_refused_and_nothing_is_left(tmp_path):
    names = [f"trace/{i}.log" for i in range(1000)]
    bundle = _one_entry_many_times(tmp_path / "many.tcinspect", names, b"\0" * (1 << 20))
    assert bundle.stat().st_size < 4 << 20
    parent = tmp_path / "extract"
    with pytest.raises(UnsafeBundle, match="zip bomb"):
        extract_bundle(bundle, parent)
    assert not any(parent.iterdir())


def _lying_sizes(path: Path) -> Path:
    """A zip whose central directory claims a smaller size than the data: the CRC check fails."""
    _zip(path, [("trace/dedicated_log_torch_trace_x.log", LOG.read_bytes()[:200_000])])
    data = bytearray(path.read_bytes())
    name = b"trace/dedicated_log_torch_trace_x.log"
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(name))
    data[central + 16:central + 20] = b"\xde\xad\xbe\xef"  # CRC-32 in the central directory
    data[central + 24:central + 28] = (150_000).to_bytes(4, "little")  # uncompressed size
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("name, make, reason", [
    ("lying", _lying_sizes, "damaged"),
    ("file_and_folder", lambda p: _zip(p, [("trace", b"x"), ("trace/", b"")]), "both a file and a folder"),
    ("child_under_file", lambda p: _zip(p, [("trace", b"x"), ("trace/a.log", b"y")]), "both a file and a folder"),
    ("long_name", lambda p: _zip(p, [("trace/" + "n" * 300 + ".log", b"x")]), "not a usable file name"),
    ("twice", lambda p: _zip(p, [("results.json", b"{}"), ("results.json", b"[]")]), "appears twice"),
])
def test_malformed_zips_are_refused_with_a_message_and_leave_nothing(tmp_path, name, make, reason):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        bundle = make(tmp_path / f"{name}.tcinspect")
    parent = tmp_path / "extract"
    with pytest.raises(UnsafeBundle, match=reason):
        extract_bundle(bundle, parent)
    assert not any(parent.iterdir())
    done = run_cli("summary", bundle)
    assert done.returncode == 2 and reason in done.stderr


def test_bundle_into_a_missing_folder_says_so(tmp_path):
    done = run_cli("bundle", BUNDLED, "-o", tmp_path / "missing" / "dir" / "x")
    assert done.returncode == 2 and "does not exist" in done.stderr


def test_a_closed_bundle_session_leaves_no_extracted_folder(tmp_path):
    from inspector.core.readers.session_loader import close_session, open_path

    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    session = open_path(bundle)
    folder = session.extracted_to
    assert folder is not None and (folder / "manifest.json").is_file()
    close_session(session)
    assert not folder.exists()


def test_a_bundle_the_cli_opened_is_removed_when_it_exits(tmp_path):
    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    work = tmp_path / "tmp"
    work.mkdir()
    done = run_cli_process("summary", bundle, timeout=60, env={"TMPDIR": work})
    assert done.returncode == 0 and not any(work.iterdir())


def test_a_mismatch_with_nan_errors_is_still_reported(session):
    _edit_json(session / "results.json", lambda r: {**r, "allclose": False, "correctness": [
        {"inputs": "example", "outputs": 1, "max_abs_error": float("nan"), "max_rel_error": float("inf"),
         "allclose": False}]})
    done = run_cli("summary", session)
    assert "MISMATCH, max abs error nan" in done.stdout
    json.loads(run_cli("summary", "--json", session).stdout, parse_constant=_no_constants)


@pytest.mark.parametrize("kind", ["fifo", "deep", "link_out"])
def test_a_hostile_graph_break_registry_in_a_session_is_not_read(session, secret, kind):
    """The session's copy of torch's graph-break registry is read like every other file in it: a FIFO
    does not hang, deep nesting does not raise, a link out of the folder is not followed."""
    registry = session / "graph_break_registry.json"
    if kind == "fifo":
        os.mkfifo(registry)
    elif kind == "deep":
        registry.write_text("[" * 100_000 + "]" * 100_000)
    else:
        registry.symlink_to(secret)
    done = run_cli("summary", "--json", session)
    assert done.returncode == 0 and "Traceback" not in done.stderr and SECRET not in done.stdout
    assert json.loads(done.stdout)["break_types"]["registry"]["source"] != "session"
