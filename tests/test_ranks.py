"""Distributed runs: per-rank figures and the divergence report, on a cloned job with planted
differences, on the public 4-rank corpus, with missing and cut-off logs, through the CLI gate and
in the Ranks view."""

from __future__ import annotations

import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import CORPUS, background_settled, open_and_wait
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from make_many_ranks import TEMPLATE, make_job  # noqa: E402

from inspector.core.analysis.divergence_rules import rank_report  # noqa: E402
from inspector.core.analysis.rank_figures import index_ranks, rank_ranges  # noqa: E402
from inspector.core.analysis.rank_lanes import DIFFERS, rank_timeline  # noqa: E402
from inspector.core.analysis.session_analysis import SessionAnalysis  # noqa: E402
from inspector.core.outputs.summary import summarize  # noqa: E402
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path  # noqa: E402
from inspector.core.readers.sources import detect  # noqa: E402
from inspector.core.readers.trace_logs import find_trace_logs  # noqa: E402

MULTI_RANK = CORPUS / "multi_rank_logs"
RANKS = 32


@pytest.fixture(scope="module")
def planted_job(tmp_path_factory) -> tuple[Path, list[dict]]:
    if not TEMPLATE.is_file():
        pytest.skip("the public multi-rank corpus is not here")
    folder = tmp_path_factory.mktemp("ranks") / "job"
    return folder, make_job(folder, RANKS)


def found(report) -> list[tuple[str, tuple]]:
    return sorted((finding.kind, tuple(finding.ranks)) for finding in report.findings)


def planted(expected: list[dict]) -> list[tuple[str, tuple]]:
    return sorted((entry["kind"], tuple(entry["ranks"])) for entry in expected)


def test_every_planted_difference_reported_and_nothing_else(planted_job):
    folder, expected = planted_job
    report = rank_report(index_ranks(find_trace_logs(folder)))
    assert found(report) == planted(expected)
    assert len(report.figures) == RANKS
    by_kind = {finding.kind: finding for finding in report.findings}
    assert by_kind["recompiles"].compile_ids == ("[0/7]",)
    assert by_kind["graphs"].compile_ids == ("[0/3]",)
    assert "fx_graph miss" in by_kind["cache"].message
    assert "all_gather_into_tensor, all_reduce_" in by_kind["collectives"].message
    stragglers = sorted(str(finding) for finding in report.findings if finding.kind == "straggler")
    late = RANKS // 2 + 3  # its first compile, which holds the first collective, took 30 s longer
    assert stragglers == sorted([
        f"rank {RANKS - 1}: compile-time straggler: compile time 40.52 s vs median 10.52 s",
        f"rank {late}: compile-time straggler: compile time 40.52 s vs median 10.52 s",
        f"rank {late}: reaches its first collective late: time to the first collective 40.28 s vs median 10.28 s"])
    # the ranks nobody planted anything on agree, and the report says so in one line
    untouched = sorted(set(range(RANKS)) - {rank for entry in expected for rank in entry["ranks"]})
    assert report.groups[0] == tuple(untouched)
    assert report.lines()[0] == f"ranks {rank_ranges(untouched)} agree"


def test_a_loaded_session_reports_the_same_with_node_level_graph_detail(planted_job):
    folder, expected = planted_job
    analysis = SessionAnalysis(open_path(folder))
    assert found(analysis.ranks) == planted(expected)
    graph = next(finding for finding in analysis.ranks.findings if finding.kind == "graphs")
    assert "added" in graph.message and "similarity" in graph.message  # sum → mean, from the graph matcher


def test_whole_run_sequences_tensor_metadata_and_runtime_estimates_say_what_they_risk(planted_job):
    """tlparse's multi-rank checks (collective sequence, cache pattern and tensor-meta divergence
    groups, runtime deltas), each naming where the ranks part and what it risks."""
    folder, _ = planted_job
    report = rank_report(index_ranks(find_trace_logs(folder)))
    by_kind = {(finding.kind, finding.ranks): finding for finding in report.findings}
    lacking, meta, slow = 2, (RANKS // 4 + 2, RANKS // 4 + 3), RANKS - 6
    sequence = by_kind[("collective_sequence", (lacking,))]
    assert sequence.compile_ids == ("[0/0]",)
    assert ("ends after 0 where the others go on to all_reduce_ in [0/0]" in sequence.message
            and "a hang" in sequence.message)
    assert "which this rank never compiled" in by_kind[("cache_pattern", (lacking,))].message
    assert "only this rank compiled" in by_kind[("cache_pattern", (RANKS // 2,))].message
    tensors = by_kind[("tensor_meta", meta)]  # both ranks with the other shape in one finding
    assert tensors.compile_ids == ("[0/1]",) and "first at op 0 triton_poi_fused_add_0" in tensors.message
    runtime = by_kind[("runtime", (slow,))]
    assert "+400%" in runtime.message and "collectives after it wait" in runtime.message
    assert not any(finding.kind == "tensor_meta" and slow in finding.ranks for finding in report.findings)


def test_rank_lanes_mark_the_units_the_findings_name(planted_job):
    folder, _ = planted_job
    report = rank_report(index_ranks(find_trace_logs(folder)))
    lanes = rank_timeline(report)
    # one extra recompile, one rank that never compiled [0/0]
    assert lanes.lanes == [f"rank {rank}" for rank in range(RANKS)] and len(lanes.bars) == 7 * RANKS + 1 - 1
    marked = sorted((lanes.lane_ranks[bar.lane], bar.compile_id) for bar in lanes.bars if bar.step == DIFFERS)
    assert marked == sorted([(RANKS // 2, "[0/7]"), (RANKS // 4, "[0/3]"), (3, "[0/2]"), (RANKS - 3, "[0/2]"),
                             (RANKS // 8 + 1, "[0/0]"), (RANKS // 4 + 2, "[0/1]"), (RANKS // 4 + 3, "[0/1]"),
                             (RANKS - 6, "[0/1]")])
    longest = max(lanes.bars, key=lambda bar: bar.end_s - bar.start_s)  # a planted slow compile, 30 s over
    assert lanes.lane_ranks[longest.lane] in (RANKS // 2 + 3, RANKS - 1) and longest.end_s - longest.start_s > 30


def test_the_per_rank_map_takes_any_executor(planted_job):
    folder, _ = planted_job
    logs = [folder / f"dedicated_log_torch_trace_rank_{rank}.log" for rank in range(6)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        threaded = index_ranks(logs, pool)
    assert threaded == index_ranks(logs)
    assert [figures.rank for figures in threaded] == list(range(6))
    assert [figures.cache_misses for figures in threaded] == [0, 0, 0, 1, 0, 0]  # rank 3's planted miss


def test_public_multi_rank_corpus_differences_found():
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    summary = summarize(open_path(MULTI_RANK))
    per_rank = summary["per_rank"]
    rows = {row["rank"]: row for row in per_rank["figures"]}
    assert [rows[r]["failed"] for r in range(4)] == [1, 0, 1, 0]
    assert (rows[1]["units"], rows[1]["recompiles"], rows[1]["cache_misses"]) == (15, 14, 10)
    assert (rows[3]["units"], rows[3]["recompiles"], rows[3]["cache_misses"], rows[3]["cache_hits"]) == (7, 6, 0, 14)
    messages = {(f["kind"], tuple(f["ranks"])): f["message"] for f in per_rank["divergence"]}
    assert set(messages) == {("recompiles", (1,)), ("recompiles", (3,)), ("outcome", (1, 3)),
                             ("cache_pattern", (1,)), ("cache_pattern", (3,))}  # as tlparse's cache divergence groups
    assert "which compiled ok here and failed there" in messages[("cache_pattern", (1,))]
    assert ("14 in all" in messages[("recompiles", (1,))]
            and "5 of them missed the cache" in messages[("recompiles", (1,))])
    assert "missed the cache" not in messages[("recompiles", (3,))]
    assert per_rank["groups"][0]["ranks"] == [0, 2]
    assert summary["ranks"] == [0, 1, 2, 3]  # the existing key is unchanged
    text = render_text(summary)
    assert "Compile time (all ranks together): 15.09 s" in text
    assert "Rank divergence: 5 finding(s)" in text and "ranks 0, 2 agree" in text


def test_missing_and_cut_off_logs_are_reported_not_fatal(planted_job, tmp_path):
    folder, _ = planted_job
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for rank in range(8):
        shutil.copy(folder / f"dedicated_log_torch_trace_rank_{rank}.log", damaged)
    (damaged / "dedicated_log_torch_trace_rank_5.log").unlink()
    cut = damaged / "dedicated_log_torch_trace_rank_6.log"
    data = cut.read_bytes()
    cut.write_bytes(data[: data.index(b"\t", len(data) // 2) + 40])  # mid-payload, as a killed run leaves it
    (damaged / "dedicated_log_torch_trace_rank_8.log").write_bytes(b"")  # a rank that wrote nothing
    report = rank_report(index_ranks(find_trace_logs(damaged)))
    logs = {tuple(f.ranks): f.message for f in report.findings if f.kind == "logs"}
    assert logs[(5,)] == "no log found for this rank"
    assert "truncated" in logs[(6,)]
    assert "empty file" in logs[(8,)]
    assert any(f.kind == "compile_ids" and 6 in f.ranks and "missing compile ids" in f.message for f in report.findings)
    summary = summarize(open_path(damaged))  # the whole session opens too
    assert [row["rank"] for row in summary["per_rank"]["figures"]] == [0, 1, 2, 3, 4, 6, 7, 8]


def test_check_max_rank_divergence(planted_job):
    folder, expected = planted_job
    allowed = run_cli("check", str(folder), "--max-rank-divergence", str(len(expected)))
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert f"PASS max-rank-divergence: {len(expected)} finding(s) across {RANKS} rank(s)" in allowed.stdout
    refused = run_cli("check", str(folder), "--max-rank-divergence", str(len(expected) - 1))
    assert refused.returncode == 1
    assert "FAIL max-rank-divergence" in refused.stdout
    for line in ("rank 16: extra recompile [0/7]  [recompiles]", "ranks 3, 29: [0/2] cache",
                 "rank 31: compile-time straggler",
                 "rank 19: reaches its first collective late"):
        assert line in refused.stdout
    document = json.loads(run_cli("summary", "--json", str(folder)).stdout)
    assert len(document["per_rank"]["divergence"]) == len(expected)


def test_single_process_run_has_no_rank_section():
    log = MULTI_RANK / "dedicated_log_torch_trace_rank_3.log"
    if not log.is_file():
        pytest.skip("the public multi-rank corpus is not here")
    summary = summarize(open_path(log))
    assert summary["per_rank"] is None
    assert "Per rank" not in render_text(summary) and "all ranks together" not in render_text(summary)


def test_ranks_view_one_row_per_rank_and_clicks_select_units(qtbot, window, planted_job):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import Qt

    folder, expected = planted_job
    loaded = open_and_wait(qtbot, window, folder)
    view = window.ranks_view
    window.tabs.setCurrentWidget(view)
    table, rows = view.table, view.rows
    assert rows.rowCount() == RANKS
    assert f"{RANKS} ranks; {len(expected)} divergence finding(s)" in view.heading.text()
    straggler_rows = [row for row in range(RANKS) if rows.text(row, rows.columnCount() - 1) == "straggler"]
    assert [int(rows.text(row, 0)) for row in straggler_rows] == [RANKS // 2 + 3, RANKS - 1]
    for row in (7, 20):
        rank = int(rows.text(row, 0))
        rect = table.visualRect(rows.index(row, 2))
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert window.model.unit is loaded.session.ranks[rank].units[0]
    findings = view.findings
    assert findings.count() == len(expected)  # one line per finding; which ranks agree is in the heading
    assert view.heading.text().endswith(f"; {view.report.lines()[0]}.") and "agree" in view.heading.text()
    graph_row = next(i for i in range(findings.count()) if findings.item(i).text().endswith("[graphs]"))
    findings.scrollToItem(findings.item(graph_row))
    rect = findings.visualItemRect(findings.item(graph_row))
    qtbot.mouseClick(findings.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    unit = window.model.unit
    assert (unit.rank, str(unit.compile_id)) == (RANKS // 4, "[0/3]")


@pytest.fixture
def held_details(monkeypatch, planted_job):
    """The real load of the planted job, kept 'still reading its details' until the test lets it go
    (`release()`) or fails it (`fail(message)`): the one way to act, deterministically, between the
    overview and the details. List it after `window`, so it lets go before the window waits for its
    workers."""
    pytest.importorskip("PySide6")
    import threading

    from inspector.core import loading

    folder, _ = planted_job
    gate, failure = threading.Event(), []
    analyse = loading.analyse

    def held_analyse(session, *overview):
        if Path(session.source) == folder:
            assert gate.wait(60)
            if failure:
                raise ValueError(failure[0])
        return analyse(session, *overview)

    class Hold:
        @staticmethod
        def release():
            gate.set()

        @staticmethod
        def fail(message: str):
            failure.append(message)
            gate.set()

    monkeypatch.setattr(loading, "analyse", held_analyse)
    yield Hold()
    gate.set()


def open_to_overview(qtbot, window, folder):
    """Opens `folder` and returns the Ranks view once it shows the overview of every rank (the ranks
    read in the first FIRST_RANKS_AFTER_S may come before it)."""
    with qtbot.waitSignal(window.model.sigOverview, timeout=60_000, check_params_cb=lambda report: not report.unread):
        window.open_path(folder)
    return window.ranks_view


def test_a_big_job_opens_to_its_rank_overview_first_and_a_click_meanwhile_takes_effect(
        qtbot, window, planted_job, held_details):
    """What a user of a many-rank job sees: the Ranks tab filled from the per-rank index while the
    details are still read; a rank clicked meanwhile is selected when they arrive, on the tab and in
    the sort order the user chose."""
    from PySide6.QtCore import QPoint, Qt

    from inspector.core import loading
    from inspector.gui.views.qt_ranks_table import COLUMNS
    from inspector.gui.views.qt_ranks_view import DETAILS, OVERVIEW

    folder, expected = planted_job
    source = detect(folder)
    assert source.kind.per_rank and list(source.files) == find_trace_logs(folder) and len(source.files) == RANKS
    assert sum(log.stat().st_size for log in source.files) >= loading.OVERVIEW_FIRST_BYTES
    view = open_to_overview(qtbot, window, folder)
    assert window.model.loaded is None and view.phase == OVERVIEW
    assert window.tabs.currentWidget() is view
    assert view.rows.rowCount() == RANKS and view.findings.count() == len(expected)
    assert view.heading.text().startswith(f"{RANKS} ranks; {len(expected)} divergence finding(s); "
                                          f"{view.report.lines()[0]}. "
                                          "Reading every rank's details")
    assert f"per-rank overview of {RANKS} ranks" in window.status.text()

    table, header = view.table, view.table.horizontalHeader()
    column = COLUMNS.index("Compile s")
    for _ in range(2):  # sort by compile time, slowest first
        point = QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2, header.height() // 2)
        qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=point)
    slowest = int(view.rows.text(0, 0))
    assert slowest in (RANKS // 2 + 3, RANKS - 1)  # the two planted stragglers
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(0, 1)).center())
    assert window.model.unit is None and f"rank {slowest} is selected once they are in" in view.heading.text()

    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000) as loaded:
        held_details.release()
    session = loaded.args[0].session
    qtbot.waitUntil(lambda: window.model.unit is session.ranks[slowest].units[0], timeout=60_000)
    assert view.phase == DETAILS and view.heading.text() == (f"{RANKS} ranks; {len(expected)} divergence finding(s); "
                                                             f"{view.report.lines()[0]}.")
    assert window.tabs.currentWidget() is view  # not thrown over to the Summary
    selected = view.report.figures[view.selected_row()].rank
    assert int(view.rows.text(0, 0)) == slowest and selected == slowest  # the sort and the row stay

    # the compile-time chart draws the slowest units of the job's hundreds, and says so
    from inspector.gui.views.qt_kernel_plots import UNITS_SHOWN

    charts, units = window.kernels_view, session.units
    window.tabs.setCurrentWidget(charts)  # a tab takes the session when it is opened
    assert len(units) > UNITS_SHOWN and len(charts.rows[charts.units]) == UNITS_SHOWN
    assert charts.units.getPlotItem().titleLabel.text.endswith(f"the {UNITS_SHOWN} slowest of {len(units):,}")
    fastest_shown = min(value for _tip, value in charts.rows[charts.units])
    assert (sorted((unit.compile_s or 0 for unit in units), reverse=True)[UNITS_SHOWN - 1]
            == pytest.approx(fastest_shown))


def test_the_ranks_read_first_are_handed_on_as_they_come_in_rank_order(planted_job):
    """The per-rank index hands on the figures read so far as each of its tasks is done: each time
    the first ranks of the final list, more each time, never all (the whole comes back)."""
    folder, _ = planted_job
    so_far: list[tuple] = []
    figures = index_ranks(find_trace_logs(folder), start_method="spawn", read_so_far=so_far.append)
    assert len(figures) == RANKS and 0 < len(so_far) < RANKS
    assert [len(part) for part in so_far] == sorted({len(part) for part in so_far}) and len(so_far[-1]) < RANKS
    assert all(list(part) == figures[:len(part)] for part in so_far)


def test_a_big_job_shows_its_first_ranks_while_the_rest_are_read(qtbot, window, planted_job, held_details,
                                                                 no_slot_errors, monkeypatch):
    """A job whose per-rank index takes longer than FIRST_RANKS_AFTER_S shows the ranks read by then,
    said to be only those and not yet compared, on the Ranks tab; then every rank with its findings.
    A tab the user opens meanwhile stays open."""
    from inspector.core import loading
    from inspector.gui.views.qt_ranks_view import OVERVIEW

    monkeypatch.setattr(loading, "FIRST_RANKS_AFTER_S", 0.0)  # the first task's ranks, whatever the machine
    folder, expected = planted_job
    view = window.ranks_view
    with qtbot.waitSignal(window.model.sigOverview, timeout=60_000) as first:
        window.open_path(folder)
    shown = first.args[0].figures
    assert 0 < len(shown) < RANKS and [figures.rank for figures in shown] == list(range(len(shown)))
    assert window.tabs.currentWidget() is view and view.phase == OVERVIEW and view.rows.rowCount() == len(shown)
    assert view.heading.text().startswith(f"{len(shown)} of {RANKS} ranks read so far: they are compared once every "
                                          "rank is in.")
    assert [view.findings.item(i).text() for i in range(view.findings.count())] == [
        f"{len(shown)} of {RANKS} ranks read so far: they are compared once every rank is in."]
    assert f": the first {len(shown)} ranks of {RANKS} in " in window.status.text()
    assert window.status.text().endswith("reading the rest…")

    from PySide6.QtCore import Qt

    table = view.table  # the user clicks rank 1 among the first ranks, then looks elsewhere
    row = view.rows.row_of([figures.rank for figures in shown].index(1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(row, 1)).center())
    assert "rank 1 is selected once they are in" in view.heading.text()
    window.tabs.setCurrentWidget(window.summary_view)
    qtbot.waitUntil(lambda: view.report is not None and not view.report.unread, timeout=60_000)
    assert view.rows.rowCount() == RANKS and view.findings.count() == len(expected)
    assert view.heading.text().startswith(f"{RANKS} ranks; {len(expected)} divergence finding(s)")
    assert view.heading.text().endswith("rank 1 is selected once they are in.")  # the click is kept
    assert view.report.figures[view.selected_row()].rank == 1
    assert window.tabs.currentWidget() is window.summary_view
    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000) as loaded:
        held_details.release()
    qtbot.waitUntil(lambda: window.model.unit is loaded.args[0].session.ranks[1].units[0], timeout=60_000)


def test_a_click_waiting_for_a_big_job_is_dropped_when_another_session_opens_first(
        qtbot, window, planted_job, held_details):
    from PySide6.QtCore import Qt

    from inspector.gui.views.qt_ranks_view import DETAILS

    folder, _ = planted_job
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    open_and_wait(qtbot, window, MULTI_RANK)  # a session is open already: the job's overview gives way to it
    view = open_to_overview(qtbot, window, folder)
    table = view.table
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(2, 1)).center())
    assert "rank 2 is selected once they are in" in view.heading.text()
    loaded = open_and_wait(qtbot, window, MULTI_RANK)  # opened before the job's details came
    held_details.release()  # ...which now arrive for an open nobody waits for
    background_settled(qtbot)
    assert window.model.loaded is loaded and window.model.unit is loaded.session.units[0]  # not rank 2's
    assert view.phase == DETAILS and view.rows.rowCount() == 4
    assert view.report.figures[view.selected_row()].rank == 0  # the row of the unit selected, not rank 2's
    assert view.heading.text() == "4 ranks; 5 divergence finding(s); ranks 0, 2 agree."


def test_details_that_bring_other_figures_than_the_overview_redraw_the_table(qtbot, window):
    """The table is kept when a big job's details bring the overview's figures again (a 1,024-row
    rebuild froze the UI); figures that differ (a log that grew meanwhile) are shown, not the old ones."""
    from dataclasses import replace

    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    view = window.ranks_view
    report = SessionAnalysis(open_path(MULTI_RANK)).ranks
    view._on_overview(report)
    with qtbot.assertNotEmitted(view.rows.modelReset):
        view._show(replace(report, findings=report.findings[:1]))  # the same figures: the same rows, other findings
    assert view.findings.count() == 1
    grown = replace(report,
                    figures=(replace(report.figures[0], units=report.figures[0].units + 7),) + report.figures[1:])
    view._show(grown)
    row = next(r for r in range(view.rows.rowCount()) if view.rows.text(r, 0) == str(report.figures[0].rank))
    assert view.rows.text(row, 1) == str(report.figures[0].units + 7)


def test_a_big_job_whose_details_fail_keeps_its_overview_and_says_so(qtbot, window, planted_job, held_details):
    from PySide6.QtCore import Qt

    from inspector.gui.views.qt_ranks_view import FAILED

    folder, _ = planted_job
    view = open_to_overview(qtbot, window, folder)
    with qtbot.waitSignal(window.model.sigLoadFailed, timeout=60_000):
        held_details.fail("out of memory while reading rank 7")
    assert view.phase == FAILED and view.rows.rowCount() == RANKS
    assert view.heading.text().endswith("Only this overview: the details could not be read: out of memory while "
                                        "reading rank 7")
    table = view.table
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(4, 1)).center())
    assert "no unit of rank 4 to select" in view.heading.text() and window.model.unit is None
    assert window.last_message == "out of memory while reading rank 7"


def test_session_tree_of_many_ranks_lists_a_rank_when_opened_or_selected(qtbot, window, planted_job):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QPoint, Qt

    from inspector.gui.views.qt_navigator import LISTED_RANKS, UNIT_ROLE

    folder, _ = planted_job
    assert RANKS > LISTED_RANKS
    loaded = open_and_wait(qtbot, window, folder)
    tree = window.navigator
    ranks = [tree.topLevelItem(row) for row in range(tree.topLevelItemCount())]
    assert [item.text(0) for item in ranks[:2]] == ["rank 0  (7 units)", "rank 1  (7 units)"] and len(ranks) == RANKS
    assert all(item.childCount() == 0 and not item.isExpanded() for item in ranks[1:])  # listed when opened

    def units_under(item):
        frames = [item.child(i) for i in range(item.childCount())]
        return [frame.child(i).data(0, UNIT_ROLE) for frame in frames for i in range(frame.childCount())]

    rect = tree.visualItemRect(ranks[5])  # open rank 5 by its arrow, as a person does
    arrow = QPoint(rect.left() - tree.indentation() // 2, rect.center().y())
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=arrow)
    qtbot.waitUntil(ranks[5].isExpanded, timeout=60_000)
    assert units_under(ranks[5]) == loaded.session.ranks[5].units

    window.model.select_unit(loaded.session.ranks[20].units[3])  # selected elsewhere (the Ranks tab, Problems)
    assert units_under(ranks[20]) == loaded.session.ranks[20].units
    assert tree.currentItem().data(0, UNIT_ROLE) is loaded.session.ranks[20].units[3]
    assert ranks[7].childCount() == 0


def test_logs_without_distinct_rank_numbers_are_listed_not_lined_up(planted_job, tmp_path):
    folder, _ = planted_job
    for name in ("a", "b"):
        shutil.copy(folder / "dedicated_log_torch_trace_rank_1.log", tmp_path / f"dedicated_log_torch_trace_{name}.log")
    report = SessionAnalysis(open_path(tmp_path)).ranks
    assert len(report.figures) == 2
    assert [(f.kind, f.ranks) for f in report.findings] == [("logs", (None,))]
    assert "ranks not compared" in report.findings[0].message


def test_a_reopened_jobs_overview_reads_no_log(planted_job, tmp_path, monkeypatch):
    """Once a job was opened whole (every payload checked, each log's index kept in the index cache),
    its overview the next time comes from those indexes — the same figures, and no log read."""
    import os
    import time

    from inspector.core.readers import index_cache, session_builder

    folder, _ = planted_job
    job = tmp_path / "job"
    job.mkdir()
    past = time.time() - 60  # a log written in the last seconds is not cached (it may still grow)
    for rank in range(3):  # fewer than 4: the overview runs in this process, where reads are counted
        log = job / f"dedicated_log_torch_trace_rank_{rank}.log"
        shutil.copy(folder / log.name, log)
        os.utime(log, (past, past))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TCI_NO_CACHE", raising=False)
    logs = sorted(job.glob("*.log"))
    fresh = index_ranks(logs)
    assert all(index_cache.load_log(log) is None for log in logs), "an overview alone keeps nothing"
    open_path(job)  # the whole read keeps every log's index
    reads = []
    monkeypatch.setattr(session_builder, "read_trace_log", lambda *args, **kwargs: reads.append(args) or None)
    assert index_ranks(logs) == fresh and reads == []
