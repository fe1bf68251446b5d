"""bench/compare_tlparse_ranks.py against the real 4-rank corpus folder and a generated 16-rank job:
every finding class tlparse looks for is a row with what tlparse found, what we found and a verdict,
and the script gates (exit 1) when tlparse finds a class our report misses."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MULTI_RANK, ROOT

SCRIPT = ROOT / "bench" / "compare_tlparse_ranks.py"
CLASSES = ("diverging compile ids", "cache hit/miss pattern", "collective op sequence", "inductor tensor metadata",
           "runtime estimates (slowest rank)", "graph execution order")
VERDICTS = ("yes", "groups differ", "both find it", "no: we miss it", "no: only ours", "n/a")


def _tlparse() -> str | None:
    return shutil.which("tlparse", path=str(Path(sys.executable).parent)) or shutil.which("tlparse")


@pytest.fixture
def needs_tools():
    if _tlparse() is None:
        pytest.skip("tlparse is not installed")
    if not MULTI_RANK.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def _rows(table: str) -> dict[str, list[str]]:
    """Markdown table rows by finding class: [tlparse, ours, agree]."""
    rows = {}
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("| ---") and not line.startswith("| finding class"):
            cells = [c.strip() for c in line.strip("|").replace("\\|", "¦").split(" | ")]
            label = cells[0].split(" [ours:")[0]
            rows[label] = [c.replace("¦", "|") for c in cells[1:]]
    return rows


def test_corpus_folder_lists_every_tlparse_class_with_our_verdict(needs_tools, tmp_path):
    md = tmp_path / "cmp.md"
    done = _run(tmp_path, "--no-corpus", str(MULTI_RANK), "--markdown", str(md))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tlparse 0." in done.stdout and "multi_rank_logs  (4 ranks)" in done.stdout
    rows = _rows(md.read_text(encoding="utf-8"))
    for cls in CLASSES:
        assert cls in rows, f"no row for {cls}: {sorted(rows)}"
        assert rows[cls][2].startswith(VERDICTS), rows[cls]
        assert cls in done.stdout
    # What tlparse finds on this job: compile ids and cache patterns diverge, ranks 1 and 3 each alone.
    assert rows["diverging compile ids"] == ["0, 2 | 1 | 3", "0, 2 | 1 | 3", "yes"]
    assert rows["cache hit/miss pattern"] == ["0, 2 | 1 | 3", "0, 2 | 1 | 3", "yes"]
    for cls in ("collective op sequence", "inductor tensor metadata", "runtime estimates (slowest rank)"):
        assert rows[cls][0].startswith("none") and rows[cls][1] == "none", rows[cls]
    assert rows["graph execution order"] == ["none (no execution-order artifacts)", "none", "yes"]
    assert "MISSED" not in done.stdout


def test_generated_job_reads_every_group_tlparse_lists(needs_tools, tmp_path):
    """A 16-rank job (bench/make_many_ranks.py) holds collective schedules, tensor metadata and
    runtime estimates, so tlparse's collective, tensor-meta and runtime sections are read too."""
    job = tmp_path / "job"
    made = subprocess.run([sys.executable, str(ROOT / "bench" / "make_many_ranks.py"), str(job), "--ranks", "16"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    md = tmp_path / "cmp.md"
    done = _run(tmp_path, "--no-corpus", str(job), "--markdown", str(md))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(md.read_text(encoding="utf-8"))
    assert set(CLASSES) <= set(rows)
    for cls in ("diverging compile ids", "cache hit/miss pattern", "collective op sequence"):
        assert rows[cls][2] == "yes", (cls, rows[cls])
    assert rows["collective op sequence"][0] == "0, 1, 4–15 | 2 | 3"
    assert "6, 7" in rows["inductor tensor metadata"][0].split(" | ")  # the planted input shape
    assert "slowest 10" in rows["runtime estimates (slowest rank)"][0]  # the planted 5× slower estimate
    assert rows["runtime estimates (slowest rank)"][2].endswith("(not gated)")


def test_a_class_tlparse_finds_and_we_miss_fails_the_gate(needs_tools, monkeypatch, capsys):
    """Our report made empty: tlparse's compile-id and cache findings on the corpus are then missed."""
    spec = importlib.util.spec_from_file_location("compare_tlparse_ranks", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    empty = {"per_rank": {"divergence": [], "figures": [{"rank": r} for r in range(4)]}}
    monkeypatch.setattr(module, "run_ours", lambda folder: (empty, ""))
    assert module.main(["--no-corpus", str(MULTI_RANK)]) == 1
    out = capsys.readouterr().out
    assert "MISSED: tlparse finds diverging compile ids" in out
    assert "MISSED: tlparse finds cache hit/miss pattern" in out
    assert "no: we miss it" in out


def test_no_folder_to_compare_is_not_a_pass(tmp_path):
    if _tlparse() is None:
        pytest.skip("tlparse is not installed")
    done = _run(tmp_path, "--no-corpus")
    assert done.returncode == 2 and "no multi-rank folder" in done.stderr

