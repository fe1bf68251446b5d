"""The summary of a session, worked out once per version of its files: the second open of a big log
takes its summary (verdict, kernels, compile time) from the index cache instead of parsing every
graph, kernel and compile stage again."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from weakref import WeakKeyDictionary

from inspector import __version__
from inspector.core.analysis.problems import Problem
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.session import Session
from inspector.core.outputs.summary import SCHEMA, SCHEMA_VERSION, glance_document, summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers import index_cache


def summary_identity(analysis: SessionAnalysis) -> list | None:
    """What a cached summary must match: the session's files, the summary's schema, the tool that
    worked it out, and the graph-break registry its break types are explained with (None: do not cache).
    Worked out once per analysis: it fingerprints every file (~0.1 s for a job of 256 ranks), and the
    app's reopen asks for it for each part of the summary it takes from the cache."""
    if analysis not in _identities:
        identity = index_cache.session_identity(analysis.session)
        if identity is not None and analysis.session.preview is None:  # a preview's figures are not its log's
            registry = analysis.break_registry
            identity = [*identity, SCHEMA_VERSION, __version__, code_identity(),
                        [registry.source, str(registry.path), registry.torch_version] if registry else None]
        else:
            identity = None
        _identities[analysis] = identity
    return _identities[analysis]


_identities: WeakKeyDictionary = WeakKeyDictionary()  # analysis → its summary_identity


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


def session_glance(analysis: SessionAnalysis) -> Summary:
    """The app dashboard's part of the summary (`at_a_glance`), from the cache when nothing it depends
    on changed: the whole summary a `summary` run kept, or the part an earlier open of the app kept.
    Made and kept otherwise. A reopen of a big log then skips parsing every graph for its fusion
    figures (~0.2 s of the worker's ~0.45 s on the 106 MB GPT-2 log)."""
    identity = summary_identity(analysis)
    for part in ("summary", "glance"):
        document = index_cache.load_summary(identity, part)
        if _is_summary(document):
            return Summary.from_state(document)
    document = glance_document(analysis)
    index_cache.store_summary(identity, document, "glance")
    return Summary.from_state(document)


def kernel_counts(analysis: SessionAnalysis) -> dict[tuple[int | None, str], int]:
    """How many kernels each unit's output code holds, by (rank, compile id): the app's navigator lists
    them for every unit. From the cache when the session was opened before (parsing every unit's code
    for them took ~0.07 s of the app's reopen of a 106 MB log); made and kept otherwise."""
    identity = summary_identity(analysis)
    document = index_cache.load_summary(identity, "kernel_counts")
    entries = document.get("units") if isinstance(document, dict) else None
    if isinstance(entries, list) and all(_is_count(entry) for entry in entries):
        counts = {(rank, compile_id): count for rank, compile_id, count in entries}
        if len(counts) == len(analysis.session.units):
            return counts
    counts = {(unit.rank, str(unit.compile_id)): len(unit.kernels) for unit in analysis.session.units}
    index_cache.store_summary(identity, {"units": [[*key, count] for key, count in counts.items()]}, "kernel_counts")
    return counts


def session_problems(analysis: SessionAnalysis) -> list[Problem]:
    """The session's problems, worst first. From the cache when the session was opened before (finding
    them read every recompile's guards, ~0.06 s of the app's reopen of a 106 MB log); found and kept
    otherwise."""
    identity = summary_identity(analysis)
    document = index_cache.load_summary(identity, "problems")
    try:
        return [Problem.from_state(state) for state in document["problems"]]
    except (TypeError, KeyError, ValueError):  # none kept (None), or not what `to_state` writes
        pass
    problems = analysis.problems
    index_cache.store_summary(identity, {"problems": [problem.to_state() for problem in problems]}, "problems")
    return problems


def _is_count(entry) -> bool:
    """[rank, compile id, kernel count], as `kernel_counts` keeps each unit's."""
    return (isinstance(entry, list) and len(entry) == 3 and type(entry[0]) in (int, type(None))
            and type(entry[1]) is str and type(entry[2]) is int)


def _is_summary(document: dict | None) -> bool:
    """A signed entry is still only a hint: it must be this schema's summary, by this tool."""
    return (isinstance(document, dict) and document.get("schema") == SCHEMA
            and document.get("schema_version") == SCHEMA_VERSION and document.get("tool_version") == __version__)
