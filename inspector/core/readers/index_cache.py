"""A persistent index of the logs opened before, so a reopened log is not parsed again
(docs/benchmarks.md, "The app's reopen of a big log"): the records a read found (kinds, small metas,
offsets, md5 checks), the string table and what could not be read, its stage spans once they have been
made of its events, plus the summary of the session once it has been worked out.

Entries live in the user's cache dir (``$XDG_CACHE_HOME`` or ``~/.cache``, then
``torch-compile-inspector``) as plain JSON: loading one never executes anything. An entry is a hint,
used only when
- it names the same file with the same size, modification and change times (ctime cannot be set
  back, so an edit in place with the old mtime restored is noticed), inode, and a fingerprint of its
  content (the first and last 64 KiB and 16 blocks spread between them);
- it was written by this version of the reader;
- its signature holds: an HMAC-SHA256 of header and body under a key only this user can read, so an
  entry crafted elsewhere (a shared or restored CI cache) with a recomputed checksum is not trusted;
- the cache folder and the entry belong to this user.
Anything else — a changed log, a truncated, edited or foreign cache file, a different version — is
ignored and the log is read again. A log modified in the last few seconds is not cached (it may still
be being written). TCI_NO_CACHE=1 (or `--no-cache`) turns the cache off.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import time
from pathlib import Path

from inspector import __version__
from inspector.core.output_file import write_with
from inspector.core.model.compile_spans import SpanForest
from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import Session
from inspector.core.readers import json_codec
from inspector.core.readers.session_format import MANIFEST, RESULTS
from inspector.core.readers.torch_trace import TraceLog
from inspector.core.readers.trace_index_format import decode_log, decode_problems, encode_log, encode_problems

FORMAT = 5  # bump when the reader changes what it keeps of a record (4: no glog time and pid; 5: event rows)
SPANS_FORMAT = 1  # bump when the spans made of a log's events change (how they nest, what is counted wrong)
SETTLE_SECONDS = 3.0  # a log modified more recently than this is not cached
APP_DIR = "torch-compile-inspector"
KEEP_ENTRIES = 2048  # per kind: the logs opened most recently (a job of 1,024 ranks fits whole) …
KEEP_BYTES = 512 << 20  # … within this much (a log's index is a small share of its size)
PRUNE_EVERY = 64  # writes of one process between two prunes (a prune lists and stats every entry)
FINGERPRINT_BLOCK = 64 << 10  # bytes read at the head and the tail of a file
FINGERPRINT_SAMPLES = 16  # blocks of 4 KiB spread over the rest


def cache_root() -> Path | None:
    if os.environ.get("TCI_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / APP_DIR


def _identity(path: Path) -> dict | None:
    """What must not change for an entry to stay valid (None if the file cannot be read)."""
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            fingerprint = _fingerprint(handle, stat.st_size)
    except OSError:
        return None
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino, "fingerprint": fingerprint,
            "format": FORMAT, "version": __version__}


def _fingerprint(handle, size: int) -> str:
    """A digest of the file's head, tail and evenly spread blocks: ~200 KiB read whatever the size."""
    digest = hashlib.blake2b(digest_size=16)
    offsets = [0, max(0, size - FINGERPRINT_BLOCK)]
    offsets[1:1] = [size * index // (FINGERPRINT_SAMPLES + 1) for index in range(1, FINGERPRINT_SAMPLES + 1)]
    for offset, length in zip(offsets, [FINGERPRINT_BLOCK, *[4096] * FINGERPRINT_SAMPLES, FINGERPRINT_BLOCK]):
        handle.seek(offset)
        digest.update(handle.read(length))
    return digest.hexdigest()


def _owned(path: Path) -> bool:
    """The file or folder belongs to this user and nobody else may write it (no entry planted by
    another account in a shared cache folder is read)."""
    try:
        stat = path.stat()
    except OSError:
        return False
    return not hasattr(os, "getuid") or (stat.st_uid == os.getuid() and not stat.st_mode & 0o022)


def _key(root: Path, create: bool) -> bytes | None:
    """This user's signing key (32 random bytes in a file only they can read), made on first use."""
    file = root / "key"
    try:
        with open(file, "rb") as handle:
            key = handle.read()
        return key if len(key) == 32 and _owned(file) else None
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    try:  # written whole under a name of its own, then linked into place: no process reads half a key
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        draft = root / f"key.{os.getpid()}.{os.urandom(4).hex()}"
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(key := os.urandom(32))
            os.link(draft, file)
        finally:
            draft.unlink(missing_ok=True)
        return key
    except FileExistsError:  # another process made it first (the overview's workers start together)
        return _key(root, create=False)
    except OSError:
        return None


def _signature(key: bytes, header: bytes, *body: bytes) -> str:
    """The entry's signature over its header and its body (given whole, or in parts)."""
    mac = hmac.new(key, header + b"\n", hashlib.sha256)
    for part in body:
        mac.update(part)
    return mac.hexdigest()


def _entry_file(kind: str, key: str) -> Path | None:
    root = cache_root()
    if root is None:
        return None
    return root / kind / (hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40] + ".json")


def _write_parts(path: Path, parts: list[bytes]) -> None:
    with open(path, "wb") as handle:
        handle.writelines(parts)


def _read_entry(file: Path | None, identity) -> object | None:
    """The body of the entry in `file` if its header matches `identity` and its signature holds."""
    if file is None or identity is None:
        return None
    root = file.parent.parent
    key = _key(root, create=False)
    if key is None or not (_owned(root) and _owned(file)):
        return None
    try:
        with open(file, "rb") as handle:
            data = memoryview(handle.read())  # its lines as views: a copy of a big index is megabytes
        head_end = data.obj.find(b"\n")
        signature_end = data.obj.find(b"\n", head_end + 1)
        if head_end < 0 or signature_end < 0:
            return None
        head, signature, body = data[:head_end], data[head_end + 1:signature_end], data[signature_end + 1:]
        if not hmac.compare_digest(bytes(signature), _signature(key, bytes(head), body).encode()):
            return None
        header = json_codec.loads(head)
        if not isinstance(header, dict) or header.get("identity") != identity:
            return None
        return json_codec.loads(body)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _write_entry(file: Path | None, identity, body) -> None:
    """Write atomically (a reader sees the old entry or the new one, never half of one), signed with
    this user's key; a cache that cannot be written is no error, only a slower next open."""
    if file is None or identity is None:
        return
    try:
        key = _key(file.parent.parent, create=True)
        if key is None:
            return
        data = json_codec.dumps_parts(body)  # never one string the size of a big log's whole index
        header = json_codec.dumps({"identity": identity})
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        entry = [header, b"\n", _signature(key, header, *data).encode(), b"\n", *data]
        write_with(file, lambda temporary: _write_parts(temporary, entry))
        _prune(file.parent)
    except (OSError, TypeError, ValueError):
        pass


_writes = 0  # entries this process wrote since it last pruned


def _prune(folder: Path) -> None:
    """Forget the least recently written entries beyond KEEP_ENTRIES or KEEP_BYTES, so the cache stays
    small; on the first write of a process and every PRUNE_EVERY after (a job's thousand rank logs
    are each written once: pruning on every one would list the folder a thousand times)."""
    global _writes
    _writes += 1
    if (_writes - 1) % PRUNE_EVERY:
        return
    entries = []
    for entry in folder.glob("*.json"):
        try:
            stat = entry.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, stat.st_size, entry))
    kept_bytes = 0
    for index, (_mtime, size, entry) in enumerate(sorted(entries, key=lambda row: row[0], reverse=True)):
        kept_bytes += size
        if index >= KEEP_ENTRIES or kept_bytes > KEEP_BYTES:
            entry.unlink(missing_ok=True)


def _settled(identity: dict | None) -> bool:
    return identity is not None and time.time() - identity["mtime_ns"] / 1e9 > SETTLE_SECONDS


# --- the index of one log -------------------------------------------------------------------------

def has_log(path: Path) -> bool:
    """Whether an entry for `path` is kept (valid or not: `load_log` says), so reopening it is quick."""
    file = _entry_file("index", str(Path(path).resolve()))
    return file is not None and file.is_file()


def load_log(path: Path) -> TraceLog | None:
    """The index of `path` as a previous read left it, or None when there is no valid entry."""
    identity = _identity(path)
    body = _read_entry(_entry_file("index", str(path.resolve()) if identity else ""), identity)
    if not isinstance(body, dict):
        return None
    try:
        return decode_log(path, body, identity["size"])
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None  # well-formed JSON of the wrong shape: not ours, or not this version's


def store_log(log: TraceLog) -> None:
    """Keep the index of a log read in full (every payload's md5 checked, so the entry says all a
    read would say about damage): its records as read (without those the reader did not keep)."""
    identity = _identity(log.path)
    if cache_root() is None or identity is None or identity["size"] != log.size or not _settled(identity):
        return
    if not log.checked:
        return
    _write_entry(_entry_file("index", identity["path"]), identity, encode_log(log))


# --- the stage spans of one log -------------------------------------------------------------------

def load_spans(log: TraceLog) -> tuple[SpanForest, ReadProblems] | None:
    """The stage spans an earlier open made of `log`'s chromium events, and what it found wrong in them;
    None when there is no valid entry, or when the log's events are not all checked yet (the entry would
    then hide damage that reading them counts)."""
    if not log.checked:  # before the fingerprint: a preview's and an overview's logs never are
        return None
    identity = _identity(log.path)
    if identity is None or identity["size"] != log.size:
        return None
    body = _read_entry(_entry_file("spans", identity["path"]), identity)
    if not isinstance(body, dict) or body.get("spans_format") != SPANS_FORMAT:
        return None
    try:
        return SpanForest.from_state(body["forest"]), decode_problems(body["problems"])
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None


def store_spans(log: TraceLog, forest: SpanForest, problems: ReadProblems) -> None:
    """Keep the spans made of a whole log, every event checked, with what was found wrong in them
    (a reopen then reads them back rather than parsing the log's events again)."""
    if cache_root() is None or not log.checked:
        return
    identity = _identity(log.path)
    if identity is None or identity["size"] != log.size or not _settled(identity):
        return
    _write_entry(_entry_file("spans", identity["path"]), identity,
                 {"spans_format": SPANS_FORMAT, "forest": forest.get_state(), "problems": encode_problems(problems)})


# --- the summary of a session ---------------------------------------------------------------------

def session_identity(session: Session) -> list | None:
    """What a session's summary depends on: how it was opened and every file it was read from
    (None, so nothing is cached, for kinds read from many loose files, for files still changing, and
    for a capture that has not ended)."""
    if not session.summary_reusable:
        return None
    if session.settled_by_manifest and (session.manifest is None or session.manifest.ended is None):
        return None  # a capture still running, or left by a dead launcher: what it says changes with time
    files = [rank.log_path for rank in session.ranks if rank.log_path is not None]
    if session.settled_by_manifest:
        files += [Path(session.source) / name for name in (MANIFEST, RESULTS)
                  if (Path(session.source) / name).is_file()]
    identities = [_identity(Path(file)) for file in files]
    if not files or any(identity is None or not _settled(identity) for identity in identities):
        return None
    return [session.kind, str(Path(session.source).resolve()), identities]


def load_summary(identity: list | None, part: str = "summary") -> dict | None:
    """The summary kept for `identity`, or its `part` "glance": the app's dashboard part of it."""
    if identity is None:
        return None
    summary = _read_entry(_entry_file(part, json_codec.dumps(identity).decode()), identity)
    return summary if isinstance(summary, dict) else None


def store_summary(identity: list | None, summary: dict, part: str = "summary") -> None:
    if identity is not None:
        _write_entry(_entry_file(part, json_codec.dumps(identity).decode()), identity, summary)
