"""The git commit of a work tree, read from git's own files without starting git: the capture keeps
the commit of the script it runs in the session's manifest, so the history knows what code a run ran."""

from __future__ import annotations

from pathlib import Path

from inspector.core.readers.safe_files import open_regular, read_text

GIT_HEAD_BYTES = 4096  # a HEAD or ref file is one line; anything longer is not git's
PACKED_REFS_BYTES = 16 << 20


def git_commit(folder: Path) -> str | None:
    """The commit checked out in the git work tree holding `folder`, read from its files (no git
    process is started, only regular files read); None outside a work tree or where the files are not
    what git writes. The capture calls it on the script the user ran and keeps the answer in the
    manifest; the history never calls it on a folder a log names."""
    try:
        for place in (folder.resolve(), *folder.resolve().parents):
            dot_git = place / ".git"
            if dot_git.is_file():  # a worktree or submodule: "gitdir: PATH"
                pointer = _small_text(dot_git)
                if not pointer or not pointer.startswith("gitdir:"):
                    return None
                dot_git = (place / pointer.split(":", 1)[1].strip()).resolve()
            if dot_git.is_dir():
                return _head_commit(dot_git)
    except OSError:
        return None
    return None


def _head_commit(git_dir: Path) -> str | None:
    head = _small_text(git_dir / "HEAD")
    if head is None:
        return None
    if not head.startswith("ref:"):
        return head if is_sha(head) else None
    ref = head.split(":", 1)[1].strip()
    common = git_dir
    common_file = _small_text(git_dir / "commondir")
    if common_file:
        common = (git_dir / common_file).resolve()
    for folder in (git_dir, common):
        sha = _small_text(folder / ref)
        if sha and is_sha(sha):
            return sha
    packed = common / "packed-refs"
    try:
        packed_refs = read_text(packed, PACKED_REFS_BYTES)
    except OSError:
        return None
    for line in packed_refs.splitlines():
        parts = line.split(" ")
        if len(parts) == 2 and parts[1] == ref and is_sha(parts[0]):
            return parts[0]
    return None


def _small_text(path: Path) -> str | None:
    try:
        with open_regular(path) as file:  # a FIFO or device named like git's files is not read
            data = file.read(GIT_HEAD_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", "replace").strip()


def is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


