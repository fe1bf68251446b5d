"""The one way in: a path's kind is detected once, every front end opens what was detected, and a
new input kind is one module plus one registration — shown here by a kind this file adds (a gzipped
TORCH_TRACE log, as logs copied off a cluster often are) that the CLI and the app then open with no
other file touched. And every output of one session states the same counts."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import CUDA_LOG, MULTI_RANK, ROOT, open_and_wait
from inspector import cli
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.ci_reports import markdown, sarif_log
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers import sources
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.session_loader import open_path, open_session
from inspector.core.readers.trace_logs import HEAD_BYTES

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


# --- the new kind: everything it needs is this module's match and open ---------------------------

def _match_gzipped_log(path: Path) -> sources.Match | None:
    if not (path.is_file() and path.name.endswith(".log.gz")):
        return None
    try:
        with gzip.open(path) as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return None
    return sources.Match(path, (path,)) if b"] {" in head.split(b"\n", 1)[0] else None


_UNPACKED: list[Path] = []  # removed when the test that registered the kind ends


def _open_gzipped_log(source: sources.Source, progress):
    folder = Path(tempfile.mkdtemp(prefix="tci-gz-"))
    _UNPACKED.append(folder)
    log = folder / source.path.name.removesuffix(".gz")
    log.write_bytes(gzip.decompress(source.path.read_bytes()))
    session = build_trace_session([log], source.path, progress=progress)
    session.extracted_to = folder  # removed when the session is closed
    return session


GZIPPED_LOG = sources.InputKind("gzipped_trace_log", "a gzipped TORCH_TRACE log (*.log.gz)",
                                _match_gzipped_log, _open_gzipped_log)


@pytest.fixture
def gzipped_kind(monkeypatch):
    monkeypatch.setattr(sources, "KINDS", [*sources.KINDS, GZIPPED_LOG])  # the one registration
    yield GZIPPED_LOG
    while _UNPACKED:
        shutil.rmtree(_UNPACKED.pop(), ignore_errors=True)


@pytest.fixture
def gzipped_log(tmp_path) -> Path:
    log = next((BUNDLED / "trace").glob("*.log"))
    target = tmp_path / (log.name + ".gz")
    target.write_bytes(gzip.compress(log.read_bytes()))
    return target


def test_a_new_kind_is_one_module_and_one_registration(gzipped_kind, gzipped_log, capsys):
    plain = summarize(open_path(next((BUNDLED / "trace").glob("*.log"))))
    assert sources.detect(gzipped_log).kind is gzipped_kind
    assert "a gzipped TORCH_TRACE log (*.log.gz)" in sources.expected()
    assert cli.main(["summary", str(gzipped_log), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert plain["units"] and printed["units"] == plain["units"]
    assert printed["graph_breaks"] == plain["graph_breaks"] and printed["source"] == str(gzipped_log)


def test_the_app_opens_the_new_kind_too(gzipped_kind, gzipped_log, qtbot, window):
    loaded = open_and_wait(qtbot, window, gzipped_log)
    assert loaded.session.source == gzipped_log and loaded.session.units
    assert f"{len(loaded.analysis.break_sites)} graph-break site(s)" in window.summary_view.title.text()


def test_unknown_input_names_every_registered_kind(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("not a log\n")
    with pytest.raises(sources.NotCompileOutput) as refused:
        sources.detect(other)
    for kind in sources.KINDS:
        assert kind.expected in str(refused.value)


def test_a_folder_of_rank_logs_is_detected_as_such_once(corpus):
    source = sources.detect(MULTI_RANK)
    assert source.kind.per_rank and len(source.files) == 4
    assert open_session(source).ranks and len(open_session(source).ranks) == 4


def test_an_xla_dump_is_no_session_and_says_where_it_opens(tmp_path):
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "module_0001.jit_f.before_optimizations.txt").write_text("HloModule jit_f\n\n"
                                                                      "ENTRY %main () -> f32[] {\n}\n")
    source = sources.detect(dump)
    assert source.kind is sources.XLA_DUMP and not source.kind.opens_session
    with pytest.raises(sources.NotCompileOutput, match="XLA tab"):
        open_path(dump)


# --- one session, every output: the same counts --------------------------------------------------

def _inputs():
    yield BUNDLED
    if CUDA_LOG.is_file():
        yield CUDA_LOG
    if MULTI_RANK.is_dir():
        yield MULTI_RANK


@pytest.mark.parametrize("path", list(_inputs()), ids=lambda p: p.name)
def test_every_output_states_the_same_counts(path):
    analysis = SessionAnalysis(open_path(path))
    summary = summarize(analysis)
    breaks, sites = len(summary["graph_breaks"]), len(summary["break_sites"])
    recompiles, kernels = len(summary["recompiles"]), summary["kernels"]["total"]
    fx = summary["cache"].get("fx_graph")
    headline = f"{sites} graph-break site(s), {recompiles} recompile(s), {kernels} kernels."

    text = render_text(summary)
    assert f"Graph breaks: {breaks} at {sites} site(s)" in text
    assert ((f"Recompiles: {recompiles} (grouped" if recompiles else f"Recompiles: 0\n") in text
            and f"Kernels: {kernels} (" in text)
    if fx:
        assert f"Cache fx_graph: {fx['hit']} hit, {fx['miss']} miss" in text

    md = markdown(summary)
    assert headline in md and f"**Graph breaks:** {breaks} at {sites} site(s)" in md
    if recompiles:
        assert f"**Recompiles by cause:** {recompiles} in " in md

    html = render_report(analysis)
    assert headline in html and f"Graph breaks: {breaks} at {sites} site(s)" in html
    assert f"Recompiles: {recompiles}</h2>" in html

    sarif = sarif_log(summary, path if path.is_dir() else path.parent)
    rules = [result["ruleId"] for result in sarif["runs"][0]["results"]]
    assert len([rule for rule in rules if rule.startswith("GB") or "break" in rule]) == sites
    if summary["speedup"]["value"] is not None:
        assert summary["speedup"]["text"] in text


def test_the_dashboard_states_the_summarys_counts(qtbot, window):
    loaded = open_and_wait(qtbot, window, BUNDLED)
    summary = summarize(loaded.analysis)
    title = window.summary_view.title.text()
    assert (f"{len(summary['break_sites'])} graph-break site(s), {len(summary['recompiles'])} recompile(s), "
            f"{summary['kernels']['total']} kernels.") in title
    table = window.summary_view.table
    shown = {table.item(row, 0).text(): table.item(row, 1).text() for row in range(table.rowCount())}
    assert shown.keys() == {figure["label"] for figure in summary["verdict"]}
