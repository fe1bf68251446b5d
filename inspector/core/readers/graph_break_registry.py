"""torch's registry of graph-break types (`torch/_dynamo/graph_break_registry.json`, GB0000…), found
without importing torch: the copy a capture saved beside its log, else the installed torch's, else the
copy bundled with the app. The registry says which of the three it is, so the user can tell."""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from inspector.core.readers.safe_files import read_json
from inspector.core.readers.session_format import BREAK_REGISTRY

REGISTRY_FILE = BREAK_REGISTRY  # torch's own file name, kept by the capture under the same name
BUNDLED = Path(__file__).resolve().parents[3] / "resources" / "graph_break_registry"
_VERSION = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.M)


@dataclass(frozen=True)
class BreakType:
    """One registry entry: torch's name for the break, what it means, and what to do about it."""

    gb_id: str  # "GB0170"
    gb_type: str
    explanation: str
    hints: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{self.gb_id.lower()}.html"


@dataclass(frozen=True, eq=False)
class BreakRegistry:
    types: dict[str, BreakType]  # by GB id
    source: str  # "session" | "installed torch" | "bundled"
    torch_version: str | None
    path: Path | None

    @property
    def described(self) -> str:
        """Where the registry came from, in words for the output."""
        version = f"torch {self.torch_version}" if self.torch_version else "torch of unknown version"
        return {"session": f"copied from the {version} that ran the capture",
                "installed torch": f"from the installed {version} ({self.path})",
                "bundled": f"the copy bundled with this app ({version}); the log's torch may differ"}.get(
                    self.source, self.source)

    def by_type(self, gb_type: str) -> BreakType | None:
        return _type_index(self).get(_normalise(gb_type))

    def get_state(self) -> dict:
        return {"source": self.source, "torch_version": self.torch_version,
                "path": str(self.path) if self.path else None,
                "types": len(self.types), "described": self.described}


def find_registry(session_folders: list[Path], session_torch: str | None = None) -> BreakRegistry | None:
    """The registry for a session: a capture's own copy, the installed torch's, or the bundled one."""
    for folder in session_folders:
        registry = read_registry(folder / REGISTRY_FILE, "session", session_torch, folder)
        if registry:
            return registry
    installed = installed_torch_dir()
    if installed:
        registry = read_registry(installed / "_dynamo" / REGISTRY_FILE, "installed torch",
                                 _torch_version(installed))
        if registry:
            return registry
    return read_registry(BUNDLED / REGISTRY_FILE, "bundled", _read_version(BUNDLED / "torch_version.txt"))


def installed_torch_dir() -> Path | None:
    """The folder of the torch package this Python would import, found without importing it."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec and spec.origin:
        return Path(spec.origin).parent
    for entry in sys.path:  # a frozen app has no finder for site-packages; look on the path itself
        candidate = Path(entry or ".") / "torch"
        if (candidate / "__init__.py").is_file():
            return candidate
    return None


@lru_cache(maxsize=8)
def read_registry(path: Path, source: str, torch_version: str | None, root: Path | None = None) -> BreakRegistry | None:
    """Parse one registry file; None when it is absent, unreadable or unsafe (older torch has none).
    A session's copy is read through the safe-read layer, inside its folder (`root`)."""
    try:
        raw = read_json(path, root=root)
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    types = {}
    for gb_id, variants in raw.items():
        if isinstance(variants, dict):
            variants = [variants]
        if not isinstance(variants, list):
            continue
        chosen = _best_variant([v for v in variants if isinstance(v, dict)])
        if chosen is not None:
            types[str(gb_id).upper()] = BreakType(str(gb_id).upper(), str(chosen.get("Gb_type", "")),
                                                  _clean(chosen.get("Explanation", "")),
                                                  tuple(_clean(h) for h in chosen.get("Hints") or [] if _clean(h)))
    return BreakRegistry(types, source, torch_version, path) if types else None


def _best_variant(variants: list[dict]) -> dict | None:
    """A type can list several call sites; prefer one whose texts are literal, with the most hints."""
    def score(variant: dict) -> tuple:
        explanation = str(variant.get("Explanation", ""))
        literal = bool(explanation) and not _is_code(explanation)
        return (not _is_code(str(variant.get("Gb_type", ""))), literal, len(variant.get("Hints") or []))
    return max(variants, key=score) if variants else None


_NAME = re.compile(r"[A-Za-z_][\w.]*")


def _is_code(text: str) -> bool:
    """Registry texts that are the source expression, not the message (`_explanation`, `"…" + x`)."""
    text = text.strip()
    return not text or bool(_NAME.fullmatch(text) and ("_" in text or text.islower())) \
        or text.startswith(('"', "f\"", "'"))


def _clean(text) -> str:
    text = str(text).strip()
    return "" if _is_code(text) else " ".join(text.split())  # runs of whitespace as one space


def _normalise(text: str) -> str:
    return " ".join(text.split()).rstrip(".:").lower()


@lru_cache(maxsize=8)
def _type_index(registry: BreakRegistry) -> dict[str, BreakType]:
    index: dict[str, BreakType] = {}
    for entry in registry.types.values():
        index.setdefault(_normalise(entry.gb_type), entry)
    return index


def _torch_version(torch_dir: Path) -> str | None:
    try:
        match = _VERSION.search((torch_dir / "version.py").read_text(encoding="utf-8"))
    except OSError:
        return None
    return match[1] if match else None


def _read_version(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
