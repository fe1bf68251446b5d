"""Ranks across the views of a distributed run (the public 4-rank corpus): the Problems pane's Rank
column and rank filter, the break map following the selected rank, the timeline's lanes aligned per
rank with a toggle to one wall clock (and the HTML report's timeline aligned the same way), and the
dashboard's per-rank compile-time spread. Real clicks, under an exception hook that fails a test on
any exception in a slot."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from conftest import MULTI_RANK, events_delivered, open_and_wait  # noqa: E402
from inspector.core.outputs.html_report import LANE_HEIGHT, TIMELINE_DEPTH, timeline_svg  # noqa: E402
from inspector.core.readers.session_loader import open_path  # noqa: E402
from inspector.gui.views.qt_problems import PROBLEM_ROLE, RANK_COLUMN  # noqa: E402

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"


@pytest.fixture
def multi_rank(qtbot, window, no_slot_errors):
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    window.resize(1400, 900)
    return open_and_wait(qtbot, window, MULTI_RANK)


def choose(qtbot, combo, text: str) -> None:
    """Open the combo's list with a click and click the entry `text`."""
    QTest.mouseClick(combo, Qt.MouseButton.LeftButton)
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=60_000)
    index = next(combo.model().index(row, 0) for row in range(combo.count()) if combo.itemText(row) == text)
    view.scrollTo(index)
    point = view.visualRect(index).center()
    QTest.mouseMove(view.viewport(), point)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    qtbot.waitUntil(lambda: combo.currentText() == text, timeout=60_000)


def rows(tree) -> list:
    return [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]


def click_item(tree, item) -> None:
    rect = tree.visualItemRect(item)
    assert rect.isValid()
    QTest.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())


def test_problems_name_their_rank_and_filter_by_rank(qtbot, window, multi_rank):
    problems = window.problems_view
    window.problems_dock.raise_()
    qtbot.waitUntil(problems.rank_filter.isVisible, timeout=60_000)
    assert not problems.isColumnHidden(RANK_COLUMN)
    assert problems.headerItem().text(RANK_COLUMN) == "Rank"
    failed = [item for item in rows(problems) if item.text(0).startswith("Compile failed [0/0]")]
    assert sorted(item.text(RANK_COLUMN) for item in failed) == ["0", "2"]  # the two rows now differ
    recompiles = {item.text(1): item.text(RANK_COLUMN) for item in rows(problems)
                  if item.text(0).startswith("Recompile ×")}
    assert recompiles == {"14": "1", "6": "3"}
    combo = problems.rank_filter
    assert [combo.itemText(i) for i in range(combo.count())] == ["all ranks", "rank 0", "rank 1", "rank 2", "rank 3"]

    choose(qtbot, combo, "rank 2")
    shown = [item for item in rows(problems) if not item.isHidden()]
    assert shown and all(item.data(0, PROBLEM_ROLE).ranks == (2,) for item in shown)
    assert [item.text(RANK_COLUMN) for item in shown if item.text(0).startswith("Compile failed [0/0]")] == ["2"]
    click_item(problems, shown[0])
    qtbot.waitUntil(lambda: window.model.unit is not None and window.model.unit.rank == 2, timeout=60_000)

    choose(qtbot, combo, "rank 1")
    shown = [item for item in rows(problems) if not item.isHidden()]
    assert [item.text(1) for item in shown if item.text(0).startswith("Recompile ×")] == ["14"]
    assert not any(item.text(0).startswith("Compile failed") for item in shown)  # rank 1 compiled

    choose(qtbot, combo, "all ranks")
    assert not any(item.isHidden() for item in rows(problems))


def test_a_break_site_on_several_ranks_is_one_row_that_jumps_to_the_rank_shown(qtbot, window, no_slot_errors, tmp_path):
    for rank in (0, 1):  # the same program on two ranks: every break site is hit on both
        shutil.copy(BUNDLED / "trace" / "dedicated_log_torch_trace_example.log",
                    tmp_path / f"dedicated_log_torch_trace_rank_{rank}.log")
    open_and_wait(qtbot, window, tmp_path)
    problems = window.problems_view
    window.problems_dock.raise_()
    breaks = [item for item in rows(problems) if item.text(0).startswith("Graph break")]
    assert len(breaks) == 2 and all(item.text(RANK_COLUMN) == "0–1" for item in breaks)
    assert all(item.toolTip(RANK_COLUMN) == "on ranks 0–1" for item in breaks)
    choose(qtbot, problems.rank_filter, "rank 1")
    shown = [item for item in rows(problems) if not item.isHidden()]
    assert [item for item in shown if item.text(0).startswith("Graph break")] == breaks
    assert all(item.text(RANK_COLUMN) == "1" for item in shown if item.text(0).startswith("Recompile"))
    window.model.select_unit(None)
    click_item(problems, breaks[0])
    qtbot.waitUntil(lambda: window.model.unit is not None, timeout=60_000)
    assert (window.model.unit.rank, str(window.model.unit.compile_id)) == (1, "[0/0]")  # rank 1's unit, not rank 0's
    break_map = window.graph_view.break_map  # and the break map now shows rank 1, with its breaks
    assert break_map.row_label(0) == "rank 1 · compile 0"
    assert {part.unit.rank for row in break_map.rows for part in row if hasattr(part, "unit")} == {1}
    assert sum(1 for part in break_map.rows[0] if hasattr(part, "brk")) == 2


def test_a_single_process_run_has_no_rank_column_or_filter(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    problems = window.problems_view
    assert problems.isColumnHidden(RANK_COLUMN) and not problems.rank_filter.isVisible()
    assert window.graph_view.break_map.row_label(0) == "compile 0"
    assert not window.timeline_view.wall_clock.isVisible()
    assert not window.summary_view.ranks.isVisible()


def test_break_map_follows_the_selected_rank(qtbot, window, multi_rank):
    window.tabs.setCurrentWidget(window.graph_view)
    break_map = window.graph_view.break_map
    qtbot.waitUntil(break_map.isVisible, timeout=60_000)
    assert window.model.unit.rank == 0
    assert {part.unit.rank for row in break_map.rows for part in row if hasattr(part, "unit")} == {0}
    assert len(break_map.rows) == 1 and break_map.row_label(0) == "rank 0 · compile 0"
    before = break_map.grab().toImage()

    ranks = window.ranks_view  # a click on rank 3's row selects its first unit
    window.tabs.setCurrentWidget(ranks)
    row = next(r for r in range(ranks.rows.rowCount()) if ranks.rows.text(r, 0) == "3")
    rect = ranks.table.visualRect(ranks.rows.index(row, 0))
    QTest.mouseClick(ranks.table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
    qtbot.waitUntil(lambda: window.model.unit.rank == 3, timeout=60_000)
    window.tabs.setCurrentWidget(window.graph_view)
    units = [part.unit for row in break_map.rows for part in row if hasattr(part, "unit")]
    assert {unit.rank for unit in units} == {3} and len(break_map.rows) == 7  # rank 3's first compile and 6 recompiles
    qtbot.waitUntil(lambda: break_map.grab().toImage() != before, timeout=60_000)

    # 7 rows, 4 drawn: the labels say there are more, and the wheel brings the others
    break_map.repaint()
    assert [shown for _rect, shown, _whole in break_map.drawn_labels[:1]] == ["rank 3 · compile 0 (of 7)"]
    scroll(break_map, notches=-5)
    break_map.repaint()
    assert ([whole for _rect, _shown, whole in break_map.drawn_labels if "compile" in whole][-1]
            == "rank 3 · compile 6 (of 7)")
    QTest.mouseMove(break_map, QPoint(5, 10))
    qtbot.waitUntil(lambda: "Showing compiles 3–6 of 0–6" in QToolTip.text(), timeout=10_000)
    scroll(break_map, notches=5)

    # a click on a region selects that unit, on the rank shown
    break_map.repaint()
    rect, region = next((rect, part) for rect, part in break_map.hit_boxes if hasattr(part, "unit")
                        and part.unit is not window.model.unit)
    QTest.mouseClick(break_map, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center().toPoint())
    qtbot.waitUntil(lambda: window.model.unit is region.unit, timeout=60_000)
    assert window.model.unit.rank == 3


def scroll(widget, notches: int) -> None:
    """Turn the mouse wheel over the widget: a negative number of notches scrolls down."""
    centre = QPointF(widget.rect().center())
    for _ in range(abs(notches)):
        QApplication.sendEvent(widget, QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(),
                                                   QPoint(0, 120 if notches > 0 else -120), Qt.MouseButton.NoButton,
                                                   Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False))


def first_starts(timeline) -> dict:
    """Per rank: the start of its earliest bar, in the timeline's seconds."""
    starts: dict = {}
    for bar in timeline.bars:
        rank = timeline.lane_ranks[bar.lane]
        starts[rank] = min(starts.get(rank, bar.start_s), bar.start_s)
    return starts


def test_timeline_lanes_aligned_per_rank_with_a_wall_clock_toggle(qtbot, window, multi_rank):
    view = window.timeline_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(view.wall_clock.isVisible, timeout=60_000)
    timeline = view.timeline
    assert [rank for rank, _first, _lanes in timeline.rank_groups()] == [0, 1, 2, 3]
    assert first_starts(timeline) == {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}  # each rank from its own first stage
    assert timeline.end_s == pytest.approx(10.53, abs=0.01)  # rank 3's compiles, not 19 million seconds of clock
    assert [line.label.toPlainText() for line in view.rank_lines] == ["rank 0", "rank 1", "rank 2", "rank 3"]
    # each label on its own patch of background: at the right edge it lies over rank 3's last bars and markers
    assert all(line.label.fill.style() == Qt.BrushStyle.SolidPattern and line.label.fill.color().alpha() > 200
               for line in view.rank_lines)
    assert "each rank" in view.plot.getAxis("bottom").labelText

    # hover on rank 3's longest top-level stage: the tooltip names the rank
    bar = max((b for b in timeline.bars if b.depth == 0 and timeline.lane_ranks[b.lane] == 3),
              key=lambda b: b.end_s - b.start_s)
    view.plot.setXRange(bar.start_s, bar.end_s, padding=0.1)
    events_delivered()
    scene = view.plot.getViewBox().mapViewToScene(QPointF((bar.start_s + bar.end_s) / 2,
                                                          bar.lane * timeline.depth + 0.5))
    point = view.plot.mapFromScene(scene)
    view.hover_text = ""
    QTest.mouseMove(view.plot.viewport(), point + QPoint(1, 0))
    QTest.mouseMove(view.plot.viewport(), point)
    qtbot.waitUntil(lambda: bool(view.hover_text), timeout=60_000)
    assert "rank 3" in view.hover_text and bar.compile_id in view.hover_text

    QTest.mouseClick(view.wall_clock, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.timeline.wall_clock, timeout=60_000)
    starts = first_starts(view.timeline)
    assert starts[0] == starts[2] == 0.0  # these two logs share a start
    assert starts[1] > 1e6 and starts[3] > starts[1]  # the others started weeks later on the same clock
    assert "each rank" not in view.plot.getAxis("bottom").labelText
    lane = view.selected_lane()
    assert lane is not None and view.lane_units[lane] is window.model.unit  # the selection survives the toggle

    QTest.mouseClick(view.wall_clock, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.timeline.wall_clock, timeout=60_000)
    assert first_starts(view.timeline) == {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}


def test_html_timeline_aligns_each_rank_on_its_own_start():
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    svg = timeline_svg(open_path(MULTI_RANK))
    group = LANE_HEIGHT * TIMELINE_DEPTH
    labels = {int(y) // group: text for y, text in re.findall(r"<text x='2' y='(\d+)'>([^<]*)</text>", svg)}
    first_x: dict[str, float] = {}
    for x, y in re.findall(r"<rect x='([\d.]+)' y='(\d+)'", svg):
        rank = labels[int(y) // group].split(" [")[0]
        first_x[rank] = min(first_x.get(rank, float("inf")), float(x))
    assert first_x == {"rank 0": 120.0, "rank 1": 120.0, "rank 2": 120.0, "rank 3": 120.0}
    assert "10.53 s" in svg and "each rank from its first compile event" in svg


def test_dashboard_says_figures_are_all_ranks_and_shows_the_spread(window, multi_rank):
    line = window.summary_view.ranks
    assert line.isVisible()
    assert line.text() == ("4 ranks: the figures below are all ranks together. Compile time per rank (2 of 4 ranks "
                           "recorded one): min 4.57 s (rank 1), median 7.55 s, max 10.5 s (rank 3); no straggler.")


def lane_starts(timeline) -> dict:
    """Per lane: the start of its earliest bar."""
    starts: dict = {}
    for bar in timeline.bars:
        starts[bar.lane] = min(starts.get(bar.lane, bar.start_s), bar.start_s)
    return starts


def test_rank_lanes_one_lane_per_rank_hover_click_and_wall_clock(qtbot, window, multi_rank):
    view = window.ranks_view
    window.tabs.setCurrentWidget(view)
    lanes = view.lanes
    qtbot.waitUntil(lanes.plot.isVisible, timeout=60_000)
    timeline = lanes.timeline
    assert timeline.lanes == ["rank 0", "rank 1", "rank 2", "rank 3"]
    per_lane = {lane: sum(bar.lane == lane for bar in timeline.bars) for lane in range(4)}
    assert per_lane == {0: 1, 1: 15, 2: 1, 3: 7}  # ranks 0 and 2: their failed [0/0], drawn from its traced events
    assert lane_starts(timeline) == {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}  # each rank from its own first compile
    # ranks 0 and 2 (the majority, by the lowest rank) failed [0/0]: every unit of 1 and 3 is named by a finding
    assert all(bar.step == "differs" for bar in timeline.bars if bar.lane in (1, 3))

    bar = next(b for b in timeline.bars if b.lane == 3 and b.compile_id == "[0/0]")
    scene = lanes.plot.getViewBox().mapViewToScene(QPointF((bar.start_s + bar.end_s) / 2, bar.lane + 0.5))
    point = lanes.plot.mapFromScene(scene)
    QTest.mouseMove(lanes.plot.viewport(), point + QPoint(1, 0))
    QTest.mouseMove(lanes.plot.viewport(), point)
    qtbot.waitUntil(lambda: "rank 3 [0/0]" in lanes.hover_text, timeout=60_000)
    assert "10.3 s" in lanes.hover_text and "click: select [0/0] of rank 3" in lanes.hover_text
    window.model.select_unit(None)
    QTest.mouseClick(lanes.plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    qtbot.waitUntil(lambda: window.model.unit is not None, timeout=60_000)
    assert (window.model.unit.rank, str(window.model.unit.compile_id)) == (3, "[0/0]")
    assert view.report.figures[view.selected_row()].rank == 3  # its rank's row is selected too

    QTest.mouseClick(lanes.wall_clock, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: lanes.timeline.wall_clock, timeout=60_000)
    starts = lane_starts(lanes.timeline)
    # rank 3 ran three days later
    assert starts[0] == starts[2] == 0.0 and starts[3] - starts[1] == pytest.approx(261703.8, abs=0.1)
    assert "any rank" in lanes.plot.getAxis("bottom").labelText


def test_logs_without_rank_numbers_each_list_and_select_their_own_units(qtbot, window, no_slot_errors, tmp_path):
    """Past LISTED_RANKS logs the Session tree lists a log's units when it is opened: logs that carry
    no rank number (or share one) must each open to their own units, and a click on one in the Ranks
    tab select its own, not the first log's."""
    from inspector.gui.views.qt_navigator import LISTED_RANKS, UNIT_ROLE

    for index in range(LISTED_RANKS + 2):
        shutil.copy(BUNDLED / "trace" / "dedicated_log_torch_trace_example.log",
                    tmp_path / f"dedicated_log_torch_trace_run{index:02d}.log")
    loaded = open_and_wait(qtbot, window, tmp_path)
    ranks = loaded.session.ranks
    assert len(ranks) == LISTED_RANKS + 2 and all(rank.rank is None for rank in ranks)
    tree = window.navigator
    items = rows(tree)
    tree.expandItem(items[5])
    frame = items[5].child(0)
    assert [frame.child(i).data(0, UNIT_ROLE) for i in range(frame.childCount())] == ranks[5].frames[0].units
    assert items[6].childCount() == 0
    window.model.select_unit(ranks[9].units[1])
    assert tree.currentItem().data(0, UNIT_ROLE) is ranks[9].units[1]

    view = window.ranks_view
    window.tabs.setCurrentWidget(view)
    table = view.table
    row = next(r for r in range(view.rows.rowCount()) if view.rows.text(r, 0) == ranks[7].log_path.name)
    metrics = table.fontMetrics()  # each column as wide as its longest text, the log names too
    assert all(table.columnWidth(c) >= metrics.horizontalAdvance(view.rows.text(r, c))
               for r in range(view.rows.rowCount()) for c in range(view.rows.columnCount()))
    table.scrollTo(view.rows.index(row, 1))
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     table.visualRect(view.rows.index(row, 1)).center())
    qtbot.waitUntil(lambda: window.model.unit is ranks[7].units[0], timeout=60_000)
