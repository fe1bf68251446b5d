"""One type per concept (#49): a fact the analysis computes is the very record the summary writes and
reads back, so the JSON, the text, the report and the app can never hold two shapes of one thing. A
class name is defined once in the package, and every saved shape speaks one verb, `get_state` with
`from_state` (after mitmproxy)."""

from __future__ import annotations

import ast
import json
from collections import defaultdict

import pytest

from conftest import MULTI_RANK, ROOT
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import open_path

PACKAGE = ROOT / "inspector"
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _classes() -> dict[str, list[str]]:
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(str(path.relative_to(PACKAGE)))
    return defined


def test_no_class_name_is_defined_twice():
    twice = {name: where for name, where in _classes().items() if len(where) > 1}
    assert twice == {}


def test_every_saved_shape_speaks_get_state():
    """No `to_json` or `to_state`: a reader of the code looks for one verb to find what a record saves."""
    other = sorted(f"{path.relative_to(PACKAGE)}: {node.name}" for path in PACKAGE.rglob("*.py")
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.FunctionDef) and node.name in ("to_json", "to_state"))
    assert other == []


@pytest.mark.parametrize("path", [BUNDLED, MULTI_RANK], ids=lambda p: p.name)
def test_the_summary_holds_the_analysis_records_themselves(path):
    """Each part of the summary is written by the analysis's own record and decodes into the same class:
    break sites, notices, verdict figures, recompiles and their groups, the recompile limit, slowness, and
    the break types (on a capture with breaks and a 4-rank job with recompiles and an eager fallback)."""
    if not path.exists():
        pytest.skip(f"{path} is not present (../shared/corpus is not beside this checkout)")
    analysis = SessionAnalysis(open_path(path))
    doc = json.loads(json.dumps(summarize(analysis)))
    summary = Summary.from_state(doc)
    parts = {"break_sites": analysis.break_sites, "notices": analysis.notices, "verdict": analysis.verdict,
             "recompile_groups": analysis.recompile_groups, "export_issues": analysis.export_issues}
    assert analysis.break_sites if path == BUNDLED else analysis.recompile_groups and analysis.notices
    for key, records in parts.items():
        decoded = getattr(summary, key)
        assert [type(record) for record in decoded] == [type(record) for record in records], key
        assert [record.get_state() for record in records] == doc[key], key
    for key in ("recompile_limit", "slowness"):
        assert type(getattr(summary, key)) is type(getattr(analysis, key))
        assert getattr(analysis, key).get_state() == doc[key]
    assert [type(site.type) for site in summary.break_types.sites if site.type] == \
        [type(match) for _, match in analysis.site_types if match]
    _the_figures_are_the_analysis_records(analysis, summary, doc, path == BUNDLED)
    if path == MULTI_RANK:  # the ranks' figures, findings and groups: the analysis's report, read back whole
        assert type(summary.per_rank) is type(analysis.ranks)
        assert [type(row) for row in summary.per_rank.figures] == [type(row) for row in analysis.ranks.figures]
        assert analysis.ranks.get_state() == doc["per_rank"] == summary.per_rank.get_state()
        assert (summary.per_rank.findings, summary.per_rank.groups) == (analysis.ranks.findings, analysis.ranks.groups)
    # a record read back has what the document holds: the breaks behind a site are the analysis's alone
    assert [site.count for site in summary.break_sites] == [len(site.breaks) for site in analysis.break_sites]
    assert all(not site.breaks for site in summary.break_sites)


def _the_figures_are_the_analysis_records(analysis: SessionAnalysis, summary: Summary, doc: dict,
                                          profiled: bool) -> None:
    """Compile time (with the work beside it), the caches' counts and the profile's top kernels: the
    analysis's records, written by `get_state` and decoded into the same classes (not dicts read by key)."""
    assert type(summary.compile_time) is type(analysis.compile_time)
    assert analysis.compile_time.get_state() == doc["compile_time"]
    assert [type(work) for work in summary.compile_time.concurrent.values()] == \
        [type(work) for work in analysis.compile_time.concurrent.values()]
    assert analysis.cache, "a capture with cache lookups"
    assert {name: type(count) for name, count in summary.cache.items()} == \
        {name: type(count) for name, count in analysis.cache.items()}
    assert {name: count.get_state() for name, count in analysis.cache.items()} == doc["cache"]
    if profiled:
        kernels = summary.run.top_kernels
        assert analysis.top_kernels and [type(row) for row in kernels] == [type(row) for row in analysis.top_kernels]
        assert [row.get_state() for row in analysis.top_kernels] == doc["run"]["top_kernels"]



LINE_OF_CODE = {"file", "line", "function", "code"}


def test_a_line_of_code_is_one_type():
    """A break's line, a stack frame, the user line an FX node was traced from, the line a guard's
    comment names, an XLA op's frame: all `SourceLocation`, never a class of their own holding some of
    its fields (file and line at least)."""
    twins = sorted(f"{path.relative_to(PACKAGE)}: {node.name}" for path in PACKAGE.rglob("*.py")
                   for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.ClassDef) and node.name != "SourceLocation"
                   and {"file", "line"} <= _declared(node) <= LINE_OF_CODE)
    assert twins == []


def _declared(node: ast.ClassDef) -> set[str]:
    return {item.target.id for item in node.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}


def test_a_break_type_match_holds_the_registry_entry_and_only_its_own_fields():
    """The registry's entry is held, not copied field by field; the summary still writes one flat object
    and reads it back into the same match (a capture whose breaks link their registry page)."""
    from dataclasses import fields

    from inspector.core.analysis.break_types import BreakTypeMatch
    from inspector.core.readers.graph_break_registry import BreakType

    own = {item.name for item in fields(BreakTypeMatch)}
    assert own.isdisjoint(item.name for item in fields(BreakType))
    analysis = SessionAnalysis(open_path(BUNDLED))
    matches = [match for _, match in analysis.site_types if match]
    assert matches and all(type(match.type) is BreakType for match in matches)
    doc = json.loads(json.dumps(summarize(analysis)))
    written = [site["type"] for site in doc["break_types"]["sites"] if site["type"]]
    assert [match.get_state() for match in matches] == written
    assert all({"gb_id", "gb_type", "url", "matched_by"} <= set(state) for state in written)
    read_back = [site.type for site in Summary.from_state(doc).break_types.sites if site.type]
    assert read_back == matches and [match.get_state() for match in read_back] == written


def test_a_whole_record_writes_every_field_and_gives_an_older_document_back_as_read():
    """Compile time and a cache's count have always held every key (`"total_s": null` for a log
    without compilation metrics): written whole when made, and an older summary read back (no
    `per_stage_share`, no `wall_s`) writes back only what it held."""
    from inspector.core.analysis.figures import CacheCount, CompileTime

    assert list(CacheCount().get_state()) == ["hit", "miss", "bypass", "hit_rate"]
    assert CompileTime().get_state()["total_s"] is None and "open_stages" in CompileTime().get_state()
    older = {"total_s": 1.5, "units_measured": 2, "self_s": {"dynamo": 1.0}}
    assert CompileTime.from_state(older).get_state() == older
    assert CompileTime.from_state(older).traced_s == 1.0
