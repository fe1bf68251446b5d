"""An opened session reaches the views one per turn of the event loop (#27: on a 1,024-rank job they
took ~150 ms together, one freeze): the app answers input between them, `sigLoaded` comes once every
view shows the session, and a session opened while an earlier one is still on its way wins."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QTimer  # noqa: E402

from conftest import MULTI_RANK, ROOT  # noqa: E402
from inspector.core.readers.sources import detect  # noqa: E402
from inspector.gui.qt_session_model import load_session  # noqa: E402

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_the_event_loop_runs_between_one_view_taking_the_session_and_the_next(qtbot, window, no_slot_errors):
    """A timer that fires on every turn of the event loop (as input would be handled) fires between
    any two views taking the session, after the first (which takes it in the turn that set it); the
    selection and sigLoaded come after the last view."""
    loaded = load_session(detect(BUNDLED))
    happened: list[str] = []
    every_turn = QTimer()
    every_turn.timeout.connect(lambda: happened.append("turn"))
    for place, take in enumerate(window.model._views):
        window.model._views[place] = lambda loaded, take=take, place=place: (happened.append(f"view {place}"),
                                                                             take(loaded))[1]
    window.model.sigUnitSelected.connect(lambda _unit: happened.append("selected"))
    every_turn.start(0)
    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000):
        window.model.set_loaded(loaded)
    every_turn.stop()
    views = [event for event in happened if event.startswith("view")]
    assert views == [f"view {place}" for place in range(len(window.model._views))] and len(views) >= 8
    places = [happened.index(view) for view in views][1:]  # the first takes it in the turn that set it
    assert all("turn" in happened[a:b] for a, b in zip(places, places[1:]))
    assert happened.index("selected") > places[-1]
    assert window.navigator.topLevelItem(0).text(0) == "forward"  # what the views show is the session's


def test_a_session_opened_while_another_is_handed_to_the_views_wins(qtbot, window, no_slot_errors):
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    first, second = load_session(detect(BUNDLED)), load_session(detect(MULTI_RANK))
    arrived = []
    window.model.sigLoaded.connect(arrived.append)
    window.model.set_loaded(first)  # the first view has it; the others would take it on later turns
    assert window.model.handing
    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000):
        window.model.set_loaded(second)
    assert arrived == [second] and not window.model.handing
    assert window.model.unit is second.session.ranks[0].units[0]
    navigator = window.navigator
    assert [navigator.topLevelItem(i).text(0).split("  ")[0] for i in range(navigator.topLevelItemCount())] == [
        rank.label for rank in second.session.ranks]
    assert window.ranks_view.rows.rowCount() == len(second.session.ranks)
    assert (window.problems_view.rank_filter.isVisibleTo(window)
            and window.problems_view.topLevelItemCount() == len(second.issues))


def test_the_problems_list_fills_in_steps_and_a_rank_chosen_meanwhile_filters_the_rest(qtbot, window, no_slot_errors,
                                                                                        monkeypatch):
    """Problems takes a big job's rows ROWS_A_TURN at a time; every row is there by sigLoaded, and a
    rank chosen in the filter while rows were still coming hides the other ranks' later rows too."""
    from inspector.gui.views import qt_problems

    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    monkeypatch.setattr(qt_problems, "ROWS_A_TURN", 2)
    loaded = load_session(detect(MULTI_RANK))
    problems = window.problems_view
    steps = problems._on_loaded(loaded)
    next(steps)  # the filter is ready, no row yet
    assert problems.topLevelItemCount() == 0 and problems.rank_filter.count() == 1 + len(loaded.session.ranks)
    next(steps)
    assert problems.topLevelItemCount() == 2
    problems.rank_filter.setCurrentIndex(problems.rank_filter.findText("rank 1"))
    for _ in steps:
        pass
    rows = [problems.topLevelItem(i) for i in range(problems.topLevelItemCount())]
    assert len(rows) == len(loaded.issues) > 4
    assert all(row.isHidden() == (1 not in row.data(0, qt_problems.PROBLEM_ROLE).ranks) for row in rows)
    assert any(row.isHidden() for row in rows[2:]) and any(not row.isHidden() for row in rows[2:])

    with qtbot.waitSignal(window.model.sigLoaded, timeout=60_000):  # through the app: whole when it says so
        window.model.set_loaded(loaded)
    assert problems.topLevelItemCount() == len(loaded.issues) and problems.shown_rank() is None
