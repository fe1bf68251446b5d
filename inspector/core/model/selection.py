"""What the user has picked in the open session — a compile unit and one of its kernels — as plain
state that tells its listeners when it changes. The app's views follow it through one Qt adapter;
the rules (a kernel brings its unit, a new session clears both) hold without a screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from inspector.core.model.compile_id import CompileId
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CompileUnit, Session


@dataclass(frozen=True)
class Change:
    """One change of the selection: `what` is "unit" or "kernel"; `unit` and `kernel` are the new
    state (a unit's change clears the kernel unless it is that kernel's unit)."""
    what: str
    unit: CompileUnit | None
    kernel: Kernel | None


class Selection:
    """The unit and kernel every view shows. Listeners are called in the order they subscribed, once
    per real change: choosing what is already chosen says nothing."""

    def __init__(self) -> None:
        self.session: Session | None = None
        self.unit: CompileUnit | None = None
        self.kernel: Kernel | None = None
        self._listeners: list[Callable[[Change], None]] = []

    def subscribe(self, listener: Callable[[Change], None]) -> None:
        self._listeners.append(listener)

    def open(self, session: Session | None, like: CompileUnit | None = None) -> None:
        """A new session: nothing of the previous one stays chosen; its unit of the rank and compile
        id of `like` (a unit of a preview of it) is chosen, else its first unit."""
        self.session, self.unit, self.kernel = session, None, None
        units = session.units if session else []
        same = next((unit for unit in units if like is not None and unit.rank == like.rank
                     and unit.compile_id.unit_key == like.compile_id.unit_key), None)
        self.choose_unit(same or (units[0] if units else None), force=True)

    def choose_unit(self, unit: CompileUnit | None, force: bool = False) -> None:
        if unit is self.unit and not force:
            return
        self.unit = unit
        if self.kernel is not None and (unit is None or not any(k is self.kernel for k in unit.kernels)):
            self.kernel = None  # a kernel of another unit is no longer what the views show
        self._tell(Change("unit", unit, self.kernel))

    def choose_compile_id(self, compile_id: CompileId | None, rank: int | None = None) -> None:
        """The unit with that compile id (any attempt) on `rank`, or on any rank when it is None."""
        if self.session is None or compile_id is None:
            return
        unit = next((unit for unit in self.session.units if unit.compile_id.unit_key == compile_id.unit_key
                     and (rank is None or unit.rank == rank)), None)
        if unit is not None:
            self.choose_unit(unit)

    def choose_kernel(self, unit: CompileUnit, kernel: Kernel) -> None:
        """`kernel` of `unit`: its unit becomes the chosen unit too."""
        self.choose_unit(unit)
        self.kernel = kernel
        self._tell(Change("kernel", unit, kernel))

    def choose_kernel_named(self, name: str) -> None:
        """The first kernel called `name` (all a plot bar knows), looked for in the chosen unit first."""
        if self.session is None:
            return
        for unit in ([self.unit] if self.unit else []) + self.session.units:
            kernel = next((kernel for kernel in unit.kernels if kernel.name == name), None)
            if kernel is not None:
                self.choose_kernel(unit, kernel)
                return

    def _tell(self, change: Change) -> None:
        for listener in self._listeners:
            listener(change)
