"""A distributed run's profiler traces side by side (issue 25, "multi-rank too"): a real three-rank
gloo job on this machine, where rank 2 computes longer and alone recompiles, and real GPU traces from
the corpus. The figures are checked against the traces' own events, read here without our reader."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runner import run_cli
from inspector.core.analysis.profile_ranks import COLLECTIVE
from inspector.core.outputs.gpu_summary import render_profile_ranks_text, summarize_profile_ranks
from inspector.core.readers.sources import PROFILER_TRACE, PROFILER_TRACES, RANK_LOGS, detect

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"


@pytest.fixture(scope="module")
def job(tmp_path_factory, inductor_cache) -> Path:
    """The three ranks' traces of tests/scenarios/profiled_ranks.py (rank 2 slow, and alone recompiling)."""
    folder = tmp_path_factory.mktemp("profiled_ranks")
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(inductor_cache), OMP_NUM_THREADS="1")
    for _attempt in range(2):  # once more only where torch itself aborted a rank (a teardown crash in its
        # gloo or profiler threads, seen once in many runs: "terminate called without an active exception")
        done = subprocess.run([sys.executable, str(SCENARIOS / "profiled_ranks.py")], env=env, cwd=folder,
                              capture_output=True, text=True, timeout=600)
        if done.returncode == 0 or "terminated with signal SIGABRT" not in done.stderr:
            break
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def _raw_events(path: Path) -> list[dict]:
    with gzip.open(path, "rt") if path.suffix == ".gz" else open(path) as handle:
        return _complete_events(json.load(handle))


def _complete_events(document: dict) -> list[dict]:
    return [event for event in document["traceEvents"] if event.get("ph") == "X"]


def _union_us(spans: list[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def test_the_slow_rank_and_its_lone_recompile_are_named(job):
    assert detect(job).kind is PROFILER_TRACES
    done = run_cli("summary", job)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Profiler traces of 3 rank(s)" in text and "times from the CPU calls" in text
    assert "rank 2 is the slow rank" in text and "the other ranks waited for it in collectives" in text
    assert "compile unit [0/1] ran on rank 2 only, not on ranks 0, 1" in text
    assert "compile unit [0/0] was entered a different number of times: 4× on ranks 0, 1; 3× on rank 2" in text
    summary = json.loads(run_cli("summary", "--json", job).stdout)
    assert [rank["rank"] for rank in summary["ranks"]] == [0, 1, 2]
    for rank in summary["ranks"]:  # each figure from the trace's own events
        events = _raw_events(Path(rank["source"]))
        start, end = min(e["ts"] for e in events), max(e["ts"] + e["dur"] for e in events)
        collectives = [(e["ts"], e["ts"] + e["dur"]) for e in events if COLLECTIVE.search(e["name"])]
        assert any(e["name"].startswith("gloo:") for e in events)  # gloo's own scope is what holds the wait
        assert rank["profiled_us"] == pytest.approx(end - start)
        assert rank["collective_us"] == pytest.approx(_union_us(collectives))
        compiled = [e for e in events if e["name"].startswith("Torch-Compiled Region: ")]
        assert {name: entry["calls"] for name, entry in rank["regions"].items()} == {
            name: sum(1 for e in compiled if e["name"].endswith(name))
            for name in {e["name"].split(": ")[1] for e in compiled}}
    slow, waiting = summary["ranks"][2], summary["ranks"][:2]
    assert all(rank["collective_us"] > 0.5 * rank["profiled_us"] for rank in waiting)
    assert slow["compute_us"] > 10 * max(rank["compute_us"] for rank in waiting)
    assert [d["kind"] for d in summary["differences"]] == ["slow_rank", "region_calls", "region_on_some_ranks"]


def test_the_gpu_tab_shows_the_ranks_side_by_side(qtbot, window, job, no_slot_errors):
    window.open_path(job)
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.rank_rows.rowCount() == 3, timeout=60_000)
    assert view.pages.currentIndex() == 2 and window.tabs.currentWidget() is view
    assert [view.rank_rows.item(row, 0).text() for row in range(3)] == ["0", "1", "2"]
    assert view.rank_rows.item(2, 5).text() == "compile unit [0/0] ×3, compile unit [0/1] ×1"
    assert "rank 2 is the slow rank" in view.rank_differences.text()
    assert "Profiler traces of 3 rank(s)" in view.header.text()
    training = ROOT.parent / "shared" / "corpus" / "hta-traces" / "trace_diff_test.json.gz"
    if training.is_file():  # another document replaces the ranks page
        window.open_path(training)
        qtbot.waitUntil(lambda: view.pages.currentIndex() == 1 and view.regions.rowCount() > 0, timeout=60_000)
        assert view.ranks_summary is None


def _as_rank(document: dict, rank: int, target: Path) -> None:
    """A copy of a real trace's `document` that says it is of `rank` (its events as recorded)."""
    document = {**document, "distributedInfo": {**document.get("distributedInfo", {}), "rank": rank}}
    text = json.dumps(document).encode()  # what json.dump writes, in one piece: its many small writes take seconds
    with gzip.open(target, "wb", compresslevel=1) as handle:
        handle.write(text)


def test_gpu_ranks_compare_on_the_device_and_unreadable_traces_are_counted(tmp_path, training_step):
    """Two ranks of a step of a real V100 training run's trace (the same events as ranks 0 and 1: they
    differ in nothing); the collective time is the device's NCCL kernels, overlaps counted once; a file
    cut short and a trace of no events are left out and named, and the two others are still compared."""
    with gzip.open(training_step, "rt") as handle:
        document = json.load(handle)  # read once: the ranks are made of it, and the figures checked against it
    for rank in (0, 1):
        _as_rank(document, rank, tmp_path / f"rank{rank}.pt.trace.json.gz")
    (tmp_path / "rank2.pt.trace.json").write_bytes(b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur"')
    (tmp_path / "rank3.pt.trace.json").write_text('{"traceEvents": []}')
    small = gzip.compress(b'{"traceEvents": [' + b'{"ph": "X", "name": "k", "ts": 1, "dur": 2}, ' * 400 + b'{}]}')
    (tmp_path / "rank4.pt.trace.json.gz").write_bytes(small[:len(small) // 2])  # a small gzip cut short
    crc = len(small) - 8  # and one whose checksum is wrong: the gzip reader refuses all of it at the end
    (tmp_path / "rank5.pt.trace.json.gz").write_bytes(small[:crc] + bytes([small[crc] ^ 1]) + small[crc + 1:])
    assert detect(tmp_path).kind is PROFILER_TRACES
    summary = summarize_profile_ranks(detect(tmp_path).open())
    assert sorted(summary["unreadable"]) == ["rank2.pt.trace.json", "rank3.pt.trace.json", "rank4.pt.trace.json.gz",
                                             "rank5.pt.trace.json.gz"]
    assert summary["unreadable"]["rank3.pt.trace.json"] == "holds no events"
    assert "(1 record cut off" in summary["unreadable"]["rank4.pt.trace.json.gz"]  # the cut counted once, not twice
    assert [rank["rank"] for rank in summary["ranks"]] == [0, 1] and summary["differences"] == []
    assert summary["times_from"] == "device" and not summary["not_compared"]
    events = _complete_events(document)
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    nccl = [(e["ts"], e["ts"] + e["dur"]) for e in gpu if "nccl" in e["name"].lower()]
    assert nccl
    for rank in summary["ranks"]:
        assert rank["collective_us"] == pytest.approx(_union_us(nccl))
        assert rank["busy_us"] == pytest.approx(_union_us([(e["ts"], e["ts"] + e["dur"]) for e in gpu]))
    text = render_profile_ranks_text(summary)  # what `summary` prints of it (the command itself: the test below)
    assert "times from the device's events" in text and "The ranks do not differ." in text
    assert "4 trace(s) could not be read (left out):" in text and "rank5.pt.trace.json.gz" in text


def test_one_ranks_profiling_steps_are_listed_but_not_compared(tmp_path, training_step):
    """tensorboard_trace_handler writes a rank's steps into one folder: traces naming the same rank
    are not ranks that differ; a folder of traces that no trace could be read from is an error."""
    for step in (1, 2):
        shutil.copyfile(training_step, tmp_path / f"host_{step}.pt.trace.json.gz")
    summary = summarize_profile_ranks(detect(tmp_path).open())
    assert len(summary["ranks"]) == 2 and summary["differences"] == []
    assert "rank(s) 1 appear in more than one trace" in summary["not_compared"]
    assert "Not compared: rank(s) 1 appear in more than one trace" in run_cli("summary", tmp_path).stdout
    for step in (1, 2):
        (tmp_path / f"host_{step}.pt.trace.json.gz").write_bytes(b"\x1f\x8b not a gzip stream")
    (tmp_path / "empty.pt.trace.json").write_text('{"traceEvents": []}')
    (tmp_path / "empty2.pt.trace.json").write_text('{"traceEvents": []}')
    done = run_cli("summary", tmp_path)
    assert done.returncode == 2 and "no profiler trace could be read" in done.stderr


def test_one_trace_is_a_profile_and_a_folder_with_logs_is_a_job(tmp_path, corpus):
    training = corpus.parent / "hta-traces" / "trace_diff_test.json.gz"
    shutil.copyfile(training, tmp_path / "rank0.pt.trace.json.gz")
    assert detect(tmp_path / "rank0.pt.trace.json.gz").kind is PROFILER_TRACE
    shutil.copyfile(training, tmp_path / "rank1.pt.trace.json.gz")
    assert detect(tmp_path).kind is PROFILER_TRACES
    logs = list((corpus / "multi_rank_logs").glob("*.log"))
    assert logs
    for log in logs:
        shutil.copyfile(log, tmp_path / log.name)
    assert detect(tmp_path).kind is RANK_LOGS  # a job's logs come first: its traces are beside them
