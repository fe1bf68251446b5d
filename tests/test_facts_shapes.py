"""Dynamic dims explained against torch's own record of the same run (TORCH_LOGS=dynamic,recompiles_verbose
and the guards torch wrote to the log): a symbol's range as its guards refined it, the 0/1
specialisation in words with torch's mark_unbacked advice, a mark_dynamic on a size-1 dim said to be
dropped, and the `_has_dynamo_dim_marking` recompile in plain words."""

from __future__ import annotations

import re

import pytest

from conftest import SCENARIOS, run_traced
from inspector.core.analysis.recompile_groups import recompile_groups
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.shapes import unit_shapes
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

_CREATED = re.compile(r"create_symbol (?P<symbol>\S+) = \S+ for (?P<source>\S+) (?P<range>\[[^\]]+\])")


@pytest.fixture(scope="module")
def run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "facts_dynamic_marks.py", tmp_path_factory.mktemp("marks"), inductor_cache,
                      extra_env={"TORCH_LOGS": "recompiles,recompiles_verbose,dynamic"})


def _events(run, function: str):
    session = open_path(run.trace_dir)
    [unit] = [unit for unit in session.units if unit.function == function]
    return unit_shapes(unit)


def test_a_range_is_shown_as_its_guards_refined_it(run):
    created = {m["source"]: m["range"] for m in map(_CREATED.search, run.torch_logs.splitlines()) if m}
    assert created["L['x'].size()[0]"] == "[2, int_oo]"  # torch's create_symbol, before torch._check narrowed it
    [log] = run.trace_dir.glob("*.log")
    assert "LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 64" in log.read_text()  # the range torch's guard ends with
    [symbol] = [event for event in _events(run, "bounded") if event.kind == "symbol"]
    assert "range [2, 64] as its guards refined it (created as [2, int_oo])" in symbol.detail
    assert "0/1 specialisation" in symbol.detail and "mark_unbacked(tensor, dim)" in symbol.detail
    text = render_text(summarize(SessionAnalysis(open_path(run.trace_dir))))
    assert "x.shape[0] → s77 = 4, range [2, 64] as its guards refined it" in text


def test_mark_dynamic_on_a_size_one_dim_is_said_to_be_dropped(run):
    created = {m["source"] for m in map(_CREATED.search, run.torch_logs.splitlines()) if m}
    assert "L['rows'].size()[0]" in created and "L['gains'].size()[0]" not in created  # torch made no symbol of it
    [dropped] = [event for event in _events(run, "scale_rows") if event.kind == "ignored_mark"]
    assert dropped.shown_source == "gains.shape[0]" and dropped.value == "1"
    assert "marked dynamic, compiled static" in dropped.detail and "mark_unbacked" in dropped.detail
    text = render_text(summarize(SessionAnalysis(open_path(run.trace_dir))))
    assert "MARK IGNORED gains.shape[0]: marked dynamic, compiled static: it had size 1" in text


def test_a_new_dynamic_mark_recompiles_in_plain_words(run):
    assert "_has_dynamo_dim_marking is present on runtime tensor but was absent at compile time" in run.torch_logs
    [group] = recompile_groups(open_path(run.trace_dir))
    assert group.aspect == "dynamic marking" and group.function == "total"
    assert "A tensor arrived marked dynamic" in group.diagnosis and "does not say which tensor" in group.diagnosis
    assert "Mark the tensor before the first call" in group.fix and "dynamic=True" not in group.fix


@pytest.fixture(scope="module")
def bert_run(tmp_path_factory, inductor_cache):
    pytest.importorskip("transformers")
    return run_traced(SCENARIOS / "facts_bert_padded.py", tmp_path_factory.mktemp("bert"), inductor_cache,
                      extra_env={"TORCH_LOGS": "recompiles,dynamic"})


def test_a_padded_bert_shows_the_sequence_range_its_position_table_allows(bert_run):
    created = {m["source"]: m["range"] for m in map(_CREATED.search, bert_run.torch_logs.splitlines()) if m}
    source = "L['kwargs']['input_ids'].size()[1]"
    assert created[source] == "[2, int_oo]"
    [log] = bert_run.trace_dir.glob("*.log")
    assert f"LAMBDA_GUARD: 2 <= {source} <= 64" in log.read_text()  # max_position_embeddings bounds it
    session = open_path(bert_run.trace_dir)
    symbols = [event for unit in session.units for event in unit_shapes(unit)
               if event.kind == "symbol" and event.source == source]
    assert symbols and all("range [2, 64] as its guards refined it (created as [2, int_oo])" in event.detail
                           for event in symbols)
