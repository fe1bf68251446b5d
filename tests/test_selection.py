"""The selection every view follows, without Qt: a kernel brings its unit, choosing another unit drops
a kernel that is not its own, a new session starts at its first unit, and listeners hear each real
change once. Read on the bundled session, which has several units with kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.model.selection import Selection
from inspector.core.readers.session_loader import open_path

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"


@pytest.fixture(scope="module")
def session():
    return open_path(BUNDLED)


def _heard(selection: Selection) -> list:
    changes = []
    selection.subscribe(changes.append)
    return changes


def test_a_new_session_starts_at_its_first_unit_and_forgets_the_old_kernel(session):
    selection = Selection()
    changes = _heard(selection)
    selection.open(session)
    unit = next(u for u in session.units if u.kernels)
    selection.choose_kernel(unit, unit.kernels[0])
    selection.open(session)
    assert (selection.unit, selection.kernel) == (session.units[0], None)
    assert [c.what for c in changes][-1] == "unit" and changes[-1].kernel is None


def test_a_kernel_brings_its_unit_and_another_unit_drops_it(session):
    """A plot bar knows only a kernel's name: the kernel is looked for in the chosen unit first, then
    in the session's order (recompiles share kernel names)."""
    first = session.units[0]
    names_of_first = {kernel.name for kernel in first.kernels}
    second, kernel = next((unit, kernel) for unit in session.units for kernel in unit.kernels
                          if kernel.name not in names_of_first)  # the first unit that has it
    selection = Selection()
    selection.open(session)
    changes = _heard(selection)
    selection.choose_kernel_named(kernel.name)
    assert selection.unit is second and selection.kernel is kernel
    assert [c.what for c in changes] == ["unit", "kernel"]
    selection.choose_unit(second)  # already chosen: nothing to tell, the kernel stays
    assert len(changes) == 2 and selection.kernel is kernel
    selection.choose_unit(first)
    assert selection.kernel is None and changes[-1].unit is first


def test_a_compile_id_chooses_its_unit_on_the_asked_rank(session):
    selection = Selection()
    selection.open(session)
    target = session.units[-1]
    selection.choose_compile_id(target.compile_id, rank=target.rank)
    assert selection.unit is target
    selection.choose_compile_id(target.compile_id, rank=12345)  # no such rank: the choice stays
    assert selection.unit is target


def test_a_kernel_name_is_looked_for_in_the_chosen_unit_first(session):
    selection = Selection()
    selection.open(session)
    later = next(unit for unit in reversed(session.units) if unit.kernels)
    selection.choose_unit(later)
    selection.choose_kernel_named(later.kernels[0].name)  # earlier recompiles have a kernel of that name too
    assert selection.unit is later and selection.kernel is later.kernels[0]
