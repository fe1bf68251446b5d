"""The summary of a session, worked out once per version of its files: the second open of a big log
takes its summary (verdict, kernels, compile time) from the index cache instead of parsing every
graph, kernel and compile stage again."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar
from weakref import WeakKeyDictionary

from inspector import __version__
from inspector.core.analysis.issues import Issue
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.model.session import Session
from inspector.core.outputs.summary import SCHEMA, SCHEMA_VERSION, glance_document, summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers import index_cache


def summary_identity(analysis: SessionAnalysis) -> list | None:
    """What a cached summary must match: the session's files, the summary's schema, the tool that
    worked it out, and the graph-break registry its break types are explained with (None: do not cache).
    Worked out once per analysis: it fingerprints every file (each rank log of a job), and the
    app's reopen asks for it for each part of the summary it takes from the cache."""
    if analysis not in _identities:
        # a preview's figures are not its log's: not even fingerprinted
        identity = index_cache.session_identity(analysis.session) if analysis.session.preview is None else None
        if identity is not None:
            registry = analysis.break_registry
            identity = [*identity, SCHEMA_VERSION, __version__, code_identity(),
                        [registry.source, str(registry.path), registry.torch_version] if registry else None]
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


def session_summary(session: Session, two_cores: bool = False) -> dict:
    """The summary document, from the cache when nothing it depends on changed; made on two cores with
    `two_cores` (`SessionAnalysis.make_summary_facts`: for the command line's own process)."""
    analysis = SessionAnalysis(session)
    identity = summary_identity(analysis)
    summary = index_cache.load_summary(identity)
    if not _is_summary(summary):
        analysis.make_summary_facts(two_cores)
        summary = summarize(analysis)
        index_cache.store_summary(identity, summary)
    return _as_opened(summary, session)


def session_glance(analysis: SessionAnalysis) -> Summary:
    """The app dashboard's part of the summary (`at_a_glance`), from the cache when nothing it depends
    on changed: the whole summary a `summary` run kept, or the part an earlier open of the app kept.
    Made and kept otherwise. A reopen of a big log then skips parsing every graph for its fusion
    figures, the larger part of the worker's time on such a reopen."""
    identity = summary_identity(analysis)
    for part in ("summary", "glance"):
        document = index_cache.load_summary(identity, part)
        if _is_summary(document):
            return Summary.from_state(_as_opened(document, analysis.session))
    document = glance_document(analysis)
    index_cache.store_summary(identity, document, "glance")
    return Summary.from_state(document)


def _as_opened(document: dict, session: Session) -> dict:
    """A cached document with the path this open named: the cache is found by what was read, and the
    open that kept it may have named the same run another way (a relative path, from another folder),
    which the text, the history and the app would otherwise show and try to reopen."""
    if "source" in document and document["source"] != str(session.source):
        document = {**document, "source": str(session.source)}
    return document


def kernel_counts(analysis: SessionAnalysis) -> list[int]:
    """How many kernels each unit's output code holds, in the order of the session's units: the app's
    navigator lists them for every unit. From the cache when the session was opened before (parsing
    every unit's code for them is a noticeable part of the app's reopen of a big log); made and kept
    otherwise. Kept by place, not by (rank, compile id): the logs of a job without rank numbers share those."""
    units = analysis.session.units

    def read(document: dict) -> list[int]:
        counts = document["units"]
        if not (type(counts) is list and len(counts) == len(units) and all(type(count) is int for count in counts)):
            raise ValueError("not every unit's count")
        return counts

    return _kept_part(analysis, "kernel_counts", read, lambda: [len(unit.kernels) for unit in units],
                      lambda counts: {"units": counts})


def session_issues(analysis: SessionAnalysis) -> list[Issue]:
    """The session's problems, worst first. From the cache when the session was opened before (finding
    them reads every recompile's guards, a noticeable part of the app's reopen of a big log); found and
    kept otherwise."""
    return _kept_part(analysis, "problems",
                      lambda document: [Issue.from_state(state) for state in document["problems"]],
                      lambda: analysis.issues,
                      lambda problems: {"problems": [problem.get_state() for problem in problems]})


_T = TypeVar("_T")


def _kept_part(analysis: SessionAnalysis, part: str, read: Callable[[dict], _T], make: Callable[[], _T],
               write: Callable[[_T], dict]) -> _T:
    """A part of the summary the app shows: `read` from the index cache's entry for the session, else
    made and kept. An entry `read` rejects (ValueError, TypeError, KeyError) is made afresh."""
    identity = summary_identity(analysis)
    document = index_cache.load_summary(identity, part)
    if document is not None:
        try:
            return read(document)
        except (TypeError, KeyError, ValueError):  # not what `write` writes
            pass
    value = make()
    index_cache.store_summary(identity, write(value), part)
    return value


def _is_summary(document: dict | None) -> bool:
    """A signed entry is still only a hint: it must be this schema's summary, by this tool."""
    return (isinstance(document, dict) and document.get("schema") == SCHEMA
            and document.get("schema_version") == SCHEMA_VERSION and document.get("tool_version") == __version__)
