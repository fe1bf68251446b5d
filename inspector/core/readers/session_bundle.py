"""Single-file sessions (`.tcinspect`): a zip of a session folder, to attach to a bug report and
open by double-click. Opening one only extracts data after checking it: no absolute or `..` paths,
no symbolic links, no zip bomb. Nothing in a bundle is ever executed."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from inspector.core.output_file import write_with
from inspector.core.process_state import stat as process_stat
from inspector.core.readers.safe_files import open_regular

BUNDLE_SUFFIX = ".tcinspect"
MAX_ENTRIES = 100_000
MAX_TOTAL_BYTES = 4 << 30  # uncompressed, all entries together
MAX_ENTRY_BYTES = 2 << 30  # one file (a trace log of a long run)
MAX_RATIO = 200  # uncompressed / compressed, per entry over RATIO_FLOOR bytes and for the whole bundle
RATIO_FLOOR = 1 << 20
MAX_NAME_BYTES = 255  # one path component, as most file systems allow
MAX_PATH_CHARS = 1024


class UnsafeBundle(ValueError):
    """The bundle tries to write outside its folder, carries links, or would blow up on extraction."""


def save_bundle(session_dir: str | Path, out_file: str | Path) -> tuple[Path, list[str]]:
    """Zip `session_dir` into `out_file` (`.tcinspect` added when missing); returns the file and what
    was left out (links, FIFOs, devices: anything but a regular file). The zip is written beside the
    target and renamed when complete (a full disk leaves no half bundle); a target inside the session
    folder is refused (OutputRefused, a ValueError)."""
    given = os.fspath(out_file)
    session_dir, out_file = Path(session_dir).resolve(), Path(out_file)
    if given.strip() and out_file.suffix != BUNDLE_SUFFIX:  # an empty path is refused by write_with
        out_file = out_file.with_name(out_file.name + BUNDLE_SUFFIX)
    skipped: list[str] = []
    written = write_with(out_file if given.strip() else given, lambda temporary: _zip(session_dir, temporary, skipped),
                         [session_dir])
    return written, skipped


def _zip(session_dir: Path, out_file: Path, skipped: list[str]) -> None:
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
                if not stat.S_ISREG(path.lstat().st_mode):  # a link could point anywhere, a FIFO never ends
                    skipped.append(relative)
                    continue
                archive.write(path, relative)


def check_bundle(archive: zipfile.ZipFile, archive_bytes: int | None = None) -> None:
    """Raise UnsafeBundle with the reason if extracting `archive` could harm the machine or cannot
    give a well-formed folder. `archive_bytes` (the bundle's size on disk) bounds the overall ratio."""
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:
        raise UnsafeBundle(f"refused: {len(entries)} entries (more than {MAX_ENTRIES})")
    total = 0
    files: set[str] = set()
    folders: set[str] = set()
    for entry in entries:
        name = entry.filename
        posix = PurePosixPath(name)
        if name.startswith(("/", "\\")) or posix.is_absolute() or (len(name) > 1 and name[1] == ":"):
            raise UnsafeBundle(f"refused: {name!r} is an absolute path")
        if ".." in posix.parts or "\\" in name:
            raise UnsafeBundle(f"refused: {name!r} points outside the bundle")
        if "\0" in name or not posix.parts or any(len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES
                                                    for part in posix.parts) or len(name) > MAX_PATH_CHARS:
            raise UnsafeBundle(f"refused: {name[:80]!r}… is not a usable file name (too long or empty)")
        mode = entry.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise UnsafeBundle(f"refused: {name!r} is a symbolic link")
        key = posix.as_posix()
        parents = {parent.as_posix() for parent in posix.parents if parent.as_posix() != "."}
        if entry.is_dir():
            parents.add(key)
        elif key in files:
            raise UnsafeBundle(f"refused: {name!r} appears twice")
        else:
            files.add(key)
        folders |= parents
        if entry.file_size > MAX_ENTRY_BYTES:
            raise UnsafeBundle(f"refused: {name!r} holds {entry.file_size >> 20} MiB (more than "
                               f"{MAX_ENTRY_BYTES >> 20} MiB in one file)")
        total += entry.file_size
        if total > MAX_TOTAL_BYTES:
            raise UnsafeBundle(f"refused: more than {MAX_TOTAL_BYTES >> 30} GiB once extracted (a zip bomb?)")
        if entry.file_size > RATIO_FLOOR and entry.file_size > MAX_RATIO * max(1, entry.compress_size):
            raise UnsafeBundle(f"refused: {name!r} expands {entry.file_size // max(1, entry.compress_size)}× "
                               f"(a zip bomb?)")
    both = files & folders
    if both:
        raise UnsafeBundle(f"refused: {sorted(both)[0]!r} is both a file and a folder (or holds entries under a file)")
    if archive_bytes is not None and total > RATIO_FLOOR and total > MAX_RATIO * max(1, archive_bytes):
        raise UnsafeBundle(f"refused: {archive_bytes} bytes would expand to {total >> 20} MiB, "
                           f"{total // max(1, archive_bytes)}× (a zip bomb?)")


_extracted: list[Path] = []
_swept: set[str] = set()  # the folders this process has cleared of stale extractions
# tcinspect-<bundle stem>-<pid of the process that opened it>-<mkdtemp's random part>
_FOLDER = re.compile(r"^tcinspect-.*-(\d+)-[^-]+$")


def _folder_prefix(bundle: Path) -> str:
    return f"tcinspect-{bundle.stem[:40]}-{os.getpid()}-"


def remove_stale_folders(parent: str | Path | None = None) -> list[Path]:
    """Remove the extraction folders that processes now gone left in `parent` (default: the temp
    dir) — killed before their exit handlers ran. Only this user's folders, only of dead processes
    (a live one, or a pid taken again, keeps its folder). Returns what was removed."""
    folder = Path(parent or tempfile.gettempdir())
    removed = []
    try:
        candidates = list(folder.iterdir())
    except OSError:
        return removed
    for candidate in candidates:
        match = _FOLDER.match(candidate.name)
        try:
            mine = candidate.lstat().st_uid == os.getuid() and stat.S_ISDIR(candidate.lstat().st_mode)
        except OSError:
            continue
        if match and mine and int(match.group(1)) != os.getpid() and process_stat(int(match.group(1))) is None:
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def extract_bundle(bundle: str | Path, parent: str | Path | None = None) -> Path:
    """Check `bundle` and extract it into a fresh folder of its own (private, with an unguessable name,
    so nothing planted beforehand can redirect the writes). The folder is removed when extraction
    fails, by `remove_extracted` when the session is closed, and at the latest when the process exits."""
    bundle = Path(bundle)
    try:
        handle = open_regular(bundle)  # a FIFO named like a bundle would block the zip reader
    except OSError as error:
        raise UnsafeBundle(f"refused: {error}") from None
    with handle:
        try:
            archive = zipfile.ZipFile(handle)
        except (zipfile.BadZipFile, ValueError, EOFError) as error:
            raise UnsafeBundle(f"{bundle} is not a session bundle (not a zip file: {error})") from None
        with archive:
            return _extract(archive, bundle, os.fstat(handle.fileno()).st_size, parent)


def _extract(archive: zipfile.ZipFile, bundle: Path, size: int, parent: str | Path | None) -> Path:
    if parent is not None:
        Path(parent).mkdir(parents=True, exist_ok=True)
    place = os.path.realpath(parent or tempfile.gettempdir())
    if place not in _swept:  # the first bundle opened here: clear what killed processes left behind
        _swept.add(place)
        remove_stale_folders(place)
    target = Path(tempfile.mkdtemp(prefix=_folder_prefix(bundle), dir=parent))
    _extracted.append(target)
    _remove_on_termination()
    try:
        check_bundle(archive, size)
        _write_entries(archive, target)
    except UnsafeBundle:
        remove_extracted(target)
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError) as error:
        remove_extracted(target)
        raise UnsafeBundle(f"refused: {bundle.name} is damaged ({type(error).__name__}: {error})") from None
    return target


def _write_entries(archive: zipfile.ZipFile, target: Path) -> None:
    """Write every entry, counting the bytes actually written against each entry's declared size
    and the total cap (a header may lie)."""
    written = 0
    for entry in archive.infolist():
        destination = target.joinpath(*PurePosixPath(entry.filename).parts)
        if entry.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        entry_written = 0
        with archive.open(entry) as source, open(destination, "xb") as out:  # x: never through a planted link
            while block := source.read(1 << 20):
                entry_written += len(block)
                written += len(block)
                if entry_written > entry.file_size or entry_written > MAX_ENTRY_BYTES or written > MAX_TOTAL_BYTES:
                    raise UnsafeBundle(f"refused: {entry.filename!r} expands beyond its declared size (a zip bomb?)")
                out.write(block)


def remove_extracted(folder: Path | None = None) -> None:
    """Delete one extracted bundle folder, or all of them (at exit)."""
    for target in [folder] if folder is not None else list(_extracted):
        shutil.rmtree(target, ignore_errors=True)
        if target in _extracted:
            _extracted.remove(target)


atexit.register(remove_extracted)


def _remove_on_termination() -> None:
    """SIGTERM with the default action would end the process without exit handlers: the folders would
    stay. Where nobody chose a handler of their own, SIGTERM now removes them and exits as SIGTERM
    would (status 143). Only the main thread may set handlers; elsewhere the app's own handler (which
    closes the window and exits normally) covers it."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def terminate(signum, frame):
        remove_extracted()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    signal.signal(signal.SIGTERM, terminate)
