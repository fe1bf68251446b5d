"""One Open dialog for everything the app reads: a log, a bundle or a manifest is picked as a file;
a session, TORCH_TRACE or TORCH_COMPILE_DEBUG folder with "Open This Folder" (the folder on show, or
the one selected). Qt's own dialogs take either files or folders, never both, hence this one (Qt's
non-native dialog, which lets a button be added)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QPushButton, QWidget

from inspector.core.readers.sources import KINDS

# every file the app opens, as each kind of the registry names its files (the GPU tab's hint sends the user here
# for tritonparse and profiler traces: they must be listed)
FILTERS = (f"torch.compile output ({' '.join(dict.fromkeys(pattern for kind in KINDS for pattern in kind.patterns))})",
           "All files (*)")


class QtOpenDialog(QFileDialog):
    def __init__(self, parent: QWidget | None, title: str, start: str = ""):
        super().__init__(parent, title, start)
        self.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        self.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.setNameFilters(FILTERS)
        self.chosen: Path | None = None
        self.folder_button = QPushButton("Open This &Folder")
        self.folder_button.setToolTip("Open the folder selected in the list, or else the folder on show, as a "
                                      "session, TORCH_TRACE or TORCH_COMPILE_DEBUG folder")
        self.folder_button.clicked.connect(self.open_folder)
        buttons = self.findChild(QDialogButtonBox)
        if buttons is not None:
            buttons.addButton(self.folder_button, QDialogButtonBox.ButtonRole.ActionRole)

    def open_folder(self) -> None:
        """Accept the selected folder, or the one on show when no folder is selected."""
        selected = [Path(p) for p in self.selectedFiles() if Path(p).is_dir()]
        self.chosen = selected[0] if selected else Path(self.directory().absolutePath())
        self.done(QFileDialog.DialogCode.Accepted)

    def accept(self) -> None:
        files = [Path(p) for p in self.selectedFiles()]
        if files and files[0].is_file():
            self.chosen = files[0]
        super().accept()  # a folder: Qt opens it in the list

    @classmethod
    def ask(cls, parent: QWidget | None, title: str) -> Path | None:
        dialog = cls(parent, title)
        return dialog.chosen if dialog.exec() else None
