"""Fuzz suite (issue 13): a few hundred structure-aware mutations of real logs, capture sessions and
bundles (tests/fuzz_cases.py), each opened and put through everything the CLI and the views compute.
For every case: no exception but the refusals the front ends report as messages, no hang (an alarm
per case), nothing written outside the case's temporary root, no read of /dev, /proc or the folder
holding the planted secret, and the secret's marker in no output. FUZZ_SCALE=N runs N times as many
cases; bench/bench_fuzz.py runs thousands."""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

import pytest

from fuzz_cases import SECRET_MARKER, bundle_case, log_case, session_case
from inspector.core.analysis.break_map import break_map
from inspector.core.analysis.kernel_plots import compile_time_per_unit, kernel_bars, memory_bars, op_family_bars
from inspector.core.analysis.run_diff import check_run, diff_runs
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.timeline import build_timeline, chrome_trace
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import finite, summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.safe_files import read_source
from inspector.core.readers.session_bundle import UnsafeBundle
from inspector.core.readers.session_loader import open_path
from inspector.core.readers.sources import NotCompileOutput

SCALE = int(os.environ.get("FUZZ_SCALE", "1"))
CASE_SECONDS = 20  # one case takes well under a second; this only catches a hang
REFUSALS = (NotCompileOutput, UnsafeBundle, FileNotFoundError)  # reported by the CLI and the app as a message


# Audit events that change the file system, and which of their arguments name a changed path: a rename
# changes both ends (moving a file out of the root is a write outside it), a link its new name.
_CHANGES = {"os.mkdir": (0,), "os.remove": (0,), "os.rmdir": (0,), "os.rename": (0, 1), "os.symlink": (1,),
            "os.link": (1,), "shutil.rmtree": (0,), "os.truncate": (0,)}


class Guard:
    """An audit hook (installed once; hooks cannot be removed) that records, while armed, every write
    outside `root` and every read of `forbidden` paths."""

    def __init__(self):
        self.root: str | None = None
        self.forbidden: tuple[str, ...] = ()
        self.violations: list[str] = []
        sys.addaudithook(self._hook)

    def arm(self, root: Path, secret_folder: Path) -> None:
        self.root = os.path.realpath(root) + os.sep
        self.forbidden = (os.path.realpath(secret_folder) + os.sep, "/dev/", "/proc/")
        self.violations = []

    def disarm(self) -> list[str]:
        self.root = None
        return self.violations

    def _hook(self, event: str, args) -> None:
        if self.root is None:
            return
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, (str, bytes, os.PathLike)):
                return
            path = os.path.realpath(os.fsdecode(path))
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC))
            if writing and not path.startswith(self.root) and "__pycache__" not in path:
                self.violations.append(f"write {path}")
            elif not writing and path.startswith(self.forbidden):
                self.violations.append(f"read {path}")
        elif event in _CHANGES:
            relative_to_fd = len(args) > 1 and isinstance(args[-1], int) and args[-1] >= 0  # rmtree's fd walk
            for path in (args[index] for index in _CHANGES[event] if index < len(args)):
                if isinstance(path, (str, bytes, os.PathLike)) and not relative_to_fd:
                    path = os.path.realpath(os.fsdecode(path))
                    if not path.startswith(self.root) and "__pycache__" not in path:
                        self.violations.append(f"{event} {path}")


GUARD = Guard()


def _on_alarm(_signum, _frame):
    raise TimeoutError(f"case ran over {CASE_SECONDS} s (a hang)")


def exercise(path: Path, with_diff: bool) -> list[str]:
    """Everything the CLI and the views compute from `path`; returns every text a user could see."""
    try:
        session = open_path(path)
    except REFUSALS as error:
        return [str(error)]
    analysis = SessionAnalysis(session)
    summary = summarize(analysis)
    outputs = [json.dumps(finite(summary), allow_nan=False), render_text(summary), render_report(analysis)]
    outputs += [f"{problem.title}\n{problem.detail}" for problem in analysis.issues]
    build_timeline(session)
    outputs.append(json.dumps(chrome_trace(session)))
    break_map(session)
    analysis.kernel_time
    results = session.results
    outputs.append(repr((kernel_bars(analysis.kernel_time, 15), op_family_bars(results), memory_bars(results),
                         compile_time_per_unit(session))))
    for unit in session.units:
        for artifact in unit.graphs.values():
            outputs.append(artifact.text)
            artifact.graph
        for artifact in unit.output_code:
            outputs.append(artifact.text)
        outputs += [artifact.text for artifact in unit.artifacts]
    folder = Path(session.source) if Path(session.source).is_dir() else None
    outputs += [text or "" for text in read_source(
        session.manifest.script if session.manifest is not None and session.manifest.script else "", folder)]
    if with_diff:
        outputs.append(json.dumps(finite(diff_runs(session, session)), allow_nan=False))
        outputs += [check.reason for check in check_run(session, session, 0, 1.0, 1.0, 0.1)]
    outputs.append(json.dumps(session.problems.get_state()))
    return outputs


def run_case(make, seed: int, root: Path) -> None:
    """Build case `seed` under `root` and exercise it under the guard and the alarm."""
    outside = root / "outside"
    outside.mkdir()
    secret = outside / "secret.log"
    secret.write_text(f'V1202 11:01:22.649000 1 x.py:1] {{"str": ["{SECRET_MARKER}", 0]}}\n{SECRET_MARKER}\n'
                      f"def {SECRET_MARKER}(): pass\n")
    case = make(seed, root / "case", secret)
    work = root / "tmp"
    work.mkdir()
    saved_tempdir, tempfile.tempdir = tempfile.tempdir, str(work)  # bundles extract under the root
    saved_cache = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")  # so does the index cache (the one thing a read writes)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(CASE_SECONDS)
    GUARD.arm(root, outside)
    try:
        outputs = exercise(case, with_diff=seed % 7 == 0)
    except Exception:
        pytest.fail(f"case {make.__name__}({seed}) raised:\n{traceback.format_exc()}")
    finally:
        violations = GUARD.disarm()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        tempfile.tempdir = saved_tempdir
        if saved_cache is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved_cache
    assert not violations, f"case {make.__name__}({seed}): {violations[:5]}"
    leaked = [text[:200] for text in outputs if SECRET_MARKER in text]
    assert not leaked, f"case {make.__name__}({seed}) shows a file from outside: {leaked}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(180 * SCALE))
def test_mutated_logs(tmp_path, seed):
    run_case(log_case, seed, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(10_000, 10_000 + 70 * SCALE))
def test_mutated_sessions(tmp_path, seed):
    run_case(session_case, seed, tmp_path)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seed", range(20_000, 20_000 + 50 * SCALE))
def test_mutated_bundles(tmp_path, seed):
    run_case(bundle_case, seed, tmp_path)


def test_the_guard_catches_every_way_out_of_the_root(tmp_path, monkeypatch):
    """A canary for the suite itself: a case that writes outside its root or reads the planted secret
    fails, whichever call it uses, while its writes inside the root pass."""
    import shutil

    elsewhere = Path(tempfile.mkdtemp(prefix="fuzz-canary-"))
    escapes = {
        "open": lambda root: open(elsewhere / "a", "w").close(),
        "append": lambda root: open(elsewhere / "a", "a").close(),
        "os.open": lambda root: os.close(os.open(elsewhere / "b", os.O_WRONLY | os.O_CREAT)),
        "write_bytes": lambda root: (elsewhere / "c").write_bytes(b"x"),
        "mkdir": lambda root: (elsewhere / "d").mkdir(),
        "rename out": lambda root: os.rename(root / "inside.txt", elsewhere / "e"),
        "remove": lambda root: os.remove(elsewhere / "keep"),
        "rmtree": lambda root: shutil.rmtree(elsewhere / "tree"),
        "symlink": lambda root: os.symlink(root, elsewhere / "f"),
        "read secret": lambda root: (root / "outside" / "secret.log").read_text(),
    }
    try:
        for name, escape in escapes.items():
            (elsewhere / "keep").write_text("x")
            (elsewhere / "tree").mkdir(exist_ok=True)
            root = tmp_path / name.replace(" ", "_")
            root.mkdir()

            def exercise_and_escape(path, with_diff, escape=escape, root=root):
                (root / "inside.txt").write_text("fine")
                escape(root)
                return []

            monkeypatch.setattr(sys.modules[__name__], "exercise", exercise_and_escape)
            with pytest.raises(AssertionError, match=r"case log_case\(3\): \['(write|read|os\.|shutil\.)"):
                run_case(log_case, 3, root)
        quiet = tmp_path / "quiet"
        quiet.mkdir()

        def exercise_inside(path, with_diff):
            (quiet / "inside.txt").write_text("fine")
            return []

        monkeypatch.setattr(sys.modules[__name__], "exercise", exercise_inside)
        run_case(log_case, 3, quiet)  # no violation: passes
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)
