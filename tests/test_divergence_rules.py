"""Findings across ranks are rule objects: a new kind of finding is one entry in
`divergence_rules.DIVERGENCE_RULES`, and the report lists it, groups the ranks by it and serialises it
with no other change."""

from __future__ import annotations

import shutil

import pytest

from conftest import CORPUS
from inspector.core.analysis import divergence_rules
from inspector.core.analysis.divergence_rules import AspectRule, Rule, rank_report
from inspector.core.analysis.rank_figures import Finding, index_ranks

MULTI_RANK = CORPUS / "multi_rank_logs"


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    logs = sorted(MULTI_RANK.glob("dedicated_log_torch_trace_rank_*.log"))[:3]
    if len(logs) < 3:
        pytest.skip("the public multi-rank corpus is not here")
    folder = tmp_path_factory.mktemp("job")
    for log in logs:  # three ranks: read in this process (no pool), so a patched rule list is the one used
        shutil.copy(log, folder / log.name)
    return index_ranks(sorted(folder.iterdir()))


def test_a_new_finding_is_one_rule(figures, monkeypatch):
    before = rank_report(figures)
    last = max(f.rank for f in figures)
    late = Rule(lambda comparison: [Finding("last_rank", (last,), "the highest rank number")])
    monkeypatch.setattr(divergence_rules, "DIVERGENCE_RULES", (*divergence_rules.DIVERGENCE_RULES, late))
    after = rank_report(figures)

    assert after.findings[:-1] == before.findings  # the rules before it are untouched, in their order
    assert after.lines()[-1] == f"rank {last}: the highest rank number"
    assert after.get_state()["divergence"][-1] == {"kind": "last_rank", "ranks": [last], "ranks_text": str(last),
                                                 "compile_ids": [], "message": "the highest rank number"}
    assert (last,) in after.groups and all(last not in group for group in after.groups if len(group) > 1)


def test_an_aspect_rule_compares_the_units_every_rank_compiled(figures, monkeypatch):
    """An aspect of each compile unit, compared across ranks like the built-in ones (graphs, guards,
    cache, …): the rank that departs from the majority is named with its own compile id."""
    last = max(f.rank for f in figures)
    [unit] = [f.unit_prints[0] for f in figures if f.rank == last]
    on_last = AspectRule("rank_parity", lambda each: each.compile_id if each is unit else "same",
                         "planted {value} (others: {reference})", among_compiled=False)
    monkeypatch.setattr(divergence_rules, "DIVERGENCE_RULES", (*divergence_rules.DIVERGENCE_RULES, on_last))
    finding = rank_report(figures).findings[-1]
    assert finding.kind == "rank_parity" and finding.ranks == (last,)
    assert finding.compile_ids == (unit.compile_id,)
    assert finding.message == f"{unit.compile_id} planted {unit.compile_id} (others: same)"

