"""A mode comparison's output folder (`compile-inspector modes -o DIR`, Run ▸ Compare Modes): one capture
session per compile mode in `DIR/<mode>`, and with --warm a second in `DIR/<mode>-warm`. Recognised by
what the sessions say of themselves (each manifest's mode is its folder's name), so it opens as the
comparison it is rather than as a job whose ranks are its modes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.readers.session_format import MANIFEST
from inspector.core.readers.input_kind import InputKind, Match, Source

WARM_SUFFIX = "-warm"  # as capture/mode_runs.py names a mode's warm session
MANIFEST_MAX_BYTES = 1 << 20  # a session's manifest is a few KB: a larger file is not one


@dataclass(frozen=True)
class ModeFolders:
    """The sessions of a mode comparison: mode → its cold session, and mode → its warm one (if any)."""

    folder: Path
    cold: dict[str, Path] = field(default_factory=dict)
    warm: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class ModeSession:
    """One mode's session folder as detected where the folders came in (`session_loader.detect_modes`):
    the Source there, or why nothing there opens (a capture that wrote nothing), which its row says."""

    folder: Path
    source: Source | None
    unopened: str = ""


def manifest_mode(session: Path) -> str | None:
    """The compile mode a capture session's manifest records, None where it is not one."""
    manifest = session / MANIFEST
    try:
        if not manifest.is_file() or manifest.stat().st_size > MANIFEST_MAX_BYTES:
            return None
        settings = json.loads(manifest.read_text(encoding="utf-8")).get("settings") or {}
    except (OSError, ValueError, AttributeError):
        return None
    mode = settings.get("mode") if isinstance(settings, dict) else None
    return mode if isinstance(mode, str) and mode else None


def mode_folders(path: Path) -> ModeFolders | None:
    """The comparison in `path`, if it holds at least one session named by its own mode and no session
    folder of its own (a session folder is a session, not a comparison)."""
    if not path.is_dir() or (path / MANIFEST).exists():
        return None
    cold, warm = {}, {}
    try:
        children = sorted(child for child in path.iterdir() if child.is_dir() and not child.is_symlink())
    except OSError:
        return None
    for child in children:
        mode = manifest_mode(child)
        if mode is None:
            continue
        if child.name == mode:
            cold[mode] = child
        elif child.name == mode + WARM_SUFFIX:
            warm[mode] = child
    if not cold:
        return None
    order = ("default", "reduce-overhead", "max-autotune")  # the order the comparison runs them in
    cold = dict(sorted(cold.items(),
                       key=lambda item: (order.index(item[0]) if item[0] in order else len(order), item[0])))
    return ModeFolders(path, cold, {mode: warm[mode] for mode in cold if mode in warm})


def _match_modes(path: Path) -> Match | None:
    found = mode_folders(path)
    return Match(path, tuple(found.cold.values()) + tuple(found.warm.values()), detail=found) if found else None


MODES = InputKind("modes", "a mode comparison's folder (compile-inspector modes -o DIR: one session per mode)",
                  _match_modes, lambda source, progress: source.detail, opens_session=False, shown_in="modes",
                  elsewhere="`compile-inspector summary` compares its modes, and the app opens it in the Modes tab")
