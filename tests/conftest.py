"""Shared fixtures: real torch.compile runs captured once per test session, and the corpus of real
logs from other machines (tests that need it skip when ../shared/corpus is absent)."""

from __future__ import annotations

import gzip
import importlib.util
import inspect
import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # GUI tests run headless
import re
import subprocess
import tempfile
import threading

# The index cache of opened logs goes to a folder of this test run, not the user's ~/.cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tci-test-cache-")
# The run history every opened run is recorded in goes there too, not into the user's ~/.local/share.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="tci-test-data-")
os.environ.pop("TCI_HISTORY_STORE", None)
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "tlparse-fixtures"
CUDA_LOG = CORPUS / "inductor_provenance_jit_cuda_log.txt"
TRAINING_TRACE = CORPUS.parent / "hta-traces" / "trace_diff_test.json.gz"  # a V100 training run's profile, 32 MB
MULTI_RANK = CORPUS / "multi_rank_logs"
EXAMPLES = ROOT / "resources" / "examples"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"


# What a test needs, read off the fixtures it uses (with everything they use in turn), so that a new
# fixture that compiles cannot land in the fast tier by a forgotten mark: it asks for `compiles` (or
# for a fixture that does, as `inductor_cache`), and `run_traced`/`capture` refuse to run for a test
# that did not. `-m "not slow"` is `make test-fast`; `-m "not torch"` runs on a machine without torch.
MARKS_BY_FIXTURE = {
    "compiles": ("slow", "torch"),  # runs real torch.compile captures: seconds to minutes each
    "torch_runtime": ("torch",),  # needs torch installed (skipped cleanly without it)
    "qtbot": ("gui",),  # a real Qt widget, offscreen
}
# Names that, referenced by a test (or a helper of its module it calls), start a child process.
STARTS_A_PROCESS = {"run_cli_process", "subprocess", "Popen", "run_traced", "capture", "CaptureProcess"}


def _starts_a_process(function, seen: set | None = None) -> bool:
    """Whether `function`, or a function of the tests it calls by name, refers to a way of starting a
    child process (read off the names its code uses, nested functions included)."""
    seen = set() if seen is None else seen
    code = getattr(function, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    names, stack = set(), [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(const for const in current.co_consts if hasattr(const, "co_names"))
    if names & STARTS_A_PROCESS:
        return True
    here = getattr(function, "__globals__", {})
    return any(_starts_a_process(here[name], seen) for name in names
               if inspect.isfunction(here.get(name)) and here[name].__module__ == function.__module__)


def pytest_collection_modifyitems(items):
    for item in items:
        needs = set(getattr(item, "fixturenames", ()))
        for fixture, marks in MARKS_BY_FIXTURE.items():
            if fixture in needs:
                for mark in marks:
                    item.add_marker(getattr(pytest.mark, mark))
        if _starts_a_process(getattr(item, "function", None)):
            item.add_marker(pytest.mark.subprocess)


_running: list = []  # the test being set up or run (its fixtures included), for the compile guard below


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _running[:] = [item]


def _compiling_allowed() -> None:
    """A real compile runs only for a test that asked for `compiles` (that is what marks it slow and
    torch), or one marked slow by hand because it reaches its compile fixture through
    `request.getfixturevalue`, which no mark follows: either way it is not in the fast tier."""
    test = _running[0] if _running else None
    if test is not None and "compiles" not in getattr(test, "fixturenames", ()) \
            and test.get_closest_marker("slow") is None:
        raise AssertionError(f"{_running[0].nodeid} runs a real compile without the `compiles` fixture: "
                             "ask for it (or for a fixture that does), so the test is marked slow and torch")


@dataclass
class TracedRun:
    """One real compile run: its TORCH_TRACE folder plus what torch itself reported."""

    folder: Path
    trace_dir: Path
    counters: dict
    torch_logs: str  # TORCH_LOGS=graph_breaks,recompiles output (stderr)


def torch_available() -> bool:
    """torch is installed here: found, not imported (an import takes seconds, which a test process that
    only asks, as a module's skip condition does at collection, would pay for nothing)."""
    return importlib.util.find_spec("torch") is not None


def run_traced(script: Path, folder: Path, cache_dir: Path, extra_env: dict | None = None,
               cwd: Path | None = None) -> TracedRun:
    _compiling_allowed()
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TORCH_TRACE=str(folder / "trace"), TORCH_LOGS="graph_breaks,recompiles",
               INDUCTOR_PROVENANCE="1", TORCHINDUCTOR_CACHE_DIR=str(cache_dir), OMP_NUM_THREADS="1")
    for key, value in (extra_env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    counters = folder / "counters.json"
    done = subprocess.run([sys.executable, str(Path(__file__).parent / "trace_runner.py"), str(script), str(counters)],
                          env=env, cwd=cwd or folder, capture_output=True, text=True, timeout=600)
    (folder / "stderr.txt").write_text(done.stderr)
    assert done.returncode == 0, done.stderr[-3000:]
    return TracedRun(folder, folder / "trace", json.loads(counters.read_text()), done.stderr)


@pytest.fixture(scope="session")
def torch_runtime() -> None:
    """torch is installed: a test that needs it asks for this and is skipped cleanly where it is not."""
    if importlib.util.find_spec("torch") is None:  # found, not imported: some tests hold that nothing imports it
        pytest.skip("torch is not installed")


@pytest.fixture(scope="session")
def compiles(torch_runtime) -> None:
    """The test (or a fixture it uses) runs real torch.compile captures: it is marked slow and torch."""


@pytest.fixture(scope="session")
def inductor_cache(tmp_path_factory, compiles) -> Path:
    """The Inductor cache every compile of the session shares (warm after the first compile of a model)."""
    return tmp_path_factory.mktemp("inductor_cache")


@pytest.fixture(scope="session")
def breaks_run(tmp_path_factory, inductor_cache) -> TracedRun:
    """The MLP example: a data-dependent break, an explicit break, and a batch-size recompile."""
    return run_traced(EXAMPLES / "mlp_breaks.py", tmp_path_factory.mktemp("breaks"), inductor_cache)


@pytest.fixture(scope="session")
def dynamic_run(tmp_path_factory, inductor_cache) -> TracedRun:
    return run_traced(SCENARIOS / "dynamic_shapes.py", tmp_path_factory.mktemp("dynamic"), inductor_cache)


@pytest.fixture(scope="session")
def profiled_run(tmp_path_factory, inductor_cache) -> TracedRun:
    """A small model's TORCH_TRACE log (provenance on) and the torch.profiler trace of the same run,
    `profile.pt.trace.json` in the folder above the log's: the pair a profile is joined to a log from."""
    return run_traced(SCENARIOS / "profiled_model.py", tmp_path_factory.mktemp("profiled"), inductor_cache)


@pytest.fixture(scope="session")
def compile_debug_run(tmp_path_factory, compiles) -> TracedRun:
    """TORCH_COMPILE_DEBUG=1 output (with a cold private cache, else no per-graph folders are written)."""
    folder = tmp_path_factory.mktemp("compile_debug")
    return run_traced(SCENARIOS / "dynamic_shapes.py", folder, folder / "cache",
                      extra_env={"TORCH_COMPILE_DEBUG": "1", "TORCH_TRACE": None}, cwd=folder)


_EVENT_SEPARATOR = b"\n  },\n  {"  # between two events of a trace, as torch.profiler writes them


@pytest.fixture(scope="session")
def training_step(tmp_path_factory) -> Path:
    """The training trace's events of its first sixth of time (about a step: 12k complete events of every
    kind, CPU ops, launches, kernels, NCCL's among them, copies; 5.7 MB, several read parts) as torch
    wrote them, byte for byte, gzipped: the real trace a test damages or copies where the size of the
    whole one is no part of what it tests (a read of it takes a sixth of the whole one's)."""
    if not TRAINING_TRACE.is_file():
        pytest.skip("../shared/corpus is not present beside this checkout")
    with gzip.open(TRAINING_TRACE, "rb") as handle:
        text = handle.read()
    opening = b'"traceEvents": ['
    start, end = text.index(opening) + len(opening), text.rindex(b"]")
    body = text[start:end]
    assert body.startswith(b"\n  {") and body.endswith(b"\n  }\n  ")
    events = body[len(b"\n  {"):-len(b"\n  }\n  ")].split(_EVENT_SEPARATOR)
    stamps = [int(found[1]) if (found := re.search(rb'"ts": (\d+)', event)) else None for event in events]
    timed = [stamp for stamp in stamps if stamp is not None]
    cut = min(timed) + (max(timed) - min(timed)) // 6
    kept = [event for event, stamp in zip(events, stamps) if stamp is None or stamp <= cut]
    step = tmp_path_factory.mktemp("training_step") / "step.pt.trace.json.gz"
    step.write_bytes(gzip.compress(text[:start] + b"\n  {" + _EVENT_SEPARATOR.join(kept) + b"\n  }\n  "
                                   + text[end:], compresslevel=1))
    return step


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")
    return CORPUS


def capture(script: Path, session: Path, cache_dir: Path, timeout_s: float | None = None, python: str | None = None,
            **settings):
    """Capture `script` with our launcher, with torch's own TORCH_LOGS written to the session's stderr."""
    from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script

    _compiling_allowed()
    plan = plan_script(script, [], session, CaptureSettings(runs=5, warmup=1, threads=1, timeout_s=timeout_s,
                                                            **settings), python)
    plan.env.update(TORCH_LOGS="graph_breaks,recompiles", TORCHINDUCTOR_CACHE_DIR=str(cache_dir))
    process = CaptureProcess(plan)
    process.wait()
    return process


@pytest.fixture(scope="session")
def captured_examples(tmp_path_factory, inductor_cache) -> dict[str, Path]:
    """Every bundled example captured once through our own capture (entry points measured)."""
    sessions = {}
    for script in sorted(EXAMPLES.glob("*.py")):
        session = tmp_path_factory.mktemp(script.stem)
        process = capture(script, session, inductor_cache)
        assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
        sessions[script.stem] = session
    return sessions


@pytest.fixture(autouse=True)
def _garbage_collected_on_the_ui_thread(request):
    """A test with Qt widgets (qtbot) runs under the app's garbage policy (gui/qt_garbage.py): cycles
    are collected by the UI thread's timer, never by a worker's allocation. At the end (after pytest-qt
    has closed the test's widgets, which it does in its teardown hook, before any fixture's teardown)
    the garbage not frozen is collected on the UI thread, before the next test's workers allocate; what
    a load froze with the session (core/gc_policy.py), a window opened on it included, stays as it would
    in the app."""
    if "qtbot" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("qapp")
    from inspector.gui.qt_garbage import collected_on_ui_thread

    with collected_on_ui_thread():
        yield


@pytest.fixture
def window(qtbot, tmp_path):
    """The main window, offscreen, with its own settings file and quick capture settings."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    from inspector.capture.launcher import CaptureSettings
    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings.set_capture_settings(CaptureSettings(runs=5, warmup=1, threads=1))
    settings.python = sys.executable
    win = QtMainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    yield win
    # work a view started off the UI thread (a layout, a diff) outlives its window: let it finish here,
    # so it does not hold the pool's threads while the next test waits for its own
    from PySide6.QtCore import QThreadPool

    QThreadPool.globalInstance().waitForDone(120_000)


QUICK_PROBE_ANSWER = {"python": "3.11.7", "torch": "2.13.0", "cuda": False}


@pytest.fixture
def quick_interpreter(tmp_path, monkeypatch) -> str:
    """A program that answers Run ▸ Settings' interpreter probe at once, as a Python with torch does, and
    the only interpreter the dialog finds: a test of another setting neither waits for nor shares the
    cores with real Pythons importing torch in the background (each dialog probes every one it finds).
    The probe of real interpreters has its own test (test_gui.py)."""
    from inspector.gui import qt_settings_dialog

    python = tmp_path / "quick-python"
    python.write_text(f"#!/bin/sh\necho '{json.dumps(QUICK_PROBE_ANSWER)}'\n")
    python.chmod(0o755)
    monkeypatch.setattr(qt_settings_dialog, "candidate_interpreters", lambda: [str(python)])
    return str(python)


@pytest.fixture
def no_slot_errors(qtbot):
    """Fails the test on any exception raised in a slot or an event handler during it."""
    import traceback

    with qtbot.capture_exceptions() as exceptions:
        yield exceptions
    assert not exceptions, "exception in a slot or event handler:\n" + "\n".join(
        "".join(traceback.format_exception(*info)) for info in exceptions)


def on_two_threads_at_once(work) -> None:
    """Run `work` on two threads released together (a race on what both read), and wait for both."""
    start = threading.Barrier(2)

    def run():
        start.wait()
        work()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def events_delivered() -> None:
    """Every event posted so far delivered (a repaint, a queued signal, a zero-time timer): what a
    test waits for before it reads what the window did with an input it sent."""
    from PySide6.QtCore import QCoreApplication, QEventLoop

    QCoreApplication.sendPostedEvents()
    QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)


def background_settled(qtbot, timeout_ms: int = 60_000) -> None:
    """Work running off the UI thread (a load, a layout) has finished and what it sent to the UI thread
    was delivered: the condition a test needs before asserting that a late answer changed nothing."""
    from PySide6.QtCore import QThreadPool

    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=timeout_ms)
    events_delivered()


def open_and_wait(qtbot, window, path: Path):
    """Open `path` in the window and return the LoadedSession once the views have it."""
    with qtbot.waitSignal(window.model.sigLoaded, timeout=120_000) as blocker:
        window.open_path(path)
    return blocker.args[0]
