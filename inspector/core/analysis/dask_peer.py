"""The first message a Dask scheduler sends, read and checked here before `distributed` is handed
the address: a diagnosis that turns a wrong peer into one line, not a protection. `distributed`
unpickles what a peer sends in its greeting before it checks anything (a listener answering with a
pickled object runs it), reads a frame of whatever length the peer announces into memory, and waits
on a silent peer past its own timeout. So the greeting is read first on a plain socket (TLS-wrapped
for a tls:// scheduler): within the deadline, at most GREETING_MAX_BYTES, decoded as msgpack without
any hook, and accepted only when it is the small map of plain values a scheduler sends
(`compression`, `python`, `pickle-protocol`). Anything else is one line saying what the peer sent.
This checks one connection: the ones `distributed` opens afterwards are its own, so over plain
tcp:// a peer that greets plainly here can still send pickles there. Only TLS (every connection
authenticated by the user's CA) keeps a peer's code out; dask_engine says so to the user."""

from __future__ import annotations

import socket
import ssl
import struct
import time

GREETING_MAX_BYTES = 64 * 1024  # a scheduler's greeting is ~60 bytes
GREETING_KEYS = frozenset({"compression", "python", "pickle-protocol"})
_LENGTH = struct.Struct("<Q")


class PeerRefused(Exception):
    """The peer is not a Dask scheduler this tool will talk to; the message says why, in one line."""


def check_greeting(host: str, port: int, address: str, deadline: float,
                   ssl_context: ssl.SSLContext | None = None) -> dict:
    """The greeting of the scheduler at host:port (its `python` version and `pickle-protocol`), read
    before `deadline` (time.monotonic()); PeerRefused when it cannot be reached or sends anything but a
    plain greeting. The connection is closed afterwards: the scheduler logs one closed handshake."""
    try:
        sock = socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.001))
    except OSError as error:  # refused, unreachable, or no answer in time
        raise PeerRefused(f"cannot reach the Dask scheduler at {address}: {error.strerror or error}") from None
    try:
        if ssl_context is not None:
            try:
                sock.settimeout(_left(deadline, address, "the TLS handshake"))
                sock = ssl_context.wrap_socket(sock, server_hostname=host)
            except (ssl.SSLError, ssl.CertificateError) as error:
                raise PeerRefused(f"TLS with the Dask scheduler at {address} failed: "
                                  f"{getattr(error, 'reason', None) or error}") from None
            except TimeoutError:
                raise _silent(address) from None
            except OSError as error:
                raise PeerRefused(f"TLS with the Dask scheduler at {address} failed: {error}") from None
        head = _read(sock, _LENGTH.size, deadline, address)
        (length,) = _LENGTH.unpack(head)
        if length > GREETING_MAX_BYTES or length < 2 * _LENGTH.size:
            raise PeerRefused(f"the peer at {address} is not a Dask scheduler: it announced a first message of "
                              f"{length:,} bytes (a scheduler's greeting is under 1 KB; its first bytes: {head!r})")
        return _plain_greeting(_read(sock, length, deadline, address), address)
    finally:
        sock.close()


def _plain_greeting(body: bytes, address: str) -> dict:
    import msgpack

    frames, offset = struct.unpack_from("<Q", body)[0], _LENGTH.size
    if frames != 1:
        raise PeerRefused(f"the peer at {address} is not a Dask scheduler: its greeting has {frames:,} parts "
                          f"(a scheduler's has 1, and more can carry objects to unpickle)")
    (size,) = struct.unpack_from("<Q", body, offset)
    frame = body[offset + _LENGTH.size:]
    if size != len(frame):
        raise PeerRefused(f"the peer at {address} is not a Dask scheduler: its greeting is malformed")
    try:
        greeting = msgpack.unpackb(frame, use_list=False, raw=False, strict_map_key=False)
    except Exception as error:  # msgpack's errors share no base class besides ValueError/Exception
        raise PeerRefused(f"the peer at {address} is not a Dask scheduler: its greeting is not msgpack ({error})") \
            from None
    if not (isinstance(greeting, dict) and GREETING_KEYS <= greeting.keys()
            and all(isinstance(key, str) and _plain(value) for key, value in greeting.items())):
        raise PeerRefused(f"the peer at {address} is not a Dask scheduler: its greeting is not the plain map a "
                          f"scheduler sends (it may carry an object to unpickle): refused")
    return greeting


def _plain(value) -> bool:
    """A scalar or a short tuple of scalars: what a greeting holds, and nothing that a decoder hook
    would turn into an object."""
    scalars = (type(None), bool, int, float, str)
    return isinstance(value, scalars) or (isinstance(value, tuple) and len(value) <= 8
                                          and all(isinstance(item, scalars) for item in value))


def _read(sock: socket.socket, size: int, deadline: float, address: str) -> bytes:
    chunks, got = [], 0
    while got < size:
        try:
            sock.settimeout(_left(deadline, address, "its greeting"))
            chunk = sock.recv(min(size - got, 65536))
        except TimeoutError:
            raise _silent(address) from None
        except OSError as error:
            raise PeerRefused(f"the Dask scheduler at {address} dropped the connection: {error}") from None
        if not chunk:
            raise PeerRefused(f"the peer at {address} closed the connection before greeting as a Dask scheduler "
                              f"does{' (after ' + format(got, ',') + ' bytes)' if got else ''}")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _left(deadline: float, address: str, waiting_for: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _silent(address, waiting_for)
    return left


def _silent(address: str, waiting_for: str = "its greeting") -> PeerRefused:
    return PeerRefused(f"the peer at {address} did not greet as a Dask scheduler in time "
                       f"(timed out waiting for {waiting_for}): is it a Dask scheduler?")
