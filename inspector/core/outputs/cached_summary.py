"""The summary of a session, worked out once per version of its files: the second open of a big log
takes its summary (verdict, kernels, compile time) from the index cache instead of parsing every
graph, kernel and compile stage again."""

from __future__ import annotations

from inspector.core.model.session import Session
from inspector.core.outputs.summary import summarize
from inspector.core.readers import index_cache


def session_summary(session: Session) -> dict:
    identity = index_cache.session_identity(session)
    summary = index_cache.load_summary(identity)
    if summary is None:
        summary = summarize(session)
        index_cache.store_summary(identity, summary)
    return summary
