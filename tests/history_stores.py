"""Stores the run-history tests run against: a SQLite file, and a real PostgreSQL server started in
a temporary folder for the test session (skipped, with the reason, where none can be started)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

POSTGRES_BINS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


class PostgresServer:
    """A throwaway PostgreSQL cluster on a unix socket in a temporary folder; `database()` makes a
    fresh database per test so tests never see each other's runs."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="tci-pg-"))
        self.bin = POSTGRES_BINS[0]
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: the cluster runs as the system's postgres user
            if shutil.which("runuser") is None:
                raise RuntimeError("running as root and runuser is missing")
            shutil.chown(self.folder, "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        data = self.folder / "data"
        self._run(str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "tci", "--no-sync", "-E", "UTF8")
        self._run(str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.folder / "server.log"), "-w", "-t", "60",
                  "-o", f"-k {self.folder} -c listen_addresses='' -p {self.port} -F", "start")

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(command[0]).name} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://tci@/{database}?host={self.folder}&port={self.port}"

    def database(self) -> str:
        import psycopg

        name = f"tci_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_postgres() -> PostgresServer:
    """A started server, or pytest.skip with why none could be."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install '.[history-postgres]')")
    if not POSTGRES_BINS:
        pytest.skip("no PostgreSQL server here (/usr/lib/postgresql/*/bin: apt-get install postgresql)")
    try:
        return PostgresServer()
    except (OSError, RuntimeError, subprocess.TimeoutExpired, LookupError) as error:
        pytest.skip(f"cannot start a PostgreSQL server: {error}")


@pytest.fixture
def data_home(tmp_path, monkeypatch) -> Path:
    """A history of this test alone: the default store under $XDG_DATA_HOME, recording on, no other
    store named."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TCI_NO_HISTORY", raising=False)
    monkeypatch.delenv("TCI_HISTORY_STORE", raising=False)
    return tmp_path / "data"


@pytest.fixture(scope="session")
def postgres():
    """One PostgreSQL server for the whole test session (a fresh database per test)."""
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_address(request, tmp_path) -> str:
    """Each test that takes it runs against a SQLite file and against a real PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    return request.getfixturevalue("postgres").database()
