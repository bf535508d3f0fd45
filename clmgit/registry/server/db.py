"""Storage of the registry server: SQLite (the embedded default) or PostgreSQL (shared use).

Both are reached through `Database.transaction()`, which yields a `Tx` for the handlers' SQL.
SQL is written once with `?` placeholders; the PostgreSQL side rewrites them to `%s`. The schema
is versioned: `MIGRATIONS` lists the steps, `schema_version` records how many ran, and a server
started on an older (or new, empty) database runs the missing ones in one transaction, so no
set-up step is needed and an upgrade is a restart.

A cluster row keeps the record as JSON text (`doc`: every field but status), the status as JSON
text, copies of the fields that list filters select on, a version (the ETag) and the lease.
Keeping JSON as text lets a list of thousands of clusters be answered by joining strings.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Protocol

from clmgit.errors import RegistryError
from clmgit.redact import redact
from clmgit.registry.server.limits import STATEMENT_TIMEOUT_SECONDS

_COLUMNS = """
    id TEXT PRIMARY KEY,
    alias TEXT NOT NULL,
    api_server_url TEXT NOT NULL,
    channel TEXT NOT NULL,
    criticality_level INTEGER NOT NULL,
    environment TEXT NOT NULL,
    infrastructure_account TEXT NOT NULL,
    lifecycle_status TEXT NOT NULL,
    local_id TEXT NOT NULL,
    provider TEXT NOT NULL,
    region TEXT NOT NULL,
    doc TEXT NOT NULL,
    status TEXT NOT NULL,
    version BIGINT NOT NULL,
    lease_holder TEXT,
    lease_expires DOUBLE PRECISION
"""
#: The schema's steps, oldest first; append, never edit. Step 1 is the schema of servers before
#: versioning (hence IF NOT EXISTS: such a database has its tables but no version yet).
#: `seq` keeps registry order (the order records were created in); the same on both databases.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        f"CREATE TABLE IF NOT EXISTS clusters (seq BIGINT NOT NULL, {_COLUMNS})",
        "CREATE INDEX IF NOT EXISTS clusters_seq ON clusters (seq)",
        "CREATE TABLE IF NOT EXISTS infrastructure_accounts"
        " (id TEXT PRIMARY KEY, doc TEXT NOT NULL)",
    ),
    # 2: CLM's `created_at` (records created before it have none).
    ("ALTER TABLE clusters ADD COLUMN created_at TEXT",),
)
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(tx: Tx) -> int:
    """Run the steps this database has not had; the version it had before."""
    tx.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    found = tx.one("SELECT MAX(version) FROM schema_version")
    current = int(found[0]) if found and found[0] is not None else 0
    if current > SCHEMA_VERSION:
        raise RegistryError(
            f"the database has schema version {current}, newer than this server's "
            f"{SCHEMA_VERSION}; upgrade clmgit"
        )
    for step in MIGRATIONS[current:]:
        for statement in step:
            tx.run(statement)
    if current < SCHEMA_VERSION:
        tx.run("DELETE FROM schema_version")
        tx.run("INSERT INTO schema_version (version) VALUES (?)", [SCHEMA_VERSION])
    return current


class Unavailable(RegistryError):
    """The database cannot be reached; the server answers 503 and clients retry."""


class Tx:
    """One transaction's cursor: run SQL with `?` placeholders, read rows as tuples."""

    def __init__(self, cursor: Any, *, postgres: bool) -> None:
        self._cursor, self.postgres = cursor, postgres
        #: Appended to a SELECT that is followed by an UPDATE of the same row. SQLite needs none:
        #: its transactions are serialised as a whole.
        self.for_update = " FOR UPDATE" if postgres else ""

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._cursor.execute(sql.replace("?", "%s") if self.postgres else sql, params)
        return int(self._cursor.rowcount)

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self.run(sql, params)
        return list(self._cursor.fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        self.run(sql, params)
        row: tuple[Any, ...] | None = self._cursor.fetchone()
        return row


class Database(Protocol):
    #: The database URL without its password, for messages.
    location: str

    def transaction(self) -> Any:
        """A context manager yielding a `Tx`; commits on success, rolls back on an error."""
        ...

    def close(self) -> None: ...


def open_database(url: str) -> Database:
    """`sqlite:///relative.db`, `sqlite:////absolute.db` or `postgresql://user@host/db`."""
    if url.startswith("sqlite:///"):
        return SQLiteDatabase(url.removeprefix("sqlite:///"))
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(url)
    raise RegistryError(
        f"unsupported database {redact(url)!r}; use sqlite:///PATH or postgresql://HOST/DB"
    )


class SQLiteDatabase:
    """One connection, one transaction at a time (SQLite serialises writers anyway)."""

    def __init__(self, path: str) -> None:
        self.location = f"sqlite:///{path}"
        try:
            self._conn = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self._conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as e:
            raise RegistryError(f"cannot open the database {self.location}: {e}") from None
        self._lock = threading.Lock()
        with self.transaction() as tx:
            migrate(tx)

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._lock:
            cursor = self._conn.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield Tx(cursor, postgres=False)
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            cursor.execute("COMMIT")

    def close(self) -> None:
        self._conn.close()


class PostgresDatabase:
    """A small pool of psycopg connections, opened on demand, at most `size` at once."""

    def __init__(self, url: str, *, size: int = 8) -> None:
        import psycopg

        self._psycopg = psycopg
        self.location = redact(url)
        self._url = url
        self._idle: queue.LifoQueue[Any] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)
        with self.transaction() as tx:
            # Two servers starting at once on a database must not both migrate it.
            tx.run("SELECT pg_advisory_xact_lock(727272)")
            migrate(tx)

    def _connect(self) -> Any:
        with suppress(queue.Empty):
            return self._idle.get_nowait()
        try:
            return self._psycopg.connect(
                self._url,
                autocommit=True,
                connect_timeout=10,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_SECONDS * 1000}",
            )
        except self._psycopg.OperationalError as e:
            raise Unavailable(f"cannot connect to {self.location}: {e}".strip()) from None

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with self._slots:
            conn = self._connect()
            try:
                with conn.transaction():
                    yield Tx(conn.cursor(), postgres=True)
            except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as e:
                conn.close()  # a broken connection (the server restarted) is not kept
                raise Unavailable(f"the database {self.location} failed: {e}") from None
            finally:
                if not conn.closed:
                    self._idle.put(conn)

    def close(self) -> None:
        while not self._idle.empty():
            self._idle.get_nowait().close()
