"""Compile time in wall-clock terms, on a real cold compile whose C++ kernels were built by compile
workers: the own times of "where it went" add up to the compiling thread's time in stages, which is
torch's compile time (its entire_frame_compile stages) plus the stages outside them the summary names;
the workers' stages are shown beside it and never summed in, and the live stage strip, the Timeline's
totals and the summary give each pipeline step one value."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SCENARIOS, events_delivered, run_traced
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers.session_loader import open_session
from inspector.core.readers.sources import detect
from inspector.core.readers.stage_progress import StageProgress


@pytest.fixture(scope="module")
def workers_run(tmp_path_factory, compiles):
    """A cold compile (empty cache: every kernel built) with 4 compile threads."""
    folder = tmp_path_factory.mktemp("workers")
    return run_traced(SCENARIOS / "parallel_kernels.py", folder, folder / "cold-cache",
                      extra_env={"TORCHINDUCTOR_COMPILE_THREADS": "4"})


def _summary_text(trace_dir) -> str:
    import subprocess
    import sys

    from conftest import ROOT
    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(trace_dir), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_where_it_went_adds_up_to_the_wall_time_and_shows_the_workers_apart(workers_run):
    analysis = SessionAnalysis(open_session(detect(str(workers_run.trace_dir))))
    torch_total = sum(unit.compile_s for unit in analysis.session.units if unit.compile_s is not None)
    text = _summary_text(workers_run.trace_dir)
    rows = re.findall(r"^  (\S+)\s+([0-9.]+) s\s+([0-9.]+)%$", text.split("where it went")[1], re.M)
    assert rows, text
    shown_total = float(re.search(r"they add up to the ([0-9.]+) s", text).group(1))
    own = analysis.compile_time.self_s
    # Σ own = the compiling thread's wall time in stages; less the stages outside entire_frame_compile
    # (the `dynamo` stage around it), it is torch's own compile time, to the µs of torch's timestamps
    assert sum(own.values()) == pytest.approx(shown_total, abs=0.01)
    outside = analysis.compile_time.outside_s
    assert set(outside) <= {"dynamo"}, outside
    assert sum(own.values()) - sum(outside.values()) == pytest.approx(torch_total, abs=1e-4), (own, torch_total)
    # torch's backend_compile_time_s is its backend_compile stage, open from start to end on the
    # compiling thread: our inclusive figure of that stage, not the "backend compile" step
    (unit,) = analysis.session.units
    assert analysis.compile_time.per_stage_s["backend_compile"] == pytest.approx(
        unit.metrics["backend_compile_time_s"], rel=0.01)
    assert sum(float(share) for _, _, share in rows) <= 100.05
    inclusive = analysis.compile_time.per_stage_s
    assert all(seconds <= inclusive[stage] + 1e-9 for stage, seconds in own.items())
    # the workers: several compile_file stages at once, more work than wall time, said apart
    workers = re.search(r"beside it on other threads \(compile workers; not in the shares above\): compile_file "
                        r"×(\d+), ([0-9.]+) s of work within ([0-9.]+) s, up to (\d+) at once", text)
    assert workers, text
    count, busy, within, peak = int(workers[1]), float(workers[2]), float(workers[3]), int(workers[4])
    assert count >= 2 and peak >= 2 and busy > within
    beside = analysis.compile_time.concurrent["compile_file"]  # the record the text was written from
    assert (beside.count, beside.peak) == (count, peak) and round(beside.busy_s, 2) == busy
    # the main thread's own compile_file time plus the workers' wall time never exceeds the compile
    assert own.get("compile_file", 0) + within <= torch_total * 1.01


def _stage_events(trace_dir):
    """The log's chromium begin/end events as the runner relays them live (name, ph, compile id)."""
    events = []
    for path in sorted(trace_dir.glob("*.log")):
        lines = path.read_text().split("\n")
        for index, line in enumerate(lines):
            if line.startswith("\t") or '"chromium_event"' not in line:
                continue
            payload = []
            for follow in lines[index + 1:]:
                if not follow.startswith("\t"):
                    break
                payload.append(follow[1:])
            event = json.loads("\n".join(payload))
            if event.get("ph") in ("B", "E"):
                events.append({"event": "stage", "t": event["ts"] / 1e6, "name": event["name"], "ph": event["ph"],
                               "compile_id": (event.get("args") or {}).get("compile_id")})
    return events


def test_live_strip_and_summary_give_each_step_one_value(workers_run):
    progress = StageProgress()
    for event in _stage_events(workers_run.trace_dir):
        progress.apply(event)
    analysis = SessionAnalysis(open_session(detect(str(workers_run.trace_dir))))
    per_step = analysis.compile_time.per_step_s
    (unit_id, steps), = progress.units.items()
    for step, state in steps.items():
        if step == "benchmark":
            continue
        assert (state.elapsed(now=0) or 0.0) == pytest.approx(per_step.get(step, 0.0), abs=0.005), step
    assert progress.concurrent[unit_id]["compile_file"] >= 2


def test_timeline_shows_the_same_step_values_and_the_workers_apart(qtbot, window, workers_run):
    from conftest import open_and_wait
    from inspector.core.numbers import seconds

    loaded = open_and_wait(qtbot, window, workers_run.trace_dir)
    window.tabs.setCurrentWidget(window.timeline_view)
    view = window.timeline_view
    qtbot.waitUntil(lambda: view.totals.rowCount() > 0, timeout=60_000)
    per_step = loaded.analysis.compile_time.per_step_s
    chip = next(label for label, _ in view.legend if label.text() == "backend compile")
    assert f"{seconds(per_step['backend compile'])} own time over the run" in chip.toolTip()
    rows = [[view.totals.item(row, column).text() for column in range(3)] for row in range(view.totals.rowCount())]
    workers = [row for row in rows if row[0] == "compile_file (workers)"]
    assert workers and workers[0][2] == "—"  # shown, with no share of the compile's time
    shares = [float(row[2].rstrip("%")) for row in rows if row[2] != "—"]
    assert sum(shares) <= 100.5

    # a bar is one stage; its hover also gives the whole step of its unit, the strip's one value (the
    # backend compile step's stages lie deeper than the Timeline's 8 drawn levels on torch 2.13)
    from PySide6.QtCore import QPoint, QPointF
    from PySide6.QtTest import QTest

    bar = max((b for b in view.timeline.bars if b.step == "code generation"), key=lambda b: b.end_s - b.start_s)
    view.plot.setXRange(bar.start_s, bar.end_s, padding=0.1)
    view.plot.setYRange(0, view.timeline.depth * len(view.timeline.lanes), padding=0)
    events_delivered()
    scene = view.plot.getViewBox().mapViewToScene(QPointF((bar.start_s + bar.end_s) / 2,
                                                          bar.lane * view.timeline.depth + bar.depth + 0.5))
    point = view.plot.mapFromScene(scene)
    view.hover_text = ""
    QTest.mouseMove(view.plot.viewport(), point + QPoint(1, 0))
    QTest.mouseMove(view.plot.viewport(), point)
    qtbot.waitUntil(lambda: bool(view.hover_text), timeout=60_000)
    assert f"the whole code generation step of {bar.compile_id}: {seconds(per_step['code generation'])} own time" \
        in view.hover_text, view.hover_text


@pytest.mark.parametrize("name", ["bundled", "multi_rank", "cuda"])
def test_invariants_hold_on_real_logs_and_both_ways_of_counting_agree(name, monkeypatch):
    """On real logs of other torch versions (and of a real capture): Σ own = wall, own ≤ inclusive,
    and the one-walk count of well-nested stages gives what the instant-by-instant sweep gives."""
    from conftest import CUDA_LOG, MULTI_RANK, ROOT

    import inspector.core.analysis.compile_wall as compile_wall

    path = {"bundled": ROOT / "resources" / "sessions" / "mlp_breaks", "multi_rank": MULTI_RANK, "cuda": CUDA_LOG}[name]
    if not path.exists():
        pytest.skip("../shared/corpus is not present beside this checkout")
    session = open_session(detect(str(path)))
    ranks = [[span for unit in rank.units for span in unit.spans] + list(rank.spans) for rank in session.ranks]
    walked = compile_wall.wall_breakdown(ranks)
    assert walked.wall_s > 0 and sum(walked.own_s.values()) == pytest.approx(walked.wall_s, rel=1e-9)
    assert all(seconds <= walked.inclusive_s[stage] + 1e-9 for stage, seconds in walked.own_s.items())
    assert sum(walked.per_step_s.values()) == pytest.approx(walked.wall_s, rel=1e-9)
    monkeypatch.setattr(compile_wall, "_well_nested", lambda *_: False)
    swept = compile_wall.wall_breakdown(ranks)
    assert swept.wall_s == pytest.approx(walked.wall_s, rel=1e-9)
    assert swept.own_s == pytest.approx(walked.own_s, abs=1e-9)
    assert swept.inclusive_s == pytest.approx(walked.inclusive_s, abs=1e-9)


def _chromium(*stages):
    """Chromium begin/end events as torch writes them (pid 0, tid 0), from (t in s, name, ph, compile id)."""
    return [{"name": name, "ph": ph, "ts": t * 1e6, "pid": 0, "tid": 0,
             "args": {"compile_id": compile_id} if compile_id else {}} for t, name, ph, compile_id in stages]


@pytest.mark.parametrize("stages", [
    pytest.param([(0, "bytecode_tracing", "B", "0/0"), (1, "gc", "B", None), (3, "gc", "E", None),
                  (4, "bytecode_tracing", "E", "0/0")], id="alone, outside the pipeline"),
    pytest.param([(0, "dynamo", "B", "0/0"), (1, "compile_file", "B", None), (3, "compile_file", "E", None),
                  (4, "dynamo", "E", "0/0")], id="alone, in a step"),
    pytest.param([(0, "dynamo", "B", "0/0"), (1, "compile_file", "B", None), (2, "compile_file", "B", None),
                  (3, "compile_file", "E", None), (5, "compile_file", "E", None), (6, "dynamo", "E", "0/0")],
                 id="two at once"),
    pytest.param([(0, "dynamo", "B", "0/0"), (1, "gc", "B", None), (2, "inductor_compile", "B", "0/0"),
                  (3, "inductor_compile", "E", "0/0"), (4, "gc", "E", None), (6, "dynamo", "E", "0/0")],
                 id="the compiling thread moved inside it"),
])
def test_live_strip_and_summary_give_a_stage_without_compile_id_to_the_same_thread_and_step(stages):
    """A stage naming no compile id inside a compile: both the strip and "where it went" call it the
    compiling thread's or a worker's by one rule, and give its time to the same step."""
    from inspector.core.analysis.compile_wall import wall_breakdown
    from inspector.core.model.compile_spans import build_spans
    from inspector.core.model.pipeline import PIPELINE

    progress = StageProgress()
    for t, name, ph, compile_id in stages:
        progress.apply({"event": "stage", "t": float(t), "name": name, "ph": ph, "compile_id": compile_id})
    breakdown = wall_breakdown([build_spans(_chromium(*stages)).roots])
    steps = progress.units["0/0"]
    assert {step: steps[step].elapsed(now=0) or 0.0 for step in PIPELINE} == pytest.approx(
        {step: breakdown.per_step_s.get(step, 0.0) for step in PIPELINE}, abs=1e-9)
    assert progress.concurrent.get("0/0", {}) == {name: c.count for name, c in breakdown.concurrent.items()}
    assert sum(breakdown.per_step_s.values()) == pytest.approx(breakdown.wall_s)


@pytest.mark.parametrize("name", ["bundled", "multi_rank", "cuda"])
def test_the_stages_time_is_torchs_compile_time_plus_the_stages_the_summary_names_outside_it(name):
    """The paragraph's two figures meet: the stages' wall time is the time inside the stages torch
    counts as compile time (entire_frame_compile; T_compile on the header, less units torch wrote no
    metrics for) plus the stages outside them, each named with its seconds."""
    from conftest import CUDA_LOG, MULTI_RANK, ROOT

    path = {"bundled": ROOT / "resources" / "sessions" / "mlp_breaks", "multi_rank": MULTI_RANK, "cuda": CUDA_LOG}[name]
    if not path.exists():
        pytest.skip("../shared/corpus is not present beside this checkout")
    text = _summary_text(path).split("Compile time")[1].split("\n\n")[0]
    header = float(re.search(r": ([0-9.]+) s over \d+ measured units? \(torch's compilation metrics\)", text)[1])
    traced = float(re.search(r"they add up to the ([0-9.]+) s", text)[1])
    inside = float(re.search(r"of which ([0-9.]+) s inside the stages torch counts as compile time "
                             r"\(entire_frame_compile, entire_backward_compile\)", text)[1])
    outside = re.search(r"and ([0-9.]+) s outside them: (.*)$", text, re.M)
    unrecorded = re.search(r"\(([0-9.]+) s of it in \d+ units? torch recorded no compilation metrics for", text)
    assert inside + float(outside[1]) == pytest.approx(traced, abs=0.011)
    assert inside - (float(unrecorded[1]) if unrecorded else 0.0) == pytest.approx(header, abs=0.011)
    named = dict(re.findall(r"(\S+) ([0-9.]+) s", outside[2]))
    assert "dynamo" in named and sum(map(float, named.values())) == pytest.approx(float(outside[1]), abs=0.006)
    # the figures behind the text, to the µs: inside the timed stages is torch's own compile time
    analysis = SessionAnalysis(open_session(detect(str(path))))
    timing = analysis.compile_time
    assert timing.wall_s - sum(timing.outside_s.values()) - timing.unrecorded_s == pytest.approx(
        timing.total_s, abs=1e-4)
    if name == "cuda":  # autotuning at the first call: after the compile, on the compiling thread
        assert {"dynamo", "CachingAutotuner.benchmark_all_configs"} <= set(named)
    if name == "multi_rank":
        assert "rank 0 [0/0], rank 2 [0/0]" in text


def test_a_log_without_compilation_metrics_says_so_and_gives_its_stages_time():
    from conftest import MULTI_RANK

    path = MULTI_RANK / "dedicated_log_torch_trace_rank_0.log"
    if not path.exists():
        pytest.skip("../shared/corpus is not present beside this checkout")
    text = _summary_text(path)
    assert "Compile time: torch recorded no compilation metrics; the stages the log holds add up to 0.16 s" in text
    assert "measured unit" not in text.split("Compile time")[1].split("\n\n")[0]


def test_a_span_that_ends_before_it_begins_holds_no_time():
    """A span made in code (the reader leaves such records out) gives no stage negative time."""
    from inspector.core.analysis.compile_wall import wall_breakdown
    from inspector.core.model.compile_spans import Span

    backwards = Span("inductor_compile", 50.0, 10.0, "0/0", 1)
    root = Span("dynamo", 0.0, 100.0, "0/0", 0, children=[backwards, Span("code_gen", 20.0, 60.0, "0/0", 1)])
    breakdown = wall_breakdown([[root]])
    assert breakdown.own_s == pytest.approx({"dynamo": 60e-6, "code_gen": 40e-6})
    assert all(seconds >= 0 for seconds in breakdown.inclusive_s.values())
