"""The order each rank's compiled graphs ran in (#27): tlparse's graph execution-order diagnostics,
on real 3-rank jobs that ran on this machine (gloo, CPU) under torch's
record_and_log_graph_execution_order(), compared by what ran — each call's function and graph —
rather than by compile id, and side by side with `tlparse --all-ranks-html` on the same folders.

`reordered`: rank 2 ran the two compiled functions in the other order, so its compile ids name
other functions than the other ranks' and tlparse, comparing compile ids, sees the same order.
`recompiled`: rank 2 alone recompiled the second function and ran that graph, which tlparse sees."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from conftest import ROOT, SCENARIOS
from fuzz_cases import fix_md5, split_records
from inspector.core.analysis.divergence_rules import session_rank_report
from inspector.core.outputs.summary import summarize
from inspector.core.readers.session_loader import open_path

CALLS = ("[0/0]", "[1/0]", "[0/0]", "[1/0]")  # two steps, two compiled functions each


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, inductor_cache) -> dict[str, Path]:
    made = {}
    for mode in ("reordered", "recompiled"):
        folder = tmp_path_factory.mktemp(mode)
        env = dict(os.environ, TORCH_TRACE=str(folder / "trace"), TORCHINDUCTOR_CACHE_DIR=str(inductor_cache),
                   OMP_NUM_THREADS="1")
        done = subprocess.run([sys.executable, str(SCENARIOS / "exec_order_ranks.py"), mode], env=env, cwd=folder,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        made[mode] = folder / "trace"
    return made


def _report(folder: Path):
    return session_rank_report(open_path(folder))


def _findings(report, kind: str) -> list:
    return [finding for finding in report.findings if finding.kind == kind]


def _tlparse_says(folder: Path, out: Path) -> str | None:
    """tlparse's execution-order diagnostic on `folder`, as its page words it (None without tlparse)."""
    tlparse = shutil.which("tlparse") or str(Path(sys.executable).parent / "tlparse")
    if not Path(tlparse).exists():
        return None
    subprocess.run([tlparse, "--all-ranks-html", str(folder), "-o", str(out), "--no-browser"], capture_output=True,
                   timeout=300, check=True)
    page = (out / "index.html").read_text(encoding="utf-8")
    section = re.search(r"<h3>\s*Graph Execution-Order Diagnostics\s*</h3>(.*?)(?=<h3>)", page, re.S)
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", section.group(1)))) if section else ""


def test_each_rank_keeps_the_order_its_graphs_ran_in(jobs):
    report = _report(jobs["reordered"])
    assert [figures.rank for figures in report.figures] == [0, 1, 2]
    for figures in report.figures:
        assert figures.executed == CALLS  # torch names each call by the rank's own compile ids
        functions = {unit.compile_id: unit.function for unit in figures.unit_prints}
        first = "plain" if figures.rank == 2 else "reduce_then_scale"  # rank 2 compiled `plain` first
        assert functions["[0/0]"] == first
    per_rank = summarize(open_path(jobs["reordered"]))["per_rank"]
    assert [row["executed"] for row in per_rank["figures"]] == [list(CALLS)] * 3


def test_a_rank_that_ran_its_graphs_in_another_order_is_named_where_tlparse_sees_none(jobs, tmp_path):
    report = _report(jobs["reordered"])
    (finding,) = _findings(report, "execution_order")
    assert finding.ranks == (2,) and finding.compile_ids == ("[0/0]",)
    assert "ran its compiled graphs in another order: call #1 ran plain [0/0] where the others ran " \
           "reduce_then_scale [0/0]" in finding.message
    # frame by frame, the rest agrees
    assert "[0/0] is plain here, reduce_then_scale there" in finding.message and len(report.findings) == 1
    assert "its collectives match the others' (4 each)" in finding.message  # all_reduce_ and wait_tensor, twice
    assert not _findings(report, "collective_sequence")  # in the order they ran, the collectives agree
    said = _tlparse_says(jobs["reordered"], tmp_path / "tl")
    if said is not None:  # tlparse compares compile ids, which are the same list on every rank
        assert "Graph execution order: consistent across ranks" in said


def test_a_graph_only_one_rank_ran_is_named_as_tlparse_names_it(jobs, tmp_path):
    report = _report(jobs["recompiled"])
    (finding,) = _findings(report, "execution_order")
    assert finding.ranks == (2,) and finding.compile_ids == ("[1/1]",)
    assert "ran other compiled graphs than the others: call #4 ran plain [1/1] where the others ran plain [1/0]" \
           in finding.message and "which only this rank compiled" in finding.message
    assert report.figures[2].executed == ("[0/0]", "[1/0]", "[0/0]", "[1/1]")
    said = _tlparse_says(jobs["recompiled"], tmp_path / "tl")
    if said is not None:
        assert "Graph execution order differs across ranks" in said


def test_collectives_out_of_step_in_the_order_graphs_ran_are_a_hang_risk(jobs, tmp_path):
    """A job whose ranks issue other collectives cannot be run here (it hangs), so the recompiled job's
    real logs are planted: rank 2's record says its last call ran the graph with the all_reduce."""
    planted = tmp_path / "planted"
    shutil.copytree(jobs["recompiled"], planted)
    (log,) = planted.glob("*rank_2_*.log")
    records = split_records(log.read_text())
    (record,) = [r for r in records if '"graph_execution"' in r.envelope]
    assert '"compile_id": "1/1"' in "\n".join(record.payload)
    record.payload = [line.replace('"1/1"', '"0/0"') for line in record.payload]
    fix_md5(record)
    log.write_text("\n".join(r.render() for r in records) + "\n")

    report = _report(planted)
    (finding,) = _findings(report, "execution_order")
    assert "call #4 ran reduce_then_scale [0/0] where the others ran plain [1/0]" in finding.message
    assert "collectives in the order the graphs ran differ" in finding.message and "hang" in finding.message
    (sequence,) = _findings(report, "collective_sequence")  # in execution order: one all_reduce more
    assert sequence.ranks == (2,) and "has 2 more than the others'" in sequence.message


def test_the_side_by_side_script_compares_the_execution_order(jobs, tmp_path):
    """bench/compare_tlparse_ranks.py: tlparse and we both find the recompiled rank's other graph;
    only we find the reordered rank (tlparse compares compile ids, which agree there)."""
    if _tlparse_says(jobs["recompiled"], tmp_path / "probe") is None:
        pytest.skip("tlparse is not installed")
    table = tmp_path / "cmp.md"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "compare_tlparse_ranks.py"), "--no-corpus",
                           str(jobs["reordered"]), str(jobs["recompiled"]), "--markdown", str(table)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [line for line in table.read_text(encoding="utf-8").splitlines()
            if line.startswith("| graph execution order")]
    assert len(rows) == 2, table.read_text(encoding="utf-8")
    assert rows[0].endswith("| consistent across ranks | 0, 1 \\| 2 | no: only ours |"), rows[0]
    assert "| order differs | 0, 1 \\| 2 | both find it |" in rows[1], rows[1]
