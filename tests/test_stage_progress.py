"""The live stage state folded from progress events: what the stage strip draws."""

from inspector.core.readers.stage_progress import StageProgress


def events(*items):
    return [{"t": float(t), "event": "stage", "name": name, "ph": ph, "compile_id": "0/0"} for t, name, ph in items]


def test_innermost_open_stage_decides_the_running_step():
    progress = StageProgress()
    for event in events((0, "dynamo", "B"), (1, "backend_compile", "B"), (2, "inductor_compile", "B")):
        progress.apply(event)
    steps = progress.units["0/0"]
    assert [name for name, state in steps.items() if state.running] == ["code generation"]
    assert steps["graph capture"].started == 0 and steps["graph optimisation"].started == 1
    assert steps["backend compile"].started is None
    progress.apply(events((5, "inductor_compile", "E"))[0])
    assert [name for name, state in steps.items() if state.running] == ["graph optimisation"]
    assert steps["code generation"].elapsed(now=100) == 3  # its own time: from 2 to 5
    assert steps["graph optimisation"].elapsed(now=6) == 2  # 1→2 and 5→6, not the nested 2→5


def test_stages_without_compile_id_belong_to_the_unit_being_compiled():
    progress = StageProgress()
    progress.apply(events((0, "dynamo", "B"))[0])
    progress.apply({"t": 1, "event": "stage", "name": "compile_file", "ph": "B", "compile_id": None})
    progress.apply({"t": 3, "event": "stage", "name": "compile_file", "ph": "E", "compile_id": None})
    assert list(progress.units) == ["0/0"]
    # alone on the compiling thread: its time is the backend compile step's, not graph capture's
    assert progress.units["0/0"]["backend compile"].elapsed(now=3) == 2
    assert progress.units["0/0"]["graph capture"].elapsed(now=3) == 1


def test_benchmark_step_follows_the_runner_phases_after_compiling():
    progress = StageProgress()
    progress.apply({"t": 0, "event": "phase", "phase": "baseline", "state": "start"})
    assert progress.benchmark_state == "waiting"  # the eager baseline is not the benchmark step
    progress.apply({"t": 1, "event": "phase", "phase": "baseline", "state": "end"})
    progress.apply({"t": 2, "event": "phase", "phase": "benchmark", "state": "start"})
    assert progress.benchmark_state == "running"
    progress.apply({"t": 3, "event": "phase", "phase": "benchmark", "state": "end"})
    assert progress.benchmark_state == "done"


def test_stages_outside_the_pipeline_are_ignored_and_errors_kept():
    progress = StageProgress()
    progress.apply(events((0, "gc", "B"))[0])
    assert progress.units == {}
    progress.apply({"t": 1, "event": "error", "message": "boom"})
    progress.apply({"t": 2, "event": "done", "status": "error"})
    assert progress.error == "boom" and progress.finished
