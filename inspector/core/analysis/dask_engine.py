"""A job's rank overview read on a Dask cluster: each rank log is read by a worker where it lies (a
shared filesystem, the same paths on every machine) and only the small per-rank figures come back.
One owner for reaching the cluster, for the command line (`summary JOB --dask ADDRESS`) and the app
(its Dask setting). `distributed` is an optional extra: without it, or without a scheduler to reach,
`EngineUnavailable` says why in one line and the caller reads on this machine or stops. The reader
is imported when a cluster is used, so the command line imports this module for its default cheaply.

Dask's protocol carries pickles on every connection (the scheduler's messages and the results the
client gathers), so whoever answers at the scheduler's address can run code in this process. Only TLS
with the user's certificates protects against that: every connection `distributed` opens then proves
the peer holds a certificate the user's CA signed (a peer that does is trusted with this process).
Plain tcp:// is used only when the user opted in and is warned that the peer can run code here; any
other address is refused before a socket is opened. The greeting check (dask_peer) that runs first
is a diagnosis, not a guard: it makes a silent, garbled or non-Dask peer one line within the timeout,
but `distributed` then opens connections of its own that nothing checks, so a plain tcp:// peer that
greets plainly once and with a pickle afterwards runs its code. Running the client in a child process
would not contain that either (the child runs as the same user, with the same files and network)."""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspector.core.analysis.rank_figures import RankReport

DEFAULT_TIMEOUT_S = 20.0  # how long to try reaching the scheduler
DEFAULT_PORT = 8786  # Dask's scheduler port
INSECURE_WARNING = ("a plain tcp:// Dask scheduler is neither encrypted nor authenticated: the scheduler there, or "
                    "anyone who can answer for it on the network, can run code on this machine, in this process "
                    "and as you; checking its greeting cannot prevent that, only tls:// with your CA's "
                    "certificates does")


class EngineUnavailable(Exception):
    """The cluster cannot be used; the message says why, in one line."""


class DaskSetupError(EngineUnavailable, ValueError):
    """The address, certificates or timeout given cannot be used as they are (a usage error)."""


def checked_timeout(seconds: float) -> float:
    """`seconds` when it is a finite number above 0; DaskSetupError otherwise (nan, inf, 0, -1)."""
    try:
        seconds = float(seconds)
    except (TypeError, ValueError):
        raise DaskSetupError(f"the Dask timeout must be a number of seconds, not {seconds!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise DaskSetupError(f"the Dask timeout must be a finite number of seconds above 0, not {seconds:g}")
    return seconds


@dataclass(frozen=True)
class DaskTarget:
    """A scheduler and how it may be reached: `address` (tls://host:port, or tcp://host:port with
    `allow_insecure`), and for TLS the user's CA certificate, this client's certificate and its key
    (the key may be in the certificate's file). As given by the user; `checked()` says whether it may be used."""
    address: str
    tls_ca: str = ""
    tls_cert: str = ""
    tls_key: str = ""
    allow_insecure: bool = False

    @property
    def uses_tls(self) -> bool:
        return self.address.startswith("tls://")

    def checked(self) -> DaskTarget:
        """This target with its address made whole (scheme and port), or DaskSetupError saying why it
        cannot be used: an unknown scheme, tls:// without certificates, certificates with tcp://, tcp://
        without the opt-in, a host or port that is not one."""
        address = self.address.strip()
        certificates = [name for name in (self.tls_ca, self.tls_cert, self.tls_key) if name]
        if not address:
            raise DaskSetupError("no Dask scheduler address given")
        scheme, separator, location = address.partition("://")
        if not separator:
            scheme, location = ("tls" if certificates else "tcp"), address
        scheme = scheme.lower()
        if scheme not in ("tls", "tcp"):
            raise DaskSetupError(f"a Dask scheduler is reached at tls://host:port (or, opted in, tcp://host:port), "
                                 f"not {scheme}:// ({_shown(address)})")
        host, port = _host_port(location, address)
        whole = f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
        if scheme == "tls":
            if not (self.tls_ca and self.tls_cert):
                raise DaskSetupError(f"{whole} needs TLS certificates: the CA that signed the scheduler's, and this "
                                     f"client's certificate and key (--dask-tls-ca, --dask-tls-cert, --dask-tls-key)")
            for name in certificates:
                if not Path(name).expanduser().is_file():
                    raise DaskSetupError(f"the TLS certificate or key {_shown(name)} is not a readable file")
        elif certificates:
            raise DaskSetupError(f"TLS certificates go with a tls:// scheduler address, not {whole}")
        elif not self.allow_insecure:
            raise DaskSetupError(f"refusing {whole}: {INSECURE_WARNING}. Use tls:// with your certificates, or "
                                 f"allow plain tcp:// explicitly on a network you trust (--dask-allow-insecure; "
                                 f"in the app, Allow a plain tcp:// scheduler)")
        return replace(self, address=whole)

    def security(self):
        """`distributed`'s Security for this target: TLS with the user's certificates required, or
        None for an opted-in tcp:// scheduler."""
        if not self.uses_tls:
            return None
        from distributed.security import Security

        files = {name: str(Path(value).expanduser()) for name, value in
                 (("tls_ca_file", self.tls_ca), ("tls_client_cert", self.tls_cert),
                  ("tls_client_key", self.tls_key)) if value}
        return Security(require_encryption=True, **files)


def _host_port(location: str, address: str) -> tuple[str, int]:
    location = location.rstrip("/")
    if location.startswith("["):
        host, bracket, rest = location[1:].partition("]")
        port_text = rest[1:] if bracket and rest.startswith(":") else ("" if bracket and not rest else None)
    else:
        host, colon, port_text = location.rpartition(":")
        if not colon:
            host, port_text = location, ""
    if port_text is None or not host or any(c.isspace() or c in "/@?#[]" for c in host):
        raise DaskSetupError(f"{_shown(address)} is not a scheduler address (scheme://host:port)")
    if port_text == "":
        return host, DEFAULT_PORT
    if not (port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536):
        raise DaskSetupError(f"{_shown(address)} has no valid port (1-65535)")
    return host, int(port_text)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 120 else text[:117] + "...")


@dataclass(frozen=True)
class ClusterOverview:
    report: RankReport
    address: str
    workers: int

    def said(self, logs: int) -> str:
        """Where the logs were read, for the status bar and the text summary; over plain tcp:// with
        what that allowed, since the app has no stderr to warn on."""
        unprotected = "" if self.address.startswith("tls://") else "; plain tcp://: the scheduler could run code here"
        return (f"{logs} rank log(s), read on the Dask cluster at {self.address} "
                f"({self.workers} worker{'s' if self.workers != 1 else ''}{unprotected})")


def overview_on_dask(logs: Iterable[Path], target: DaskTarget, timeout_s: float | None = None) -> ClusterOverview:
    """The per-rank report of `logs`, read on the cluster whose scheduler `target` names (tried for
    `timeout_s`, DEFAULT_TIMEOUT_S unless given). The target is checked (DaskSetupError) and the
    scheduler's greeting read (EngineUnavailable) before `distributed` connects; over plain tcp:// the
    connections `distributed` opens after that are unchecked (see the module's docstring)."""
    from inspector.core.analysis.dask_peer import PeerRefused, check_greeting
    from inspector.core.analysis.divergence_rules import rank_report
    from inspector.core.analysis.rank_figures import index_ranks

    timeout_s = checked_timeout(DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s)
    target = target.checked()
    try:
        from distributed import Client
    except ImportError:
        raise EngineUnavailable("reading on Dask needs Dask's distributed: "
                                "pip install 'compile-inspector[dask]'") from None
    try:
        security = target.security()
        ssl_context = security.get_connection_args("client")["ssl_context"] if security is not None else None
    except Exception as error:  # an unreadable certificate or key: ssl's or distributed's own errors
        raise EngineUnavailable(f"cannot use the TLS certificates for {target.address}: {_one_line(error)}") from None
    scheme_less = target.address.partition("://")[2]
    host, port = _host_port(scheme_less, target.address)
    deadline = time.monotonic() + timeout_s  # from here: importing distributed is no part of reaching it
    try:
        check_greeting(host, port, target.address, deadline, ssl_context)
    except PeerRefused as refused:
        raise EngineUnavailable(str(refused)) from None
    try:
        client = Client(target.address, timeout=f"{max(deadline - time.monotonic(), 1.0):.3f}s", security=security)
    except Exception as error:  # whatever distributed raises on a scheduler it cannot use: one line, no traceback
        raise EngineUnavailable(f"cannot reach the Dask scheduler at {target.address}: {_one_line(error)}") from None
    with client:
        workers = len(client.scheduler_info().get("workers", {}))
        return ClusterOverview(rank_report(index_ranks(list(logs), client.get_executor())), target.address, workers)


def _one_line(error: Exception) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."
