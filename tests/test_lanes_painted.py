"""Lanes, read off the pixels the real window paints: in the Ranks tab a rank's back-to-back
compile units are told apart once zoomed in (still merged zoomed out) and the hover names the unit
under the mouse; a rank whose compile failed or was cut off shows that compile outlined in red, and a
rank with no compile a hatched lane with a note; in the Timeline tab an event marker never covers a
bar's label. Real logs (the public 4-rank corpus, one of its logs cut short as a crashed rank's is,
the bundled capture), under an exception hook that fails a test on any exception in a slot."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF  # noqa: E402
from PySide6.QtGui import QColor, QImage  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from conftest import MULTI_RANK, open_and_wait  # noqa: E402

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"
ORANGE, RED = QColor("#d9822b"), QColor("#d64545")
CUT_AT_LINE = 250  # rank 3's log ends here inside its first compile, 5.1 s in: the rank crashed
NO_COMPILE_LINES = 27  # the lines of rank 3's log before its first dynamo_start


def near(pixel: QColor, colour: QColor, tolerance: int = 40) -> bool:
    return max(abs(pixel.red() - colour.red()), abs(pixel.green() - colour.green()),
               abs(pixel.blue() - colour.blue())) <= tolerance


def to_pixel(plot, x: float, y: float) -> QPoint:
    """A point of the plot's data in its viewport's pixels (where a mouse or a grab sees it)."""
    return plot.mapFromScene(plot.getViewBox().mapViewToScene(QPointF(x, y)))


def painted(plot) -> QImage:
    plot.viewport().repaint()
    return plot.viewport().grab().toImage()


def runs(image: QImage, y: int, first: int, last: int, colour: QColor) -> int:
    """How many separate stretches of `colour` a row of pixels crosses from `first` to `last`."""
    count, inside = 0, False
    for x in range(first, last + 1):
        now = near(image.pixelColor(x, y), colour)
        count += now and not inside
        inside = now
    return count


def share(image: QImage, left: int, top: int, right: int, bottom: int, test) -> float:
    """The share of the pixels of a rectangle for which `test(colour)` holds."""
    pixels = [image.pixelColor(x, y) for x in range(left, right) for y in range(top, bottom)]
    return sum(map(test, pixels)) / max(1, len(pixels))


def hover(qtbot, lanes, point: QPoint, expected: str) -> str:
    lanes.hover_text = ""
    QTest.mouseMove(lanes.plot.viewport(), point + QPoint(1, 0))
    QTest.mouseMove(lanes.plot.viewport(), point)
    qtbot.waitUntil(lambda: expected in lanes.hover_text, timeout=60_000)
    return lanes.hover_text


def show_lanes(qtbot, window, path: Path):
    window.resize(1400, 900)
    open_and_wait(qtbot, window, path)
    view = window.ranks_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(view.lanes.plot.isVisible, timeout=60_000)
    return view.lanes


def zoom(qtbot, plot, start: float, end: float) -> None:
    plot.setXRange(start, end, padding=0)
    qtbot.waitUntil(lambda: abs(plot.getViewBox().viewRange()[0][0] - start) < 1e-9, timeout=10_000)


@pytest.fixture
def corpus_job():
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    return MULTI_RANK


@pytest.fixture
def crashed_job(corpus_job, tmp_path) -> Path:
    """Rank 1 whole, rank 3 cut off inside its first compile, rank 2 cut off before any compile."""
    job = tmp_path / "job"
    job.mkdir()
    shutil.copy(corpus_job / "dedicated_log_torch_trace_rank_1.log", job)
    lines = (corpus_job / "dedicated_log_torch_trace_rank_3.log").read_text(encoding="utf-8").splitlines(keepends=True)
    (job / "dedicated_log_torch_trace_rank_3.log").write_text("".join(lines[:CUT_AT_LINE]), encoding="utf-8")
    (job / "dedicated_log_torch_trace_rank_2.log").write_text("".join(lines[:NO_COMPILE_LINES]), encoding="utf-8")
    return job


# --- 1. back-to-back units -------------------------------------------------------------------------
def test_back_to_back_units_are_told_apart_zoomed_in_and_merged_zoomed_out(qtbot, window, no_slot_errors, corpus_job):
    lanes = show_lanes(qtbot, window, corpus_job)
    timeline, plot = lanes.timeline, lanes.plot
    rank1 = sorted((bar for bar in timeline.bars if timeline.lane_ranks[bar.lane] == 1), key=lambda bar: bar.start_s)
    assert len(rank1) == 15 and all(bar.step == "differs" for bar in rank1)  # orange, each 1-2 ms after the last
    tail = rank1[10:]  # [0/10] … [0/14], ~0.37 s each
    zoom(qtbot, plot, tail[0].start_s, tail[-1].end_s)
    image = painted(plot)
    y = to_pixel(plot, 0, 1.15).y()  # above the labels' text
    first, last = (to_pixel(plot, x, 0).x() for x in (tail[0].start_s, tail[-1].end_s))
    assert runs(image, y, first, last - 1, ORANGE) == 5  # one bar per unit, not one long bar

    hover_at = to_pixel(plot, (tail[2].start_s + tail[2].end_s) / 2, 1.5)
    assert "rank 1 [0/12]" in hover(qtbot, lanes, hover_at, "[0/12]")
    assert "unit 13 of 15 of this rank" in lanes.hover_text

    zoom(qtbot, plot, 0.0, timeline.end_s)  # zoomed out: the tiny units [0/1] … [0/9] merge
    image = painted(plot)
    first, last = (to_pixel(plot, x, 0).x() for x in (rank1[0].start_s, rank1[-1].end_s))
    assert 2 < runs(image, y, first, last - 1, ORANGE) < 15
    gap = (rank1[3].end_s + rank1[4].start_s) / 2  # between two of them, under a pixel wide
    assert rank1[4].start_s - rank1[3].end_s < plot.getViewBox().viewPixelSize()[0]
    assert "rank 1 [0/" in hover(qtbot, lanes, to_pixel(plot, gap, 1.5), "rank 1 [0/")


# --- 2. failed, cut off, nothing ----------------------------------------------------------------------
def red_outline_share(plot, image: QImage, bar) -> float:
    start, end = to_pixel(plot, bar.start_s, bar.lane), to_pixel(plot, bar.end_s, bar.lane + 1)
    return share(image, start.x() - 2, start.y(), end.x() + 3, end.y(), lambda colour: near(colour, RED))


def test_a_failed_compile_is_drawn_outlined_in_red_with_a_hover_that_says_so(qtbot, window, no_slot_errors, corpus_job):
    lanes = show_lanes(qtbot, window, corpus_job)
    timeline, plot = lanes.timeline, lanes.plot
    failed = {timeline.lane_ranks[bar.lane]: bar for bar in timeline.bars if bar.is_open}
    assert sorted(failed) == [0, 2]  # their [0/0] failed; the metrics of a failed frame carry no start or time
    bar = failed[0]
    assert bar.compile_id == "[0/0]" and bar.start_s == 0.0 and bar.end_s == pytest.approx(0.163, abs=0.001)
    zoom(qtbot, plot, 0.0, 0.5)
    assert red_outline_share(plot, painted(plot), bar) > 0.05
    text = hover(qtbot, lanes, to_pixel(plot, bar.end_s / 2, bar.lane + 0.5), "rank 0 [0/0]")
    assert "the compile failed" in text and "unit 1 of 1" in text


def test_a_crashed_rank_shows_its_cut_off_compile_and_a_rank_with_none_says_so(
        qtbot, window, no_slot_errors, crashed_job):
    lanes = show_lanes(qtbot, window, crashed_job)
    timeline, plot = lanes.timeline, lanes.plot
    assert timeline.lanes == ["rank 1", "rank 2", "rank 3"]
    cut = [bar for bar in timeline.bars if timeline.lane_ranks[bar.lane] == 3]
    assert [(bar.compile_id, bar.is_open) for bar in cut] == [("[0/0]", True)]
    assert cut[0].end_s == pytest.approx(5.13, abs=0.01)  # up to its last event
    image = painted(plot)
    assert red_outline_share(plot, image, cut[0]) > 0.01
    text = hover(qtbot, lanes, to_pixel(plot, cut[0].end_s / 2, cut[0].lane + 0.5), "rank 3 [0/0]")
    assert "the log ends inside this compile" in text

    # rank 2: no bar, a hatched lane with its note at the left
    assert not [bar for bar in timeline.bars if bar.lane == 1]
    top_left, bottom_right = to_pixel(plot, 0.0, 1.1), to_pixel(plot, timeline.end_s, 1.9)
    background = plot.backgroundBrush().color()
    hatched = share(image, top_left.x() + 200, top_left.y(), bottom_right.x(), bottom_right.y(),
                    lambda colour: not near(colour, background, 8))
    assert hatched > 0.05
    ink = lanes.palette().text().color()
    written = share(image, top_left.x(), top_left.y(), top_left.x() + 150, bottom_right.y(),
                    lambda colour: near(colour, ink, 60))
    assert written > 0.02
    text = hover(qtbot, lanes, to_pixel(plot, timeline.end_s / 2, 1.5), "rank 2")
    assert "no compile recorded" in text and "never ran on this rank" in text

    # the legend says what hatching means, and is read whole at 1280×720
    legend = next(label for label in lanes.findChildren(QLabel) if label.text().startswith("Grey"))
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=10_000)
    assert "hatched: nothing recorded" in legend.text()
    assert legend.contentsRect().width() >= legend.fontMetrics().horizontalAdvance(legend.text())


# --- 3. markers and labels ------------------------------------------------------------------------------
def test_an_event_marker_never_covers_a_bar_label(qtbot, window, no_slot_errors):
    window.resize(1920, 1080)
    open_and_wait(qtbot, window, BUNDLED)
    view = window.timeline_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(view.plot.isVisible, timeout=60_000)
    window.problems_dock.hide()  # rows tall enough for labels
    timeline, plot = view.timeline, view.plot
    lane, t, _name = timeline.markers[0]  # [0/0]'s autograd cache miss, 0.38 s into its 14.8 s "dynamo" stage
    bar = next(b for b in timeline.bars if b.lane == lane and b.depth == 0 and b.start_s <= t <= b.end_s)
    width = plot.getViewBox().width()
    zoom(qtbot, plot, bar.start_s, bar.start_s + (t - bar.start_s) * width / 12)  # the marker 12 px into the bar
    qtbot.waitUntil(lambda: abs(plot.getViewBox().mapViewToDevice(QPointF(0, 0)).y()
                                - plot.getViewBox().mapViewToDevice(QPointF(0, 1)).y())
                    >= plot.fontMetrics().height(), timeout=10_000)
    image = painted(plot)
    centre = to_pixel(plot, t, lane * timeline.depth + 0.5)
    reach = int(view.markers.opts["size"]) // 2 + 1  # the diamond's half, and a pixel
    white = lambda colour: min(colour.red(), colour.green(), colour.blue()) > 170  # noqa: E731 (the labels' ink)
    assert share(image, centre.x() - reach, centre.y() - reach, centre.x() + reach + 1, centre.y() + reach + 1,
                 white) == 0  # no label's text under or around the diamond
    after = share(image, centre.x() + reach, centre.y() - reach, centre.x() + 120, centre.y() + reach + 1, white)
    assert after > 0.02  # the label is there, moved clear of the marker
