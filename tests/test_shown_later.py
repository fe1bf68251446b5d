"""A tab nobody has open takes an arriving session when it is opened (#27: the Timeline and the
Kernels charts cost the UI thread ~130 ms of the freeze as a 1,024-rank job arrived): what it then
shows is the open session's, never the previous one's, with what was selected meanwhile marked."""

from __future__ import annotations

from conftest import CUDA_LOG, ROOT, open_and_wait

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _top_stage(window) -> str:
    return next(iter(window.model.loaded.analysis.compile_time.self_s))


def test_a_hidden_tab_shows_the_session_opened_while_it_was_hidden(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    timeline = window.timeline_view
    window.tabs.setCurrentWidget(timeline)
    bundled_stage = _top_stage(window)
    assert timeline.totals.item(0, 0).text() == bundled_stage
    bundled_lanes = len(timeline.timeline.lanes)

    window.tabs.setCurrentWidget(window.summary_view)
    if not CUDA_LOG.exists():
        return
    open_and_wait(qtbot, window, CUDA_LOG)
    window.tabs.setCurrentWidget(timeline)  # shown: the session opened meanwhile, before it paints
    assert timeline.totals.item(0, 0).text() == _top_stage(window)
    assert len(timeline.timeline.lanes) == len(window.model.loaded.session.units) != bundled_lanes
    assert timeline.selected_lane() == timeline.lane_units.index(window.model.unit)  # the unit selected on open


def test_a_kernel_chosen_while_the_kernels_tab_was_hidden_is_marked_when_it_is_opened(qtbot, window, no_slot_errors):
    loaded = open_and_wait(qtbot, window, BUNDLED)
    plots = window.kernels_view
    name = next(row.name for row in loaded.kernel_time.kernels if row.events)
    window.model.select_kernel_named(name)  # from the Code tab, say
    window.tabs.setCurrentWidget(plots)
    assert plots.kernel_names and plots.selected == plots.kernel_names.index(name)
