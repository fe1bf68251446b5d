"""The capture lifecycle, one object for the CLI and the app (standard library only; never imports torch).

`CaptureProcess` writes the session folder's manifest before the run (marked incomplete) and after it
(exit status, timing, complete or not), sends the child's stdout and stderr straight to files so a
flooding script costs no memory here, enforces the timeout, and stops the whole process tree on a
timeout or a cancel, leaving a session that opens with what was captured. It never blocks: `poll()`
is driven by the CLI's wait loop or by the app's timer.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, make_dataclass
from pathlib import Path

from inspector import __version__
from inspector.capture import process_tree
from inspector.capture.options import OPTIONS, runner_argv
from inspector.core.history.git_work_tree import git_commit
from inspector.core.process_state import start_time
from inspector.core.readers.session_format import ENTRIES as SESSION_ENTRIES
from inspector.core.readers.session_format import FORMAT as SESSION_FORMAT
from inspector.core.readers.session_format import FORMAT_VERSION as SESSION_FORMAT_VERSION
from inspector.core.readers.session_format import LAUNCHER_ENV, MANIFEST, PROGRESS, RESULTS, STDERR, STDOUT, TRACE_DIR
RUNNER = Path(__file__).with_name("runner.py")
EXIT_TIMEOUT = 124
KILL_GRACE_S = 0.5


class _SettingsBehaviour:
    def runner_options(self) -> list[str]:
        """runner.py's options for these settings."""
        return runner_argv(asdict(self))

    @classmethod
    def from_mapping(cls, values: dict) -> "CaptureSettings":
        """Settings from stored values: unknown names are ignored, a wrong-typed value falls back to
        its default (a hand-edited settings file must not stop the app)."""
        chosen = {}
        for option in OPTIONS:
            if option.name in values:
                try:
                    chosen[option.name] = option.coerce(values[option.name])
                except (ValueError, TypeError):
                    continue
        return cls(**chosen)


CaptureSettings = make_dataclass(
    "CaptureSettings",
    [(option.name, option.type if option.default is not None else option.type | None, field(default=option.default))
     for option in OPTIONS],
    bases=(_SettingsBehaviour,))
CaptureSettings.__module__ = __name__
CaptureSettings.__doc__ = "How a capture runs: one field per option of `inspector.capture.options.OPTIONS`."


@dataclass
class CapturePlan:
    """What will run, where it writes, and with which environment."""

    session: Path
    command: list[str]
    env: dict[str, str]
    settings: CaptureSettings
    script: Path | None = None
    script_args: list[str] = field(default_factory=list)


def plan_script(script: Path, args: list[str], session: Path, settings: CaptureSettings,
                python: str | None = None) -> CapturePlan:
    """A model script run by our runner in `python` (default: `default_interpreter()`)."""
    session = session.resolve()
    command = [python or default_interpreter(), str(RUNNER), "--session", str(session), *settings.runner_options(),
               str(script.resolve()), *args]
    return CapturePlan(session, command, capture_env(session, settings), settings, script.resolve(), list(args))


def plan_command(command: list[str], session: Path, settings: CaptureSettings) -> CapturePlan:
    """Any command (`python train.py …`, `torchrun …`): traced, not measured."""
    session = session.resolve()
    return CapturePlan(session, list(command), capture_env(session, settings), settings)


def clear_session(session: Path) -> None:
    """Remove what an earlier capture wrote into `session` (and nothing else)."""
    import shutil

    for name in SESSION_ENTRIES:
        target = session / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()


def capture_env(session: Path, settings: CaptureSettings) -> dict[str, str]:
    env = dict(os.environ, TORCH_TRACE=str(session / TRACE_DIR), INDUCTOR_PROVENANCE="1", PYTHONUNBUFFERED="1")
    if settings.threads:
        env["OMP_NUM_THREADS"] = str(settings.threads)
    return env


def write_manifest(plan: CapturePlan, **fields) -> dict:
    """Write (or rewrite) manifest.json; fields given here override what is already there."""
    path = plan.session / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {
            "format": SESSION_FORMAT, "format_version": SESSION_FORMAT_VERSION, "tool_version": __version__,
            "command": plan.command, "script": str(plan.script) if plan.script else None,
            "script_args": plan.script_args, "settings": asdict(plan.settings),
            "host": {"platform": platform.platform(), "python": platform.python_version(), "node": platform.node()},
            "git_commit": git_commit(plan.script.parent) if plan.script else None,
            "complete": False,
        }
    manifest.update(fields)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(temporary, path)
    return manifest


class CaptureProcess:
    """One running capture. Nothing here blocks: `poll()` checks the child, enforces the timeout and
    carries a stop through (SIGTERM to the whole tree, SIGKILL to what is left after a short grace);
    `wait()` is the CLI's loop over it."""

    def __init__(self, plan: CapturePlan):
        self.plan = plan
        plan.session.mkdir(parents=True, exist_ok=True)
        (plan.session / TRACE_DIR).mkdir(exist_ok=True)
        self.started = time.time()
        self._clock = time.monotonic()  # the timeout's clock: immune to wall-clock changes
        self.mark = process_tree.new_mark()
        self.stopped_by: str | None = None
        self.returncode: int | None = None
        self._kill_at: float | None = None
        self._tree: set[process_tree.Member] = set()
        self.error: dict | None = None  # {kind, message} once the run has ended, if it failed
        launcher = {"pid": os.getpid(), "start": start_time(os.getpid()), "node": platform.node()}
        write_manifest(plan, started=self.started, complete=False, exit_status=None, launcher=launcher)
        self._stdout = open(plan.session / STDOUT, "wb")
        self._stderr = open(plan.session / STDERR, "wb")
        try:
            self.process = subprocess.Popen(plan.command, env={**plan.env, process_tree.MARK: self.mark,
                                                                LAUNCHER_ENV: str(os.getpid())},
                                            stdout=self._stdout, stderr=self._stderr, stdin=subprocess.DEVNULL,
                                            start_new_session=True)  # in this working directory, as python would
        except OSError as error:
            self._close_files()
            self.error = {"kind": "cannot_start", "message": f"could not start {plan.command[0]}: {error}"}
            write_manifest(plan, ended=time.time(), exit_status=None, complete=False, error=self.error)
            raise
        self._since = start_time(self.process.pid) or 0  # the mark is looked for in younger processes

    @property
    def running(self) -> bool:
        return self.returncode is None

    def poll(self) -> int | None:
        """The child's exit status once the run is over (manifest written, files closed), else None."""
        if self.returncode is not None:
            return self.returncode
        code = self.process.poll()
        now = time.monotonic()
        if code is None and self.stopped_by is None and self.plan.settings.timeout_s \
                and now - self._clock > self.plan.settings.timeout_s:
            self.stop("timeout")
        elif code is None and self._kill_at is not None and now >= self._kill_at:
            self._signal(signal.SIGKILL)
        if code is None:
            code = self.process.poll()
        if code is not None:
            self._finish(code)
        return self.returncode

    def wait(self, on_tick=None, interval_s: float = 0.1) -> int:
        while (code := self.poll()) is None:
            if on_tick:
                on_tick()
            time.sleep(interval_s)
        return code

    def stop(self, why: str = "cancelled", grace_s: float = KILL_GRACE_S) -> None:
        """Begin stopping the whole tree: SIGTERM now, SIGKILL from `poll()` once `grace_s` has passed
        (at once when it is 0). Returns at once; the run is over when `poll()` says so."""
        if self.returncode is not None or self.process.poll() is not None:
            return
        self.stopped_by = self.stopped_by or why
        if grace_s <= 0:
            self._signal(signal.SIGKILL)
            return
        self._signal(signal.SIGTERM)
        if self._kill_at is None:
            self._kill_at = time.monotonic() + grace_s

    def _signal(self, sig: int) -> None:
        self._tree |= process_tree.members(self.process.pid, self.mark, self._since)
        process_tree.signal_tree(self.process.pid, self._tree, sig)
        if sig == signal.SIGKILL:
            self._kill_at = None

    def _finish(self, code: int) -> None:
        if self.stopped_by:  # what ignored SIGTERM, or was orphaned by the runner's end, goes too
            # the runner is reaped: its pid is free again
            self._tree |= process_tree.members(None, self.mark, self._since)
            process_tree.signal_tree(None, process_tree.alive(self._tree), signal.SIGKILL)
        self._close_files()
        manifest = finish_manifest(self.plan, code, self.stopped_by)
        self.error = manifest.get("error")
        self.returncode = code

    def _close_files(self) -> None:
        self._stdout.close()
        self._stderr.close()

    @property
    def exit_code(self) -> int | None:
        """The status a shell would report for this run: 124 after a timeout, 128+N when signal N
        ended it, else the child's own status."""
        code = self.returncode
        if code is None:
            return None
        return shell_status(EXIT_TIMEOUT if self.stopped_by == "timeout" else code)


def shell_status(code: int) -> int:
    """Popen's status (negative: killed by that signal) as a process exit status (128 + signal)."""
    return 128 - code if code < 0 else code


def signal_name(code: int) -> str | None:
    """SIGSEGV for -11; None for an ordinary exit."""
    if code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def finish_manifest(plan: CapturePlan, code: int, stopped_by: str | None) -> dict:
    """Record how the run ended: exit status, who stopped it, the error in one line, complete or not."""
    failure = None
    if stopped_by == "timeout":
        failure = {"kind": "timeout", "message": f"stopped after {plan.settings.timeout_s:g} s (--timeout)"}
    elif stopped_by:
        failure = {"kind": stopped_by, "message": "stopped by the user"}
    elif code != 0:
        failure = reported_error(plan.session) or {"kind": "signal" if code < 0 else "exit_status",
                                                   "message": describe_exit(code, plan.script is not None)}
    return write_manifest(plan, ended=time.time(), exit_status=code, exit_signal=signal_name(code),
                          stopped_by=stopped_by, complete=code == 0 and not stopped_by, error=failure)


def reported_error(session: Path) -> dict | None:
    """The error the runner itself reported (results.json, else its last error event), if any."""
    results = read_json(session / RESULTS)
    error = results.get("error") if isinstance(results, dict) else None
    if not isinstance(error, dict):
        error = last_error_event(session)
    if not error:
        return None
    return {"kind": error.get("kind"), "message": error.get("message"),
            **{key: error[key] for key in ("file", "line") if key in error}}  # the script's line it raised through


def describe_exit(code: int, runner: bool = True) -> str:
    """One line for an exit the runner did not explain (its own exits always come with an error event)."""
    if code < 0:
        name = signal_name(code)
        try:
            meaning = signal.strsignal(-code)
        except ValueError:
            meaning = None
        return f"killed by {name}" + (f" ({meaning})" if meaning else "") + f"; exit status {shell_status(code)}"
    if runner:
        return (f"exited with status {code} without reporting an error: the script ended the process itself "
                f"(os._exit) or native code did")
    return f"exited with status {code}"


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def last_error_event(session: Path) -> dict | None:
    for event in reversed(read_progress(session)):
        if event.get("event") == "error":
            return {"kind": event.get("kind", "error"), "message": event.get("message", "")}
    return None


def read_progress(session: Path, offset: int = 0) -> list[dict]:
    events, _ = tail_progress(session, offset)
    return events


def tail_progress(session: Path, offset: int = 0) -> tuple[list[dict], int]:
    """Complete progress events written since byte `offset`, and the offset to continue from."""
    try:
        with open(session / PROGRESS, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except OSError:
        return [], offset
    complete = data.rfind(b"\n") + 1
    events = []
    for line in data[:complete].splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events, offset + complete


PROBE = ("import json, sys\ninfo = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
         "try:\n import torch\n info.update(torch=torch.__version__, cuda=torch.cuda.is_available())\n"
         "except Exception as error:\n info.update(torch=None, error=f'{type(error).__name__}: {error}')\n"
         "print(json.dumps(info))")


def probe_interpreter(python: str, timeout_s: float = 60, code: str = PROBE) -> dict:
    """Which Python and torch `python` has, and whether it sees CUDA — without importing torch here.
    `code` is the probe run there: it prints one JSON object on its last line (a caller that wants
    more of the interpreter, such as its GPU's name, asks with its own)."""
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"python": None, "torch": None, "error": f"cannot run {python}: {error}"}
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"python": None, "torch": None, "error": (done.stderr or done.stdout).strip()[-500:]}


def default_interpreter() -> str:
    """This Python, unless this is the frozen app (which carries no torch): then the first found."""
    if not getattr(sys, "frozen", False):
        return sys.executable
    found = candidate_interpreters()
    return found[0] if found else "python3"


def candidate_interpreters() -> list[str]:
    """Pythons that may hold the user's torch: the active venv and conda env, conda envs in the usual
    places, `python3`/`python` on PATH, and this interpreter unless it is a frozen app."""
    import glob
    import shutil

    found: list[str] = []
    for prefix in (os.environ.get("VIRTUAL_ENV"), os.environ.get("CONDA_PREFIX")):
        if prefix:
            found.append(str(Path(prefix) / "bin" / "python"))
    home = Path.home()
    for base in ("miniconda3", "anaconda3", "miniforge3", "mambaforge", ".conda"):
        found += sorted(glob.glob(str(home / base / "envs" / "*" / "bin" / "python")))
        found.append(str(home / base / "bin" / "python"))
    for name in ("python3", "python"):
        located = shutil.which(name)
        if located:
            found.append(located)
    if not getattr(sys, "frozen", False):
        found.insert(0, sys.executable)
    unique: list[str] = []
    for path in found:
        if Path(path).is_file() and os.access(path, os.X_OK) and path not in unique:
            unique.append(path)
    return unique
