"""A big log opens first as a preview (#26: the first view must not wait for the whole file): the
session of its whole records within its first bytes, said to be a preview wherever its figures
show, then the whole session in its place, keeping the unit and the tab the user chose meanwhile."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT
from inspector.core.readers.session_builder import build_preview_session, build_trace_session
from inspector.core.readers.sources import detect
from inspector.core.readers.torch_trace import read_trace_log

LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"


@pytest.mark.parametrize("share", [0.3, 0.5, 0.9999])
def test_a_prefix_read_holds_the_whole_records_before_its_limit_and_nothing_cut(share):
    whole = read_trace_log(LOG)
    limit = int(LOG.stat().st_size * share)
    part = read_trace_log(LOG, verify_md5=False, limit=limit)
    read, every = _payload_ends(part), _payload_ends(whole)
    assert 0 < len(read) < len(every) and part.size <= limit
    assert read == every[:len(read)]
    assert read[-1][1] <= part.size < every[len(read)][1]
    part.verify_payloads()
    assert not part.problems.counts  # no record cut in two: every payload's md5 holds


def _payload_ends(log) -> list[tuple[int, int]]:
    """(line, end of its payload) of each record and chromium event row with a payload, in file order."""
    records = [(r.line_no, r.payload_end) for r in log.records if r.has_payload]
    return sorted(records + list(zip(log.events.line_nos, log.events.ends)))


def test_a_preview_session_is_the_start_of_the_whole_one():
    whole = build_trace_session([LOG], LOG)
    preview = build_preview_session(LOG, LOG, LOG.stat().st_size // 2)
    read, total = preview.preview
    assert read <= LOG.stat().st_size // 2 and total == LOG.stat().st_size and whole.preview is None
    assert 0 < len(preview.units) < len(whole.units)  # the units begun there, each under its frame
    assert {str(u.compile_id) for u in preview.units} < {str(u.compile_id) for u in whole.units}


def test_the_app_shows_a_big_log_as_a_preview_then_whole_keeping_the_users_choices(qtbot, window, no_slot_errors,
                                                                                    monkeypatch, tmp_path):
    pytest.importorskip("PySide6")
    from inspector.core import loading

    log = tmp_path / LOG.name  # never opened: no index cache entry
    shutil.copy(LOG, log)
    monkeypatch.setattr(loading, "PREVIEW_FIRST_BYTES", 1)
    monkeypatch.setattr(loading, "PREVIEW_BYTES", log.stat().st_size // 2)
    gate, analyse = threading.Event(), loading.analyse

    def held_analyse(session, *overview):  # the whole session waits until the test has looked at the preview
        if session.preview is None:
            assert gate.wait(60)
        return analyse(session, *overview)

    monkeypatch.setattr(loading, "analyse", held_analyse)
    try:
        with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000) as shown:
            window.open_path(log)
        preview = shown.args[0].session
        assert preview.preview is not None and window.windowTitle().startswith(f"{log.name} (preview)")
        assert window.summary_view.notices.text().startswith("Preview: the whole records in the log's first")
        assert window.status.text().endswith("reading the rest…") and "MB of" in window.status.text()
        tree = window.navigator
        listed = [tree.topLevelItem(i).child(j).text(0) for i in range(tree.topLevelItemCount())
                  for j in range(tree.topLevelItem(i).childCount())]
        assert listed == [str(unit.compile_id) for unit in preview.units]
        chosen = preview.units[1]
        window.model.select_unit(chosen)  # the user picks a unit and a tab while the rest is read
        window.tabs.setCurrentWidget(window.source_view)
    finally:
        gate.set()
    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000) as shown:
        pass
    whole = shown.args[0].session
    assert whole.preview is None and len(whole.units) > len(preview.units)
    assert (window.windowTitle().startswith(f"{log.name} — ")
            and not window.summary_view.notices.text().startswith("Preview"))
    assert window.model.unit in whole.units and window.model.unit.compile_id == chosen.compile_id
    assert window.tabs.currentWidget() is window.source_view
    assert window.status.text().startswith(f"Opened {log}")
    listed = [tree.topLevelItem(i).child(j).text(0) for i in range(tree.topLevelItemCount())
              for j in range(tree.topLevelItem(i).childCount())]
    assert listed == [str(unit.compile_id) for unit in whole.units]
    assert Path(window.model.loaded.session.source) == log


def test_a_reopen_is_previewed_only_when_the_log_is_too_big_to_reopen_at_once(tmp_path, monkeypatch):
    """A reopen reads the log's index from the cache (the 106 MB GPT-2 log shows whole in ~0.35 s, no
    preview needed), but a log past REOPEN_PREVIEW_BYTES (a 1 GB one: 1.9 s) is previewed again."""
    pytest.importorskip("PySide6")
    from inspector.core import loading

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    log = tmp_path / LOG.name
    shutil.copy(LOG, log)
    past = time.time() - 60  # a log still being written is not cached
    os.utime(log, (past, past))
    monkeypatch.setattr(loading, "PREVIEW_FIRST_BYTES", 1)
    monkeypatch.setattr(loading, "PREVIEW_BYTES", log.stat().st_size // 2)
    monkeypatch.setattr(loading, "REOPEN_PREVIEW_BYTES", log.stat().st_size + 1)

    def previews() -> list:
        shown: list = []
        whole = loading.load_session(detect(log), lambda event: shown.append(event.loaded)
                                     if isinstance(event, loading.Preview) else None)
        assert whole.session.preview is None and all(loaded.session.preview is not None for loaded in shown)
        return shown

    assert len(previews()) == 1  # the first open
    assert previews() == []  # a reopen of a log below the limit
    monkeypatch.setattr(loading, "REOPEN_PREVIEW_BYTES", log.stat().st_size)
    assert len(previews()) == 1


def test_the_whole_log_is_read_once_every_view_shows_its_preview(qtbot, window, no_slot_errors, monkeypatch, tmp_path):
    """The load worker waits for the preview to be on screen before it reads the whole log: read
    meanwhile, a reopened 2 GB log's cached index held the GIL the views needed (first view 0.46–0.63 s;
    0.18–0.24 s with the wait)."""
    pytest.importorskip("PySide6")
    from inspector.core import loading
    from inspector.gui import qt_session_model

    log = tmp_path / LOG.name
    shutil.copy(LOG, log)
    monkeypatch.setattr(loading, "PREVIEW_FIRST_BYTES", 1)
    monkeypatch.setattr(loading, "PREVIEW_BYTES", log.stat().st_size // 2)
    monkeypatch.setattr(qt_session_model, "FIRST_VIEW_WAIT_S", 60)  # however slow the machine
    shown_when_read, open_session = [], loading.open_session

    def watched(source, progress=None):
        loaded = window.model.loaded  # read on the worker: what the UI thread had done by then
        shown_when_read.append(loaded is not None and loaded.session.preview is not None and not window.model.handing)
        return open_session(source, progress)

    monkeypatch.setattr(loading, "open_session", watched)
    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000,
                          check_params_cb=lambda loaded: loaded.session.preview is None):
        window.open_path(log)
    assert shown_when_read == [True]
