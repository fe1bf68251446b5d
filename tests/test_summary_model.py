"""One section model behind every output (#23): the summary document decodes into the typed
`Summary` without losing a field, every human output words each titled part and the headline as the
model does (the terminal text, the HTML report, the Markdown comment and the app's dashboard), and a
summary read back from the cache renders as a fresh one."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from html import escape
from pathlib import Path

import pytest

from conftest import CUDA_LOG, MULTI_RANK, ROOT
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.cached_summary import session_summary, summary_identity
from inspector.core.outputs.ci_reports import markdown
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import at_a_glance, summarize
from inspector.core.outputs.summary_model import Part, Summary
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers import index_cache
from inspector.core.readers.session_loader import open_path

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
INPUTS = [BUNDLED, next((BUNDLED / "trace").glob("*.log")), CUDA_LOG, MULTI_RANK]


def _analysis(path: Path) -> SessionAnalysis:
    if not path.exists():
        pytest.skip(f"{path} is not present (../shared/corpus is not beside this checkout)")
    return SessionAnalysis(open_path(path))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_the_model_holds_the_whole_document(path):
    """Decoding loses nothing and reorders nothing: written back, the model is the document, byte for byte."""
    doc = summarize(_analysis(path))
    summary = Summary.from_state(doc)
    assert json.dumps(summary.get_state()) == json.dumps(doc)
    assert len(summary.units) == len(doc["units"]) and len(summary.break_sites) == len(doc["break_sites"])
    assert summary.kernels.total == doc["kernels"]["total"] and summary.speedup.state.value == doc["speedup"]["state"]


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_every_output_words_each_part_as_the_model_does(path):
    analysis = _analysis(path)
    doc = summarize(analysis)
    summary = Summary.from_state(doc)
    text, page, comment = render_text(doc), render_report(analysis), markdown(doc)
    shown_everywhere = [Part.BREAKS, Part.RECOMPILE_GROUPS] + ([Part.EXPORT_ISSUES] if summary.export_issues else [])
    for part in [Part.UNITS, Part.RECOMPILES, Part.KERNELS, *shown_everywhere]:
        heading = summary.section(part).heading
        assert any(line.startswith(heading) for line in text.splitlines()), f"text: no {heading!r}"
        assert f"<h2>{escape(heading)}</h2>" in page, f"report: no {heading!r}"
    for part in shown_everywhere:
        section = summary.section(part)
        assert f"**{section.title}:** {section.figure}" in comment.splitlines(), f"Markdown: no {section.heading!r}"
    # the counts in the words are the document's
    assert summary.section(Part.BREAKS).figure == f"{len(doc['graph_breaks'])} at {len(doc['break_sites'])} site(s)"
    assert summary.section(Part.UNITS).figure.split()[0] == str(len(doc["units"]))
    assert (f"<h1>{escape(summary.headline)}</h1>" in page
            and comment.splitlines()[2].replace("\\", "") == summary.headline)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_the_dashboards_part_of_the_model_is_the_documents(path):
    """The app's dashboard renders the model made without the per-unit figures: what it shows is the
    full document's, headline, verdict, speedup, run and ranks alike."""
    analysis = _analysis(path)
    full, glance = Summary.from_state(summarize(analysis)), at_a_glance(analysis)
    assert glance.headline == full.headline
    for part in ("verdict", "speedup", "run", "compile_time", "slowness", "regions", "per_rank", "notices", "source"):
        assert getattr(glance, part) == getattr(full, part), part


@pytest.fixture
def cached_log(tmp_path, monkeypatch) -> Path:
    """A copy of the bundled log the index cache (a fresh one, under tmp_path) will keep entries for."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    log = tmp_path / "dedicated_log_torch_trace_copy.log"
    log.write_bytes(next((BUNDLED / "trace").glob("*.log")).read_bytes())
    past = time.time() - 60  # a log still being written is not cached
    os.utime(log, (past, past))
    return log


def test_a_summary_from_the_cache_renders_as_a_fresh_one(cached_log):
    """`summary` of a log opened before prints the document the cache kept: the model decodes it as
    it decodes a fresh one, so the text is the same."""
    log = cached_log
    analysis = SessionAnalysis(open_path(log))
    fresh = render_text(summarize(analysis))
    session_summary(open_path(log))
    cached = index_cache.load_summary(summary_identity(analysis))
    assert cached is not None, "the summary was not kept"
    assert render_text(cached) == fresh
    assert f"<h1>{escape(Summary.from_state(cached).headline)}</h1>" in render_report(analysis)


def test_the_apps_reopen_takes_its_dashboard_from_the_cache(cached_log, tmp_path, monkeypatch):
    """The dashboard's part of the summary is kept at the first open and read back at the next (without
    parsing a graph for the fusion figures, ~0.2 s of a 100 MB log's reopen), the same as made afresh;
    a preview's, which holds only the log's first records, is never kept for the log."""
    from inspector.core.analysis import session_analysis
    from inspector.core.outputs.cached_summary import session_glance
    from inspector.core.readers.session_builder import build_preview_session

    log = cached_log
    preview = SessionAnalysis(build_preview_session(log, log, log.stat().st_size // 2))
    assert summary_identity(preview) is None
    session_glance(preview)
    assert not (tmp_path / "cache" / "torch-compile-inspector" / "glance").exists()

    first = session_glance(SessionAnalysis(open_path(log)))
    assert first == at_a_glance(SessionAnalysis(open_path(log)))
    monkeypatch.setattr(session_analysis, "unit_fusion", lambda *args: pytest.fail("a graph was parsed on the reopen"))
    again = session_glance(SessionAnalysis(open_path(log)))
    assert again == first and again.kernels.fusion_ratio is not None


def test_the_apps_reopen_takes_the_navigators_kernel_counts_from_the_cache(cached_log, monkeypatch):
    """The navigator lists every unit's kernel count: made at the first open, and read back at the next
    without parsing any unit's output code (~0.07 s of a 106 MB log's reopen)."""
    from inspector.core.model import session as session_model
    from inspector.core.outputs.cached_summary import kernel_counts

    first = kernel_counts(SessionAnalysis(open_path(cached_log)))
    session = open_path(cached_log)
    assert first == [len(unit.kernels) for unit in session.units]
    assert sum(first) > 0
    monkeypatch.setattr(session_model, "parse_output_code",
                        lambda *args: pytest.fail("output code parsed on the reopen"))
    assert kernel_counts(SessionAnalysis(open_path(cached_log))) == first


@pytest.mark.parametrize("which", ["bundled", "multi_rank"])
def test_the_apps_reopen_takes_the_problems_from_the_cache(which, cached_log, monkeypatch):
    """The Problems list is found at the first open and read back at the next without finding it again
    (reading every recompile's guards, ~0.06 s of a 106 MB log's reopen): the same problems, jumps to
    units and ranks included. A kept entry that is not what the app writes is found afresh instead."""
    from inspector.core.analysis import session_analysis
    from inspector.core.outputs.cached_summary import session_issues

    path = cached_log if which == "bundled" else MULTI_RANK
    analysis = _analysis(path)
    fresh = analysis.issues
    assert session_issues(analysis) == fresh and len(fresh) > 1
    assert any(problem.units for problem in fresh)
    assert {problem.rank for problem in fresh} == ({None} if which == "bundled" else {0, 1, 2, 3})
    monkeypatch.setattr(session_analysis, "find_issues",
                        lambda *args: pytest.fail("problems found again on the reopen"))
    again = _analysis(path)
    assert session_issues(again) == fresh
    if importlib.util.find_spec("PySide6") is not None:  # the app's load worker finds none either
        from inspector.core.readers.sources import detect
        from inspector.gui.qt_session_model import load_session

        assert load_session(detect(path)).issues == fresh

    index_cache.store_summary(summary_identity(again), {"problems": [["graph_break", "warning", "cut short"]]},
                              "problems")
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", os.environ["XDG_CACHE_HOME"])
    assert session_issues(_analysis(path)) == fresh


def test_kernel_counts_of_logs_without_rank_numbers_are_each_units_own(tmp_path, monkeypatch):
    """Two processes' logs with no rank in their names: their units share (rank, compile id) keys, but
    each keeps its own kernel count, at the first open and from the cache at the next."""
    from inspector.core.outputs.cached_summary import kernel_counts

    if not CUDA_LOG.exists():
        pytest.skip("the corpus CUDA log is not present")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    job = tmp_path / "job"
    job.mkdir()
    past = time.time() - 60
    for name, log in (("a", next((BUNDLED / "trace").glob("*.log"))), ("b", CUDA_LOG)):
        copy = job / f"dedicated_log_torch_trace_{name}.log"
        copy.write_bytes(log.read_bytes())
        os.utime(copy, (past, past))
    for _ in range(2):  # made, then read back
        session = open_path(job)
        counts = kernel_counts(SessionAnalysis(session))
        keys = [(unit.rank, str(unit.compile_id)) for unit in session.units]
        shared = {key for key in keys if keys.count(key) > 1}
        assert any(len({count for k, count in zip(keys, counts) if k == key}) > 1 for key in shared), \
            "no key shared by units of different kernel counts: nothing tested"
        assert counts == [len(unit.kernels) for unit in session.units]
