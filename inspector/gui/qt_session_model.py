"""The app's one model: the open session, its summary and problems, and the selection every view
follows. Built by a worker off the UI thread; views subscribe to its signals."""

from __future__ import annotations

import gc
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.analysis.kernel_index import KernelTime, kernel_times
from inspector.core.analysis.problems import Problem, find_problems
from inspector.core.model.session import CompileUnit, Session
from inspector.core.readers.session_loader import close_session, open_session
from inspector.core.outputs.summary import summarize


@dataclass(frozen=True)
class LoadedSession:
    """Everything the views need, computed in the worker so the UI thread only displays it."""

    session: Session
    summary: dict
    problems: list[Problem]
    kernel_times: dict[str, KernelTime]


def load_session(path: Path) -> LoadedSession:
    """Runs on a worker thread. The cyclic garbage collector is paused meanwhile: a full collection
    over the hundreds of thousands of objects a big log makes holds the GIL for 100+ ms, which the
    UI thread would feel as a freeze. The session's objects are then frozen out of later collections."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        session = open_session(path)
        loaded = LoadedSession(session, summarize(session), find_problems(session), kernel_times(session))
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
    return loaded


class QtSessionModel(QObject):
    sigLoading = Signal(str)  # path being opened
    sigLoaded = Signal(object)  # LoadedSession
    sigLoadFailed = Signal(str, str)  # path, message
    sigUnitSelected = Signal(object)  # CompileUnit or None
    sigLocationRequested = Signal(str, int)  # file, line
    sigKernelSelected = Signal(object, object)  # CompileUnit, Kernel

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.loaded: LoadedSession | None = None
        self.unit: CompileUnit | None = None
        self.kernel = None

    def set_loaded(self, loaded: LoadedSession) -> None:
        if self.loaded is not None and self.loaded.session is not loaded.session:
            close_session(self.loaded.session)  # a bundle's extracted folder goes with it
        self.loaded = loaded
        self.unit = None
        self.sigLoaded.emit(loaded)
        units = loaded.session.units
        self.select_unit(units[0] if units else None)

    def select_unit(self, unit: CompileUnit | None) -> None:
        if unit is self.unit and unit is not None:
            return
        self.unit = unit
        self.sigUnitSelected.emit(unit)

    def select_compile_id(self, compile_id, rank=None) -> None:
        if not self.loaded or compile_id is None:
            return
        for unit in self.loaded.session.units:
            if unit.compile_id.unit_key == compile_id.unit_key and (rank is None or unit.rank == rank):
                self.select_unit(unit)
                return

    def select_kernel(self, unit: CompileUnit, kernel) -> None:
        """Select `kernel` of `unit` in every view (its unit becomes the selected unit too)."""
        self.select_unit(unit)
        self.kernel = kernel
        self.sigKernelSelected.emit(unit, kernel)

    def select_kernel_named(self, name: str) -> None:
        """Select the first kernel called `name` (what a plot bar knows), in the current unit first."""
        if not self.loaded:
            return
        units = ([self.unit] if self.unit else []) + self.loaded.session.units
        for unit in units:
            for kernel in unit.kernels:
                if kernel.name == name:
                    self.select_kernel(unit, kernel)
                    return

    def show_location(self, file: str | None, line: int | None) -> None:
        if file:
            self.sigLocationRequested.emit(file, line or 0)
