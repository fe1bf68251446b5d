"""Persistent settings (QSettings): the interpreter captures run in, compile options, the Dask
scheduler a big job's rank logs are read on, recent files."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from PySide6.QtCore import QSettings

from inspector.capture.launcher import CaptureSettings, default_interpreter
from inspector.core.analysis.dask_engine import DaskTarget

MAX_RECENT = 10


class AppSettings:
    def __init__(self, store: QSettings | None = None):
        self.store = store or QSettings("torch-compile-inspector", "inspector")
        self.python_this_session: str | None = None  # `compile-inspector --python`: not saved, as the CLI's

    def _flag(self, key: str, default: bool) -> bool:
        """A switch as QSettings keeps it: the text "true" or "false" (an ini file holds no booleans)."""
        return str(self.store.value(key, "true" if default else "false")).lower() == "true"

    def _set_flag(self, key: str, on: bool) -> None:
        self.store.setValue(key, "true" if on else "false")

    @property
    def python(self) -> str:
        """The interpreter captures run in: `--python`'s for this session, else the one saved; a frozen
        app (which has no torch) defaults to the first Python found on this machine, which the settings
        dialog lets the user change."""
        return self.python_this_session or str(self.store.value("capture/python", "") or default_interpreter())

    @python.setter
    def python(self, value: str) -> None:
        """The user's choice in the dialog: saved, and it replaces `--python`'s from then on."""
        self.python_this_session = None
        self.store.setValue("capture/python", value)

    def capture_settings(self) -> CaptureSettings:
        try:
            values = json.loads(str(self.store.value("capture/settings", "") or "{}"))
        except ValueError:
            return CaptureSettings()
        return CaptureSettings.from_mapping(values) if isinstance(values, dict) else CaptureSettings()

    def set_capture_settings(self, settings: CaptureSettings) -> None:
        self.store.setValue("capture/settings", json.dumps(asdict(settings)))

    @property
    def dask_scheduler(self) -> str:
        """The Dask scheduler a big job's rank overview is read on (`tcp://host:8786`); '' for this machine."""
        return str(self.store.value("ranks/dask_scheduler", "") or "").strip()

    @dask_scheduler.setter
    def dask_scheduler(self, address: str) -> None:
        self.store.setValue("ranks/dask_scheduler", address.strip())

    @property
    def dask_tls(self) -> tuple[str, str, str]:
        """The TLS files a tls:// scheduler is reached with: the CA's certificate, this client's
        certificate and its key ('' where not set)."""
        return tuple(str(self.store.value(f"ranks/dask_tls_{name}", "") or "").strip()
                     for name in ("ca", "cert", "key"))

    @dask_tls.setter
    def dask_tls(self, files: tuple[str, str, str]) -> None:
        for name, value in zip(("ca", "cert", "key"), files):
            self.store.setValue(f"ranks/dask_tls_{name}", value.strip())

    @property
    def dask_allow_insecure(self) -> bool:
        """Whether a plain tcp:// scheduler may be used (it can run code on this machine): off unless set."""
        return self._flag("ranks/dask_allow_insecure", False)

    @dask_allow_insecure.setter
    def dask_allow_insecure(self, allowed: bool) -> None:
        self._set_flag("ranks/dask_allow_insecure", allowed)

    @property
    def dask_target(self) -> DaskTarget | None:
        """The scheduler and how it may be reached, as set (checked where it is used); None for this machine."""
        if not self.dask_scheduler:
            return None
        return DaskTarget(self.dask_scheduler, *self.dask_tls, allow_insecure=self.dask_allow_insecure)

    @property
    def record_history(self) -> bool:
        """Whether each opened run is recorded in the run history: on unless switched off (TCI_NO_HISTORY=1 too)."""
        return self._flag("history/record", True)

    @record_history.setter
    def record_history(self, on: bool) -> None:
        self._set_flag("history/record", on)

    @property
    def history_store(self) -> str | None:
        """The run history to use: a SQLite file or postgresql://… (None: TCI_HISTORY_STORE, else the local file)."""
        return str(self.store.value("history/store", "") or "").strip() or None

    @history_store.setter
    def history_store(self, address: str) -> None:
        self.store.setValue("history/store", address.strip())

    @property
    def recent(self) -> list[str]:
        value = self.store.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def add_recent(self, path: str | Path) -> None:
        """`path` (made absolute and resolved) first, once; older entries that name the same file go."""
        path = resolved(path)
        recent = [path] + [p for p in self.recent if resolved(p) != path]
        self.store.setValue("recent", list(dict.fromkeys(recent))[:MAX_RECENT])

    def existing_recent(self) -> list[str]:
        """The recent entries still on disk, resolved and de-duplicated; the list kept is pruned to them."""
        kept = list(dict.fromkeys(resolved(p) for p in self.recent if Path(p).is_absolute() and Path(p).exists()))
        if kept != self.recent:
            self.store.setValue("recent", kept)
        return kept


def resolved(path: str | Path) -> str:
    """`path` absolute, with symlinks and `..` resolved (as it is, where it cannot be resolved)."""
    try:
        return str(Path(path).expanduser().resolve())
    except (OSError, RuntimeError):
        return str(Path(path).absolute())
