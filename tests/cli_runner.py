"""The two ways a test runs the command line.

`run_cli` calls `inspector.cli.main` in the test's own process, with stdout and stderr captured as a pipe
would carry them: starting Python and importing the project again costs about ten times what most
commands do, so this is the default. `run_cli_process` starts `python -m inspector` in a child process,
for the few tests that need one: a limit a process is held to (memory high-water mark, file size, a
timeout that must contain a hang rather than fail the whole run), signals, an environment read before
`main` runs, or the real entry point. Both return a `subprocess.CompletedProcess` and fail on a
traceback, which a user must never see."""

from __future__ import annotations

import contextlib
import gc
import io
import os
import re
import resource
import signal
import subprocess
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class CliRun(subprocess.CompletedProcess):
    """A finished command; `peak_bytes` is the child's own resident-memory high-water mark when asked for."""

    peak_bytes: int | None = None


@contextlib.contextmanager
def _environment(changes: dict | None):
    """`changes` applied to os.environ for the block (None removes a variable), everything restored after,
    so one in-process run cannot leave a switch (TCI_NO_CACHE, TCI_HISTORY_STORE) set for the next test."""
    before = dict(os.environ)
    for key, value in (changes or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = str(value)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(before)


@contextlib.contextmanager
def _in_folder(folder: Path):
    """The current folder is `folder` for the block (contextlib.chdir, before Python 3.11)."""
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _pipe(errors: str) -> io.TextIOWrapper:
    """A text stream that encodes as Python's stream on a UTF-8 pipe does (stdout strict, stderr with
    backslash escapes): text stdout cannot carry (a lone surrogate) fails here as it would in a child
    process, instead of passing through a StringIO."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors=errors, newline="\n", write_through=True)


def _read(stream: io.TextIOWrapper, text: bool) -> str | bytes:
    if stream.closed:  # the CLI closes stderr on a broken pipe; what it had written is gone with it
        return "" if text else b""
    stream.flush()
    written = stream.buffer.getvalue()
    return written.decode("utf-8") if text else written


def _no_traceback(done: CliRun) -> None:
    stderr = done.stderr if isinstance(done.stderr, str) else done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-3000:]


def _exit_code(stop: SystemExit, stderr) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=stderr)  # as the interpreter does with `sys.exit("message")`
    return 1


def run_cli(*args, env: dict | None = None, text: bool = True, traceback_allowed: bool = False) -> CliRun:
    """`compile-inspector ARGS` in this process: exit code, stdout and stderr as a child process's would be
    (bytes where `text` is False).

    It runs in the repository root, as the child processes do. Nothing a run changes outlives it: the
    environment (with `env` applied for the run) and the SIGINT handler are restored, a collector the
    CLI froze is unfrozen, and an exception that escapes `main` is written to stderr as a
    traceback with exit code 1, as the interpreter would."""
    from inspector import cli

    argv = [str(arg) for arg in args]
    stdout, stderr = _pipe("strict"), _pipe("backslashreplace")
    frozen = gc.get_freeze_count()
    sigint = signal.getsignal(signal.SIGINT)
    with _environment(env), _in_folder(ROOT), contextlib.redirect_stdout(stdout), \
            contextlib.redirect_stderr(stderr):
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = _exit_code(stop, stderr)
        except Exception:  # noqa: BLE001 - shown as the interpreter would show it, then failed on below
            traceback.print_exc(file=sys.stderr)
            code = 1
        finally:
            signal.signal(signal.SIGINT, sigint)
            if not frozen:
                gc.unfreeze()
    done = CliRun(["compile-inspector", *argv], code or 0, _read(stdout, text), _read(stderr, text))
    if not traceback_allowed:
        _no_traceback(done)
    return done


# Run in the child instead of `-m inspector` when its peak memory is asked for: the high-water mark of its
# own memory (VmHWM), read as it ends. ru_maxrss is no measure here: Linux carries the parent's over the
# fork and exec, so a child of a long test run reads as big as the test process.
_MEASURED_MAIN = ("import re, runpy, sys\n"
                  "sys.argv = ['compile-inspector', *sys.argv[1:]]\n"
                  "try:\n    runpy.run_module('inspector', run_name='__main__')\n"
                  "except SystemExit as stop:\n    code = stop.code\nelse:\n    code = 0\n"
                  "status = open('/proc/self/status').read()\n"
                  "print('peak-rss-kib', re.search(r'VmHWM:\\s*(\\d+)', status)[1], file=sys.stderr)\n"
                  "sys.exit(code)\n")
_PEAK = re.compile(r"peak-rss-kib (\d+)\n?\Z")


def cli_command(*args) -> list[str]:
    """The command line that runs the real entry point, `python -m inspector ARGS`."""
    return [sys.executable, "-m", "inspector", *map(str, args)]


def child_env(env: dict | None = None, cache: bool = True) -> dict:
    """The environment a child CLI runs in: this one, the worktree importable, `env` applied (None
    removes), and without the index cache where `cache` is False."""
    merged = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    if not cache:
        merged["TCI_NO_CACHE"] = "1"
    for key, value in (env or {}).items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = str(value)
    return merged


def run_cli_process(*args, timeout: float = 120, env: dict | None = None, cache: bool = True,
                    measure_peak: bool = False, limit_file_bytes: int | None = None,
                    limit_memory_bytes: int | None = None, text: bool = True, traceback_allowed: bool = False,
                    cwd: Path = ROOT) -> CliRun:
    """`python -m inspector ARGS` in a child process: a hang past `timeout` is a failed test, not a stuck
    run. `measure_peak` sets `peak_bytes` to the child's own memory high-water mark; `limit_file_bytes`
    makes every write past that size fail, as a full disk does; `limit_memory_bytes` caps its address
    space, so a blow-up fails the child instead of the machine."""
    def limit():
        if limit_file_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_bytes, limit_file_bytes))
        if limit_memory_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_memory_bytes, limit_memory_bytes))

    limited = limit_file_bytes is not None or limit_memory_bytes is not None
    command = [sys.executable, "-c", _MEASURED_MAIN, *map(str, args)] if measure_peak else cli_command(*args)
    finished = subprocess.run(command, capture_output=True, text=text, timeout=timeout, cwd=cwd,
                              env=child_env(env, cache), preexec_fn=limit if limited else None)
    stderr, peak = finished.stderr, None
    if measure_peak:
        found = _PEAK.search(stderr if text else stderr.decode("utf-8", "replace"))
        assert found, stderr[-3000:]
        stderr, peak = stderr[:found.start()] if text else stderr[:stderr.rindex(b"peak-rss-kib")], int(found[1]) * 1024
    done = CliRun(finished.args, finished.returncode, finished.stdout, stderr)
    done.peak_bytes = peak
    if not traceback_allowed:
        _no_traceback(done)
    return done
