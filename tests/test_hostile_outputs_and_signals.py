"""Hostile input against outputs, signals and processes, each failure class rebuilt from its description
on the bundled real session — outputs that are atomic and never clobber an input, SARIF/JUnit/Markdown
a log cannot break or inject into, Unicode a terminal cannot print, a capture that does not outlive its
launcher, bundle folders that do not outlive a killed process, and small usage errors that end in one
line instead of a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fuzz_cases import fix_md5, split_records
from inspector.core.readers.session_bundle import extract_bundle, remove_extracted, remove_stale_folders, save_bundle
from cli_runner import child_env, cli_command, run_cli, run_cli_process

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LOG = next((BUNDLED / "trace").glob("*.log"))
EXAMPLE_PATH = "/work/main/resources/examples/mlp_breaks.py"  # where the bundled session was captured
pytestmark = pytest.mark.timeout(180)
NO_CACHE = {"TCI_NO_CACHE": "1"}  # every read from the log itself, not from an index an earlier test wrote


def _lines(done: subprocess.CompletedProcess) -> list[str]:
    return done.stderr.decode("utf-8", "replace").strip().splitlines()


def edited_log(folder: Path, change, name: str = LOG.name) -> Path:
    """The bundled log with `change` applied to its text, every payload's md5 made to match again (so
    the edit reads as what torch wrote, not as damage)."""
    records = split_records(change(LOG.read_text(encoding="utf-8")))
    for record in records:
        fix_md5(record)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / name
    out.write_text("\n".join(record.render() for record in records) + "\n", encoding="utf-8", errors="surrogatepass")
    return out


# --- 4: SARIF line numbers -------------------------------------------------------------------------

@pytest.mark.parametrize("value", ['"abc"', "1e400", "[1]", "-5", "0"])
def test_sarif_survives_a_crafted_first_line_number(tmp_path, value):
    """Without a `dynamo_start` stack, a unit's line is the metrics' `co_firstlineno`: whatever a log
    puts there, the SARIF holds line numbers ≥ 1 (or none) and `check` does not crash."""
    def craft(text):
        text = "\n".join(line for line in text.split("\n") if '{"dynamo_start"' not in line)
        return re.sub(r'"co_firstlineno": \d+', f'"co_firstlineno": {value}', text)

    log = edited_log(tmp_path, craft)
    sarif = tmp_path / "out.sarif"
    done = run_cli("check", log, "--sarif", sarif, env=NO_CACHE, text=False)
    assert done.returncode == 0, _lines(done)
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    regions = [location["physicalLocation"].get("region") for result in results
               for location in result.get("locations", [])]
    assert all(region is None or (type(region["startLine"]) is int and region["startLine"] >= 1) for region in regions)
    assert None in regions, "the crafted unit's result is placed on its file only"


# --- 5: Unicode a terminal cannot print --------------------------------------------------------

def test_a_lone_surrogate_in_a_log_is_shown_as_an_escape(tmp_path):
    log = edited_log(tmp_path, lambda text: text.replace('"co_name": "forward"', '"co_name": "for\\ud800ward"')
                     .replace('"name": "forward"', '"name": "for\\ud800ward"'))
    done = run_cli("summary", log, env=NO_CACHE, text=False)
    assert done.returncode == 0, _lines(done)
    assert "for\\ud800ward" in done.stdout.decode()
    report = tmp_path / "report.html"
    assert run_cli("report", log, "-o", report, env=NO_CACHE, text=False).returncode == 0
    assert "for\\ud800ward" in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", [b"run_\xff.log", b"run_\x01\x1b[2J.log"], ids=["undecodable-byte", "controls"])
def test_odd_bytes_in_a_path_give_a_report_and_well_formed_junit(tmp_path, name):
    log = tmp_path / os.fsdecode(name)
    shutil.copyfile(LOG, log)
    report, junit = tmp_path / "report.html", tmp_path / "junit.xml"
    assert run_cli("report", log, "-o", report, env=NO_CACHE, text=False).returncode == 0
    assert report.stat().st_size > 1000
    done = run_cli("check", log, "--junit", junit, "--max-breaks", "100", env=NO_CACHE, text=False)
    assert done.returncode == 0, _lines(done)
    session = ET.parse(junit).getroot().find("testsuite/properties/property").get("value")
    assert session.endswith(".log") and ("\\udcff" in session or "\\x01\\x1b" in session)


# --- 6: Markdown posted as a pull-request comment ----------------------------------------------

def _hostile_markdown_log(folder: Path) -> Path:
    def craft(text):
        text = text.replace(EXAMPLE_PATH, "/tmp/a`b|c[x](javascript:alert(1)).py")
        text = text.replace("Data-dependent branching", "[click](javascript:alert(1)) ![p](https://evil.example/p.png) "
                                                         "<img src=x onerror=alert(1)> | `x")
        text = text.replace("gb0170", "gb9999")  # a type the registry does not know: the reason itself is shown
        return text.replace('"co_name": "forward"', '"co_name": "for`ward|x"').replace('"name": "forward"',
                                                                                        '"name": "for`ward|x"')
    return edited_log(folder, craft)


def test_markdown_summary_passes_no_link_image_html_or_broken_cell(tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    done = run_cli("summary", "--markdown", _hostile_markdown_log(tmp_path), env=NO_CACHE, text=False)
    assert done.returncode == 0, _lines(done)
    text = done.stdout.decode()
    assert "javascript" in text and "evil.example" in text, "the hostile text is shown, as text"
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    tokens = parser.parse(text)
    inline = [child for token in tokens if token.children for child in token.children]
    links = [child.attrs.get("href") for child in inline if child.type == "link_open"]
    assert all(href.startswith("https://meta-pytorch.github.io/") for href in links), links
    assert not [child for child in inline if child.type == "image"]
    assert not [token for token in [*tokens, *inline] if token.type in ("html_inline", "html_block")]
    for table in text.split("\n\n"):  # a cell is ended by a pipe no backslash escapes: as many in every row
        widths = {len(re.findall(r"(?<!\\)\|", line)) for line in table.splitlines() if line.startswith("|")}
        assert len(widths) <= 1, table


# --- 7: outputs atomic, inputs never clobbered -------------------------------------------------

def test_report_onto_its_own_input_is_refused(tmp_path):
    log = tmp_path / LOG.name
    shutil.copyfile(LOG, log)
    before = log.read_bytes()
    done = run_cli("report", log, "-o", log, env=NO_CACHE, text=False)
    assert done.returncode == 2 and "input" in _lines(done)[-1] and len(_lines(done)) == 1
    assert log.read_bytes() == before


def test_ci_reports_inside_the_session_are_refused(tmp_path):
    session = tmp_path / "session"
    shutil.copytree(BUNDLED, session)
    manifest = (session / "manifest.json").read_bytes()
    for option in ("--sarif", "--junit"):
        done = run_cli("check", session, option, session / "manifest.json", env=NO_CACHE, text=False)
        assert done.returncode == 2 and "inside" in _lines(done)[-1]
        assert (session / "manifest.json").read_bytes() == manifest
    done = run_cli("report", session, "-o", session / "report.html", env=NO_CACHE, text=False)
    assert done.returncode == 2 and not (session / "report.html").exists()


@pytest.mark.parametrize("command", ["report", "bundle", "junit", "sarif"])
def test_a_full_disk_leaves_the_previous_file_and_no_half_written_one(tmp_path, command):
    """A write that fails part-way (here: a file-size limit, which fails writes as a full disk does)
    keeps the previous output as it was and leaves no temporary file."""
    out = tmp_path / "out" / ("shared.tcinspect" if command == "bundle" else f"result.{command}")
    out.parent.mkdir()
    out.write_text("the previous, complete output\n")
    args = {"report": ["report", BUNDLED, "-o", out], "bundle": ["bundle", BUNDLED, "-o", out],
            "junit": ["check", BUNDLED, "--max-breaks", "9", "--junit", out],
            "sarif": ["check", BUNDLED, "--max-breaks", "9", "--sarif", out]}[command]
    done = run_cli_process(*args, limit_file_bytes=256, cache=False, text=False)
    assert done.returncode == 2, _lines(done)
    assert len(_lines(done)) == 1 and "File too large" in _lines(done)[0]
    assert out.read_text() == "the previous, complete output\n"
    assert sorted(path.name for path in out.parent.iterdir()) == [out.name]


# --- 8: a capture does not outlive its launcher --------------------------------------------------

SLEEPER = """
import os, sys, time
from pathlib import Path
Path(sys.argv[1]).write_text(str(os.getpid()))
time.sleep(600)
"""


def _start_capture(tmp_path: Path) -> tuple[subprocess.Popen, int, Path]:
    """`compile-inspector capture` of a script that reports its pid, then sleeps; returns the launcher,
    the script's pid (the runner's process) once it runs, and the session."""
    script, marker, session = tmp_path / "sleeper.py", tmp_path / "pid", tmp_path / "session"
    script.write_text(SLEEPER)
    launcher = subprocess.Popen(cli_command("capture", script, marker, "-o", session, "--quiet"), cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    deadline = time.monotonic() + 120
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline and launcher.poll() is None:
        time.sleep(0.1)
    assert marker.exists(), launcher.communicate(timeout=30)
    return launcher, int(marker.read_text()), session


def _gone(pid: int, within_s: float = 30) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signals and /proc are Linux's")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_terminating_the_launcher_stops_the_traced_program(tmp_path, sig):
    launcher, child, session = _start_capture(tmp_path)
    launcher.send_signal(sig)
    _, stderr = launcher.communicate(timeout=60)
    assert _gone(child), "the traced program outlived the capture"
    assert b"Traceback" not in stderr
    manifest = json.loads((session / "manifest.json").read_text())
    assert manifest["stopped_by"] == "cancelled" and manifest["ended"] is not None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signals and /proc are Linux's")
def test_a_killed_launcher_takes_the_traced_program_along_and_the_session_says_so(tmp_path):
    launcher, child, session = _start_capture(tmp_path)
    launcher.kill()
    launcher.wait(timeout=30)
    assert _gone(child), "SIGKILL to the launcher left the traced program running"
    done = run_cli("summary", session, env=NO_CACHE, text=False)
    assert "launcher" in done.stdout.decode() and "died before the run ended" in done.stdout.decode()


# --- 9: bundle folders do not outlive a killed process ------------------------------------------

def test_sigterm_while_a_bundle_is_open_removes_its_folder(tmp_path):
    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    opened = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from inspector.core.readers.session_bundle import extract_bundle\n"
                               "print(extract_bundle(sys.argv[1], sys.argv[2]), flush=True)\ntime.sleep(600)",
                               str(bundle), str(tmp_path / "tmp")], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    folder = Path(opened.stdout.readline().strip())
    assert (folder / "manifest.json").is_file()
    opened.terminate()
    assert opened.wait(timeout=30) == -signal.SIGTERM
    assert not folder.exists()


def test_folders_left_by_dead_processes_are_cleared_when_a_bundle_is_opened(tmp_path):
    parent = tmp_path / "tmp"
    parent.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = parent / f"tcinspect-shared-{dead.stdout.strip()}-abcd1234"
    alive = parent / f"tcinspect-shared-{os.getppid()}-efgh5678"  # a live process's: kept
    foreign = parent / "tcinspect-notours"  # not named as ours: kept
    for folder in (stale, alive, foreign):
        (folder / "trace").mkdir(parents=True)
    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    opened = extract_bundle(bundle, parent)
    try:
        assert not stale.exists() and alive.exists() and foreign.exists() and opened.exists()
        assert remove_stale_folders(parent) == []
    finally:
        remove_extracted(opened)


# --- 10: small usage errors end in one line --------------------------------------------------------

def test_capture_into_an_existing_file_is_one_line(tmp_path):
    taken = tmp_path / "taken"
    taken.write_text("mine")
    done = run_cli("capture", ROOT / "resources" / "examples" / "mlp_breaks.py", "-o", taken, env=NO_CACHE, text=False)
    assert done.returncode == 2 and len(_lines(done)) == 1 and "is a file" in _lines(done)[0]
    assert taken.read_text() == "mine"


def test_bundle_to_an_empty_path_is_one_line(tmp_path):
    done = run_cli("bundle", BUNDLED, "-o", "", env=NO_CACHE, text=False)
    assert done.returncode == 2 and _lines(done) == ["compile-inspector: no output file given (the path is empty)"]


def test_a_home_folder_of_nobody_is_one_line():
    done = run_cli("summary", "~nosuchuser-tci/x.log", env=NO_CACHE, text=False)
    assert done.returncode == 2 and len(_lines(done)) == 1


def test_ctrl_c_during_a_long_summary_is_one_line(tmp_path):
    big = tmp_path / "dedicated_log_torch_trace_big.log"
    subprocess.run([sys.executable, str(ROOT / "bench" / "make_big_log.py"), str(LOG), str(big), "--mb", "60"],
                   check=True, capture_output=True)
    reading = subprocess.Popen(cli_command("summary", big), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=child_env(cache=False))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and reading.poll() is None and not _has_open(reading.pid, big):
        time.sleep(0.02)
    assert reading.poll() is None, "the summary ended before it could be interrupted"
    reading.send_signal(signal.SIGINT)
    _, stderr = reading.communicate(timeout=60)
    assert reading.returncode == 130
    assert stderr.decode().strip().splitlines() == ["compile-inspector: interrupted"]


def test_ctrl_c_that_cuts_an_import_short_still_ends_with_130(tmp_path):
    """A Ctrl-C that lands while the command imports what it needs, in the code a dataclass generates (an
    `exec` of source text, which CPython marks a KeyboardInterrupt leaving as unhandled even once it is
    caught), is one line and exit 130 under `python -m` too, not a death by SIGINT."""
    (tmp_path / "interrupted_summary.py").write_text(
        "import inspector.cli as cli\n"
        "def _read(source):\n"
        "    exec('raise KeyboardInterrupt')  # as a Ctrl-C in a dataclass's generated code\n"
        "cli._read = _read\n"
        f"raise SystemExit(cli.main(['summary', {str(LOG)!r}, '--no-cache', '--no-history']))\n")
    done = subprocess.run([sys.executable, "-m", "interrupted_summary"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=child_env())
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == ["compile-inspector: interrupted"]


@pytest.mark.parametrize("start", ["console script", "python -m"])
def test_ctrl_c_while_the_command_imports_its_own_modules_is_one_line(tmp_path, start):
    """A Ctrl-C pressed right after Enter lands while the command imports its own modules, before any
    handler of its own: it still ends as one during the command does, one line and exit 130, not a
    traceback. Started as the `compile-inspector` console script (the entry point pyproject.toml names)
    and as `python -m inspector`; the Ctrl-C is raised by an import of one of the command's modules."""
    import tomllib

    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["compile-inspector"]
    module, function = target.split(":")
    starts = {"console script": f"import {module} as entry; raise SystemExit(entry.{function}())",
              "python -m": "import runpy; runpy.run_module('inspector', run_name='__main__')"}
    (tmp_path / "interrupted_start.py").write_text(
        "import sys\n"
        "class CtrlC:  # a finder that is asked first: Ctrl-C as the command imports its history switches\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'inspector.cli_history':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        f"sys.argv = ['compile-inspector', 'summary', {str(LOG)!r}, '--no-cache', '--no-history']\n"
        + starts[start] + "\n")
    done = subprocess.run([sys.executable, "-m", "interrupted_start"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=child_env())
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == ["compile-inspector: interrupted"]
    assert done.stdout == ""


def test_ctrl_c_while_the_json_accelerator_starts_is_one_line_not_a_crash(tmp_path):
    """orjson's module init crashes the process (SIGSEGV) when one of its own imports fails, as a
    Ctrl-C landing there makes it (ijl/orjson#310): one pressed as a summary starts could end it with
    no word. The Ctrl-C is sent here from the moment orjson's init imports uuid."""
    (tmp_path / "interrupted_orjson.py").write_text(
        "import os, pathlib, signal, sys\n"
        "class CtrlC:  # asked first for every import: a Ctrl-C as orjson's init imports uuid\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'uuid' and 'orjson' in sys.modules:\n"
        "            pathlib.Path('sent').touch()\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        f"sys.argv = ['compile-inspector', 'summary', {str(LOG)!r}, '--no-cache', '--no-history']\n"
        "import inspector.__main__ as entry\n"
        "raise SystemExit(entry.run())\n")
    done = subprocess.run([sys.executable, "-m", "interrupted_orjson"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env=child_env())
    assert (tmp_path / "sent").exists(), "orjson was imported before the test could interrupt it"
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == ["compile-inspector: interrupted"]


def test_the_readers_import_on_a_thread_threading_did_not_start():
    """A host that starts threads from C (or through _thread) and imports the readers there first: the
    Ctrl-C hold around orjson's import is skipped where no handler can be set, and the readers import."""
    probe = ("import _thread, time\n"
             "done = []\n"
             "def read():\n"
             "    try:\n"
             "        from inspector.core.readers import json_codec\n"
             "        done.append(json_codec.loads(b'[1]'))\n"
             "    except Exception as error:\n"
             "        done.append(repr(error))\n"
             "_thread.start_new_thread(read, ())\n"
             "while not done:\n"
             "    time.sleep(0.01)\n"
             "print(done[0])\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=child_env())
    assert (done.returncode, done.stdout.strip()) == (0, "[1]"), done.stderr


def test_ctrl_c_that_lands_in_a_finaliser_still_interrupts(monkeypatch, capsys):
    """A Ctrl-C that comes while a finaliser runs (a `__del__` as a read's objects go) is dropped there
    by Python, which prints a traceback and goes on: the summary still says it was interrupted, in one
    line, with the shell's code. The Ctrl-C is sent from inside a finaliser: when it lands is luck."""
    from inspector import cli as cli_module
    from inspector.core.outputs import summary_text

    class GoneDuringTheRun:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs here, inside the finaliser

    render = summary_text.render_text

    def render_with_a_finaliser(subject):
        GoneDuringTheRun()
        return render(subject)

    monkeypatch.setattr(summary_text, "render_text", render_with_a_finaliser)
    assert cli_module.main(["summary", str(LOG), "--no-cache"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["compile-inspector: interrupted"]


def _has_open(pid: int, file: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(file) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


# --- 2: a line without end --------------------------------------------------------------------------

def _log_with_a_long_line(folder: Path, megabytes: int) -> Path:
    """The bundled log, a line of `megabytes` MiB of NULs, then the bundled log again."""
    file = folder / f"dedicated_log_torch_trace_long_{megabytes}.log"
    with open(file, "wb") as out:
        out.write(LOG.read_bytes())
        for _ in range(megabytes):
            out.write(b"\0" * (1 << 20))
        out.write(b"\n" + LOG.read_bytes())
    return file


def test_a_line_longer_than_any_record_is_skipped_once_without_holding_it(tmp_path):
    import tracemalloc

    from inspector.core.readers.torch_trace import read_trace_log

    whole = len(read_trace_log(LOG).records)
    seconds = {}
    for megabytes in (48, 192):
        file = _log_with_a_long_line(tmp_path, megabytes)
        tracemalloc.start()
        started = time.perf_counter()
        log = read_trace_log(file)
        seconds[megabytes] = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        file.unlink()
        assert len(log.records) == 2 * whole, "the records on both sides of the line are read"
        assert log.problems.counts["overlong_line"] == 1
        assert peak < 80 << 20, f"{peak >> 20} MiB held for a {megabytes} MiB line"
    assert seconds[192] < 12 * max(seconds[48], 0.01), seconds  # linear: ~4×; re-reading from the start: ~16×


def test_a_payload_line_longer_than_any_record_is_skipped_and_its_record_kept_damaged(tmp_path):
    """A line of 96 MiB inside a record's payload: it used to be held whole (and copied as the buffer
    grew); now the record keeps the payload lines before it, fails its md5, and every other record
    of the log is read."""
    import tracemalloc

    from inspector.core.readers.torch_trace import read_trace_log

    lines = LOG.read_bytes().split(b"\n")
    first_payload = next(i for i, line in enumerate(lines) if line.startswith(b"\t"))
    file = tmp_path / "dedicated_log_torch_trace_long_payload.log"
    with open(file, "wb") as out:
        out.write(b"\n".join(lines[:first_payload + 1]) + b"\n\t")
        for _ in range(96):
            out.write(b"\0" * (1 << 20))
        out.write(b"\n" + b"\n".join(lines[first_payload + 1:]))
    whole = read_trace_log(LOG)
    tracemalloc.start()
    log = read_trace_log(file)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [r.name for r in log.records] == [r.name for r in whole.records]
    assert len(log.events) == len(whole.events)
    damaged = [r.line_no for r in log.records if r.payload_intact is False]
    damaged += [line for line, state in zip(log.events.line_nos, log.events.states) if state == log.events.DAMAGED]
    assert damaged == [first_payload]  # the envelope line before the first payload line (numbered from 1)
    assert log.problems.counts["overlong_line"] == 1 and log.problems.counts["md5_mismatch"] == 1
    assert peak < 80 << 20, f"{peak >> 20} MiB held for a 96 MiB payload line"


# --- 1b: one record no interpreter should spend long on ----------------------------------------------

@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
def test_a_break_reason_far_longer_than_torch_writes_is_read_on_its_head_and_counted(tmp_path):
    """A 24 MiB break reason (a real one is a few KiB) still counts as the break it reports, is read on
    its first MiB only, is said in "Could not read", and costs about what a 2 MiB one does."""
    from inspector.core.readers.session_builder import INTERPRETED_CHARS

    seconds = {}
    for megabytes in (2, 24):
        def padded(text, megabytes=megabytes):
            return text.replace("Graph Break Reason:",
                                "Graph Break Reason: " + "Graph break (" * ((megabytes << 20) // 13), 1)
        log = edited_log(tmp_path / str(megabytes), padded)
        started = time.perf_counter()
        done = run_cli("summary", "--json", log, env=NO_CACHE, text=False)
        seconds[megabytes] = time.perf_counter() - started
        summary = json.loads(done.stdout)
        normal = json.loads(run_cli("summary", "--json", LOG, env=NO_CACHE, text=False).stdout)
        assert len(summary["graph_breaks"]) == len(normal["graph_breaks"]), "every break is still counted"
        oversized = summary["unreadable"]["oversized_text"]
        assert oversized["count"] == 1 and "dynamo_graph_break_reason" in oversized["examples"][0]
        assert summary["graph_breaks"][0]["reason"].count("Graph break (") <= INTERPRETED_CHARS // 13
        shown = run_cli("summary", log, env=NO_CACHE, text=False).stdout.decode()
        assert "read on its first MiB only" in shown.split("Could not read:")[1]  # one reason: said of one
    assert seconds[24] < 4 * seconds[2] + 5, seconds  # the interpreters read 1 MiB of each; only the read grows
