"""In a run of several ranks, compile ids repeat: [0/1] of rank 1 and [0/1] of rank 3 are two
recompiles. The summary's recompile list, and the recompile-cause tables of the Markdown comment and
the HTML report, name each one's rank (as the unit list does), so a reader can tell them apart and
knows which rank to look at."""

from __future__ import annotations

import json

from cli_runner import run_cli
from conftest import MULTI_RANK
from test_outputs_agree import _Blocks


def _document(corpus) -> dict:
    shown = run_cli("summary", "--json", str(MULTI_RANK))
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_the_text_summary_names_the_rank_of_each_recompile(corpus):
    doc = _document(corpus)
    assert len({recompile["rank"] for recompile in doc["recompiles"]}) > 1  # recompiles on several ranks
    shown = run_cli("summary", str(MULTI_RANK))
    lines = shown.stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("Recompiles: "))
    block = lines[start + 1:]
    listed = [line for line in block[:block.index("")] if not line.startswith("  … ")]
    assert listed and len(listed) <= len(doc["recompiles"])
    for line, recompile in zip(listed, doc["recompiles"]):
        assert line.startswith(f"  rank {recompile['rank']} {recompile['compile_id']} {recompile['shown']}: "), line


def test_the_markdown_recompile_table_names_each_groups_rank(corpus):
    groups = _document(corpus)["recompile_groups"]
    assert len({group["rank"] for group in groups}) > 1
    shown = run_cli("summary", "--markdown", str(MULTI_RANK))
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in shown.stdout.splitlines()
            if line.startswith("| ") and not line.startswith("| ---")]
    header = next(row for row in rows if "guarded value" in row)
    table = rows[rows.index(header) + 1:rows.index(header) + 1 + len(groups)]
    assert header[0] == "rank"
    assert [(row[0], row[header.index("count")]) for row in table] == [
        (str(group["rank"]), str(group["count"])) for group in groups]


def test_the_html_recompile_cause_table_names_each_groups_rank(corpus, tmp_path):
    groups = _document(corpus)["recompile_groups"]
    report = tmp_path / "report.html"
    made = run_cli("report", "-o", str(report), str(MULTI_RANK))
    assert made.returncode == 0, made.stderr
    parser = _Blocks()  # the report as a reader sees it: its tables' cell texts
    parser.feed(report.read_text())
    (header, *rows), = [rows for kind, rows in parser.blocks if kind == "table" and "Guarded value" in rows[0]]
    assert header[0] == "Rank"
    assert [(row[0], row[header.index("Count")]) for row in rows] == [
        (str(group["rank"]), str(group["count"])) for group in groups]
