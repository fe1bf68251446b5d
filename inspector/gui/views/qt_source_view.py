"""Source view: the user's script with graph-break and recompile markers in the gutter. A session
names the file, so it is read through the safe-read layer (bounded, regular files only) and off the
UI thread: whatever a session names, the window never waits on it. A capture's copy of the file is
shown where it has one (the lines the markers were made on), and a notice says whether the file on
disk has changed since, or that a log's file is read from disk now."""

from __future__ import annotations

from pathlib import Path

from inspector.core.readers.safe_files import is_readable_file
from inspector.core.readers.source_snapshot import CAPTURED, ON_DISK, SourceText, captured_sources, source_text
from inspector.gui.code_highlight import LazyHighlighter
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_code_editor import QtCodeEditor
from inspector.gui.views.qt_source_notice import QtSourceNotice

PLACEHOLDER = "The model's source appears here once a session is open."


def _read_and_lex(file: str, folder: Path | None, copies: dict[str, Path],
                  prefer: str) -> tuple[str | None, str | None, LazyHighlighter | None, SourceText]:
    """On a worker: the file's text (or why not), its highlighting, lexed there, and where it came from."""
    shown = source_text(file, folder, copies, prefer)
    text = shown.text
    highlighter = LazyHighlighter.for_text(text, "python").lexed_ahead() if text is not None else None
    return text, shown.why_not, highlighter, shown


class QtSourceView(QtCodeEditor):
    notice: QtSourceNotice | None = None  # None while the editor is built

    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.path: str | None = None
        self.folder: Path | None = None  # the session folder: files inside it are always shown
        self.markers_by_file: dict[str, dict[int, tuple[str, str]]] = {}
        self._reads = LatestRequest(self)
        self._line_when_read: int | None = None  # the line to show once the file on its way arrives
        self.copies: dict[str, Path] = {}  # the capture's copies of the user's files
        self.prefer = CAPTURED  # which text of a changed file to show; the notice's button flips it
        self.shown: SourceText | None = None
        self.notice = QtSourceNotice(self)
        self.notice.sigShowOther.connect(self._on_show_other)
        self.setPlaceholderText(PLACEHOLDER)
        model.on_each_session(self._on_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)
        model.sigLocationRequested.connect(self.show_location)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name; a scroll area's is its viewport's)
        super().resizeEvent(event)
        if self.notice is not None:
            self.notice.follow_viewport()

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.markers_by_file = loaded.analysis.source_marks
        self.path = None
        source = Path(loaded.session.source)
        self.folder = loaded.session.extracted_to or (source if source.is_dir() else None)
        self.copies, self.prefer = captured_sources(self.folder), CAPTURED
        script = loaded.session.manifest.script if loaded.session.manifest is not None else None
        first = next((f for f in self.markers_by_file if is_readable_file(f)), None)
        self.show_location(script or first or "", 0)

    def _on_unit_selected(self, unit) -> None:
        """The unit's line, in its file (read if another is on show; scrolled to if it is the same)."""
        if unit is not None and unit.location:
            self.show_location(unit.location.file, unit.location.line or 0)

    def show_location(self, file: str, line: int) -> None:
        if file == self.path:
            if self._line_when_read is not None:
                self._line_when_read = line
            elif line > 0:
                self.go_to_line(line)
            return
        self.path, folder, self._line_when_read = file, self.folder, line
        copies, prefer = self.copies, self.prefer
        self._reads.run(lambda: _read_and_lex(file, folder, copies, prefer),
                        lambda result: self._show_source(file, *result),
                        lambda message, _tb: self._show_source(file, None, f"{file}\n\nNot shown: {message}"))

    def _on_show_other(self) -> None:
        """The notice's button: the other text of the file on show (on disk ↔ as captured)."""
        if self.shown is None or self.path is None:
            return
        self.prefer = ON_DISK if self.shown.shown == CAPTURED else CAPTURED
        file, line, self.path = self.path, self.textCursor().blockNumber() + 1, None
        self.show_location(file, line)

    def _show_source(self, file: str, text: str | None, why_not: str | None,
                     highlighter: LazyHighlighter | None = None, shown: SourceText | None = None) -> None:
        self.shown = shown
        self.notice.say(shown)
        line, self._line_when_read = self._line_when_read or 0, None
        if text is None:  # a message, not code: shown as the empty editor's placeholder
            self.setPlaceholderText(why_not or PLACEHOLDER)
            self.show_text("", None)
            return
        self.setPlaceholderText(PLACEHOLDER)
        self.show_text(text, highlighter, self.markers_by_file.get(file, {}))
        if line > 0:
            self.go_to_line(line)

    def marker_lines(self) -> dict[int, str]:
        """Line → marker kind for the file on show (what the gutter draws)."""
        return {line: kind for line, (kind, _tip) in self.markers.items()}
