"""The fast paths of the reader change nothing a user sees: the summary is the same with and without
the orjson accelerator and with and without the index cache, on every real log we have; a log that
changed is read again; a damaged or foreign cache entry is ignored, never trusted."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import time
import sys
from pathlib import Path

import pytest

from inspector.core.model.fx_graph_text import first_reader, op_node_names, parse_fx_graph
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs import cached_summary
from inspector.core.outputs.cached_summary import session_summary, summary_identity
from inspector.core.outputs.summary import summarize
from inspector.core.readers import index_cache, json_codec, trace_index_format
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
BUNDLED_LOG = BUNDLED / "trace" / "dedicated_log_torch_trace_example.log"
CORPUS_LOGS = ["inductor_provenance_jit_cuda_log.txt", "multi_rank_logs",
               "multi_rank_logs/dedicated_log_torch_trace_rank_0.log"]


def _summary_text(path: Path) -> str:
    return json.dumps(summarize(open_path(path)), indent=1)


def _settled_copy(source: Path, folder: Path) -> Path:
    """A copy of `source` whose modification time lies in the past (a log still being written is
    not cached)."""
    copy = folder / source.name
    shutil.copyfile(source, copy)
    _age(copy)
    return copy


def _age(path: Path, seconds: float = 60) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    return folder


@pytest.fixture(params=["corpus", "bundled"])
def inputs(request) -> list[Path]:
    if request.param == "bundled":
        return [BUNDLED, BUNDLED_LOG]
    corpus_dir = request.getfixturevalue("corpus")
    return [corpus_dir / name for name in CORPUS_LOGS]


def test_summary_is_the_same_with_and_without_the_accelerator(inputs, monkeypatch):
    monkeypatch.setenv("TCI_NO_CACHE", "1")
    if not json_codec.ACCELERATED:
        pytest.skip("orjson is not installed: there is no accelerator to compare against")
    for path in inputs:
        fast = _summary_text(path)
        monkeypatch.setattr(json_codec, "ACCELERATED", False)
        pure = _summary_text(path)
        monkeypatch.setattr(json_codec, "ACCELERATED", True)
        assert fast == pure, path


def test_summary_is_the_same_with_and_without_the_cache(inputs, cache_dir, monkeypatch):
    for path in inputs:
        monkeypatch.setenv("TCI_NO_CACHE", "1")
        uncached = _summary_text(path)
        monkeypatch.delenv("TCI_NO_CACHE")
        first = open_path(path)  # reads the logs and stores their index
        logs = [rank.log_path for rank in first.ranks]
        assert all(index_cache.load_log(log) is not None for log in logs), f"{path}: index not cached"
        assert json.dumps(summarize(open_path(path)), indent=1) == uncached, f"{path}: from the cached index"
        assert json.dumps(session_summary(open_path(path)), indent=1) == uncached  # stores the summary
        assert index_cache.load_summary(summary_identity(SessionAnalysis(open_path(path)))) is not None
        assert json.dumps(session_summary(open_path(path)), indent=1) == uncached, f"{path}: cached summary"


def test_a_summary_cached_by_another_build_is_worked_out_again(inputs, cache_dir, monkeypatch):
    """A build with new summary fields (same version number) must not show an older build's summary,
    which lacks them: the cache is keyed by the analysis code too."""
    path = inputs[0]
    older = session_summary(open_path(path))
    older.pop("units")  # what an older build wrote: a field this one reads is missing
    index_cache.store_summary(summary_identity(SessionAnalysis(open_path(path))), older)
    monkeypatch.setattr(cached_summary, "code_identity", lambda: "the newer build")
    assert "units" in session_summary(open_path(path))


def test_damaged_log_reads_the_same_from_the_cache(tmp_path, cache_dir):
    """Damage (a cut-off last record, an edited payload) is remembered as it was found."""
    data = BUNDLED_LOG.read_bytes()
    middle = data.index(b"\n\t", len(data) // 2) + 2
    damaged = tmp_path / "dedicated_log_torch_trace_damaged.log"
    damaged.write_bytes(data[:middle] + (b"X" if data[middle:middle + 1] != b"X" else b"Y") + data[middle + 1:-500])
    _age(damaged)
    fresh = _summary_text(damaged)
    assert json.loads(fresh)["unreadable"], "the damage is reported"
    assert index_cache.load_log(damaged) is not None
    assert _summary_text(damaged) == fresh


def test_a_changed_log_is_read_again(tmp_path, cache_dir):
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    before = summarize(open_path(log))
    assert index_cache.load_log(log) is not None
    data = log.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1  # a run that stopped halfway: fewer units
    log.write_bytes(data[:cut])
    _age(log, 30)
    assert index_cache.load_log(log) is None, "the entry names another size and time: not used"
    after = summarize(open_path(log))
    assert len(after["units"]) < len(before["units"])
    assert after == json.loads(_summary_without_cache(log))


def test_a_log_replaced_by_one_of_the_same_size_is_read_again(tmp_path, cache_dir):
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    open_path(log)
    data = bytearray(log.read_bytes())
    graph = data.index(b"dynamo_output_graph")
    data[graph:graph + len(b"dynamo_output_graph")] = b"dynamo_outpux_graph"  # same size, other content
    log.write_bytes(bytes(data))
    _age(log, 30)
    session = open_path(log)
    assert session.unknown_kinds.get("dynamo_outpux_graph"), "read from the file, not from the stale entry"


def _summary_without_cache(path: Path) -> str:
    previous = os.environ.get("TCI_NO_CACHE")
    os.environ["TCI_NO_CACHE"] = "1"
    try:
        return _summary_text(path)
    finally:
        if previous is None:
            del os.environ["TCI_NO_CACHE"]


def _entry(cache_dir: Path, kind: str) -> Path:
    (entry,) = (cache_dir / index_cache.APP_DIR / kind).glob("*.json")
    return entry


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "garbage", "empty", "wrong shape", "wrong types",
                                    "event outside the log", "event never checked"])
def test_a_corrupt_cache_entry_is_ignored(tmp_path, cache_dir, damage):
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    expected = _summary_without_cache(log)
    open_path(log)
    entry = _entry(cache_dir, "index")
    data = entry.read_bytes()
    head, _, rest = data.partition(b"\n")
    body = rest.partition(b"\n")[2]
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flipped byte":
        spot = len(head) + 1 + len(body) // 2
        entry.write_bytes(data[:spot] + bytes([data[spot] ^ 0x20]) + data[spot + 1:])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(4096))
    elif damage == "empty":
        entry.write_bytes(b"")
    else:  # a well-formed entry, signed with this user's key, whose content is not what the reader wrote
        decoded = json.loads(body)
        if damage == "wrong shape":
            decoded["columns"]["kind"] = ["dynamo_start"]
        elif damage == "wrong types":
            decoded["columns"]["line_start"][0] = "not an offset"
        else:
            column, value = ("end", log.stat().st_size + 1) if damage == "event outside the log" else \
                ("state", 0)  # a row never checked: it has no md5 left to check it with
            values = trace_index_format._unpacked(decoded["events"][column], "b" if column == "state" else "q")
            values[0] = value
            decoded["events"][column] = trace_index_format._packed(values)
        _rewrite(entry, json.loads(head), decoded)
    assert index_cache.load_log(log) is None
    assert json.dumps(summarize(open_path(log)), indent=1) == expected


def test_a_summary_entry_for_another_file_is_not_used(tmp_path, cache_dir):
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    session_summary(open_path(log))
    entry = _entry(cache_dir, "summary")
    head, _, rest = entry.read_bytes().partition(b"\n")
    body = rest.partition(b"\n")[2]
    header = json.loads(head)
    header["identity"][2][0]["size"] += 1  # an entry written for a log of another size
    _rewrite(entry, header, json.loads(body))
    assert index_cache.load_summary(index_cache.session_identity(open_path(log))) is None


def _rewrite(entry: Path, header: dict, body, key: bytes | None = None) -> None:
    """Write an entry as the cache does, signed with `key` (default: this user's own key, as only
    someone who can read it could)."""
    key = key if key is not None else (entry.parent.parent / "key").read_bytes()
    data, head = json.dumps(body).encode(), json.dumps(header).encode()
    signature = hmac.new(key, head + b"\n" + data, hashlib.sha256).hexdigest().encode()
    entry.write_bytes(head + b"\n" + signature + b"\n" + data)


def _entry_parts(entry: Path) -> tuple[dict, object]:
    head, _, rest = entry.read_bytes().partition(b"\n")
    return json.loads(head), json.loads(rest.partition(b"\n")[2])


def test_an_entry_with_a_recomputed_checksum_but_no_valid_signature_is_not_trusted(tmp_path, cache_dir):
    """A crafted entry (say, in a restored CI cache) that relabels a record to invent a graph break:
    whatever its checksum says, without this user's key it is not read."""
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    expected = _summary_without_cache(log)
    open_path(log)
    entry = _entry(cache_dir, "index")
    header, body = _entry_parts(entry)
    kinds = body["columns"]["kind"]
    kinds[kinds.index("dynamo_start")] = "dynamo_graph_break"
    _rewrite(entry, header, body, key=os.urandom(32))
    assert index_cache.load_log(log) is None
    data = json.dumps(body).encode()  # the format before signatures: a plain md5 anyone can recompute
    header["md5"] = hashlib.md5(data).hexdigest()
    entry.write_bytes(json.dumps(header).encode() + b"\n" + data)
    assert index_cache.load_log(log) is None
    assert _summary_text(log) == expected


def test_an_in_place_edit_with_the_modification_time_restored_is_noticed(tmp_path, cache_dir):
    """Same size, same mtime, same inode: the change time (which cannot be set back) and the content
    fingerprint still tell."""
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    open_path(log)
    stat = log.stat()
    with open(log, "r+b") as handle:  # in place: the inode stays
        data = handle.read()
        spot = data.index(b"dynamo_output_graph")
        handle.seek(spot)
        handle.write(b"dynamo_outpux_graph")
    os.utime(log, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert log.stat().st_mtime_ns == stat.st_mtime_ns and log.stat().st_ino == stat.st_ino
    assert index_cache.load_log(log) is None
    assert open_path(log).unknown_kinds.get("dynamo_outpux_graph"), "read from the file, not the stale entry"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="ownership is a POSIX notion")
def test_a_cache_others_can_write_is_not_read(tmp_path, cache_dir):
    log = _settled_copy(BUNDLED_LOG, tmp_path)
    open_path(log)
    entry = _entry(cache_dir, "index")
    assert index_cache.load_log(log) is not None
    entry.chmod(0o666)  # anybody could have replaced it
    assert index_cache.load_log(log) is None
    entry.chmod(0o600)
    (cache_dir / index_cache.APP_DIR).chmod(0o777)
    assert index_cache.load_log(log) is None


def test_no_cache_option_neither_reads_nor_writes_the_cache(tmp_path, cache_dir, capsys):
    from inspector.cli import main

    log = _settled_copy(BUNDLED_LOG, tmp_path)
    assert main(["summary", str(log), "--no-cache"]) == 0
    assert "Compile units: " in capsys.readouterr().out
    assert not (cache_dir / index_cache.APP_DIR / "index").exists()


def test_a_fresh_log_is_not_cached(tmp_path, cache_dir):
    """A log written seconds ago may still grow, or change again within the file system's clock."""
    log = tmp_path / BUNDLED_LOG.name
    shutil.copyfile(BUNDLED_LOG, log)
    open_path(log)
    assert index_cache.load_log(log) is None


def test_the_light_graph_reader_finds_the_op_nodes_the_full_parser_finds(inputs):
    for path in inputs:
        for unit in open_path(path).units:
            for artifact in unit.graphs.values():
                text = artifact.text
                assert op_node_names(text) == [node.name for node in parse_fx_graph(text).op_nodes]


def test_the_partial_graph_reader_finds_an_inputs_first_reader_as_the_full_parser_does(inputs):
    """Naming a guard's value reads a Dynamo graph only as far as the first node that reads that
    input; what it finds must be what the whole parse finds, for every input of every real graph."""
    checked = 0
    for path in inputs:
        for unit in open_path(path).units:
            artifact = unit.graphs.get("dynamo")
            if artifact is None:
                continue
            graph = parse_fx_graph(artifact.text)
            for placeholder in (node for node in graph.nodes if node.op == "placeholder"):
                reader = next((node for node in graph.nodes if placeholder.name in node.inputs and node.source), None)
                found = first_reader(artifact.text, placeholder.target)
                assert (found[0].name, found[1].name, found[1].source) \
                    == (placeholder.name, reader.name, reader.source) if reader else found is None
                checked += 1
    assert checked > 20


def test_the_window_shows_how_much_of_a_big_log_is_read(qtbot, window, tmp_path, cache_dir):
    """Opening a log of several chunks moves a determinate bar forward, then the session shows."""
    import subprocess
    import sys

    from conftest import open_and_wait

    big = tmp_path / "dedicated_log_torch_trace_big.log"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"), str(BUNDLED_LOG), str(big), "--mb", "14"],
                   check=True, capture_output=True)
    seen: list[tuple[int, int]] = []
    bar = window.progress_bar
    bar.valueChanged.connect(lambda value: seen.append((value, bar.maximum())))
    loaded = open_and_wait(qtbot, window, big)
    determinate = [value for value, maximum in seen if maximum == 1000 and 0 < value < 1000]
    assert len(determinate) >= 2, seen
    assert determinate == sorted(determinate)
    assert len(loaded.session.units) > 6 * 5
    assert not bar.isVisible()


def test_the_cache_keeps_the_latest_entries_only(tmp_path, cache_dir, monkeypatch):
    monkeypatch.setattr(index_cache, "KEEP_ENTRIES", 2)
    monkeypatch.setattr(index_cache, "PRUNE_EVERY", 1)
    logs, dated, past = [], set(), time.time() - 1000
    for number in range(4):
        folder = tmp_path / f"run{number}"
        folder.mkdir()
        logs.append(_settled_copy(BUNDLED_LOG, folder))
        open_path(logs[-1])
        for entry in set((cache_dir / index_cache.APP_DIR / "index").glob("*.json")) - dated:
            dated.add(entry)  # the entry just written: dated in the order written, whatever the clock's resolution
            os.utime(entry, (past + number, past + number))
    entries = list((cache_dir / index_cache.APP_DIR / "index").glob("*.json"))
    assert len(entries) == 2
    assert index_cache.load_log(logs[1]) is None and index_cache.load_log(logs[3]) is not None
    monkeypatch.setattr(index_cache, "KEEP_BYTES", max(entry.stat().st_size for entry in entries) + 1)
    open_path(logs[0])  # written again, newest: the byte budget keeps it alone
    assert index_cache.load_log(logs[0]) is not None and index_cache.load_log(logs[3]) is None


def _damaged_variants(source: Path, folder: Path) -> list[Path]:
    """`source` intact and damaged every way the md5 checks see: an edited payload, every seventh payload
    edited among bad envelopes (damage between the helper's runs of ranges), CRLF line ends, a bad
    envelope, a payload with no record, and the file cut inside a payload."""
    data = source.read_bytes()
    payload = data.index(b"\n\t") + 2
    records = data.split(b"\nV")  # at each envelope line (glog's level letter starts it; a payload's line, a tab)
    for index in range(3, len(records), 7):
        tab = records[index].find(b"\n\t")
        if tab >= 0:
            records[index] = records[index][:tab + 2] + b"#" + records[index][tab + 2:]
        if index % 3 == 0:
            records[index] = records[index].replace(b"] {", b"] {{", 1)
    variants = {
        "intact": data,
        "edited": data[:payload] + (b"X" if data[payload:payload + 1] != b"X" else b"Y") + data[payload + 1:],
        "many_edited": b"\nV".join(records),
        "crlf": data.replace(b"\n", b"\r\n"),
        "bad_json": data.replace(b'{"dynamo_start"', b'{{{"dynamo_start"', 1),
        "orphan": data[:payload - 2] + b"\n\torphan line" + data[payload - 2:],
        "cut": data[:data.rindex(b"\n\t") + 9],
    }
    paths = []
    for name, content in variants.items():
        path = folder / f"dedicated_log_torch_trace_{name}.log"
        path.write_bytes(content)
        paths.append(path)
    return paths


def _index_facts(log) -> tuple:
    events = log.events
    return ([(record.line_no, record.kind, record.name, record.payload_start, record.payload_end,
              record.payload_intact) for record in log.records],
            list(zip(events.line_nos, events.starts, events.ends, events.states, events.compile_ids)),
            log.problems.get_state(), log.size)


@pytest.mark.parametrize("helper", ["keeps_up", "falls_behind", "dies"])
def test_the_md5_helper_gives_the_serial_index(inputs, tmp_path, monkeypatch, helper):
    """The second-core md5 helper changes nothing: every record's verdict and every problem (their
    order included) are the serial reader's, whether the child answers all, little, or nothing."""
    from inspector.core.readers import digest_helper, torch_trace, trace_scanner

    logs = [path for path in inputs if path.is_file()]
    for path in list(logs):
        (tmp_path / path.stem).mkdir()
        logs += _damaged_variants(path, tmp_path / path.stem)
    serial = {path: _index_facts(torch_trace.read_trace_log(path)) for path in logs}
    started = []
    real_start = digest_helper.DigestHelper.start.__func__

    def start(cls, handle):
        made = real_start(cls, handle)
        started.append(made)
        return made

    monkeypatch.setattr(digest_helper, "HELPER_MIN_BYTES", 0)
    monkeypatch.setattr(digest_helper, "helper_allowed", lambda: True)
    monkeypatch.setattr(digest_helper.DigestHelper, "start", classmethod(start))
    if helper == "falls_behind":
        monkeypatch.setattr(digest_helper, "HELPER_LAG_RANGES", 2)
        monkeypatch.setattr(trace_scanner, "CHUNK_BYTES", 4096)  # many chunks: the lag check runs often
    if helper == "dies":
        monkeypatch.setattr(digest_helper, "HELPER_COMMAND", [sys.executable, "-c", "import sys; sys.exit(3)"])
    for path in logs:
        assert _index_facts(torch_trace.read_trace_log(path)) == serial[path], path
    assert started and all(made is not None for made in started)


def test_the_summary_is_the_same_with_the_md5_helper(inputs, monkeypatch):
    from inspector.core.readers import digest_helper

    monkeypatch.setenv("TCI_NO_CACHE", "1")
    for path in inputs:
        monkeypatch.setattr(digest_helper, "helper_allowed", lambda: False)
        serial = _summary_text(path)
        monkeypatch.setattr(digest_helper, "helper_allowed", lambda: True)
        monkeypatch.setattr(digest_helper, "HELPER_MIN_BYTES", 0)
        assert _summary_text(path) == serial, path


def test_a_read_interrupted_midway_leaves_no_md5_helper_behind(inputs, monkeypatch):
    """Ctrl+C (or any error) in the middle of a read ends the second-core helper with it: no child
    process is left running or unreaped."""
    import os

    from inspector.core.readers import digest_helper, torch_trace, trace_scanner

    log = next(path for path in inputs if path.is_file())
    started = []
    real_start = digest_helper.DigestHelper.start.__func__
    monkeypatch.setattr(digest_helper, "HELPER_MIN_BYTES", 0)
    monkeypatch.setattr(digest_helper, "helper_allowed", lambda: True)
    monkeypatch.setattr(trace_scanner, "CHUNK_BYTES", 4096)  # several chunks: the interruption comes midway
    monkeypatch.setattr(digest_helper.DigestHelper, "start",
                        classmethod(lambda cls, handle: started.append(real_start(cls, handle)) or started[-1]))

    def interrupt(_offset):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        torch_trace.read_trace_log(log, progress=interrupt)
    [helper] = started
    assert helper is not None and helper.process.poll() is not None, "the child has ended"
    with pytest.raises(ChildProcessError):
        os.waitpid(helper.process.pid, os.WNOHANG)  # and was reaped: no zombie left


def test_processes_starting_together_share_one_signing_key(tmp_path):
    """The app's overview workers start together and each may be the first to sign a cache entry:
    every one must get the same whole key (one read half a key once, and stored nothing)."""
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    root = tmp_path / "cache"
    with ProcessPoolExecutor(max_workers=4) as pool:
        keys = list(pool.map(partial(index_cache._key, create=True), [root] * 32))
    assert None not in keys and len(set(keys)) == 1 and (root / "key").read_bytes() == keys[0]
    assert [path.name for path in root.iterdir()] == ["key"]  # no draft left behind


def test_payloads_read_ahead_are_the_bytes_of_the_file_in_any_order(tmp_path):
    """The read-ahead window (torch_trace.READ_AHEAD) hands out the same bytes as reading the file at
    each record's offsets, in file order, backwards and across logs; only a few logs hold a window."""
    from inspector.core.readers import torch_trace

    logs = []
    for index in range(torch_trace.WINDOWS_KEPT + 2):
        copy = tmp_path / f"dedicated_log_torch_trace_{index}.log"
        shutil.copyfile(BUNDLED_LOG, copy)
        logs.append(torch_trace.read_trace_log(copy, verify_md5=False))
    data = BUNDLED_LOG.read_bytes()
    for log in logs:
        records = [record for record in log.records if record.has_payload]
        assert len(records) > 50 and data[-1:] == b"\n"
        for record in records + records[::-1]:
            expected = data[record.payload_start:record.payload_end].replace(b"\n\t", b"\n").removeprefix(b"\t")
            assert log.payload_bytes(record) == expected
    assert record.payload_intact is True  # each payload was checked against its md5 on its first read
    assert sum(log._window is not None for log in logs) <= torch_trace.WINDOWS_KEPT


def test_the_cache_writes_a_big_index_in_slices_as_the_same_json(tmp_path, monkeypatch):
    """A log's index is written a slice at a time (one call of json's encoder held the GIL ~300 ms
    for a 1 GB log, a freeze of the app): the bytes are json's own, and the entry reads back whole."""
    from inspector.core.readers.torch_trace import read_trace_log

    monkeypatch.setattr(json_codec, "DUMPS_SLICE", 7)
    body = {"columns": {"n": list(range(50)), "ids": [[0, 1, 0, None]] * 23, "names": ["é\"\\", None, 2.5] * 9},
            "strings": [[1, "a"]], "nan": float("nan"), "big": 2 ** 80, "keys": {1: 2}, "empty": [], "none": {}}
    assert json_codec.dumps(body) == json.dumps(body, separators=(",", ":")).encode("ascii")

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    log = tmp_path / "dedicated_log_torch_trace_example.log"
    shutil.copy(ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / log.name, log)
    os.utime(log, (time.time() - 3600, time.time() - 3600))  # settled: an entry is kept
    whole = read_trace_log(log)
    index_cache.store_log(whole)
    again = index_cache.load_log(log)
    assert again is not None and [r.payload_end for r in again.records] == [r.payload_end for r in whole.records]


def _log_with_odd_events(folder: Path) -> Path:
    """The bundled log with one chromium event whose payload is not JSON (its md5 matches: torch wrote
    it so) and one stage end that no begin matches: a bad record and an unmatched end, found only when
    the spans are made."""
    data = BUNDLED_LOG.read_text()
    odd = "not json"
    end = json.dumps({"name": "never_began", "ts": 1, "ph": "E", "args": {}, "pid": 0, "tid": 0})
    extra = "".join(f'V1202 12:18:50.598000 7677 torch/_dynamo/utils.py:2350] {{"chromium_event": {{}}, '
                    f'"has_payload": "{hashlib.md5(text.encode()).hexdigest()}"}}\n\t{text}\n' for text in (odd, end))
    copy = folder / BUNDLED_LOG.name
    copy.write_text(extra + data)
    _age(copy)
    return copy


def _spans_and_problems(session) -> tuple:
    spans = [(str(unit.compile_id), [(span.name, span.start_us, span.end_us, span.compile_id, span.depth, span.args,
                                      len(span.children)) for root in unit.spans for span in root.walk()],
              [(marker.name, marker.ts_us, marker.args) for marker in unit.markers]) for unit in session.units]
    return spans, session.problems.get_state()


def test_a_reopen_takes_the_spans_from_the_cache_with_what_was_wrong_in_them(tmp_path, cache_dir, monkeypatch):
    """The stage spans of a log opened before are read from the cache, not made again from its ~10k
    events, and the problems found in the events when they were made are counted again."""
    from inspector.core.readers import trace_spans

    log = _log_with_odd_events(tmp_path)
    first = _spans_and_problems(open_path(log))
    assert first[1]["bad_record"]["count"] == 1 and first[1]["unmatched_span_end"]["count"] == 1
    assert any(spans for _, spans, _ in first[0])

    def no_build(*_args):
        raise AssertionError("the spans were made again")

    monkeypatch.setattr(trace_spans, "build_spans", no_build)
    assert _spans_and_problems(open_path(log)) == first


@pytest.mark.parametrize("damage", ["wrong shape", "span out of its table"])
def test_a_spans_entry_that_is_not_what_the_cache_wrote_is_made_again(tmp_path, cache_dir, damage):
    log = _log_with_odd_events(tmp_path)
    first = _spans_and_problems(open_path(log))
    entry = _entry(cache_dir, "spans")
    header, body = _entry_parts(entry)
    if damage == "wrong shape":
        body["forest"]["roots"] += 1
    else:
        body["forest"]["spans"][0][0] = len(body["forest"]["names"])
    _rewrite(entry, header, body)
    assert index_cache.load_spans(index_cache.load_log(log)) is None
    assert _spans_and_problems(open_path(log)) == first
