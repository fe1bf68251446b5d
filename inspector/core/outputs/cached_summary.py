"""The summary of a session, worked out once per version of its files: the second open of a big log
takes its summary (verdict, kernels, compile time) from the index cache instead of parsing every
graph, kernel and compile stage again."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from inspector import __version__
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.session import Session
from inspector.core.outputs.summary import SCHEMA, SCHEMA_VERSION, summarize
from inspector.core.readers import index_cache


def summary_identity(analysis: SessionAnalysis) -> list | None:
    """What a cached summary must match: the session's files, the summary's schema, the tool that
    worked it out, and the graph-break registry its break types are explained with (None: do not cache)."""
    identity = index_cache.session_identity(analysis.session)
    if identity is None:
        return None
    registry = analysis.break_registry
    return [*identity, SCHEMA_VERSION, __version__, code_identity(),
            [registry.source, str(registry.path), registry.torch_version] if registry else None]


@cache
def code_identity() -> str:
    """A digest of the analysis code that writes a summary: a build between releases (same version,
    new fields) must not read a summary an older build cached and miss what it lacks. The same for
    every build where the sources are not on disk (a frozen app: its version names its code)."""
    core = Path(__file__).resolve().parent.parent
    digest = hashlib.sha1()
    for source in sorted(core.rglob("*.py")):
        digest.update(source.relative_to(core).as_posix().encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def session_summary(session: Session) -> dict:
    """The summary document, from the cache when nothing it depends on changed."""
    analysis = SessionAnalysis(session)
    identity = summary_identity(analysis)
    summary = index_cache.load_summary(identity)
    if not _is_summary(summary):
        summary = summarize(analysis)
        index_cache.store_summary(identity, summary)
    return summary


def _is_summary(document: dict | None) -> bool:
    """A signed entry is still only a hint: it must be this schema's summary, by this tool."""
    return (isinstance(document, dict) and document.get("schema") == SCHEMA
            and document.get("schema_version") == SCHEMA_VERSION and document.get("tool_version") == __version__)
