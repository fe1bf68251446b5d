"""A job's rank overview read on a Dask cluster: each rank log is read by a worker where it lies (a
shared filesystem, the same paths on every machine) and only the small per-rank figures come back.
One owner for reaching the cluster, for the command line (`summary JOB --dask ADDRESS`) and the app
(its Dask setting). `distributed` is an optional extra: without it, or without a scheduler to reach,
`EngineUnavailable` says why in one line and the caller reads on this machine or stops. The reader
is imported when a cluster is used, so the command line imports this module for its default cheaply."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.core.analysis.ranks import RankReport

DEFAULT_TIMEOUT_S = 20.0  # how long to try reaching the scheduler


class EngineUnavailable(Exception):
    """The cluster cannot be used; the message says why, in one line."""


@dataclass(frozen=True)
class ClusterOverview:
    report: RankReport
    address: str
    workers: int

    def said(self, logs: int) -> str:
        return (f"{logs} rank log(s), read on the Dask cluster at {self.address} "
                f"({self.workers} worker{'s' if self.workers != 1 else ''})")


def overview_on_dask(logs: Iterable[Path], address: str, timeout_s: float | None = None) -> ClusterOverview:
    """The per-rank report of `logs`, read on the cluster whose scheduler is at `address` (tried for
    `timeout_s`, DEFAULT_TIMEOUT_S unless given)."""
    from inspector.core.analysis.ranks import index_ranks, rank_report

    try:
        from distributed import Client
    except ImportError:
        raise EngineUnavailable("reading on Dask needs Dask's distributed: pip install 'compile-inspector[dask]'") from None
    try:
        client = Client(address, timeout=f"{DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s}s")
    except (OSError, TimeoutError, ValueError) as error:
        raise EngineUnavailable(f"cannot reach the Dask scheduler at {address}: {error}") from None
    with client:
        workers = len(client.scheduler_info().get("workers", {}))
        return ClusterOverview(rank_report(index_ranks(list(logs), client.get_executor())), address, workers)
