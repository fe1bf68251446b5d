"""A job's rank overview read on a Dask cluster (issue 27): a real `distributed.LocalCluster` with
workers in other processes, reached over TLS with certificates made here, reads each rank log where it
lies and sends back only the figures; the report is the one the local process pool gives, and a
scheduler that cannot be reached is one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from make_many_ranks import TEMPLATE, make_job  # noqa: E402
from cli_runner import run_cli_process  # noqa: E402
from test_dask_security import tls_files  # noqa: E402,F401  (a fixture: the cluster's certificates)

from inspector.core.analysis.divergence_rules import rank_report  # noqa: E402
from inspector.core.analysis.rank_figures import EXECUTOR_BATCH, index_ranks  # noqa: E402
from inspector.core.readers.torch_trace import rank_from_filename  # noqa: E402
from inspector.core.readers.trace_logs import find_trace_logs  # noqa: E402

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    if not TEMPLATE.is_file():
        pytest.skip("the public multi-rank corpus is not here")
    folder = tmp_path_factory.mktemp("dask") / "job"
    make_job(folder, 24)
    return folder


@pytest.fixture(scope="module")
def security(tls_files):
    """One self-signed certificate as the CA, the scheduler's, the workers' and the client's."""
    cert, key = str(tls_files["cert"]), str(tls_files["key"])
    return distributed.security.Security(tls_ca_file=cert, tls_client_cert=cert, tls_client_key=key,
                                         tls_scheduler_cert=cert, tls_scheduler_key=key, tls_worker_cert=cert,
                                         tls_worker_key=key, require_encryption=True)


@pytest.fixture(scope="module")
def cluster(security):
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  worker_dashboard_address=None, security=security, protocol="tls://",
                                  host="127.0.0.1") as local:
        yield local


@pytest.fixture(scope="module")
def tls_args(tls_files) -> list:
    return ["--dask-tls-ca", tls_files["ca"], "--dask-tls-cert", tls_files["cert"], "--dask-tls-key", tls_files["key"]]


def test_the_overview_read_on_the_cluster_is_the_local_one(job, cluster, tls_args):
    assert cluster.scheduler_address.startswith("tls://")
    done = run_cli_process("summary", job, "--dask", cluster.scheduler_address, *tls_args, "--json")
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    document = json.loads(done.stdout)
    assert document["engine"] == {"dask": cluster.scheduler_address, "workers": 2}
    local = json.loads(json.dumps(rank_report(index_ranks(find_trace_logs(job))).get_state()))
    assert document["per_rank"] == local
    kinds = {finding["kind"] for finding in document["per_rank"]["divergence"]}
    assert {"collective_sequence", "tensor_meta", "recompiles", "straggler"} <= kinds
    text = run_cli_process("summary", job, "--dask", cluster.scheduler_address, *tls_args).stdout
    assert f"24 rank log(s), read on the Dask cluster at {cluster.scheduler_address} (2 workers)" in text
    assert "Rank divergence:" in text


def test_the_workers_did_the_reading(job, cluster, security):
    """Each log is read in a worker process, several logs to a task: the tasks ran on the cluster."""
    logs = find_trace_logs(job)[:20]
    with distributed.Client(cluster.scheduler_address, security=security) as client:
        before = client.run(lambda dask_worker: dask_worker.state.executed_count)
        figures = index_ranks(logs, client.get_executor())
        after = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert [f.rank for f in figures] == [rank_from_filename(log) for log in logs]
    assert sum(after.values()) - sum(before.values()) >= -(-len(logs) // EXECUTOR_BATCH)


def test_an_unreachable_scheduler_is_one_line(job, tls_args):
    done = run_cli_process("summary", job, "--dask", "tls://127.0.0.1:9", *tls_args, "--dask-timeout", "1", timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "cannot reach the Dask scheduler" in done.stderr


def test_a_scheduler_without_the_clients_certificate_is_refused(job, cluster, tmp_path_factory):
    """The cluster asks for a certificate its CA signed: another CA's client is turned away at the
    TLS handshake, one line."""
    folder = tmp_path_factory.mktemp("other_ca")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=someone-else"], check=True, capture_output=True, timeout=60)
    done = run_cli_process("summary", job, "--dask", cluster.scheduler_address, "--dask-tls-ca", cert,
                           "--dask-tls-cert", cert, "--dask-tls-key", key, "--dask-timeout", "5", timeout=120)
    assert done.returncode == 2
    assert f"TLS with the Dask scheduler at {cluster.scheduler_address} failed" in done.stderr, done.stderr


def test_dask_takes_only_a_folder_of_rank_logs(cluster, tls_args):
    done = run_cli_process("summary", ROOT / "resources" / "sessions" / "mlp_breaks", "--dask",
                           cluster.scheduler_address, *tls_args)
    assert done.returncode == 2 and "--dask reads a folder of rank logs" in done.stderr


# --- the app's Dask setting ----------------------------------------------------------------------

def open_to_overview(qtbot, window, folder, monkeypatch):
    """Open `folder` in the window and wait for its rank overview (shown first for any size here) of
    every rank (read on this machine, the ranks read first may come before it)."""
    from inspector.core import loading

    monkeypatch.setattr(loading, "OVERVIEW_FIRST_BYTES", 0)
    with qtbot.waitSignal(window.model.sigOverview, timeout=120_000, check_params_cb=lambda report: not report.unread):
        window.open_path(folder)
    return window.ranks_view


def test_the_app_reads_a_jobs_rank_overview_on_the_dask_cluster_it_is_set_to(
        qtbot, window, no_slot_errors, job, cluster, security, tls_files, monkeypatch, quick_interpreter):
    """Run ▸ Settings: "Read rank logs on Dask" takes a scheduler address and the TLS certificates; a
    job opened then has its overview read by the cluster's workers, the same one the local pool gives,
    and the status bar says where it was read."""
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    window.settings.python = quick_interpreter
    dialog = QtSettingsDialog(window.settings, window)
    qtbot.keyClicks(dialog.dask_scheduler, cluster.scheduler_address)
    assert "needs TLS certificates" in dialog.dask_check.text()
    for name in ("ca", "cert", "key"):
        qtbot.keyClicks(dialog.dask_tls[name], str(tls_files[name]))
    assert "over TLS with these certificates" in dialog.dask_check.text()
    dialog.accept()
    assert window.settings.dask_scheduler == cluster.scheduler_address
    with distributed.Client(cluster.scheduler_address, security=security) as client:
        before = sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())
        view = open_to_overview(qtbot, window, job, monkeypatch)
        after = sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())
    assert after > before, "no task ran on the cluster"
    assert (f"24 rank log(s), read on the Dask cluster at {cluster.scheduler_address} (2 workers)"
            in window.status.text())
    local = rank_report(index_ranks(find_trace_logs(job)))
    assert view.rows.rowCount() == 24 and view.findings.count() == len(local.findings)
    qtbot.waitUntil(lambda: window.model.loaded is not None, timeout=120_000)  # the details follow as ever


def test_an_unreachable_scheduler_set_in_the_app_reads_on_this_machine_and_says_why(
        qtbot, window, no_slot_errors, job, monkeypatch):
    from inspector.core.analysis import dask_engine

    monkeypatch.setattr(dask_engine, "DEFAULT_TIMEOUT_S", 1.0)
    window.settings.dask_scheduler = "tcp://127.0.0.1:9"
    window.settings.dask_allow_insecure = True
    view = open_to_overview(qtbot, window, job, monkeypatch)
    assert "read on this machine: cannot reach the Dask scheduler at tcp://127.0.0.1:9" in window.status.text()
    assert view.rows.rowCount() == 24
    qtbot.waitUntil(lambda: window.model.loaded is not None, timeout=120_000)


def test_a_plain_tcp_scheduler_set_in_the_app_is_not_used_unless_allowed(
        qtbot, window, no_slot_errors, job, monkeypatch, quick_interpreter):
    """The app's setting is as explicit as the command line: a tcp:// address without "Allow a plain
    tcp:// scheduler" is never connected to; the logs are read here and the status bar says why."""
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    window.settings.python = quick_interpreter
    dialog = QtSettingsDialog(window.settings, window)
    qtbot.keyClicks(dialog.dask_scheduler, "tcp://127.0.0.1:9")
    assert "can run code on this machine" in dialog.dask_check.text() and "Not used" in dialog.dask_check.text()
    dialog.dask_allow_insecure.setChecked(True)
    assert dialog.dask_check.text().startswith("<b>Warning</b>")
    dialog.dask_allow_insecure.setChecked(False)
    dialog.accept()
    assert not window.settings.dask_allow_insecure
    view = open_to_overview(qtbot, window, job, monkeypatch)
    assert "read on this machine: refusing tcp://127.0.0.1:9" in window.status.text()
    assert view.rows.rowCount() == 24
    qtbot.waitUntil(lambda: window.model.loaded is not None, timeout=120_000)
