"""Hostile torch.profiler traces (issue 48), each built from a real trace of the corpus (a V100 training
run's and an A100 Triton run's, ../shared/corpus/hta-traces) damaged or blown up: a trace beside a log
reached through a link out of the log's folder is not read; a gzip bomb or a big plain trace costs a
bounded multiple of its size; arguments of the wrong type, a cut-off end, a non-UTF-8 byte, an infinite
time, bytes after the gzip stream and a FIFO in a rank folder are counted and said, never a traceback
or a lost file — alone, beside a log, in a bundle and in a rank folder; comparing many ranks' regions
takes time linear in them."""

from __future__ import annotations

import copy
import functools
import gc
import gzip
import json
import os
import shutil
import time
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from inspector.core.analysis.gpu_profile import gpu_profile
from inspector.core.analysis.profile_ranks import compare_runs, rank_run
from inspector.core.outputs.gpu_summary import profile_section
from inspector.core.readers.profiler_trace import MAX_TRACE_BYTES, read_profiler_trace
from inspector.core.readers.sources import detect
from cli_runner import run_cli, run_cli_process

ROOT = Path(__file__).resolve().parent.parent
HTA = ROOT.parent / "shared" / "corpus" / "hta-traces"
TRAINING = HTA / "trace_diff_test.json.gz"  # V100 training run, rank 1: 68,324 complete events, 32 MB inside
TRITON = HTA / "triton_example.json.gz"  # A100: one Inductor Triton kernel, with kernel_file/kernel_hash/grid
CUDA_LOG = ROOT.parent / "shared" / "corpus" / "tlparse-fixtures" / "inductor_provenance_jit_cuda_log.txt"
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
GPU = ("kernel", "gpu_memcpy", "gpu_memset")
NO_CACHE = {"TCI_NO_CACHE": "1"}  # every read from the file itself, not from an index an earlier test wrote
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def _corpus():
    if not HTA.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")


def _document(path: Path = TRAINING) -> dict:
    """A fresh copy of the trace's document (a test may edit it)."""
    return json.loads(_decompressed(path))


@functools.lru_cache(maxsize=2)
def _decompressed(path: Path) -> bytes:
    """The trace's text, decompressed once per module: the 32 MB training trace takes a second each time."""
    with gzip.open(path, "rb") as handle:
        return handle.read()


@pytest.fixture(scope="module")
def training_read(training_step):
    """The intact step of the training trace as our reader reads it: what a damaged copy is held against
    (read once per module; the tests only read it)."""
    return read_profiler_trace(training_step)


# --- a read outside the opened folder ------------------------------------------------------------

def _log_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A folder holding the real CUDA run's TORCH_TRACE log, and a folder beside it (outside it)."""
    run, outside = tmp_path / "run", tmp_path / "outside"
    run.mkdir()
    outside.mkdir()
    log = run / "dedicated_log_torch_trace_rank_0.log"
    shutil.copyfile(CUDA_LOG, log)
    return log, outside


def test_a_trace_beside_a_log_is_not_read_through_a_link_out_of_its_folder(tmp_path):
    log, outside = _log_folder(tmp_path)
    secret = outside / "secret.pt.trace.json.gz"
    shutil.copyfile(TRITON, secret)
    (log.parent / "profile.pt.trace.json.gz").symlink_to(secret)
    section, why = profile_section(detect(log).open())
    assert section is None and why == "no profiler trace beside the log"
    done = run_cli("summary", log, env=NO_CACHE)
    assert done.returncode == 0 and "Profile of this run" not in done.stdout and str(secret) not in done.stdout
    (log.parent / "profile.pt.trace.json.gz").unlink()  # the same trace as a file in the folder is read
    shutil.copyfile(TRITON, log.parent / "profile.pt.trace.json.gz")
    done = run_cli("summary", log, env=NO_CACHE)
    assert f"Profile of this run: {log.parent / 'profile.pt.trace.json.gz'}" in done.stdout


def test_the_gpu_tab_lists_no_kernel_of_a_trace_linked_from_outside(qtbot, window, tmp_path):
    log, outside = _log_folder(tmp_path)
    shutil.copyfile(TRITON, outside / "secret.pt.trace.json.gz")
    (log.parent / "profile.pt.trace.json.gz").symlink_to(outside / "secret.pt.trace.json.gz")
    window.open_path(log)
    view = window.gpu_view
    qtbot.waitUntil(lambda: "has no profiler trace" in view.header.text(), timeout=60_000)
    assert view.profile_kernels.rowCount() == 0 and view.profile_trace is None


# --- memory and time -----------------------------------------------------------------------------

def _blown_up(target: Path, inside_bytes: int) -> int:
    """The training trace's header and a real launch → kernel pair (with the CPU op around it),
    repeated until the trace holds `inside_bytes`, gzipped: a small file that inflates a lot. Returns
    how many kernels it holds."""
    document = _document()
    events = [event for event in document.pop("traceEvents") if event.get("ph") == "X"]
    kernels = {event["args"].get("correlation"): event for event in events if event.get("cat") == "kernel"}
    launch = next(event for event in events if event.get("cat") in ("cuda_runtime", "cuda_driver")
                  and event["args"].get("correlation") in kernels)
    op = next(event for event in events if event.get("cat") == "cpu_op")
    block = ",\n".join(json.dumps(event, indent=2) for event in (op, launch, kernels[launch["args"]["correlation"]]))
    chunk = ((block + ",\n") * 1000).encode()
    deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
    with open(target, "wb") as handle:
        handle.write(deflate.compress(json.dumps(document)[:-1].encode() + b', "traceEvents": [\n'))
        for _ in range(inside_bytes // len(chunk)):
            handle.write(deflate.compress(chunk))
        handle.write(deflate.compress(block.encode() + b"\n]}\n") + deflate.flush())
    return inside_bytes // len(chunk) * 1000 + 1


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_profiler_gzip_that_inflates_to_hundreds_of_mb_is_read_in_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.pt.trace.json.gz"
    kernels = _blown_up(bomb, 250 << 20)
    assert bomb.stat().st_size < 2 << 20
    started = time.monotonic()
    done = run_cli_process("summary", bomb, "--json", cache=False, measure_peak=True)
    peak = done.peak_bytes
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    summary = json.loads(done.stdout)
    (kernel,) = summary["kernels"]
    assert kernel["count"] == kernels and summary["unlinked_gpu_events"] == 0
    assert peak < 1 << 30, f"peak {peak >> 20} MiB for {bomb.stat().st_size >> 10} KB inflating to 250 MB"


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_big_plain_trace_costs_less_than_ten_times_its_size(tmp_path):
    """The training trace's events three times over (~100 MB of plain JSON)."""
    document = _document()
    events = document["traceEvents"]
    document["traceEvents"] = events * 3
    plain = tmp_path / "big.pt.trace.json"
    plain.write_text(json.dumps(document, indent=1))
    del document, events
    gc.collect()
    done = run_cli_process("summary", plain, "--json", cache=False, measure_peak=True)
    peak = done.peak_bytes
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    gpu = sum(1 for event in _document()["traceEvents"] if event.get("ph") == "X" and event.get("cat") in GPU)
    assert sum(row["count"] for row in summary["kernels"]) == 3 * gpu
    assert peak < 5 * plain.stat().st_size, f"peak {peak >> 20} MiB for {plain.stat().st_size >> 20} MiB"


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_gzip_over_the_cap_is_refused_quickly_in_little_memory(tmp_path):
    bomb = tmp_path / "over.pt.trace.json.gz"
    spaces = b" " * (4 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(bomb, "wb") as handle:
        handle.write(deflate.compress(b'{"traceEvents": ['))
        for _ in range(MAX_TRACE_BYTES // len(spaces) + 2):
            handle.write(deflate.compress(spaces))
        handle.write(deflate.compress(b"]}") + deflate.flush())
    started = time.monotonic()
    done = run_cli_process("summary", bomb, cache=False, measure_peak=True)
    peak = done.peak_bytes
    assert time.monotonic() - started < 25
    assert done.returncode == 2 and "more than 1024 MiB once decompressed (not read)" in done.stderr
    assert peak < 200 << 20, f"peak {peak >> 20} MiB to refuse it"


# --- fields of the wrong type --------------------------------------------------------------------

def _mistyped(document: dict) -> dict:
    """`document` with one of each wrong type torch never writes: a list correlation, External id and
    device, a device written "0" beside 0, an int kernel_file and a grid of lists."""
    document = copy.deepcopy(document)
    events = [event for event in document["traceEvents"] if event.get("ph") == "X"]
    kernels = [event for event in events if event.get("cat") == "kernel"]
    ops = [event for event in events if event.get("cat") == "cpu_op" and "kernel_hash" in event.get("args", {})]
    launches = [event for event in events if event.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in event.get("args", {})]
    launches[0]["args"]["correlation"] = [launches[0]["args"]["correlation"]]
    kernels[0]["args"]["External id"] = [1, 2]
    kernels[0]["args"]["grid"] = [[1, 1], [1]]
    kernels[-1]["args"]["device"] = [0]
    for kernel in kernels[1:-1]:
        kernel["args"]["device"] = "0"
    if ops:
        ops[0]["args"]["kernel_file"] = 12345
    return document


def _write(document: dict, target: Path) -> Path:
    """`document` as a trace file (gzipped where its name says so). Written in one piece at the fastest
    compression: the same text as json.dump writes, in a fraction of the time of its many small writes."""
    text = json.dumps(document).encode()
    with gzip.open(target, "wb", compresslevel=1) if target.suffix == ".gz" else open(target, "wb") as handle:
        handle.write(text)
    return target


def test_fields_of_the_wrong_type_are_counted_and_the_rest_of_the_trace_is_read(tmp_path):
    original = _document(TRITON)
    trace = _write(_mistyped(original), tmp_path / "mistyped.pt.trace.json")
    done = run_cli("summary", trace, "--json", env=NO_CACHE)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["problems"]["bad_trace_field"]["count"] == 5  # correlation, External id, grid, device, kernel_file
    assert "mistyped.pt.trace.json" in summary["problems"]["bad_trace_field"]["examples"][0]
    (kernel,) = summary["kernels"]
    assert kernel["name"] == "triton_poi_fused_add_cos_sin_0" and kernel["count"] == 1
    text = run_cli("summary", trace, env=NO_CACHE)
    assert "Could not read all of the trace: 5 trace fields with an unexpected type" in text.stdout


def test_a_device_written_as_0_and_as_a_string_is_one_device(tmp_path, training_step, training_read):
    document = _document(training_step)
    for number, event in enumerate(e for e in document["traceEvents"] if e.get("cat") in GPU):
        event["args"]["device"] = "0" if number % 2 else 0
    profile = gpu_profile(read_profiler_trace(_write(document, tmp_path / "mixed.pt.trace.json")))
    reference = gpu_profile(training_read)
    (device,) = profile.devices
    assert device.device == 0 and device.busy_us == pytest.approx(reference.devices[0].busy_us)


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_mistyped_fields_reach_no_traceback_beside_a_log_in_a_bundle_or_a_rank_folder(tmp_path):
    log, _ = _log_folder(tmp_path)
    _write(_mistyped(_document(TRITON)), log.parent / "profile.pt.trace.json")
    done = run_cli("summary", log, env=NO_CACHE)
    assert done.returncode == 0 and f"Profile of this run: {log.parent / 'profile.pt.trace.json'}" in done.stdout
    assert "Could not read all of the trace: 5 trace fields with an unexpected type" in done.stdout

    session = tmp_path / "session"
    shutil.copytree(BUNDLED, session)
    captured = json.loads((session / "profile" / "compiled.json").read_text())
    for event in captured["traceEvents"][:50]:
        event.setdefault("args", {}).update({"correlation": [1], "External id": {"a": 1}, "device": [0, "0"],
                                             "kernel_file": 7, "grid": [[2], [3]]})
    (session / "profile" / "compiled.json").write_text(json.dumps(captured))
    from inspector.core.readers.session_bundle import save_bundle
    bundle, _ = save_bundle(session, tmp_path / "damaged.tcinspect")
    for opened in (session, bundle):
        done = run_cli("summary", opened, env=NO_CACHE)
        assert done.returncode == 0, done.stderr

    ranks = tmp_path / "ranks"
    ranks.mkdir()
    for rank in (0, 1):
        document = _mistyped(_document())
        document["distributedInfo"]["rank"] = rank
        _write(document, ranks / f"rank{rank}.pt.trace.json.gz")
    done = run_cli("summary", ranks, "--json", env=NO_CACHE)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [rank["rank"] for rank in summary["ranks"]] == [0, 1] and summary["differences"] == []
    assert summary["problems"]["bad_trace_field"]["count"] == 2 * 4  # no Triton op with a kernel_file here


# --- damaged files -------------------------------------------------------------------------------

def test_a_trace_cut_off_mid_write_opens_with_its_events_up_to_the_cut(tmp_path, training_step):
    text = _decompressed(training_step)
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(text[:len(text) // 2])
    done = run_cli("summary", cut, "--json", env=NO_CACHE)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    complete = json.loads(text[:text.rindex(b"},", 0, len(text) // 2) + 1] + b"]}")  # what was written whole
    gpu = [event for event in complete["traceEvents"] if event.get("ph") == "X" and event.get("cat") in GPU]
    assert sum(row["count"] for row in summary["kernels"]) == len(gpu)
    assert summary["gpu_us"] == pytest.approx(sum(event["dur"] for event in gpu))
    assert summary["problems"]["truncated"]["count"] == 1
    assert "cut.pt.trace.json: cut off after" in summary["problems"]["truncated"]["examples"][0]
    gzipped = tmp_path / "cut.pt.trace.json.gz"  # the same cut inside a gzip stream
    stream = gzip.compress(text, compresslevel=1)  # the fastest level: where it is cut is what matters
    gzipped.write_bytes(stream[:len(stream) // 2])
    done = run_cli("summary", gzipped, env=NO_CACHE)
    assert done.returncode == 0 and "cut.pt.trace.json.gz" in done.stdout and "cut off" in done.stdout


def test_one_byte_that_is_not_utf8_costs_no_event(tmp_path, training_step, training_read):
    text = _decompressed(training_step)
    at = text.index(b'"name": "', len(text) // 2) + 9
    damaged = tmp_path / "byte.pt.trace.json"
    damaged.write_bytes(text[:at] + b"\xff" + text[at:])
    trace = read_profiler_trace(damaged)
    assert len(trace.events) == len(training_read.events)
    assert trace.problems.counts["non_utf8"] == 1
    done = run_cli("summary", damaged, env=NO_CACHE)
    assert done.returncode == 0 and "byte.pt.trace.json: bytes that are not UTF-8" in done.stdout


def test_an_infinite_time_is_a_counted_event_not_an_infinite_total(tmp_path, training_step):
    document = _document(training_step)
    kernels = [event for event in document["traceEvents"] if event.get("cat") == "kernel"]
    kernels[0]["ts"], kernels[1]["dur"] = float("inf"), float("inf")
    damaged = tmp_path / "inf.pt.trace.json"
    damaged.write_text(json.dumps(document))  # json writes Infinity
    done = run_cli("summary", damaged, "--json", env=NO_CACHE)
    summary = json.loads(done.stdout)
    gpu = [event for event in document["traceEvents"] if event.get("ph") == "X" and event.get("cat") in GPU]
    readable = [event for event in gpu if event is not kernels[0] and event is not kernels[1]]
    assert summary["gpu_us"] == pytest.approx(sum(event["dur"] for event in readable))
    assert summary["unreadable_events"] == 2
    text = run_cli("summary", damaged, env=NO_CACHE)
    assert "∞" not in text.stdout and "nan" not in text.stdout.lower()
    assert "2 event(s) that are no readable span" in text.stdout


def test_bytes_after_the_gzip_stream_are_their_own_problem(tmp_path, training_step, training_read):
    damaged = tmp_path / "tail.pt.trace.json.gz"
    damaged.write_bytes(training_step.read_bytes() + b"not gzip at all")
    trace = read_profiler_trace(damaged)
    assert len(trace.events) == len(training_read.events)
    assert dict(trace.problems.counts) == {"trailing_garbage": 1}
    done = run_cli("summary", damaged, env=NO_CACHE)
    assert "about 15 bytes after the end of its gzip stream" in done.stdout
    assert "the run probably died" not in done.stdout


def test_a_second_gzip_member_whose_magic_straddles_a_read_part_is_read(tmp_path):
    """A member that ends one byte before a read part's end leaves the next member's magic split across
    two reads: every member is still read, as `gzip` does, and nothing is called garbage."""
    from inspector.core.readers.safe_files import READ_PART_BYTES

    def member(data: bytes) -> bytes:
        deflate = zlib.compressobj(0, zlib.DEFLATED, 31)  # stored blocks: the size follows the input
        return deflate.compress(data) + deflate.flush()

    opening = b'{"traceEvents": ['
    first = next(member(opening + b" " * (n - len(opening))) for n in range(READ_PART_BYTES - 200, READ_PART_BYTES)
                 if len(member(opening + b" " * (n - len(opening)))) == READ_PART_BYTES - 1)
    events = ",".join(json.dumps({"ph": "X", "cat": "kernel", "name": f"k{index}", "ts": index, "dur": 1,
                                  "pid": 0, "tid": 0}) for index in range(10))
    trace_file = tmp_path / "members.pt.trace.json.gz"
    trace_file.write_bytes(first + member((events + "]}").encode()))
    assert gzip.decompress(trace_file.read_bytes()).startswith(opening)  # a valid gzip file to gzip itself
    trace = read_profiler_trace(trace_file)
    assert [event.name for event in trace.events] == [f"k{index}" for index in range(10)]
    assert not trace.problems.counts


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_fifo_named_like_a_rank_trace_is_counted_and_said(tmp_path):
    for rank in (0, 1):
        document = _document()
        document["distributedInfo"]["rank"] = rank
        _write(document, tmp_path / f"rank{rank}.pt.trace.json.gz")
    os.mkfifo(tmp_path / "rank2.pt.trace.json")
    done = run_cli_process("summary", tmp_path, "--json", timeout=60, cache=False)
    summary = json.loads(done.stdout)
    assert "not a regular file" in summary["unreadable"]["rank2.pt.trace.json"]
    text = run_cli_process("summary", tmp_path, timeout=60, cache=False)
    assert "1 trace(s) could not be read (left out):" in text.stdout and "rank2.pt.trace.json" in text.stdout


# --- ranks compared in linear time ---------------------------------------------------------------

def _ranks(base, count: int, regions: int) -> list:
    """`count` ranks of one real rank's run, each having run its own regions but one in common."""
    return [replace(base, rank=rank, source=f"rank{rank}",
                    regions={"0/0": (1, 1.0),
                             **{f"{rank % 7}/{region}": (1 + rank % 2, 1.0) for region in range(regions)}})
            for rank in range(count)]


def test_ranks_that_ran_different_regions_are_compared_in_linear_time():
    base = rank_run(read_profiler_trace(TRITON))
    timings = []
    for count in (100, 1000):
        runs = _ranks(base, count, 30)
        gc.collect()
        started = time.perf_counter()
        compared = compare_runs("job", runs)
        timings.append(time.perf_counter() - started)
        assert len(compared.differences) == 7 * 30 + 0  # each rank % 7 group's regions ran on those ranks only
    some = next(d for d in compared.differences if d.kind == "region_on_some_ranks")
    assert "ranks 0, 7, 14" in some.text and len(some.text) < 20_000
    assert timings[1] < timings[0] * 40, timings  # 10x the ranks: ~10x the time, not ~100x


def test_one_event_that_is_not_json_costs_only_that_event(tmp_path, training_step, training_read):
    text = _decompressed(training_step)
    start = text.index(b'\n  {\n    "ph": "X"', len(text) // 2) + 1
    end = text.index(b"\n  },", start) + len(b"\n  }")
    damaged = tmp_path / "garbled.pt.trace.json"
    damaged.write_bytes(text[:start] + b'{"ph": "X", "name": oops, "ts": }' + text[end:])
    trace = read_profiler_trace(damaged)
    assert len(trace.events) == len(training_read.events) - 1
    assert dict(trace.problems.counts) == {"bad_json": 1}
    assert "garbled.pt.trace.json" in trace.problems.examples["bad_json"][0]


def test_the_gpu_tab_says_what_of_a_cut_off_trace_it_could_not_read(qtbot, window, tmp_path, training_step):
    text = _decompressed(training_step)
    cut = tmp_path / "cut.pt.trace.json"
    cut.write_bytes(text[:len(text) // 2])
    window.open_path(cut)
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.regions.rowCount() > 0, timeout=60_000)
    header = view.header.text()
    assert "Could not read all of the trace" in header and "cut.pt.trace.json: cut off after" in header


def test_a_profiler_read_stops_between_parts_when_the_app_closes():
    """The app's worker reading a big trace is stopped by what its `progress` raises (the app closing),
    after a part, not after the whole file."""
    from inspector.core.readers.inflated import ReadCancelled

    calls = []

    def closing(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) == 2:
            raise ReadCancelled(str(TRAINING))

    with pytest.raises(ReadCancelled):
        read_profiler_trace(TRAINING, progress=closing)
    assert calls[-1] < TRAINING.stat().st_size


@pytest.mark.parametrize("shape", ["one-byte first member", "empty first member", "gzip named .json",
                                   "plain JSON named .json.gz", "zero padding after it"])
def test_a_trace_is_recognised_from_its_start_however_its_gzip_is_laid_out(tmp_path, shape):
    """The gzip reader reads every member and knows gzip by its first bytes; recognising a file by its
    start must too, else the file is detected as nothing (a `cat a.gz b.gz` whose first member is tiny
    showed one byte)."""
    from inspector.core.readers.profiler_trace import looks_like_profiler_trace

    text = b'{"traceEvents": [' + b'{"ph": "X", "name": "k", "ts": 1, "dur": 2}, ' * 400 + b'{}]}'
    data, name = {
        "one-byte first member": (gzip.compress(text[:1]) + gzip.compress(text[1:]), "a.pt.trace.json.gz"),
        "empty first member": (gzip.compress(b"") + gzip.compress(text), "a.pt.trace.json.gz"),
        "gzip named .json": (gzip.compress(text), "a.pt.trace.json"),
        "plain JSON named .json.gz": (text, "a.pt.trace.json.gz"),
        "zero padding after it": (gzip.compress(text) + b"\0" * 512, "a.pt.trace.json.gz"),
    }[shape]
    (tmp_path / name).write_bytes(data)
    assert looks_like_profiler_trace(tmp_path / name)
