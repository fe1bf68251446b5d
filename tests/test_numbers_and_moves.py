"""Numbers as people read them (one formatter for the GUI and the text summary), and break sites
compared relative to each run's script folder so another checkout is not a "move"."""

from __future__ import annotations

from pathlib import Path

from inspector.core.analysis.run_diff import diff_breaks
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.compile_id import CompileId
from inspector.core.model.run_results import Manifest
from inspector.core.model.session import CompileUnit, Frame, GraphBreak, Rank, Session
from inspector.core.model.source_location import SourceLocation
from inspector.core.numbers import count, number, quantity, seconds


def test_times_pick_a_unit_and_never_an_exponent():
    assert seconds(4012.3) == "4,012 s"
    assert seconds(3.214) == "3.21 s"
    assert seconds(0.0123) == "12.3 ms"
    assert seconds(4.56e-5) == "45.6 µs"
    assert seconds(8.2e-7) == "820 ns"
    assert seconds(0) == "0 s" and seconds(None) == "—"


def test_counts_have_separators_and_the_right_noun():
    assert quantity(6270, "ops") == "6,270 ops"
    assert quantity(1, "calls") == "1 call"
    assert count(1, "unit") == "1 unit" and count(2, "unit") == "2 units"
    assert quantity(1.5e-3, "s/call") == "1.50 ms/call"
    assert quantity(0.302, "×") == "0.302×"
    assert number(1234567) == "1,234,567" and "e" not in number(98765.4)


def _run(root: str, line: int) -> SessionAnalysis:
    """A captured run of `root`/model.py with one data-dependent break at `line`."""
    where = SourceLocation(f"{root}/model.py", line, "forward", "if x.sum() > 0:")
    unit = CompileUnit(CompileId(0, 0), breaks=[GraphBreak(CompileId(0, 0), "data-dependent", where)])
    session = Session(Path(root) / "session", "capture", ranks=[Rank(None, [Frame(0, "forward", where, [unit])])],
                      manifest=Manifest(script=f"{root}/model.py"))
    return SessionAnalysis(session)


def test_same_file_and_line_in_another_checkout_is_not_a_move():
    same = diff_breaks(_run("/home/a/repo", 19), _run("/srv/ci/repo", 19))
    assert same["moved"] == [] and same["new"] == [] and same["fixed"] == []
    moved = diff_breaks(_run("/home/a/repo", 19), _run("/srv/ci/repo", 25))
    assert len(moved["moved"]) == 1
