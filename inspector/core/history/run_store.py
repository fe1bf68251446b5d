"""Where the history lives: an embedded SQLite file by default, the same tables on PostgreSQL for a
team (`postgresql://…`). One schema, versioned in `schema_version`, brought up to date by a chain of
migrations when a store is opened; the figures are columns, so the store can be queried by hand."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from inspector.core.history.run_record import GATE_FAILED, GATE_PASSED, CauseRow, RunRecord, kept_site
from inspector.core.outputs.summary_model import CacheCount, Unit

APP_FOLDER = "torch-compile-inspector"
STORE_FILE = "history.sqlite"

# Each migration brings the schema from its index to the next version. `{id}` is the dialect's
# self-numbering key, `{real}` its floating-point type.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    ("""CREATE TABLE runs (
            id {id}, identity TEXT NOT NULL UNIQUE, run_at {real} NOT NULL, recorded_at {real} NOT NULL,
            host TEXT NOT NULL, kind TEXT NOT NULL, source TEXT NOT NULL, script TEXT, git_commit TEXT,
            torch_version TEXT, triton_version TEXT, tool_version TEXT NOT NULL, mode TEXT, options TEXT NOT NULL,
            complete INTEGER NOT NULL, compile_s {real}, units INTEGER NOT NULL, breaks INTEGER NOT NULL,
            recompiles INTEGER NOT NULL, kernels INTEGER NOT NULL, speedup TEXT, speedup_value {real},
            speedup_low {real}, speedup_high {real}, t_eager_s {real}, t_compiled_s {real}, memory_mb {real})""",
     "CREATE INDEX runs_by_script ON runs (script, run_at)",
     """CREATE TABLE run_break_sites (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            location TEXT NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL)""",
     """CREATE TABLE run_recompile_causes (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            cause TEXT NOT NULL, count INTEGER NOT NULL)""",
     """CREATE TABLE run_caches (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            cache TEXT NOT NULL, hit INTEGER NOT NULL, miss INTEGER NOT NULL, bypass INTEGER NOT NULL)""",
     """CREATE TABLE run_units (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            compile_id TEXT NOT NULL, rank INTEGER, function TEXT NOT NULL, location TEXT, status TEXT NOT NULL,
            compile_s {real}, kernels INTEGER NOT NULL)"""),
    # 2: each run's timing rounds, so a speed change is judged with both runs' noise
    ("ALTER TABLE runs ADD COLUMN timing_rounds TEXT",),
    # 3: what `check --history` said of the run ("pass"/"fail"), so a failed run never becomes the
    # baseline; a break site's kind and code line, so a site is known again after lines move
    ("ALTER TABLE runs ADD COLUMN gate TEXT", "ALTER TABLE run_break_sites ADD COLUMN kind TEXT",
     "ALTER TABLE run_break_sites ADD COLUMN code TEXT"),
)
SCHEMA_VERSION = len(MIGRATIONS)
_DIALECTS = {"sqlite": {"id": "INTEGER PRIMARY KEY AUTOINCREMENT", "real": "REAL"},
             "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION"}}
_RUN_COLUMNS = ("identity", "run_at", "recorded_at", "host", "kind", "source", "script", "git_commit",
                "torch_version", "triton_version", "tool_version", "mode", "options", "complete", "compile_s",
                "units", "breaks", "recompiles", "kernels", "speedup", "speedup_value", "speedup_low",
                "speedup_high", "t_eager_s", "t_compiled_s", "memory_mb", "timing_rounds", "gate")


class StoreError(Exception):
    """The store cannot be opened or written (a newer schema, an unreachable server, a bad address)."""


def default_store_path() -> Path:
    """$XDG_DATA_HOME/torch-compile-inspector/history.sqlite (~/.local/share/… when unset)."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / APP_FOLDER / STORE_FILE


class RunStore:
    """The runs of the history, in SQLite or PostgreSQL. Open with `open_store(address)`."""

    def __init__(self, connection, dialect: str, address: str):
        self._connection = connection
        self.dialect = dialect
        self.address = address
        self._migrate()

    # --- writing -------------------------------------------------------------------------------

    def add(self, record: RunRecord) -> tuple[RunRecord, bool]:
        """Keep `record`; (the stored run, True) — or (the run kept before, False) when a run read from
        the same files is there already."""
        kept = self.by_identity(record.identity)
        if kept is not None:
            return kept, False
        speedup = record.speedup or {}
        values = (record.identity, record.run_at, record.recorded_at, record.host, record.kind, record.source,
                  record.script, record.git_commit, record.torch_version, record.triton_version, record.tool_version,
                  record.mode, json.dumps(record.options, sort_keys=True, default=str), int(record.complete),
                  record.compile_s, record.units, record.breaks, record.recompiles, record.kernels,
                  json.dumps(record.speedup) if record.speedup else None, speedup.get("value"), speedup.get("low"),
                  speedup.get("high"), record.t_eager_s, record.t_compiled_s, record.memory_mb,
                  json.dumps(record.rounds) if record.rounds else None, record.gate)
        try:
            with self._transaction() as cursor:
                cursor.execute(self._sql(f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) VALUES "
                                         f"({', '.join('?' for _ in _RUN_COLUMNS)}) RETURNING id"), values)
                run_id = cursor.fetchone()[0]
                self._insert_rows(cursor, "run_break_sites", ("location", "reason", "count", "kind", "code"), run_id,
                                  [(s.location, s.reason, s.count, s.kind, s.code) for s in record.sites])
                self._insert_rows(cursor, "run_recompile_causes", ("cause", "count"), run_id,
                                  [(c.cause, c.count) for c in record.causes])
                self._insert_rows(cursor, "run_caches", ("cache", "hit", "miss", "bypass"), run_id,
                                  [(name, c.hit, c.miss, c.bypass) for name, c in record.caches.items()])
                self._insert_rows(cursor, "run_units",
                                  ("compile_id", "rank", "function", "location", "status", "compile_s", "kernels"),
                                  run_id, [(u.compile_id, u.rank, u.shown, u.location, u.status, u.compile_time_s,
                                            u.kernels) for u in record.unit_rows])
        except self._integrity_errors():  # another process kept the same run between the look and the write
            kept = self.by_identity(record.identity)
            if kept is None:
                raise
            return kept, False
        return self.run(run_id), True

    def _insert_rows(self, cursor, table: str, columns: Sequence[str], run_id: int, rows: Iterable[tuple]) -> None:
        rows = [(run_id, *row) for row in rows]
        if rows:
            cursor.executemany(self._sql(f"INSERT INTO {table} (run_id, {', '.join(columns)}) VALUES "
                                         f"({', '.join('?' for _ in range(len(columns) + 1))})"), rows)

    def set_gate(self, run_id: int, passed: bool) -> RunRecord | None:
        """Keep what `check --history` said of a stored run (the last word counts): a failed run is
        left out of the runs later ones are compared with."""
        with self._transaction() as cursor:
            cursor.execute(self._sql("UPDATE runs SET gate = ? WHERE id = ?"), (GATE_PASSED if passed else GATE_FAILED,
                                                                              run_id))
        return self.run(run_id)

    # --- reading -------------------------------------------------------------------------------

    def run(self, run_id: int) -> RunRecord | None:
        found = self._runs("WHERE id = ?", (run_id,))
        return found[0] if found else None

    def by_identity(self, identity: str) -> RunRecord | None:
        found = self._runs("WHERE identity = ?", (identity,))
        return found[0] if found else None

    def runs_of(self, script: str | None = None, limit: int | None = None) -> list[RunRecord]:
        """The runs of `script` (every run when None), oldest first; the last `limit` of them."""
        where, parameters = ("WHERE script = ?", (script,)) if script else ("", ())
        tail = f" LIMIT {int(limit)}" if limit else ""
        runs = self._runs(f"{where} ORDER BY run_at DESC, id DESC{tail}", parameters)
        return runs[::-1]

    def scripts(self) -> list[tuple[str, int, float]]:
        """(script, runs, latest run time) for every script in the history, latest first."""
        with self._transaction() as cursor:
            cursor.execute("SELECT script, COUNT(*), MAX(run_at) FROM runs WHERE script IS NOT NULL "
                           "GROUP BY script ORDER BY MAX(run_at) DESC")
            return [(row[0], int(row[1]), float(row[2])) for row in cursor.fetchall()]

    def _runs(self, clause: str, parameters: tuple) -> list[RunRecord]:
        with self._transaction() as cursor:
            cursor.execute(self._sql(f"SELECT id, {', '.join(_RUN_COLUMNS)} FROM runs {clause}"), parameters)
            rows = cursor.fetchall()
            ids = [row[0] for row in rows]
            children = {table: self._children(cursor, table, columns, ids) for table, columns in (
                ("run_break_sites", "location, reason, count, kind, code"), ("run_recompile_causes", "cause, count"),
                ("run_caches", "cache, hit, miss, bypass"),
                ("run_units", "compile_id, rank, function, location, status, compile_s, kernels"))}
        return [_record(row, {table: rows_of.get(row[0], []) for table, rows_of in children.items()}) for row in rows]

    def _children(self, cursor, table: str, columns: str, ids: list[int]) -> dict[int, list[tuple]]:
        found: dict[int, list[tuple]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            cursor.execute(self._sql(f"SELECT run_id, {columns} FROM {table} WHERE run_id IN "
                                     f"({', '.join('?' for _ in chunk)})"), tuple(chunk))
            for row in cursor.fetchall():
                found.setdefault(row[0], []).append(tuple(row[1:]))
        return found

    # --- the schema ----------------------------------------------------------------------------

    def schema_version(self) -> int:
        with self._transaction() as cursor:
            cursor.execute("SELECT version FROM schema_version")
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        with self._transaction() as cursor:
            cursor.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            if self.dialect == "postgresql":  # one opener migrates at a time; others wait, then see it done
                cursor.execute("LOCK TABLE schema_version IN EXCLUSIVE MODE")
            cursor.execute("SELECT version FROM schema_version")
            row = cursor.fetchone()
            version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise StoreError(f"the history at {self.address} has schema version {version}, newer than this "
                                 f"tool's {SCHEMA_VERSION}: use a newer torch-compile-inspector")
            for migration in MIGRATIONS[version:]:
                for statement in migration:
                    cursor.execute(statement.format(**_DIALECTS[self.dialect]))
            if row is None:
                cursor.execute(self._sql("INSERT INTO schema_version (version) VALUES (?)"), (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:
                cursor.execute(self._sql("UPDATE schema_version SET version = ?"), (SCHEMA_VERSION,))

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.dialect == "postgresql" else text

    def _transaction(self):
        return _Transaction(self._connection)

    def _integrity_errors(self) -> tuple[type[BaseException], ...]:
        if self.dialect == "postgresql":
            import psycopg

            return (psycopg.errors.UniqueViolation,)
        return (sqlite3.IntegrityError,)

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Transaction:
    """A cursor whose work is committed when the block ends, rolled back when it raises."""

    def __init__(self, connection):
        self._connection = connection

    def __enter__(self):
        self._cursor = self._connection.cursor()
        return self._cursor

    def __exit__(self, exc_type, exc, traceback) -> None:
        try:
            if exc_type is None:
                self._connection.commit()
            else:
                self._connection.rollback()
        finally:
            self._cursor.close()


def open_store(address: str | os.PathLike | None = None) -> RunStore:
    """The store at `address`: a postgresql:// URL, a SQLite file path, or None for the default file."""
    text = str(address) if address is not None else ""
    if text.startswith(("postgresql://", "postgres://")):
        return _open_postgres(text)
    path = Path(text) if text else default_store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(str(path), timeout=30, isolation_level="DEFERRED")
        connection.execute("PRAGMA foreign_keys = ON")
        return RunStore(connection, "sqlite", str(path))
    except sqlite3.DatabaseError as error:
        raise StoreError(f"cannot open the history at {path}: {error}") from error
    except OSError as error:
        raise StoreError(f"cannot open the history at {path}: {error.strerror or error}") from error


def _open_postgres(url: str) -> RunStore:
    try:
        import psycopg
    except ImportError as error:
        raise StoreError("a PostgreSQL history needs psycopg: pip install 'torch-compile-inspector[history-postgres]'"
                         ) from error
    try:
        connection = psycopg.connect(url, connect_timeout=10)
        return RunStore(connection, "postgresql", _without_password(url))
    except psycopg.Error as error:
        raise StoreError(f"cannot open the history at {_without_password(url)}: {error}") from error


def _without_password(address: str) -> str:
    """The address as it may be shown: every password in it — user:PASSWORD@, ?password=…, a
    key=value DSN's password=… — replaced by ***, as psycopg's own parser reads it."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(address)
    except Exception:  # noqa: BLE001 - no psycopg, or an address it cannot read: show none of it
        return "a PostgreSQL address that cannot be read"
    if "password" not in parts:
        return address
    return make_conninfo(**{**parts, "password": "***"})


def _record(row: tuple, children: dict[str, list[tuple]]) -> RunRecord:
    named = dict(zip(("id", *_RUN_COLUMNS), row))
    try:
        options = json.loads(named["options"]) if named["options"] else {}
    except ValueError:
        options = {}
    try:
        speedup = json.loads(named["speedup"]) if named["speedup"] else None
    except ValueError:
        speedup = None
    try:
        rounds = json.loads(named["timing_rounds"]) if named["timing_rounds"] else []
        rounds = tuple((float(eager), float(compiled)) for eager, compiled in rounds)
    except (ValueError, TypeError):  # a row another tool wrote: read, never trusted
        rounds = ()
    return RunRecord(
        identity=named["identity"], run_at=float(named["run_at"]), recorded_at=float(named["recorded_at"]),
        host=named["host"], kind=named["kind"], source=named["source"], script=named["script"],
        git_commit=named["git_commit"], torch_version=named["torch_version"], triton_version=named["triton_version"],
        tool_version=named["tool_version"], mode=named["mode"], options=options if isinstance(options, dict) else {},
        complete=bool(named["complete"]), compile_s=named["compile_s"], units=named["units"], breaks=named["breaks"],
        recompiles=named["recompiles"], kernels=named["kernels"],
        speedup=speedup if isinstance(speedup, dict) else None,
        t_eager_s=named["t_eager_s"], t_compiled_s=named["t_compiled_s"], memory_mb=named["memory_mb"], rounds=rounds,
        gate=named["gate"] if named["gate"] in (GATE_PASSED, GATE_FAILED) else None,
        sites=tuple(kept_site(location, reason, count, kind or "", code)
                    for location, reason, count, kind, code in children["run_break_sites"]),
        causes=tuple(CauseRow(*row) for row in children["run_recompile_causes"]),
        caches={cache: CacheCount(hit=hit, miss=miss, bypass=bypass)
                for cache, hit, miss, bypass in children["run_caches"]},
        unit_rows=tuple(Unit(compile_id=compile_id, rank=rank, shown=shown, location=location, status=status,
                             compile_time_s=compile_s, kernels=kernels)
                        for compile_id, rank, shown, location, status, compile_s, kernels in children["run_units"]),
        run_id=int(named["id"]))
