"""Starts and watches a capture from the app's side (standard library only; never imports torch).

It writes the session folder's manifest before the run (marked incomplete) and after it (exit status,
timing, complete or not), sends the child's stdout and stderr straight to files so a flooding script
costs no memory here, and can stop the whole process tree at any moment — on a timeout or a cancel —
leaving a session that opens with what was captured.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from inspector import __version__
from inspector.core.readers.session_format import ENTRIES as SESSION_ENTRIES
from inspector.core.readers.session_format import FORMAT as SESSION_FORMAT
from inspector.core.readers.session_format import FORMAT_VERSION as SESSION_FORMAT_VERSION
RUNNER = Path(__file__).with_name("runner.py")
EXIT_TIMEOUT = 124
KILL_GRACE_S = 0.5


@dataclass
class CaptureSettings:
    mode: str = "default"
    dynamic: str = "auto"
    fullgraph: bool = False
    backend: str = "inductor"
    device: str = "cpu"
    runs: int = 20
    warmup: int = 3
    profile: bool = True
    timeout_s: float | None = None
    threads: int | None = None  # OMP_NUM_THREADS for the child; None leaves the user's setting

    def runner_options(self) -> list[str]:
        options = ["--mode", self.mode, "--dynamic", self.dynamic, "--backend", self.backend,
                   "--device", self.device, "--runs", str(self.runs), "--warmup", str(self.warmup)]
        if self.fullgraph:
            options.append("--fullgraph")
        if not self.profile:
            options.append("--no-profile")
        return options


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
    env = dict(os.environ, TORCH_TRACE=str(session / "trace"), INDUCTOR_PROVENANCE="1", PYTHONUNBUFFERED="1")
    if settings.threads:
        env["OMP_NUM_THREADS"] = str(settings.threads)
    return env


def write_manifest(plan: CapturePlan, **fields) -> dict:
    """Write (or rewrite) manifest.json; fields given here override what is already there."""
    path = plan.session / "manifest.json"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {
            "format": SESSION_FORMAT, "format_version": SESSION_FORMAT_VERSION, "tool_version": __version__,
            "command": plan.command, "script": str(plan.script) if plan.script else None,
            "script_args": plan.script_args, "settings": asdict(plan.settings),
            "host": {"platform": platform.platform(), "python": platform.python_version(), "node": platform.node()},
            "complete": False,
        }
    manifest.update(fields)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(temporary, path)
    return manifest


class CaptureProcess:
    """One running capture. `poll()` never blocks; `stop()` ends the whole process tree."""

    def __init__(self, plan: CapturePlan):
        self.plan = plan
        plan.session.mkdir(parents=True, exist_ok=True)
        (plan.session / "trace").mkdir(exist_ok=True)
        self.started = time.time()
        write_manifest(plan, started=self.started, complete=False, exit_status=None)
        self._stdout = open(plan.session / "stdout.txt", "wb")
        self._stderr = open(plan.session / "stderr.txt", "wb")
        self.stopped_by: str | None = None
        try:
            self.process = subprocess.Popen(plan.command, env=plan.env, stdout=self._stdout, stderr=self._stderr,
                                            stdin=subprocess.DEVNULL, cwd=plan.script.parent if plan.script else None,
                                            start_new_session=True)
        except OSError as error:
            self._close_files()
            write_manifest(plan, ended=time.time(), exit_status=None, complete=False,
                           error={"kind": "cannot_start", "message": f"could not start {plan.command[0]}: {error}"})
            raise

    def poll(self) -> int | None:
        code = self.process.poll()
        if code is None and self.plan.settings.timeout_s and time.time() - self.started > self.plan.settings.timeout_s:
            self.stop("timeout")
            code = self.process.poll()
        if code is not None:
            self._finish(code)
        return code

    def wait(self, on_tick=None, interval_s: float = 0.1) -> int:
        while (code := self.poll()) is None:
            if on_tick:
                on_tick()
            time.sleep(interval_s)
        return code

    def stop(self, why: str = "cancelled") -> None:
        """SIGTERM to the process group, SIGKILL after a short grace: done well within a second."""
        if self.process.poll() is not None:
            return
        self.stopped_by = why
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not kill_process_group(self.process.pid, sig):
                break
            try:
                self.process.wait(timeout=KILL_GRACE_S)
                break
            except subprocess.TimeoutExpired:
                continue

    def _finish(self, code: int) -> None:
        if self._stdout.closed:
            return
        self._close_files()
        finish_manifest(self.plan, code, self.stopped_by)

    def _close_files(self) -> None:
        self._stdout.close()
        self._stderr.close()

    @property
    def exit_code(self) -> int | None:
        code = self.process.poll()
        if code is None:
            return None
        return EXIT_TIMEOUT if self.stopped_by == "timeout" else code


def finish_manifest(plan: CapturePlan, code: int, stopped_by: str | None) -> dict:
    """Record how the run ended: exit status, who stopped it, the error in one line, complete or not."""
    failure = None
    if stopped_by == "timeout":
        failure = {"kind": "timeout", "message": f"stopped after {plan.settings.timeout_s:g} s (--timeout)"}
    elif stopped_by:
        failure = {"kind": stopped_by, "message": "stopped by the user"}
    elif code != 0:
        results = read_json(plan.session / "results.json") or {}
        failure = results.get("error") or last_error_event(plan.session) or {
            "kind": "exit_status", "message": describe_exit(code)}
        failure = {"kind": failure.get("kind"), "message": failure.get("message")}
    return write_manifest(plan, ended=time.time(), exit_status=code, stopped_by=stopped_by,
                          complete=code == 0 and not stopped_by, error=failure)


def kill_process_group(pid: int, sig: int) -> bool:
    """Signal the process group led by `pid` (the runner makes itself a group leader); False if gone."""
    try:
        os.killpg(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code == 3:
        return "the interpreter has no usable torch"
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
        with open(session / "progress.jsonl", "rb") as handle:
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


def probe_interpreter(python: str, timeout_s: float = 60) -> dict:
    """Which Python and torch `python` has, and whether it sees CUDA — without importing torch here."""
    code = ("import json, sys\ninfo = {'python': sys.version.split()[0], 'executable': sys.executable}\n"
            "try:\n import torch\n info.update(torch=torch.__version__, cuda=torch.cuda.is_available())\n"
            "except Exception as error:\n info.update(torch=None, error=f'{type(error).__name__}: {error}')\n"
            "print(json.dumps(info))")
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
