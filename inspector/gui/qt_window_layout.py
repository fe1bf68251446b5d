"""The main window's place on the screen and the layout of its docks: a default size that fits the
screen it opens on, dock sizes that give the tabs the room, a bottom panel as tall as the session's
problems, and the layout the user leaves, restored at the next start. Apart from the window's wiring
(qt_main_window.py), which only says when."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow

from inspector.gui.qt_background import next_turn

DEFAULT_WIDTH, DEFAULT_HEIGHT = 1400, 900  # the window's size where the screen has room for it
SCREEN_SHARE = 0.9  # a screen whose free area the default size fills less than this opens maximised
BOTTOM_ROWS = 10  # the most problem rows the bottom panel grows to show before it scrolls
LAYOUT_VERSION = 2  # bump when docks change, so an old saved layout is not restored onto new docks


class QtWindowLayout(QMainWindow):
    """The layout half of the main window; the window sets the docks and views it sizes
    (`session_dock`, `problems_dock`, `problems_view`, `stages_dock`) and `settings`."""

    def _default_sizes(self) -> None:
        """The tabs first: a Session column a quarter of the width (a resume frame's name fits at 1280), the
        bottom panel a fifth of the height."""
        width, height = max(self.width(), 1000), max(self.height(), 600)
        self.resizeDocks([self.session_dock], [max(240, min(420, width // 4))], Qt.Orientation.Horizontal)
        self.resizeDocks([self.problems_dock], [max(120, height // 5)], Qt.Orientation.Vertical)

    def _screen_area(self):
        """The free area (without panels and docks) of the screen the window opens on."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else None

    def _fit_screen(self) -> None:
        """The default size: 1400×900 where the screen has more room, else the screen's whole free area
        (and `fill_screen` asks the app to show it maximised: a 1280×720 laptop needs every pixel)."""
        area = self._screen_area()
        self.fill_screen = False
        if area is None or area.isEmpty():
            self.resize(DEFAULT_WIDTH, DEFAULT_HEIGHT)
            return
        self.fill_screen = area.width() < DEFAULT_WIDTH / SCREEN_SHARE or area.height() < DEFAULT_HEIGHT / SCREEN_SHARE
        width, height = (area.width(), area.height()) if self.fill_screen else (DEFAULT_WIDTH, DEFAULT_HEIGHT)
        self.resize(width, height)
        self.move(area.left() + (area.width() - width) // 2, area.top() + (area.height() - height) // 2)

    def _frame_inside_screen(self) -> None:
        area, frame = self._screen_area(), self.frameGeometry()
        if area is None or area.contains(frame):
            return
        extra_w, extra_h = max(0, frame.width() - area.width()), max(0, frame.height() - area.height())
        self.resize(self.width() - extra_w, self.height() - extra_h)
        self.move(area.topLeft())

    def _fits_screen(self) -> bool:
        area = self._screen_area()
        return area is None or area.isEmpty() or (self.width() <= area.width() and self.height() <= area.height())

    def _restore_layout(self) -> None:
        store = self.settings.store
        geometry, state = store.value("window/geometry"), store.value("window/state")
        if isinstance(geometry, QByteArray):  # the saved size wins where it fits this screen
            if not self.restoreGeometry(geometry) or not self._fits_screen():
                self._fit_screen()
        self.restored = isinstance(state, QByteArray) and self.restoreState(state, LAYOUT_VERSION)
        self.stages_dock.hide()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.fill_screen and not self.isMaximized():  # the window's frame inside the free area too
            self._frame_inside_screen()
        if not self.restored and not getattr(self, "_sized", False):
            self._sized = True  # docks size against the real window once it is on screen
            next_turn(self, self._default_sizes)

    def save_layout(self) -> None:
        self.settings.store.setValue("window/geometry", self.saveGeometry())
        self.settings.store.setValue("window/state", self.saveState(LAYOUT_VERSION))

    def _fit_bottom_panel(self, problems: int) -> None:
        """The bottom panel as tall as the session's problems need (each on a row), between a sixth
        and a third of the window: six problems do not scroll in five rows, and a clean run gives
        the room back to the tabs."""
        rows = max(1, min(problems, BOTTOM_ROWS))
        row = self.problems_view.sizeHintForRow(0) if self.problems_view.topLevelItemCount() else 0
        row = max(row, self.problems_view.fontMetrics().height() + 4)
        wanted = self.problems_view.header().height() + rows * row + 2 * self.problems_view.frameWidth() + 30
        height = max(self.height() // 6, min(wanted, self.height() // 3))
        self.resizeDocks([self.problems_dock], [height], Qt.Orientation.Vertical)
