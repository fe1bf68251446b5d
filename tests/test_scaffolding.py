"""The test scaffolding holds what the suite relies on: a command run in the test's process prints and
exits as the real entry point does and leaves nothing behind, a compile cannot run for a test that is
not marked slow, and a test is marked by the fixtures it uses."""

from __future__ import annotations

import os

import pytest

from cli_runner import run_cli, run_cli_process
from conftest import ROOT, SCENARIOS, _starts_a_process, run_traced

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_the_command_in_process_says_what_the_real_entry_point_says():
    """`python -m inspector` in a child process and `run_cli` agree byte for byte, exit code included."""
    codes = []
    for args in (("summary", BUNDLED, "--json", "--no-cache"), ("summary", BUNDLED / "no-such-file")):
        child, here = run_cli_process(*args), run_cli(*args)
        assert (here.returncode, here.stdout, here.stderr) == (child.returncode, child.stdout, child.stderr)
        codes.append(here.returncode)
    assert codes[0] == 0 and codes[1] != 0


def test_a_run_in_process_leaves_the_environment_and_the_folder_as_it_found_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    done = run_cli("summary", BUNDLED, "--no-cache", env={"TCI_HISTORY_STORE": tmp_path / "history.sqlite"})
    assert done.returncode == 0
    assert "TCI_NO_CACHE" not in os.environ and "TCI_HISTORY_STORE" not in os.environ
    assert os.getcwd() == str(tmp_path)


def test_an_exception_out_of_main_is_a_traceback_and_exit_code_1_and_fails_the_test(monkeypatch):
    from inspector import cli

    def broken(argv):
        raise RuntimeError("raised in main")

    monkeypatch.setattr(cli, "main", broken)
    with pytest.raises(AssertionError, match="Traceback"):
        run_cli("summary", BUNDLED)
    done = run_cli("summary", BUNDLED, traceback_allowed=True)
    assert done.returncode == 1 and "RuntimeError: raised in main" in done.stderr


def test_a_compile_for_a_test_without_the_compiles_fixture_is_refused(tmp_path):
    with pytest.raises(AssertionError, match="without the `compiles` fixture"):
        run_traced(SCENARIOS / "dynamic_shapes.py", tmp_path / "run", tmp_path / "cache")
    assert not (tmp_path / "run").exists()


def test_a_test_is_marked_by_the_fixtures_it_uses(request, qtbot):
    marks = {mark.name for mark in request.node.iter_markers()}
    assert "gui" in marks and not marks & {"slow", "torch", "subprocess"}


def _starts_the_cli():
    return run_cli_process("--version")


def _calls_a_helper_that_starts_the_cli():
    return _starts_the_cli()


def test_a_test_that_starts_a_process_through_a_helper_is_marked_subprocess():
    assert _starts_a_process(_calls_a_helper_that_starts_the_cli)
    assert not _starts_a_process(test_a_test_is_marked_by_the_fixtures_it_uses)
