"""A big log's summary is made on both cores (core/readers/forked_parts.py: a forked copy parses the
output code and builds the stage spans while the reader makes the rest), and it is the very summary
one core makes, whatever becomes of the copy: it answers, dies, answers garbage, or the reader is
interrupted. The copy runs in a fresh interpreter here (a script run by `python`), because a fork is
refused while other threads run, and a long test run leaves worker threads behind."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.model.output_code import OutputCode
from inspector.core.readers.session_loader import open_path
from inspector.core.readers.torch_trace import read_trace_log

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"
CORPUS_LOGS = ["inductor_provenance_jit_cuda_log.txt", "multi_rank_logs"]

# Summarises each path given on two cores (the copy's size threshold lowered to 0) and on one
# (TCI_SERIAL=1), and prints, per path, whether the two summaries are equal and how many parts the
# copy handed back. `HOW` says what the copy does: its real work, die, or answer garbage.
TWO_AND_ONE = r"""
import json, os, sys
sys.path.insert(0, {root!r})
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.readers import forked_parts
from inspector.core.readers.session_loader import open_path

forked_parts.HELPER_MIN_BYTES = 0
forked_parts.second_core = lambda: True  # a one-core machine forks too: only slower
HOW = {how!r}
if HOW == "dies":
    forked_parts._make = lambda *parts: os._exit(3)
elif HOW == "garbage":
    def _garbage(progress, told, made, *parts):
        os.write(made, b'[0, [1, 2]]\n[1, [[1, 2\n'); os.write(told, b"++"); os._exit(0)
    forked_parts._make = _garbage
handed = []
real_take = forked_parts.ForkedParts.take
forked_parts.ForkedParts.take = lambda self: handed.append(real_take(self)) or handed[-1]
found = {{}}
for path in sys.argv[1:]:
    analysis = SessionAnalysis(open_path(path))
    analysis.make_summary_facts(two_cores=True)
    two_cores = json.dumps(summarize(analysis))
    os.environ["TCI_SERIAL"] = "1"
    one_core = json.dumps(summarize(open_path(path)))
    del os.environ["TCI_SERIAL"]
    found[path] = [two_cores == one_core, handed[-1] if handed else None]
    handed.clear()
try:
    os.waitpid(-1, os.WNOHANG)
    left = True
except ChildProcessError:
    left = False
print(json.dumps({{"found": found, "children_left": left}}))
"""


def _two_and_one(paths: list[Path], how: str = "works") -> dict:
    done = subprocess.run([sys.executable, "-c", TWO_AND_ONE.format(root=str(ROOT), how=how), *map(str, paths)],
                          capture_output=True, text=True, timeout=600,
                          env={"TCI_NO_CACHE": "1", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def logs(corpus) -> list[Path]:
    return [BUNDLED_LOG, *(corpus / name for name in CORPUS_LOGS)]


def test_the_summary_made_on_two_cores_is_the_one_made_on_one(logs):
    result = _two_and_one(logs)
    for path, (same, handed) in result["found"].items():
        assert same, f"{path}: the summary differs from the one made on one core"
        assert handed and handed > 0, f"{path}: the copy handed back nothing, so nothing was made on two cores"
    assert not result["children_left"], "the copy was reaped"


@pytest.mark.parametrize("how", ["dies", "garbage"])
def test_a_copy_that_fails_changes_nothing_the_user_sees(logs, how):
    result = _two_and_one(logs, how)
    for path, (same, handed) in result["found"].items():
        assert same, f"{path}: a copy that {how} changed the summary"
        assert handed == 0, f"{path}: parts were taken from a copy that {how}"
    assert not result["children_left"], "the copy was reaped"


def test_an_interrupted_summary_leaves_no_copy_behind():
    script = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
from inspector.core.analysis import session_analysis
from inspector.core.readers import forked_parts
from inspector.core.readers.session_loader import open_path
forked_parts.HELPER_MIN_BYTES = 0
forked_parts.second_core = lambda: True  # a one-core machine forks too: only slower
made = []
real_start = forked_parts.ForkedParts.start.__func__
forked_parts.ForkedParts.start = classmethod(lambda cls, *parts: made.append(real_start(cls, *parts)) or made[-1])
def interrupt(unit):  # Ctrl+C while this process makes its share, the copy at work
    raise KeyboardInterrupt
session_analysis.compile_detail = interrupt
try:
    session_analysis.SessionAnalysis(open_path({str(BUNDLED_LOG)!r})).make_summary_facts(two_cores=True)
    print("not interrupted")
except KeyboardInterrupt:
    pass
print("forked" if made and made[0] is not None else "not forked")
try:
    os.waitpid(-1, os.WNOHANG)
    print("a child is left")
except ChildProcessError:
    print("no child left")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["forked", "no", "child", "left"], done.stdout + done.stderr


# The start of each script below: the project, a small threshold, and `start(session, problem_count)`.
FRESH = f"""
import os, sys, threading, _thread
sys.path.insert(0, {str(ROOT)!r})
from inspector.core.model.session import CodeArtifact
from inspector.core.readers import forked_parts
from inspector.core.readers.session_loader import open_path
forked_parts.HELPER_MIN_BYTES = 0
forked_parts.second_core = lambda: True  # a one-core machine forks too: only slower
LOG = {str(BUNDLED_LOG)!r}

def start(session, problem_count=lambda: 0):
    return forked_parts.ForkedParts.start([artifact for unit in session.units for artifact in unit.output_code],
                                          [], [rank.span_source for rank in session.ranks], problem_count)
"""


def _fresh(script: str) -> list[str]:
    """What `script` prints, run after FRESH in an interpreter of its own (no thread but its own)."""
    done = subprocess.run([sys.executable, "-c", FRESH + script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are counted through /proc")
@pytest.mark.parametrize("other", ["python", "native"])
def test_no_copy_is_forked_while_another_thread_runs(other):
    """A fork copies only the thread that forks: a lock another thread held (a view reading the same log,
    the app's Qt threads, which Python's `threading` does not know of) would stay taken in the copy for
    ever, so the copy is not made."""
    said = _fresh(f"""
alone = start(open_path(LOG))
print("forked-alone" if alone is not None else "not-forked-alone")
alone and alone.stop()
release, running = threading.Event(), threading.Event()
def wait():
    running.set()
    release.wait()
threading.Thread(target=wait).start() if {other!r} == "python" else _thread.start_new_thread(wait, ())
running.wait()
beside = start(open_path(LOG))
print("forked-beside-a-thread" if beside is not None else "not-forked-beside-a-thread")
release.set()
""")
    assert said == ["forked-alone", "not-forked-beside-a-thread"]


def test_a_copy_stops_before_a_part_that_counted_a_problem():
    """A part whose reading counted a problem in the copy (the log's file gone since it was read) is
    not handed back: it is made here, where the problem is counted for the summary."""
    said = _fresh("""
session = open_path(LOG)
counts = iter(range(1_000_000))
parts = start(session, problem_count=lambda: next(counts))  # each part "counts" one in the copy
print(parts is not None, parts.take() if parts else None,
      all(artifact.parsed for unit in session.units for artifact in unit.output_code))
""")
    assert said == ["True", "0", "True"]


def test_only_parts_read_from_checked_payloads_go_to_the_copy():
    """Output code read from elsewhere (a TORCH_COMPILE_DEBUG folder's files, whose reading counts
    unsafe links) is made here, where what its reading counts is kept."""
    said = _fresh("""
unit = next(unit for unit in open_path(LOG).units if unit.output_code)
loose = CodeArtifact("output_code.py", lambda: unit.output_code[0].text)
parts = forked_parts.ForkedParts.start([loose, *unit.output_code], [], [], lambda: 0)
print(parts is not None, parts is not None and [target for _kind, target in parts.parts] == unit.output_code)
parts and parts.stop()
""")
    assert said == ["True", "True"]


def test_a_parsed_output_code_comes_back_from_its_state_unchanged(logs):
    for path in logs:
        for unit in open_path(path).units:
            for artifact in unit.output_code:
                code = artifact.code
                assert OutputCode.from_state(json.loads(json.dumps(code.get_state()))) == code, unit.compile_id


def test_the_head_of_a_payload_is_the_start_of_its_text_and_counts_all_of_it(logs, tmp_path):
    """The summary keeps the first 64 KiB of a unit's guards and says how much more there was; the
    reader tells both without decoding the whole payload. Checked on every payload of real logs, and
    on one whose text is not ASCII and one written with CRLF line ends (read the long way)."""
    log_files = [path for path in logs if path.is_file()] + sorted((logs[-1]).glob("*.log"))
    text = BUNDLED_LOG.read_text()
    (tmp_path / "unicode.log").write_text(text.replace("\tdef forward", "\tdef forward_ü"))
    (tmp_path / "crlf.log").write_bytes(BUNDLED_LOG.read_bytes().replace(b"\n", b"\r\n"))
    log_files += [tmp_path / "unicode.log", tmp_path / "crlf.log"]
    checked = 0
    for path in log_files:
        log = read_trace_log(path)
        for record in log.records:
            if not record.has_payload:
                continue
            whole = log.payload(record)
            for chars in (0, 1, 7, 100, 4096):
                assert log.payload_head(record, chars) == (whole[:chars], len(whole)), (path, record.line_no, chars)
            checked += 1
    assert checked > 100


def test_a_payload_that_cannot_be_read_is_counted_once_for_its_head(tmp_path):
    """The summary's cut of a unit's guards reads only their head; where the log's file is gone since it
    was read, that read is counted once, as reading the whole payload counts it."""
    copy = tmp_path / BUNDLED_LOG.name
    copy.write_bytes(BUNDLED_LOG.read_bytes())
    log = read_trace_log(copy)
    record = next(record for record in log.records if record.has_payload)
    log.close()
    copy.unlink()
    assert log.payload_head(record, 100) == ("", 0)
    assert log.problems.counts["unreadable_file"] == 1
    assert log.payload(record) == ""
    assert log.problems.counts["unreadable_file"] == 2


def test_payloads_read_the_same_where_the_system_has_no_pread(monkeypatch):
    """Windows has no `os.pread`: the reader seeks and reads there (no copy is ever forked to share the
    file's position)."""
    log = read_trace_log(BUNDLED_LOG)
    texts = [log.payload(record) for record in log.records if record.has_payload]
    monkeypatch.delattr("os.pread")
    again = read_trace_log(BUNDLED_LOG)
    assert [again.payload(record) for record in again.records if record.has_payload] == texts


def test_spans_kept_in_the_cache_are_not_made_again_by_the_copy(tmp_path):
    said = _fresh(f"""
os.environ["XDG_CACHE_HOME"] = {str(tmp_path)!r}
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
for _ in range(2):
    session = open_path(LOG)
    parts = start(session)
    print(sorted({{kind.name for kind, _target in parts.parts}}) if parts else None)
    parts and parts.stop()
    summarize(SessionAnalysis(session))  # builds the spans here and keeps them in the cache
""")
    assert said == ["['code',", "'spans']", "['code']"]
