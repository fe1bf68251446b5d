"""A summary taken from the index cache names the run the way this open named it. The cache is found
by what was read, so a run opened once by a relative path and again from another folder by its full
path found the first open's document, `source` and all: the text showed the old path and the History
tab kept a run that does not open (its relative path resolved against another folder)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.history.run_record import record_of, run_identity
from inspector.core.outputs.cached_summary import session_glance, session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import close_session, open_path

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"


def test_a_cached_summary_names_the_path_this_open_used(tmp_path, monkeypatch):
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(BUNDLED.parent)
    first = open_path(Path(BUNDLED.name))  # as `summary mlp_breaks` run in resources/sessions
    assert session_summary(first)["source"] == BUNDLED.name
    session_glance(SessionAnalysis(first))
    close_session(first)

    monkeypatch.chdir(tmp_path)  # the same run, opened from elsewhere by its full path
    again = open_path(BUNDLED)
    document = session_summary(again)
    assert document["source"] == str(BUNDLED)
    assert session_glance(SessionAnalysis(again)).source == str(BUNDLED)
    record = record_of(again, Summary.from_state(document), run_identity(again), 0.0)
    assert Path(record.source).exists() and Path(record.source) == BUNDLED
    close_session(again)

