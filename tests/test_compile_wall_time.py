"""Compile time in wall-clock terms, on a real cold compile whose C++ kernels were built by compile
workers: the own times of "where it went" add up to the compile's wall time (torch's
entire_frame_compile_time_s), the workers' stages are shown beside it and never summed in, and the live
stage strip, the Timeline's totals and the summary give each pipeline step one value."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SCENARIOS, run_traced, torch_available
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers.session_loader import open_session
from inspector.core.readers.sources import detect
from inspector.core.readers.stage_progress import StageProgress


@pytest.fixture(scope="module")
def workers_run(tmp_path_factory):
    """A cold compile (empty cache: every kernel built) with 4 compile threads."""
    if not torch_available():
        pytest.skip("torch is not installed")
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


@pytest.mark.slow
def test_where_it_went_adds_up_to_the_wall_time_and_shows_the_workers_apart(workers_run):
    analysis = SessionAnalysis(open_session(detect(str(workers_run.trace_dir))))
    torch_total = sum(unit.compile_s for unit in analysis.session.units if unit.compile_s is not None)
    text = _summary_text(workers_run.trace_dir)
    rows = re.findall(r"^  (\S+)\s+([0-9.]+) s\s+([0-9.]+)%$", text.split("where it went")[1], re.M)
    assert rows, text
    shown_total = float(re.search(r"they add up to the ([0-9.]+) s", text).group(1))
    own = analysis.compile_time["self_s"]
    # Σ own = the compiling thread's wall time in stages, which is torch's own compile time (to 1 %)
    assert sum(own.values()) == pytest.approx(shown_total, abs=0.01)
    assert sum(own.values()) == pytest.approx(torch_total, rel=0.01), (own, torch_total)
    # torch's backend_compile_time_s is its backend_compile stage, open from start to end on the
    # compiling thread: our inclusive figure of that stage, not the "backend compile" step
    (unit,) = analysis.session.units
    assert analysis.compile_time["per_stage_s"]["backend_compile"] == pytest.approx(
        unit.metrics["backend_compile_time_s"], rel=0.01)
    assert sum(float(share) for _, _, share in rows) <= 100.05
    inclusive = analysis.compile_time["per_stage_s"]
    assert all(seconds <= inclusive[stage] + 1e-9 for stage, seconds in own.items())
    # the workers: several compile_file stages at once, more work than wall time, said apart
    workers = re.search(r"beside it on other threads \(compile workers; not in the shares above\): compile_file "
                        r"×(\d+), ([0-9.]+) s of work within ([0-9.]+) s, up to (\d+) at once", text)
    assert workers, text
    count, busy, within, peak = int(workers[1]), float(workers[2]), float(workers[3]), int(workers[4])
    assert count >= 2 and peak >= 2 and busy > within
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


@pytest.mark.slow
def test_live_strip_and_summary_give_each_step_one_value(workers_run):
    progress = StageProgress()
    for event in _stage_events(workers_run.trace_dir):
        progress.apply(event)
    analysis = SessionAnalysis(open_session(detect(str(workers_run.trace_dir))))
    per_step = analysis.compile_time["per_step_s"]
    (unit_id, steps), = progress.units.items()
    for step, state in steps.items():
        if step == "benchmark":
            continue
        assert (state.elapsed(now=0) or 0.0) == pytest.approx(per_step.get(step, 0.0), abs=0.005), step
    assert progress.concurrent[unit_id]["compile_file"] >= 2


@pytest.mark.slow
def test_timeline_shows_the_same_step_values_and_the_workers_apart(qtbot, window, workers_run):
    from conftest import open_and_wait
    from inspector.core.numbers import seconds

    loaded = open_and_wait(qtbot, window, workers_run.trace_dir)
    window.tabs.setCurrentWidget(window.timeline_view)
    view = window.timeline_view
    qtbot.waitUntil(lambda: view.totals.rowCount() > 0, timeout=60_000)
    per_step = loaded.analysis.compile_time["per_step_s"]
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
    qtbot.wait(60)
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
