"""The history's digest of a log (what makes two opens of one run one run) is worked out ahead, on a
thread, while `summary` imports and reads: the run it records is the very run hashing the file
afterwards would record, a log changed since the digest began is hashed again, nothing but a
regular file is hashed, and the summary is still made on both cores (the copy is forked only once
the digest's thread is done)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from cli_runner import run_cli
from history_stores import data_home  # noqa: F401 (fixture)

from inspector.core.history import log_digests
from inspector.core.history.run_record import run_identity
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"


def settled_copy(to: Path) -> Path:
    """A copy of the bundled log last written a minute ago (a log the history records on any open)."""
    to.write_bytes(BUNDLED_LOG.read_bytes())
    before = time.time() - 60
    os.utime(to, (before, before))
    return to


def test_the_digest_worked_out_ahead_is_the_sha256_of_the_log(tmp_path, monkeypatch):
    monkeypatch.setattr(log_digests, "DIGEST_PART_BYTES", 4096)  # many parts, as a big log has
    log = settled_copy(tmp_path / "run.log")
    log_digests.digest_ahead(log)
    log_digests.wait_for_digests()
    hashed_here = []
    monkeypatch.setattr(log_digests, "_hashed", lambda handle: hashed_here.append(handle) or "hashed again")
    assert log_digests.content_digest(log) == hashlib.sha256(log.read_bytes()).hexdigest()
    assert hashed_here == []  # the digest taken was the one worked out ahead


@pytest.mark.parametrize("change", ["appended", "rewritten, same size", "rewritten, same size and time"])
def test_a_log_changed_since_it_was_hashed_ahead_is_hashed_as_it_is_now(tmp_path, change):
    log = settled_copy(tmp_path / "run.log")
    log_digests.digest_ahead(log)
    log_digests.wait_for_digests()
    data, before = log.read_bytes(), log.stat()
    if change == "appended":
        with log.open("ab") as handle:
            handle.write(b"V1207 11:00:00.000000 1 torch/_logging/structured.py:1] {}\n")
    else:
        with log.open("r+b") as handle:  # in place: the same inode
            handle.write(data.replace(b"mlp_breaks", b"mlp_BREAKS"))
        if change.endswith("time"):  # as `touch -r` or `rsync --inplace -t` leave it
            os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = log.stat()
        assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
        assert after.st_mtime_ns == before.st_mtime_ns or not change.endswith("time")
    assert log_digests.content_digest(log) == hashlib.sha256(log.read_bytes()).hexdigest() \
        != hashlib.sha256(data).hexdigest()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_only_a_regular_file_is_hashed_ahead(tmp_path):
    """A FIFO named like a log would block a read for ever: it is never opened; nor is a folder."""
    fifo = tmp_path / "run.log"
    os.mkfifo(fifo)
    started = time.perf_counter()
    log_digests.digest_ahead(fifo)
    log_digests.digest_ahead(tmp_path)
    log_digests.wait_for_digests()
    assert time.perf_counter() - started < 5
    with pytest.raises(OSError):
        log_digests.content_digest(fifo)


# `compile-inspector summary LOG` in an interpreter of its own (no thread but its own, as a user runs
# it), the copy's size threshold lowered so this small log is summarised on two cores, and the digest
# made to outlast the read; prints whether a copy was forked and whether a digest was worked out ahead.
SUMMARY_ON_TWO_CORES = r"""
import sys, time
sys.path.insert(0, {root!r})
from inspector import cli
from inspector.core.history import log_digests
from inspector.core.readers import forked_parts
forked_parts.HELPER_MIN_BYTES = 0
forked_parts.second_core = lambda: True  # a one-core machine forks too: only slower
forked = []
real_start = forked_parts.ForkedParts.start.__func__
forked_parts.ForkedParts.start = classmethod(lambda cls, *parts: forked.append(real_start(cls, *parts)) or forked[-1])
ahead = []
real_ahead, real_hashed = log_digests.digest_ahead, log_digests._hashed
log_digests.digest_ahead = lambda path: ahead.append(path) or real_ahead(path)
def outlasting_the_read(handle, stopped=None):  # a digest still being worked out when the read is done
    digest = real_hashed(handle, stopped)
    time.sleep(0.5)
    return digest
log_digests._hashed = outlasting_the_read
code = cli.main(["summary", "--json", {log!r}])
print("forked" if forked and forked[0] is not None else "one-core", "ahead" if ahead else "none-ahead", code,
      file=sys.stderr)
"""


def test_summary_records_the_run_hashing_afterwards_would_and_still_forks(tmp_path, data_home):
    log = settled_copy(tmp_path / "run.log")
    done = subprocess.run([sys.executable, "-c", SUMMARY_ON_TWO_CORES.format(root=str(ROOT), log=str(log))],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, XDG_DATA_HOME=str(data_home), TCI_NO_CACHE="1"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.split()[-3:] == ["forked", "ahead", "0"], done.stderr
    assert json.loads(done.stdout)["units"]
    listed = subprocess.run([sys.executable, "-m", "inspector", "history", "--json"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT, env=dict(os.environ, XDG_DATA_HOME=str(data_home)))
    (script,) = json.loads(listed.stdout)["scripts"]
    runs = subprocess.run([sys.executable, "-m", "inspector", "history", script["script"], "--json"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, XDG_DATA_HOME=str(data_home)))
    (run,) = json.loads(runs.stdout)["runs"]
    assert run["identity"] == run_identity(open_path(log))  # hashed here, in this process, afresh


def test_where_no_thread_can_be_started_the_run_is_recorded_as_before(tmp_path, data_home, monkeypatch):
    """A process at its limit of threads: the digest is worked out when the run is recorded, as it was."""
    def refused(thread):
        raise RuntimeError("can't start new thread")

    log = settled_copy(tmp_path / "run.log")
    with monkeypatch.context() as patched:
        patched.setattr(threading.Thread, "start", refused)
        done = run_cli("summary", log, "--no-cache")
    assert done.returncode == 0 and not done.stderr, done.stderr
    (script,) = json.loads(run_cli("history", "--json").stdout)["scripts"]
    (run,) = json.loads(run_cli("history", script["script"], "--json").stdout)["runs"]
    assert run["identity"] == run_identity(open_path(log))


def test_a_summary_that_ends_early_leaves_no_digest_working(tmp_path, data_home, monkeypatch):
    """A command that ends before it needs the digest (here: a file that is no compile output) stops it:
    nothing it started outlives it in a process that goes on."""
    monkeypatch.setattr(log_digests, "DIGEST_PART_BYTES", 4096)
    not_a_log = tmp_path / "notes.log"
    not_a_log.write_bytes(b"not compile output\n" * 200_000)
    assert run_cli("summary", not_a_log).returncode == 2
    assert [thread.name for thread in threading.enumerate() if thread.name == "log digest"] == []
