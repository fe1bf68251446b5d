"""The loading pipeline (core/loading.py) without Qt: what an open shows first and in which order —
a big log's preview of its first records, a big job's per-rank overview, the bytes read, then the whole
session — told as plain events, on real logs. The app's window only displays these events."""

from __future__ import annotations

import shutil
from operator import attrgetter

import pytest

from conftest import CUDA_LOG, MULTI_RANK, ROOT
from inspector.core import loading
from inspector.core.analysis.dask_engine import DaskTarget, EngineUnavailable
from inspector.core.loading import Loaded, Overview, Preview, ReadProgress, load_session, rank_overview
from inspector.core.readers.sources import NotCompileOutput, detect

BUNDLED_LOG = ROOT / "resources" / "sessions" / "mlp_breaks" / "trace" / "dedicated_log_torch_trace_example.log"


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An index cache of the test's own: a log copied into tmp_path was never opened before."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)


def watched(path) -> tuple[list, loading.LoadedSession]:
    events: list = []
    return events, load_session(detect(path), events.append)


def test_a_big_log_shows_its_first_records_then_the_whole_log(tmp_path, monkeypatch, fresh_cache):
    log = tmp_path / BUNDLED_LOG.name
    shutil.copy(BUNDLED_LOG, log)
    size = log.stat().st_size
    monkeypatch.setattr(loading, "PREVIEW_FIRST_BYTES", 1)  # this log counts as big
    monkeypatch.setattr(loading, "PREVIEW_BYTES", size // 2)

    events, whole = watched(log)

    kinds = [type(event) for event in events]
    assert kinds[0] is Preview and kinds[-1] is Loaded and set(kinds[1:-1]) == {ReadProgress}
    preview = events[0].loaded
    read, total = preview.session.preview
    assert 0 < read <= size // 2 and total == size and preview.preview_extent.startswith("first ")
    assert whole is events[-1].loaded and whole.session.preview is None and whole.preview_extent == ""
    shown = [str(unit.compile_id) for unit in preview.session.units]
    assert 0 < len(shown) and set(shown) < {str(unit.compile_id) for unit in whole.session.units}
    done = [event.done for event in events if isinstance(event, ReadProgress)]
    assert done == sorted(done) and done[-1] <= size and {event.total for event in events[1:-1]} == {size}
    times = [event.after_s for event in events]
    assert times == sorted(times) and times[0] >= 0
    # what the first views read is made before the session is sent: the dashboard's, the Problems list's
    assert {"glance", "issues", "kernel_counts"} <= set(vars(whole)) and {"glance", "issues"} <= set(vars(preview))
    for sent in (preview, whole):  # every fact of the one list, on the pipeline's thread, not the UI's
        for fact in loading.MADE_AHEAD:
            holder, _, name = fact.rpartition(".")
            assert name in vars(attrgetter(holder)(sent) if holder else sent), f"{fact} not made ahead"


def test_an_unwatched_load_and_a_small_log_go_straight_to_the_whole_session(tmp_path, monkeypatch, fresh_cache):
    if not CUDA_LOG.is_file():
        pytest.skip("the corpus is not here")
    log = tmp_path / CUDA_LOG.name
    shutil.copy(CUDA_LOG, log)
    assert log.stat().st_size < loading.PREVIEW_FIRST_BYTES
    events, whole = watched(log)  # below the size worth a preview
    assert [type(event) for event in events][-1] is Loaded and not any(isinstance(e, Preview) for e in events)
    monkeypatch.setattr(loading, "PREVIEW_FIRST_BYTES", 1)
    again = load_session(detect(log))  # nobody watches (a comparison's second run): nothing is read first
    assert again.session.preview is None and len(again.session.units) == len(whole.session.units)


def test_a_big_job_shows_its_per_rank_overview_before_its_details(monkeypatch, fresh_cache):
    if not MULTI_RANK.is_dir():
        pytest.skip("the corpus is not here")
    monkeypatch.setattr(loading, "OVERVIEW_FIRST_BYTES", 0)  # this 4-rank job counts as big
    monkeypatch.setattr(loading, "FIRST_RANKS_AFTER_S", 3600.0)  # every rank at once, however slow the machine

    events, whole = watched(MULTI_RANK)

    kinds = [type(event) for event in events]
    assert kinds[0] is Overview and kinds[-1] is Loaded and Preview not in kinds
    overview = events[0]
    assert overview.where == "" and overview.report.unread == 0
    assert [figures.rank for figures in overview.report.figures] == [0, 1, 2, 3]
    # the details keep the overview's rows: the Ranks tab sees they stay (by identity, not a comparison)
    assert whole.ranks.figures is overview.report.figures
    assert {unit.rank for unit in whole.session.units} == {0, 1, 2, 3}


def test_a_job_whose_ranks_take_a_while_shows_the_first_ranks_read_then_every_rank(monkeypatch, fresh_cache):
    if not MULTI_RANK.is_dir():
        pytest.skip("the corpus is not here")
    monkeypatch.setattr(loading, "OVERVIEW_FIRST_BYTES", 0)
    monkeypatch.setattr(loading, "FIRST_RANKS_AFTER_S", 0.0)  # the first task's ranks, whatever the machine

    events, whole = watched(MULTI_RANK)

    first, every = [event.report for event in events if isinstance(event, Overview)]
    assert 0 < len(first.figures) < 4 and first.unread == 4 - len(first.figures) and not first.findings
    assert [figures.rank for figures in first.figures] == list(range(len(first.figures)))  # rank 0 first
    assert every.unread == 0 and [figures.rank for figures in every.figures] == [0, 1, 2, 3]
    assert isinstance(events[-1], Loaded) and events[-1].loaded is whole


def test_a_job_below_the_overview_size_opens_straight_to_its_details(fresh_cache):
    if not MULTI_RANK.is_dir():
        pytest.skip("the corpus is not here")
    assert sum(log.stat().st_size for log in MULTI_RANK.iterdir()) < loading.OVERVIEW_FIRST_BYTES
    events, whole = watched(MULTI_RANK)
    assert not any(isinstance(event, (Overview, Preview)) for event in events) and events[-1].loaded is whole
    assert len(whole.ranks.figures) == 4


def test_an_unreachable_cluster_is_said_and_the_ranks_read_here_unless_the_caller_wants_the_cluster():
    """The app falls back to reading on this machine and says why; `summary --dask` (fall_back=False)
    stops with the reason instead."""
    if not MULTI_RANK.is_dir():
        pytest.skip("the corpus is not here")
    pytest.importorskip("distributed")
    logs = sorted(MULTI_RANK.iterdir(), reverse=True)  # in any order: read in rank order
    nobody = DaskTarget("tcp://127.0.0.1:9", allow_insecure=True)  # the discard port: nothing answers
    here = rank_overview(logs, nobody, timeout_s=5)
    assert here.where.startswith("read on this machine: ") and "127.0.0.1:9" in here.where and here.cluster is None
    assert [figures.rank for figures in here.report.figures] == [0, 1, 2, 3]
    with pytest.raises(EngineUnavailable, match="127.0.0.1:9"):
        rank_overview(logs, nobody, fall_back=False, timeout_s=5)


def test_a_path_of_no_kind_fails_before_any_event(tmp_path):
    stray = tmp_path / "notes.txt"
    stray.write_text("not a log\n", encoding="utf-8")
    events: list = []
    with pytest.raises(NotCompileOutput):
        load_session(detect(stray), events.append)
    assert events == []

