"""Single-file sessions (`.tcinspect`): a zip of a session folder, to attach to a bug report and
open by double-click. Opening one only extracts data after checking it: no absolute or `..` paths,
no symbolic links, no zip bomb. Nothing in a bundle is ever executed."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

BUNDLE_SUFFIX = ".tcinspect"
MAX_ENTRIES = 100_000
MAX_TOTAL_BYTES = 4 << 30  # uncompressed, all entries together
MAX_RATIO = 200  # uncompressed / compressed, for entries over RATIO_FLOOR bytes
RATIO_FLOOR = 1 << 20


class UnsafeBundle(ValueError):
    """The bundle tries to write outside its folder, carries links, or would blow up on extraction."""


def save_bundle(session_dir: str | Path, out_file: str | Path) -> tuple[Path, list[str]]:
    """Zip `session_dir` into `out_file`; returns the file and what was left out (links)."""
    session_dir, out_file = Path(session_dir).resolve(), Path(out_file)
    if out_file.suffix != BUNDLE_SUFFIX:
        out_file = out_file.with_name(out_file.name + BUNDLE_SUFFIX)
    skipped: list[str] = []
    with zipfile.ZipFile(out_file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for root, dirs, files in os.walk(session_dir, followlinks=False):
            root_path = Path(root)
            for name in sorted(dirs):
                if (root_path / name).is_symlink():
                    skipped.append(str((root_path / name).relative_to(session_dir)))
            dirs[:] = sorted(d for d in dirs if not (root_path / d).is_symlink())
            for name in sorted(files):
                path = root_path / name
                relative = path.relative_to(session_dir).as_posix()
                if path.is_symlink():  # could point anywhere: never follow it into the bundle
                    skipped.append(relative)
                    continue
                if path.resolve() != out_file.resolve():
                    archive.write(path, relative)
    return out_file, skipped


def check_bundle(archive: zipfile.ZipFile) -> None:
    """Raise UnsafeBundle with the reason if extracting `archive` could harm the machine."""
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:
        raise UnsafeBundle(f"refused: {len(entries)} entries (more than {MAX_ENTRIES})")
    total = 0
    for entry in entries:
        name = entry.filename
        posix = PurePosixPath(name)
        if name.startswith(("/", "\\")) or posix.is_absolute() or (len(name) > 1 and name[1] == ":"):
            raise UnsafeBundle(f"refused: {name!r} is an absolute path")
        if ".." in posix.parts or "\\" in name:
            raise UnsafeBundle(f"refused: {name!r} points outside the bundle")
        mode = entry.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise UnsafeBundle(f"refused: {name!r} is a symbolic link")
        total += entry.file_size
        if total > MAX_TOTAL_BYTES:
            raise UnsafeBundle(f"refused: more than {MAX_TOTAL_BYTES >> 30} GiB once extracted (a zip bomb?)")
        if entry.file_size > RATIO_FLOOR and entry.file_size > MAX_RATIO * max(1, entry.compress_size):
            raise UnsafeBundle(f"refused: {name!r} expands {entry.file_size // max(1, entry.compress_size)}× "
                               f"(a zip bomb?)")


def extract_bundle(bundle: str | Path, cache_dir: str | Path | None = None) -> Path:
    """Check and extract `bundle` into a folder named by its content hash; reuse it if already there."""
    bundle = Path(bundle)
    digest = hashlib.sha256()
    with open(bundle, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    cache = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "torch-compile-inspector" / "bundles"
    target = cache / f"{bundle.stem}-{digest.hexdigest()[:16]}"
    if (target / ".complete").is_file():
        return target
    try:
        archive = zipfile.ZipFile(bundle)
    except zipfile.BadZipFile as error:
        raise UnsafeBundle(f"{bundle} is not a session bundle (not a zip file: {error})") from None
    with archive:
        check_bundle(archive)
        target.mkdir(parents=True, exist_ok=True)
        written = 0
        for entry in archive.infolist():
            destination = target / entry.filename
            if entry.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(entry) as source, open(destination, "wb") as out:
                while block := source.read(1 << 20):
                    written += len(block)
                    if written > MAX_TOTAL_BYTES:  # the header lied about sizes
                        raise UnsafeBundle("refused: extraction exceeded the size limit (a zip bomb?)")
                    out.write(block)
    (target / ".complete").write_text("ok")
    return target
