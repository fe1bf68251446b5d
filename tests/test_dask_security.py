"""Reaching a Dask scheduler never runs a peer's code unannounced: `distributed` unpickles what a peer
sends on every connection, so a plain tcp:// address is refused unless the user opts in (with a
warning that the peer can run code in this process), a tls:// one needs the user's certificates, and
the peer's greeting is read and checked first so that a wrong peer is one line. Each peer here is a
real listener on 127.0.0.1 behaving as a hostile or wrong one would: sending a pickled object that
creates a file, nothing, garbage, an HTTP reply, a frame header claiming 2**40 bytes. Each is one
clear line within --dask-timeout, no file made, no traceback."""

from __future__ import annotations

import pickle
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import MULTI_RANK
from cli_runner import run_cli_process

ROOT = Path(__file__).resolve().parent.parent
msgpack = pytest.importorskip("msgpack")
pytest.importorskip("distributed")
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def job() -> Path:
    if not MULTI_RANK.is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    return MULTI_RANK


class _MakesAFile:
    """Unpickled, opens (creates) the file at `path`: the proof that a peer's code ran."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return open, (self.path, "w")


def distributed_message(frames: list[bytes]) -> bytes:
    """`frames` as distributed's TCP comm sends them: total length, frame count, frame lengths, frames."""
    body = struct.pack("<Q", len(frames)) + b"".join(struct.pack("<Q", len(f)) for f in frames) + b"".join(frames)
    return struct.pack("<Q", len(body)) + body


def pickled_greeting(path: Path) -> bytes:
    """A greeting that distributed's decoder turns into `pickle.loads` of an object creating `path`."""
    return distributed_message([msgpack.packb({"__Pickled__": 1}),
                                msgpack.packb({"pickled-obj": pickle.dumps(_MakesAFile(path)), "num-sub-frames": 0})])


def plain_greeting() -> bytes:
    """The greeting a real scheduler sends: the plain map the inspector's check accepts."""
    return distributed_message([msgpack.packb({"compression": None, "python": (3, 11, 7), "pickle-protocol": 5})])


class Peer:
    """A listener on 127.0.0.1 that answers its first connection with `greeting` and every later one
    with `later` (default: the same; None: says nothing and holds the connection open), and counts
    the connections it got."""

    def __init__(self, greeting: bytes | None, later: bytes | None | str = "same"):
        self.first, self.later, self.connections = greeting, greeting if later == "same" else later, 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"tcp://127.0.0.1:{self.server.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            self.held.append(conn)
            greeting = self.first if self.connections == 1 else self.later
            if greeting is not None:
                try:
                    conn.sendall(greeting)
                except OSError:
                    pass

    def close(self) -> None:
        self.closed.set()
        self.server.close()
        for conn in self.held:
            conn.close()


@pytest.fixture
def peer():
    made = []

    def make(greeting: bytes | None, later: bytes | None | str = "same") -> Peer:
        made.append(Peer(greeting, later))
        return made[-1]

    yield make
    for each in made:
        each.close()


def test_a_plain_tcp_scheduler_is_refused_before_connecting_unless_opted_in(job, peer, tmp_path):
    """The issue's attack: the listener's greeting unpickles into an object creating a file. Without
    the opt-in the address is refused before a socket is opened; the message says why and how."""
    made = tmp_path / "peer_code_ran"
    listener = peer(pickled_greeting(made))
    done = run_cli_process("summary", job, "--dask", listener.address, "--dask-timeout", "5")
    assert done.returncode == 2
    assert not made.exists(), "the peer's pickled object ran"
    assert listener.connections == 0
    assert "can run code on this machine" in done.stderr and "--dask-allow-insecure" in done.stderr
    assert "tls://" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_opted_in_tcp_peer_whose_first_greeting_carries_a_pickle_is_one_line(job, peer, tmp_path):
    """The greeting check names a peer that pickles at once; the warning before it still says that a
    plain tcp:// peer can run code in this process, since the check covers one connection only (a peer
    pickling on its second connection: test_dask_plain_tcp_warning.py)."""
    made = tmp_path / "peer_code_ran"
    listener = peer(pickled_greeting(made))
    done = run_cli_process("summary", job, "--dask", listener.address, "--dask-allow-insecure", "--dask-timeout", "5")
    assert done.returncode == 2
    assert not made.exists(), "the peer's pickled object ran"
    assert listener.connections == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("compile-inspector: warning:") and "can run code on this machine" in lines[0]
    assert "in this process" in lines[0] and "only tls://" in lines[0]
    assert f"the peer at {listener.address} is not a Dask scheduler" in lines[1] and "unpickle" in lines[1]


@pytest.mark.parametrize("greeting, said", [
    (None, "did not greet as a Dask scheduler in time"),
    (b"\x00\x17garbage that is not dask" * 4, "not a Dask scheduler"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "not a Dask scheduler: it announced a first message of"),
    (struct.pack("<Q", 2**40) + b"\x00" * 64, "announced a first message of 1,099,511,627,776 bytes"),
], ids=["silent", "garbage", "http", "frame_of_2**40_bytes"])
def test_a_peer_that_is_no_dask_scheduler_is_one_line_within_the_timeout(job, peer, greeting, said):
    listener = peer(greeting)
    started = time.monotonic()
    done = run_cli_process("summary", job, "--dask", listener.address, "--dask-allow-insecure", "--dask-timeout", "2")
    took = time.monotonic() - started
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2 and said in lines[1], done.stderr
    # the timeout bounds the wait on the peer; the rest is the interpreter starting and importing
    assert took < 2 + 25, took


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "soon"])
def test_the_dask_timeout_must_be_a_finite_positive_number(job, value):
    done = run_cli_process("summary", job, "--dask", "tcp://127.0.0.1:9", "--dask-allow-insecure",
                           f"--dask-timeout={value}")
    assert done.returncode == 2
    assert "--dask-timeout" in done.stderr and "seconds" in done.stderr


@pytest.mark.parametrize("address, extra, said", [
    ("ucx://127.0.0.1:8786", [], "not ucx://"),
    ("inproc://127.0.0.1/1", [], "not inproc://"),
    ("tls://127.0.0.1:8786", [], "needs TLS certificates"),
    ("tcp://127.0.0.1:99999", ["--dask-allow-insecure"], "no valid port"),
    ("tcp://", ["--dask-allow-insecure"], "is not a scheduler address"),
    ("tcp://127.0.0.1:8786", ["--dask-tls-ca", __file__], "go with a tls:// scheduler address"),
    ("tls://127.0.0.1:8786", ["--dask-tls-ca", "/no/such/ca.pem", "--dask-tls-cert", __file__],
     "is not a readable file"),
])
def test_an_address_that_cannot_be_used_is_a_usage_error(job, address, extra, said):
    done = run_cli_process("summary", job, "--dask", address, *extra, "--dask-timeout", "2")
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_tls_address_answered_by_a_plain_peer_fails_the_tls_handshake(job, peer, tmp_path, tls_files):
    made = tmp_path / "peer_code_ran"
    listener = peer(pickled_greeting(made))
    address = listener.address.replace("tcp://", "tls://")
    done = run_cli_process("summary", job, "--dask", address, "--dask-tls-ca", tls_files["ca"], "--dask-tls-cert",
                           tls_files["cert"], "--dask-tls-key", tls_files["key"], "--dask-timeout", "5")
    assert done.returncode == 2 and not made.exists()
    assert f"TLS with the Dask scheduler at {address} failed" in done.stderr
    assert "warning" not in done.stderr


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory) -> dict[str, Path]:
    """A self-signed certificate (its own CA) and key for 127.0.0.1, made with the openssl command."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                        "-days", "2", "-subj", "/CN=dask-test", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("no openssl command to make a test certificate")
    return {"ca": cert, "cert": cert, "key": key}
