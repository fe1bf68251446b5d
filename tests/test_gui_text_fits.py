"""Text the user reads is whole where the window has room for it, at 1280×720: a figure's formula and
source in the Summary table, a column's heading in the GPU tab. Measured as Qt draws it: the text
wrapped (or not) to the width its cell or section gives it, in the view's own font."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QStyle  # noqa: E402

from conftest import background_settled, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _text_margin(view) -> int:
    """The room a cell leaves on each side of its text (the style's focus frame, as Qt's item views draw)."""
    return view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, view) + 1


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_every_summary_figure_shows_its_whole_formula_and_source(qtbot, window, size):
    """The S_max row's source ("not stated: inputs too noisy — the profiles' own speedup …") ran to five
    lines at 1280 and was cut after two with "…"; each row is now as tall as its longest cell."""
    window.resize(*size)
    open_and_wait(qtbot, window, BUNDLED)
    background_settled(qtbot)
    table = window.summary_view.table
    assert table.rowCount() >= 10 and not _cut_cells(table)


def _cut_cells(table) -> list[tuple[str, int, int, int]]:
    """(first cell of the row, column, height its text needs, the row's height) of each cell whose text,
    wrapped to its column, is taller than its row."""
    metrics, margin = table.fontMetrics(), _text_margin(table)
    cut = []
    for row in range(table.rowCount()):
        for column in range(table.columnCount()):
            text = table.item(row, column).text()
            room = QRect(0, 0, table.columnWidth(column) - 2 * margin, 100_000)
            needed = metrics.boundingRect(room, int(Qt.TextFlag.TextWordWrap), text).height()
            if needed > table.rowHeight(row):
                cut.append((table.item(row, 0).text(), column, needed, table.rowHeight(row)))
    return cut


def test_a_units_symbols_and_their_lines_are_shown_whole_in_shapes(qtbot, window):
    """[0/1]'s symbol ("s77 = 16, range [2, 32] as its guards refined it … sizes 0 and 1 get graphs of their
    own") and the user's line it stands for were cut after two lines at 1280×720."""
    window.resize(1280, 720)
    loaded = open_and_wait(qtbot, window, BUNDLED)
    window.model.select_unit(next(unit for unit in loaded.session.units if str(unit.compile_id) == "[0/1]"))
    window.tabs.setCurrentWidget(window.shapes_view)
    table = window.shapes_view.table
    qtbot.waitUntil(lambda: table.isVisible() and table.rowCount() > 0, timeout=10_000)
    background_settled(qtbot)
    assert not _cut_cells(table)


def test_a_guard_of_a_megabyte_is_shown_by_its_start_in_a_row_that_fits_the_pane(qtbot, window):
    """A row as tall as its whole text made a 1.2 MB guard a row of 326,551 px that took a second to lay
    out at each resize: the cell shows its start and says how much more there is, and where it is whole."""
    from inspector.core.analysis.shapes import ShapeEvent

    window.resize(1280, 720)
    loaded = open_and_wait(qtbot, window, BUNDLED)
    unit = next(unit for unit in loaded.session.units if str(unit.compile_id) == "[0/1]")
    view = window.shapes_view
    guard = "Eq(" + " + ".join(f"s{i}*s{i + 1}" for i in range(100_000)) + ", 0)"
    view._by_unit[unit] = [ShapeEvent("guard", None, None, None, guard, None, None, None)]
    window.model.select_unit(unit)
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.table.isVisible() and view.table.rowCount() == 1, timeout=10_000)
    shown = view.table.item(0, 2).text()
    assert shown.startswith(guard[:500]) and f"{len(guard) - 600:,} more characters" in shown
    assert view.table.rowHeight(0) < view.table.viewport().height()
    assert len(view.table.item(0, 2).toolTip()) < 20_000


def _cut_headings(view) -> list[tuple[str, int, int]]:
    """(heading, its width, its section's width) of each visible table's column too narrow for its heading."""
    from PySide6.QtWidgets import QTableWidget

    cut = []
    for table in view.findChildren(QTableWidget):
        if not table.isVisible():
            continue
        header = table.horizontalHeader()
        for column in range(table.columnCount()):
            if table.isColumnHidden(column):
                continue
            heading = table.horizontalHeaderItem(column).text()
            needed = header.fontMetrics().horizontalAdvance(heading) + 2 * _text_margin(header)
            if header.sectionSize(column) < needed:
                cut.append((heading, needed, header.sectionSize(column)))
    return cut


def test_the_gpu_tabs_column_headings_are_whole_beside_the_session_tree(qtbot, window):
    """The module table beside the source lines showed "asured / apportio" at 1280×720."""
    window.resize(1280, 720)
    open_and_wait(qtbot, window, BUNDLED)
    window.reset_layout()
    window.tabs.setCurrentWidget(window.gpu_view)
    qtbot.waitUntil(lambda: window.gpu_view.modules.isVisible() and window.gpu_view.modules.rowCount() > 0,
                    timeout=60_000)
    background_settled(qtbot)
    assert not _cut_headings(window.gpu_view)


def test_beside_a_trace_opened_alone_the_docks_say_why_they_are_empty_in_words_that_fit(qtbot, window):
    """A tritonparse trace opens in the GPU tab alone: the Session tree was a blank pane and the Problems
    pane's explanation was cut at "A tritonparse or profiler trace …"."""
    from conftest import CORPUS
    from inspector.gui.views.qt_navigator import NO_RUN
    from inspector.gui.views.qt_problems import NOTHING_OPEN

    trace = CORPUS.parent / "tritonparse-traces" / "dedicated_log_triton_trace_findhao_.ndjson"
    if not trace.exists():
        pytest.skip(f"{trace} is not present beside this checkout")
    # as wide as the pane's text and a little more (1280 under X11's fonts): the Problem column alone is narrower
    window.resize(window.problems_view.fontMetrics().horizontalAdvance(NOTHING_OPEN) + 80, 720)
    window.reset_layout()
    with qtbot.waitSignal(window.sigOpened, timeout=60_000):
        window.open_path(trace)
    background_settled(qtbot)
    for tree, text in ((window.problems_view, NOTHING_OPEN), (window.navigator, NO_RUN)):
        item = tree.topLevelItem(0)
        assert tree.topLevelItemCount() == 1 and item.text(0) == text
        margin = _text_margin(tree)
        needed = tree.fontMetrics().horizontalAdvance(text) + 2 * margin
        shown = tree.visualRect(tree.indexFromItem(item, 0)).width()  # its cell: the row's width once spanned
        assert shown >= needed, (text, shown, needed)


def test_the_code_tabs_kernel_names_keep_the_part_that_tells_them_apart(qtbot, window):
    """At 1280×720 the GPU log's kernels read `triton...moid_0`, `triton..._mul_1`: elided in the middle,
    which cut the ops out of the name. The start every Triton kernel shares goes first instead."""
    from conftest import CUDA_LOG

    if not CUDA_LOG.exists():
        pytest.skip(f"{CUDA_LOG} is not present beside this checkout")
    window.resize(1280, 720)
    window.reset_layout()
    open_and_wait(qtbot, window, CUDA_LOG)
    code = window.code_view
    window.tabs.setCurrentWidget(code)
    qtbot.waitUntil(lambda: code.outline.rowCount() > 0, timeout=60_000)
    background_settled(qtbot)
    outline = code.outline
    metrics, room = outline.fontMetrics(), outline.columnWidth(0) - 2 * _text_margin(outline)
    names = [outline.item(row, 0).text() for row in range(outline.rowCount())]
    shown = [metrics.elidedText(name, outline.textElideMode(), room) for name in names]
    assert shown != names, "the names fit whole: not the case this test is for"
    for name, text in zip(names, shown):  # the op last fused and the kernel's number are on show
        assert name.rsplit("_", 2)[-2] in text or text == name or name.startswith("extern"), (name, text)


def test_a_trace_opened_alone_is_named_in_the_window_title(qtbot, window):
    """The title said only "torch.compile Inspector" over a tritonparse trace, a profile or an XLA dump."""
    from conftest import CORPUS

    trace = CORPUS.parent / "hta-traces" / "triton_example.json.gz"
    if not trace.exists():
        pytest.skip(f"{trace} is not present beside this checkout")
    with qtbot.waitSignal(window.sigOpened, timeout=60_000):
        window.open_path(trace)
    assert window.windowTitle().startswith("triton_example.json.gz — ")


def test_a_diff_without_differences_says_so_whole_beside_the_graphs(qtbot, window):
    """The run compared with its own log: the list of differences said "No differences: the two graphs
    match …", cut at 1280×720."""
    from inspector.gui.views.qt_diff_view import NO_DIFFERENCES

    window.resize(1280, 720)
    window.reset_layout()
    open_and_wait(qtbot, window, BUNDLED)
    window.compare_with(BUNDLED / "trace")
    listed = window.diff_view.differences
    qtbot.waitUntil(lambda: listed.isVisible() and listed.count() > 0, timeout=60_000)
    background_settled(qtbot)
    item = listed.item(0)
    assert listed.count() == 1 and item.text() == NO_DIFFERENCES
    needed = listed.fontMetrics().horizontalAdvance(item.text()) + 2 * _text_margin(listed)
    assert listed.visualItemRect(item).width() >= needed
