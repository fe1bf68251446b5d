"""Shared fixtures: real torch.compile runs captured once per test session, and the corpus of real
logs from other machines (tests that need it skip when ../shared/corpus is absent)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # GUI tests run headless
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
MULTI_RANK = CORPUS / "multi_rank_logs"
EXAMPLES = ROOT / "resources" / "examples"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"


# Fixtures that run real torch.compile captures: a test that uses one is slow (`make test-fast` skips it).
COMPILING_FIXTURES = {"inductor_cache", "breaks_run", "dynamic_run", "compile_debug_run", "captured_examples",
                      "profiled_run"}


def pytest_collection_modifyitems(items):
    for item in items:
        if COMPILING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@dataclass
class TracedRun:
    """One real compile run: its TORCH_TRACE folder plus what torch itself reported."""

    folder: Path
    trace_dir: Path
    counters: dict
    torch_logs: str  # TORCH_LOGS=graph_breaks,recompiles output (stderr)


def torch_available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def run_traced(script: Path, folder: Path, cache_dir: Path, extra_env: dict | None = None,
               cwd: Path | None = None) -> TracedRun:
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
def inductor_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("inductor_cache")


@pytest.fixture(scope="session")
def breaks_run(tmp_path_factory, inductor_cache) -> TracedRun:
    """The MLP example: a data-dependent break, an explicit break, and a batch-size recompile."""
    if not torch_available():
        pytest.skip("torch is not installed")
    return run_traced(EXAMPLES / "mlp_breaks.py", tmp_path_factory.mktemp("breaks"), inductor_cache)


@pytest.fixture(scope="session")
def dynamic_run(tmp_path_factory, inductor_cache) -> TracedRun:
    if not torch_available():
        pytest.skip("torch is not installed")
    return run_traced(SCENARIOS / "dynamic_shapes.py", tmp_path_factory.mktemp("dynamic"), inductor_cache)


@pytest.fixture(scope="session")
def profiled_run(tmp_path_factory, inductor_cache) -> TracedRun:
    """A small model's TORCH_TRACE log (provenance on) and the torch.profiler trace of the same run,
    `profile.pt.trace.json` in the folder above the log's: the pair a profile is joined to a log from."""
    if not torch_available():
        pytest.skip("torch is not installed")
    return run_traced(SCENARIOS / "profiled_model.py", tmp_path_factory.mktemp("profiled"), inductor_cache)


@pytest.fixture(scope="session")
def compile_debug_run(tmp_path_factory) -> TracedRun:
    """TORCH_COMPILE_DEBUG=1 output (with a cold private cache, else no per-graph folders are written)."""
    if not torch_available():
        pytest.skip("torch is not installed")
    folder = tmp_path_factory.mktemp("compile_debug")
    return run_traced(SCENARIOS / "dynamic_shapes.py", folder, folder / "cache",
                      extra_env={"TORCH_COMPILE_DEBUG": "1", "TORCH_TRACE": None}, cwd=folder)


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")
    return CORPUS


def capture(script: Path, session: Path, cache_dir: Path, timeout_s: float | None = None, python: str | None = None,
            **settings):
    """Capture `script` with our launcher, with torch's own TORCH_LOGS written to the session's stderr."""
    from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script

    plan = plan_script(script, [], session, CaptureSettings(runs=5, warmup=1, threads=1, timeout_s=timeout_s,
                                                            **settings), python)
    plan.env.update(TORCH_LOGS="graph_breaks,recompiles", TORCHINDUCTOR_CACHE_DIR=str(cache_dir))
    process = CaptureProcess(plan)
    process.wait()
    return process


@pytest.fixture(scope="session")
def captured_examples(tmp_path_factory, inductor_cache) -> dict[str, Path]:
    """Every bundled example captured once through our own capture (entry points measured)."""
    if not torch_available():
        pytest.skip("torch is not installed")
    sessions = {}
    for script in sorted(EXAMPLES.glob("*.py")):
        session = tmp_path_factory.mktemp(script.stem)
        process = capture(script, session, inductor_cache)
        assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
        sessions[script.stem] = session
    return sessions


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


def open_and_wait(qtbot, window, path: Path):
    """Open `path` in the window and return the LoadedSession once the views have it."""
    with qtbot.waitSignal(window.model.sigLoaded, timeout=120_000) as blocker:
        window.open_path(path)
    return blocker.args[0]
