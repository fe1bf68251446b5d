"""The capture session folder's format, owned here once: the file names, the format's name and
version, and the chain that upgrades what older versions wrote. The capture's launcher writes with
these names; the loader reads through `upgrade()`, which refuses a session written by a newer tool
with a message instead of misreading it (after mitmproxy's io/compat)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FORMAT = "torch-compile-inspector/session"
FORMAT_VERSION = 1

MANIFEST = "manifest.json"
RESULTS = "results.json"
PROGRESS = "progress.jsonl"
STDOUT = "stdout.txt"
STDERR = "stderr.txt"
TRACE_DIR = "trace"
PROFILE_DIR = "profile"
GRAPHS_DIR = "graphs"
DYNAMO_CODE_DIR = "dynamo_code"  # Dynamo's bytecode per compiled frame, and as Python where depyf was importable
SOURCES_DIR = "sources"  # the user's files the compile stacks name, as they were: <sha256>.txt and index.json
TORCH_RECORD = "torch_record.json"  # torch's own record of the run, written by the capture at its end
BREAK_REGISTRY = "graph_break_registry.json"  # the capture's copy of its torch's graph-break registry
LAUNCHER_ENV = "TORCH_COMPILE_INSPECTOR_LAUNCHER"  # the launcher's pid, given to the runner to die with it
# Everything a capture writes into its session folder (and so may clear before a new capture).
ENTRIES = (MANIFEST, "manifest.tmp", RESULTS, "results.tmp", PROGRESS, STDOUT, STDERR, TRACE_DIR, PROFILE_DIR,
           GRAPHS_DIR, BREAK_REGISTRY, TORCH_RECORD, "torch_record.tmp", DYNAMO_CODE_DIR, SOURCES_DIR)


class NewerSessionFormat(ValueError):
    """The session was written by a newer version of the tool than this one."""


# version → function that turns a (manifest, results) pair of that version into the next version's.
# They receive the documents as that version wrote them, straight from the files: before the loader
# holds them to today's shapes (readers/session_schema.py) and decodes them into `model/run_results`
# records (as mitmproxy's io/compat migrates a flow's state before `from_state`), so a field an
# older version wrote in its own shape reaches its migration, and a record class only ever meets its
# own version's fields. A document may be damaged: `results` may be None (none written) or any JSON
# value; a migration changes what it recognises and leaves the rest for the validation after it.
MIGRATIONS: dict[int, Callable[[dict, Any], tuple[dict, Any]]] = {}


def upgrade(manifest: Any, results: Any) -> tuple[Any, Any]:
    """The manifest and results, as read from their files, upgraded to the current version's fields
    (still to be validated). A manifest without a usable version is taken as version 1 (the first
    one written); one that is no JSON object is passed on as it is, for the validation to count."""
    if not isinstance(manifest, dict):
        return manifest, results
    version = manifest.get("format_version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        version = 1
    if version > FORMAT_VERSION:
        tool = manifest.get("tool_version")
        raise NewerSessionFormat(
            f"this session was written in session format {version} (by compile-inspector "
            f"{tool or 'of a newer version'}); "
            f"this compile-inspector reads formats up to {FORMAT_VERSION}: update compile-inspector to open it")
    while version < FORMAT_VERSION:
        manifest, results = MIGRATIONS[version](manifest, results)
        version += 1
    return manifest, results
