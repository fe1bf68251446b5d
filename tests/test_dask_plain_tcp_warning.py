"""The warning for a plain tcp:// Dask scheduler is true: the greeting check covers the one connection
it reads, and `distributed` opens its own afterwards, so a peer that greets plainly first and sends a
pickle on the next connection runs its code once the user has opted in (--dask-allow-insecure). The
warning says so before anything is opened; without the opt-in that peer is never connected to; with
tls:// (the user's CA) the same peer fails the handshake and nothing runs."""

from __future__ import annotations

import pytest
from cli_runner import run_cli_process

from inspector.core.analysis.dask_engine import DaskTarget, overview_on_dask
from inspector.core.readers.trace_logs import find_trace_logs

from test_dask_security import job, peer, pickled_greeting, plain_greeting, tls_files  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(120)


def summary_on_dask(*args):
    """In a child process, as the Dask security tests: a peer's code that runs stays in that child."""
    return run_cli_process("summary", *map(str, args), timeout=90)


def test_opted_in_a_peer_pickling_after_a_plain_greeting_runs_code_as_the_warning_says(job, peer, tmp_path):
    made = tmp_path / "peer_code_ran"
    listener = peer(plain_greeting(), later=pickled_greeting(made))
    done = summary_on_dask(job, "--dask", listener.address, "--dask-allow-insecure", "--dask-timeout", "3")
    assert listener.connections >= 2 and made.exists(), "the second connection did not unpickle: update the docs"
    warning = done.stderr.strip().splitlines()[0]
    assert warning.startswith("compile-inspector: warning:"), done.stderr
    assert "can run code on this machine, in this process" in warning
    assert "checking its greeting cannot prevent that, only tls://" in warning


def test_without_the_opt_in_a_peer_pickling_after_a_plain_greeting_is_never_connected_to(job, peer, tmp_path):
    made = tmp_path / "peer_code_ran"
    listener = peer(plain_greeting(), later=pickled_greeting(made))
    done = summary_on_dask(job, "--dask", listener.address, "--dask-timeout", "3")
    assert done.returncode == 2 and listener.connections == 0 and not made.exists()
    assert "only tls://" in done.stderr and "--dask-allow-insecure" in done.stderr


def test_over_tls_a_peer_greeting_plainly_then_pickling_fails_the_handshake(job, peer, tmp_path, tls_files):
    made = tmp_path / "peer_code_ran"
    listener = peer(plain_greeting(), later=pickled_greeting(made))
    address = listener.address.replace("tcp://", "tls://")
    done = summary_on_dask(job, "--dask", address, "--dask-tls-ca", tls_files["ca"], "--dask-tls-cert",
                           tls_files["cert"], "--dask-tls-key", tls_files["key"], "--dask-timeout", "5")
    assert done.returncode == 2 and not made.exists() and listener.connections == 1
    assert f"TLS with the Dask scheduler at {address} failed" in done.stderr


def test_the_app_says_where_a_plain_tcp_cluster_read_the_logs_and_what_it_allowed(job):
    """The app has no stderr: the status line it shows (ClusterOverview.said) carries the warning.
    A real scheduler and worker in this process, over plain tcp:// on 127.0.0.1."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  protocol="tcp://", host="127.0.0.1") as cluster:
        logs = find_trace_logs(job)
        overview = overview_on_dask(logs, DaskTarget(cluster.scheduler_address, allow_insecure=True), 30)
    said = overview.said(len(logs))
    assert said == (f"{len(logs)} rank log(s), read on the Dask cluster at {cluster.scheduler_address} "
                    f"(1 worker; plain tcp://: the scheduler could run code here)")
