"""Whether runs are recorded in the history, and where: read from the environment without importing
the history's machinery, so the command line can ask before its own imports (log_digests.py)."""

from __future__ import annotations

import os

SWITCH = "TCI_NO_HISTORY"  # "1": record nothing
STORE_SETTING = "TCI_HISTORY_STORE"  # a postgresql:// URL or a SQLite file; unset: the default file


def history_enabled() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("", "0", "false", "no")


def store_address(given: str | None = None) -> str | None:
    """The store to use: the one given (--store), else TCI_HISTORY_STORE, else None (the default file)."""
    return given or os.environ.get(STORE_SETTING) or None
