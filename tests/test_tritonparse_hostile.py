"""Hostile tritonparse traces (issue 48): real traces from ../shared/corpus, blown up or damaged the
ways a stranger's file can be — a gzip bomb, a line of hundreds of MB, a million launches, an IR of
millions of lines, metadata nested a thousand deep, fields of the wrong type, a cut-off, non-UTF-8 or
garbage-trailed file. Each opens in the CLI (one that could blow up in a child process with a memory
limit: a hang or a blow-up is a failed test) with what is readable and a count of what was not, and
the app ends promptly when it is closed in the middle of reading one."""

from __future__ import annotations

import gc
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.core.outputs.gpu_summary import render_triton_text, summarize_triton
from inspector.core.readers.tritonparse_trace import CAPS, MAX_GRIDS, MAX_IR_CHARS, read_tritonparse
from cli_runner import CliRun, run_cli, run_cli_process

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT.parent / "shared" / "corpus" / "tritonparse-traces"
TORCH_KERNELS = TRACES / "dedicated_log_triton_trace_findhao_.ndjson"
MAPPED = TRACES / "complex_kernels_mapped.ndjson.gz"
NAME = "dedicated_log_triton_trace_hostile.ndjson.gz"
LIMIT_S = 25  # no input may take longer
MEMORY_LIMIT = 2 << 30  # … nor more memory (address space of the child, on top of Python's own)
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def _corpus():
    if not TRACES.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")


def _lines(path: Path) -> list[bytes]:
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    return [line for line in data.split(b"\n") if line.strip()]


def _events(path: Path) -> list[dict]:
    return [json.loads(line) for line in _lines(path)]


def _first(path: Path, kind: str) -> dict:
    return next(event for event in _events(path) if event["event_type"] == kind)


def _member(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def _write(path: Path, *members: bytes) -> Path:
    path.write_bytes(b"".join(members))
    return path


def _line(event: dict) -> bytes:
    return json.dumps(event).encode() + b"\n"


def cli_summary(path: Path, *args: str) -> tuple[CliRun, int]:
    """`summary PATH` in a child process under the memory limit, within LIMIT_S, and the child's peak
    resident memory in bytes."""
    started = time.perf_counter()
    done = run_cli_process("summary", path, *args, timeout=LIMIT_S + 30, cache=False, measure_peak=True,
                           limit_memory_bytes=MEMORY_LIMIT + (1 << 30))
    took = time.perf_counter() - started
    assert took < LIMIT_S, f"{path.name}: {took:.1f} s"
    return done, done.peak_bytes


@pytest.fixture(scope="module")
def baseline_rss(tmp_path_factory) -> int:
    """The CLI's peak RSS on the intact trace: what Python, the imports and a real trace cost."""
    _, peak = cli_summary(MAPPED)
    return peak


def _assert_bounded(path: Path, peak: int, baseline: int) -> None:
    """Memory stays within 10x the file's size over the intact trace's, or the cost of one capped line
    (CAPS.line_bytes: a line is decoded whole), and never near 2 GB."""
    allowance = max(10 * path.stat().st_size, 4 * CAPS.line_bytes)
    assert peak - baseline < allowance and peak < MEMORY_LIMIT, \
        f"{path.name}: peak {peak >> 20} MiB, intact trace {baseline >> 20} MiB, size {path.stat().st_size >> 10} KiB"


# --- size: caps on decompressed bytes, line length, launches, IR --------------------------------------

def _bomb(path: Path) -> Path:
    """A real compilation, then one real launch event 1M times (4.7 GB) in ~5 MB of gzip members."""
    lines = _lines(MAPPED)
    return _write(path, _member(lines[0] + b"\n"), *[_member((lines[1] + b"\n") * 10_000)] * 100)


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_gzip_bomb_of_real_launches_is_cut_at_the_cap_quickly(tmp_path, baseline_rss):
    """4.7 GB of a real launch event in a few MB of gzip: read up to the 1 GiB cap and said so, within
    the time and memory limits."""
    bomb = _bomb(tmp_path / NAME)
    done, peak = cli_summary(bomb)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "larger uncompressed than the reader's cap" in done.stdout and NAME in done.stdout
    launches = int(done.stdout.split(" launch(es)")[0].rsplit(", ", 1)[1].replace(",", ""))
    compilation, launch = _lines(MAPPED)[:2]
    assert launches == (CAPS.decompressed_bytes - len(compilation) - 1) // (len(launch) + 1)
    _assert_bounded(bomb, peak, baseline_rss)


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_line_of_300_mb_is_skipped_unheld_and_the_rest_is_read(tmp_path, baseline_rss):
    """A launch whose name is 300 MB of one letter (a 300 KB gzip): the line is skipped as over-long,
    the compilation before it and the launches after it are read."""
    lines = _lines(MAPPED)
    head = lines[0] + b'\n{"event_type": "launch", "name": "'
    filler = _member(b"x" * (10 << 20))
    trace = _write(tmp_path / NAME, _member(head), *[filler] * 30, _member(b'"}\n' + b"\n".join(lines[1:11]) + b"\n"))
    done, peak = cli_summary(trace, "--json")
    summary = json.loads(done.stdout)
    assert summary["problems"]["overlong_line"]["count"] == 1
    assert summary["launches"] == 10 and len(summary["kernels"]) == 1
    _assert_bounded(trace, peak, baseline_rss)


def _small_launch(event: dict, grid=None) -> dict:
    """A real launch event with only what a launch needs: its kernel's hash, name and grid."""
    return {"event_type": "launch", "name": event["name"], "grid": grid if grid is not None else event["grid"],
            "compilation_metadata": {"hash": event["compilation_metadata"]["hash"]}}


def _many_launches(path: Path, launches: int) -> Path:
    compilation = _lines(MAPPED)[0] + b"\n"
    launch = _line(_small_launch(_first(MAPPED, "launch")))
    block = 10_000 if launches >= 10_000 else launches
    return _write(path, _member(compilation), *[_member(launch * block)] * (launches // block))


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_million_launches_are_counted_per_kernel_not_kept(tmp_path, baseline_rss):
    trace = _many_launches(tmp_path / NAME, 1_000_000)
    done, peak = cli_summary(trace)
    assert done.returncode == 0
    assert "1 kernel compilation(s), 1,000,000 launch(es)" in done.stdout
    _assert_bounded(trace, peak, baseline_rss)


def test_launches_before_their_compilation_and_of_many_grids_are_each_counted_once(tmp_path):
    """A merged trace's launches may come before their compilation; a kernel launched with thousands
    of grids keeps the first MAX_GRIDS and counts the rest together: no launch lost or counted twice."""
    lines = _lines(MAPPED)
    launch = _small_launch(_first(MAPPED, "launch"))
    many = [_line({**launch, "grid": [size, 1, 1]}) for size in range(1, 5_001)]
    trace = _write(tmp_path / NAME, _member(b"".join(many) + b"\n".join(lines[1:] + lines[:1]) + b"\n"))
    read = read_tritonparse(trace)
    intact = read_tritonparse(MAPPED)
    assert read.launches == intact.launches + 5_000 and not read.problems
    kernel = next(kernel for kernel in read.kernels if kernel.hash == launch["compilation_metadata"]["hash"])
    assert len(kernel.grids) == MAX_GRIDS
    assert sum(kernel.grids.values()) + kernel.other_grid_launches == kernel.launches


def test_reading_launches_takes_time_linear_in_their_number(tmp_path):
    """10x the launches: about 10x the time (a per-launch cost that grows with the launches kept
    would show as ~100x)."""
    small, large = _many_launches(tmp_path / "small.ndjson.gz", 20_000), _many_launches(tmp_path / NAME, 200_000)
    read_tritonparse(small)

    def timed(path: Path) -> float:
        gc.disable()
        try:
            started = time.perf_counter()
            trace = read_tritonparse(path)
            return time.perf_counter() - started, trace.launches
        finally:
            gc.enable()

    (small_s, small_n), (large_s, large_n) = min(timed(small) for _ in range(3)), timed(large)
    assert (small_n, large_n) == (20_000, 200_000)
    assert large_s < 30 * small_s, f"{small_s:.3f} s → {large_s:.3f} s"


def _long_ir() -> dict:
    """A real compilation event whose TTIR is 7M lines of two characters (28 MB of JSON: within a line's cap)."""
    event = _first(MAPPED, "compilation")
    name = event["payload"]["metadata"]["name"]
    event["payload"]["file_content"][f"{name}.ttir"] = "ab\n" * 7_000_000
    return event


def test_an_ir_of_millions_of_lines_is_kept_as_one_cut_string(tmp_path, baseline_rss):
    """A TTIR of 7M two-character lines (a 60 KB gzip): kept as one string cut at the cap, its lines
    counted without splitting it, and the cut said."""
    trace = _write(tmp_path / NAME, _member(_line(_long_ir())))
    done, peak = cli_summary(trace)
    assert f"TTIR {-(-MAX_IR_CHARS // 3)} lines" in done.stdout, done.stdout[:2000]  # "ab\n": 3 characters
    assert "1 IR text longer than the reader's cap" in done.stdout  # one, said in the singular
    _assert_bounded(trace, peak, baseline_rss)


# --- damage: cut off, non-UTF-8, garbage after the gzip, gzip damaged --------------------------------

def test_garbage_after_a_complete_gzip_stream_is_its_own_problem_and_every_event_is_read(tmp_path):
    trace = _write(tmp_path / NAME, MAPPED.read_bytes(), b"this is not gzip" * 1000)
    read = read_tritonparse(trace)
    assert read.launches == sum(event["event_type"] == "launch" for event in _events(MAPPED))
    assert set(read.problems.counts) == {"trailing_garbage"}
    assert NAME in read.problems.examples["trailing_garbage"][0]


def test_a_second_gzip_member_is_read_and_zero_padding_is_no_problem(tmp_path):
    """`cat a.gz b.gz` is one gzip file of both; the zero bytes some writers pad a file with are no damage."""
    intact = read_tritonparse(MAPPED)
    trace = read_tritonparse(_write(tmp_path / NAME, MAPPED.read_bytes(), MAPPED.read_bytes(), b"\0" * 512))
    assert trace.launches == 2 * intact.launches and len(trace.kernels) == 2 * len(intact.kernels)
    assert not trace.problems


def test_a_cut_off_trace_opens_with_what_is_readable_naming_the_file(tmp_path):
    data = MAPPED.read_bytes()
    trace = _write(tmp_path / NAME, data[:len(data) // 2])
    read = read_tritonparse(trace)
    assert read.kernels and 0 < read.launches
    assert "truncated" in read.problems.counts and NAME in read.problems.examples["truncated"][0]


def test_a_non_utf8_byte_loses_its_line_only_and_the_problem_names_the_file(tmp_path):
    lines = _lines(MAPPED)
    lines[5] = lines[5].replace(b'"launch"', b'"la\xffnch"', 1)
    trace = _write(tmp_path / NAME, _member(b"\n".join(lines) + b"\n"))
    read = read_tritonparse(trace)
    intact = read_tritonparse(MAPPED)
    assert read.launches == intact.launches - 1 and len(read.kernels) == len(intact.kernels)
    assert read.problems.counts["bad_json"] == 1 and read.problems.examples["bad_json"] == [f"{NAME} line 6"]


# --- types: every field checked where it is read --------------------------------------------------

@pytest.mark.parametrize("grid", [[[1, 2], [3]], {"x": 1}, "1,1,1", [True, 1, 1], [-1, 1, 1], [2**40, 1, 1]],
                         ids=["list-of-lists", "dict", "string", "bool", "negative", "huge"])
def test_a_launch_grid_of_the_wrong_type_is_counted_and_loses_no_launch(tmp_path, grid):
    events = _events(MAPPED)
    launch = next(event for event in events if event["event_type"] == "launch")
    launch["grid"] = grid
    trace = _write(tmp_path / NAME, _member(b"".join(_line(event) for event in events)))
    done = run_cli("summary", trace, "--json", env={"TCI_NO_CACHE": "1"})  # a small file: no limit to hold it to
    summary = json.loads(done.stdout)
    assert summary["launches"] == sum(event["event_type"] == "launch" for event in events)
    assert summary["problems"]["bad_trace_field"]["count"] == 1
    assert sum(kernel["other_grid_launches"] for kernel in summary["kernels"]) == 1
    for kernel in summary["kernels"]:  # every launch counted once: under its grid or with the others
        assert sum(entry["launches"] for entry in kernel["grids"]) + kernel["other_grid_launches"] == kernel["launches"]


def test_metadata_nested_a_thousand_deep_reaches_no_output(tmp_path):
    event = _first(TORCH_KERNELS, "compilation")
    event["payload"]["metadata"]["arch"] = event["payload"]["metadata"]["extern_libs"] = "NESTED"
    nested = b"[" * 1000 + b'"sm90"' + b"]" * 1000
    trace = _write(tmp_path / NAME, _member(_line(event).replace(b'"NESTED"', nested)))
    for args in ((), ("--json",)):
        done, _ = cli_summary(trace, *args)
        assert done.returncode == 0 and event["payload"]["metadata"]["name"] in done.stdout


@pytest.mark.parametrize("file_path", [["a.py"], 7, {"f": 1}])
def test_a_source_file_path_that_is_no_string_is_counted_and_the_join_still_runs(tmp_path, file_path):
    event = _first(TORCH_KERNELS, "compilation")
    event["payload"]["python_source"]["file_path"] = file_path
    trace = _write(tmp_path / NAME, _member(_line(event)))
    read = read_tritonparse(trace)
    assert read.kernels[0].python_file is None and read.problems.counts["bad_trace_field"] == 1
    summary = summarize_triton(read)
    assert summary["kernels"][0]["python"] == {"file": None, "line": read.kernels[0].python_start_line}
    render_triton_text(summary)


@pytest.mark.parametrize("frame, compile_", [(True, False), (-1, -7), ("0", 0), ([0], 0)])
def test_a_pt_info_that_is_no_pair_of_ids_names_no_unit(tmp_path, frame, compile_):
    event = _first(TORCH_KERNELS, "compilation")
    event["pt_info"] = {"frame_id": frame, "frame_compile_id": compile_}
    trace = _write(tmp_path / NAME, _member(_line(event)))
    read = read_tritonparse(trace)
    assert read.kernels[0].compile_id is None and read.problems.counts["bad_trace_field"] == 1
    text = render_triton_text(summarize_triton(read))
    assert "not from torch.compile" in text and "[True/False]" not in text and "[-1/-7]" not in text


@pytest.mark.parametrize("value", [10**12, "²", "12", 5, None, [[1]]], ids=["huge", "superscript", "string", "int",
                                                                            "null", "nested"])
def test_source_mappings_of_the_wrong_type_are_counted_and_the_rest_kept(tmp_path, value):
    event = _first(MAPPED, "compilation")
    mappings = event["payload"]["source_mappings"]
    line, entry = next(iter(mappings["python"].items()))
    entry["ttir_lines"] = value if isinstance(value, list) or value is None else [value]
    trace = _write(tmp_path / NAME, _member(_line(event)))
    read = read_tritonparse(trace)
    kernel = read.kernels[0]
    assert read.problems.counts["bad_trace_field"] == (value not in ("12", 5))
    assert kernel.lines_for("python", int(line), "ttir") == ([12] if value == "12" else [5] if value == 5 else [])
    other_line, _ = list(mappings["python"].items())[1]
    assert kernel.lines_for("python", int(other_line), "ttir") == sorted(
        int(value) for value in mappings["python"][other_line]["ttir_lines"])


@pytest.mark.parametrize("pane, mapping", [("source", {"ttir_lines": [10**12]}), ("source", {"ttir_lines": 5}),
                                           ("source", {"ttir_lines": ["²"]}), ("ir", {"line": "²"}),
                                           ("ir", {"line": 10**12}), ("ir", {"line": 1})],
                         ids=["huge", "not-a-list", "superscript", "ir-superscript", "ir-huge", "ir-before-the-source"])
def test_clicking_a_line_with_a_broken_mapping_tints_nothing_and_raises_nothing(qtbot, tmp_path, no_slot_errors,
                                                                                pane, mapping):
    """The GUI: a clicked line whose mapping names line 10^12, "²", no list, or a source line before
    the kernel's first tints no line in the other pane and raises nothing."""
    from PySide6.QtGui import QTextCursor

    from inspector.gui.views.qt_gpu_view import QtGpuView

    event = _first(MAPPED, "compilation")
    mappings = event["payload"]["source_mappings"]
    start = event["payload"]["python_source"]["start_line"]
    if pane == "source":
        mappings["python"][str(start + 1)] = mapping
    else:
        mappings["ttir"]["2"] = {**mappings["ttir"].get("2", {}), **mapping}
    trace = read_tritonparse(_write(tmp_path / NAME, _member(_line(event))))
    view = QtGpuView()
    qtbot.addWidget(view)
    view.set_triton(trace)
    view.stage.setCurrentText("TTIR")
    clicked, other = (view.source, view.ir) if pane == "source" else (view.ir, view.source)
    other.setExtraSelections([])
    clicked.setTextCursor(QTextCursor(clicked.document().findBlockByNumber(1)))  # the second line: a move
    assert other.extraSelections() == []


# --- the app: closing it while it reads a bomb ------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_the_app_closed_while_reading_a_bomb_ends_promptly(tmp_path):
    """SIGTERM (as a logout sends) while the GPU tab reads a trace of 4.7 GB inside: the process ends
    within seconds, not when the read would."""
    bomb = _bomb(tmp_path / NAME)
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen", PYTHONDONTWRITEBYTECODE="1",
               HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), TCI_NO_CACHE="1")
    app = subprocess.Popen([sys.executable, "-m", "inspector", str(bomb)], cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while _read_so_far(app.pid, bomb) < 1 << 20:  # the GPU tab's read under way (not the detection's)
            assert app.poll() is None and time.monotonic() < deadline, app.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        stopped = time.monotonic()
        app.send_signal(signal.SIGTERM)
        app.wait(timeout=60)
        assert time.monotonic() - stopped < 10
    finally:
        app.kill()
        app.wait()
    assert b"Traceback" not in app.stderr.read()


def _read_so_far(pid: int, path: Path) -> int:
    """How far the process has read into `path` (0 while it has it not open)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == str(path):
                return int(Path(f"/proc/{pid}/fdinfo/{fd}").read_text().split("pos:")[1].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    return 0


# --- fuzz: fields of real events replaced by hostile values ------------------------------------------

@pytest.fixture(scope="module")
def bundled_session():
    from inspector.core.readers.session_loader import open_path

    return open_path(ROOT / "resources" / "sessions" / "mlp_breaks")


@pytest.mark.parametrize("seed", range(40))
def test_mutated_traces_open_with_every_output_and_join(tmp_path, seed, bundled_session):
    """Each case: 1–6 events of a real trace with values at random paths replaced by the fuzz suite's
    hostile ones (nested lists, huge ints, NaN, escapes, …), maybe a line cut; the trace reads, its
    text and JSON summaries render, and it joins to a run, without an exception."""
    from fuzz_cases import _hostile, _replace_somewhere

    def _replace_read(event: dict, rng: random.Random) -> dict:
        """`event` with one of the fields the reader reads (or a value inside it) made hostile."""
        paths = {"launch": [("grid",), ("compilation_metadata",), ("compilation_metadata", "hash"), ("name",)],
                 "launch_diff": [("hash",), ("diffs",)],
                 "compilation": [("payload",), ("pt_info",), ("payload", "metadata"), ("payload", "metadata", "name"),
                                 ("payload", "metadata", "hash"), ("payload", "metadata", "num_warps"),
                                 ("payload", "metadata", "arch"), ("payload", "python_source"),
                                 ("payload", "python_source", "file_path"), ("payload", "python_source", "start_line"),
                                 ("payload", "python_source", "code"), ("payload", "file_content"),
                                 ("payload", "source_mappings")]}.get(str(event.get("event_type")), [("event_type",)])
        *parents, last = rng.choice(paths)
        holder = event
        for key in parents:
            holder = holder.setdefault(key, {}) if isinstance(holder, dict) else {}
        if isinstance(holder, dict):
            inner = holder.get(last)
            holder[last] = (_replace_somewhere(inner, rng) if isinstance(inner, (dict, list)) and inner
                            and rng.random() < 0.5 else _hostile(rng))
        return event
    from inspector.core.outputs.gpu_summary import render_triton_join_text, summarize_triton_join
    from inspector.core.outputs.summary import finite

    rng = random.Random(seed)
    source = rng.choice([TORCH_KERNELS, MAPPED])
    events = _events(source)[:60]
    for _ in range(rng.randint(1, 6)):
        index = rng.randrange(len(events))
        events[index] = _replace_somewhere(events[index], rng) if rng.random() < 0.3 else _replace_read(
            events[index], rng)
    lines = [_line(event) for event in events]
    if rng.random() < 0.2:
        index = rng.randrange(len(lines))
        lines[index] = lines[index][:rng.randrange(len(lines[index]))] + b"\n"
    trace = read_tritonparse(_write(tmp_path / NAME, _member(b"".join(lines))))
    summary = summarize_triton(trace)
    json.dumps(finite(summary), allow_nan=False)
    render_triton_text(summary)
    section = summarize_triton_join(bundled_session, trace)
    json.dumps(finite(section), allow_nan=False)
    render_triton_join_text(section)
    assert len(trace.kernels) + trace.problems.total + sum(trace.unknown_events.values()) > 0
