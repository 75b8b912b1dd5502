"""Connection policy: the pool, write and read transactions, the scrub, opening and closing.

* One :class:`psycopg_pool.ConnectionPool` (``min_connections`` to ``max_connections``);
  connections are in autocommit mode and every store method opens exactly one explicit
  transaction on one pooled connection, so a connection is used by one thread at a time.
* **Writes** run at READ COMMITTED and begin by locking the user's ``memory_revisions`` row
  (``SELECT ... FOR UPDATE``, :func:`~memrecall.store.postgres.rows.lock_user`): one user's
  writes queue on that row across every connection and host, so the read of the current
  revision, the check of ``expected_revision``, the key lookup before an insert and the
  advance of memory_revision can never interleave with another writer's. Nothing is retried
  and no serialisation failure reaches the caller. Different users never share a lock,
  and a transaction locks one user only, so there is no lock-order deadlock.
* **Reads** run at REPEATABLE READ, READ ONLY: one snapshot for the whole method (the
  memory_revision and the rows it describes agree). A read of one statement runs without
  an explicit transaction (a statement is its own snapshot).
* The shared statements (:mod:`memrecall.store.sqlcommon`) are written with ``?``
  placeholders: the transactions yield a :class:`QmarkConnection`, which hands them to
  psycopg as ``%s``.
* A session that sits idle inside a transaction longer than ``idle_in_transaction_s``
  (a hung client holding a user lock) is ended by the server, which rolls it back.
  JIT compilation is off for the store's sessions (short queries; it cost 0.5 s once).

Forget scrubs: after the deleting transaction commits, :meth:`PostgresBase.scrub` rewrites
the content tables with ``VACUUM (FULL)`` (heap, TOAST and indexes), which drops the dead
row versions that still hold the deleted bytes (docs/store.md, "Deployment").
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import IsolationLevel, sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import TupleRow
from psycopg_pool import ConnectionPool, PoolTimeout

from ..model import StoreError
from ..sqlcommon.base import Connection, Params, SQLBase
from . import rows, schema
from .rows import Conn, lock_user

_XID_WRAP = 2**32

_SNAPSHOT_HOLDERS = """SELECT
    (SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
        AND ((backend_xmin IS NOT NULL AND age(backend_xmin) >= age(%(x)s::xid))
          OR (backend_xid IS NOT NULL AND age(backend_xid) >= age(%(x)s::xid))))
  + (SELECT count(*) FROM pg_prepared_xacts WHERE age(transaction) >= age(%(x)s::xid))
  + (SELECT count(*) FROM pg_replication_slots
        WHERE xmin IS NOT NULL AND age(xmin) >= age(%(x)s::xid))"""
"""Sessions, prepared transactions and slots that may still see rows deleted by
transaction ``x``: while one exists, VACUUM must keep those row versions."""


def describe(dsn: str) -> str:
    """The DSN without credentials, for messages (``postgresql://host:port/db``)."""
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql (unparsable DSN)"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    return f"postgresql://{host}:{port}/{parts.get('dbname') or ''}"


@functools.lru_cache(maxsize=1024)
def pyformat(statement: str) -> str:
    """A statement written with ``?`` placeholders in psycopg's style (``%s``; a literal
    ``%`` doubled)."""
    return statement.replace("%", "%%").replace("?", "%s")


class QmarkConnection:
    """A pooled connection that runs the shared code's statements
    (:mod:`memrecall.store.sqlcommon.base`): ``?`` placeholders with a sequence of values
    become psycopg's ``%s``. A statement without parameters, or with a mapping (this
    backend's own ``%(name)s`` statements, such as :data:`~.schema.FORGET_STATEMENTS`), is
    passed on as written."""

    __slots__ = ("raw",)

    def __init__(self, raw: Conn) -> None:
        self.raw = raw

    def execute(
        self, statement: str, parameters: Params | None = None, /
    ) -> psycopg.Cursor[TupleRow]:
        """Run one statement (class docstring)."""
        if parameters is None or isinstance(parameters, Mapping):
            return self.raw.execute(statement, parameters)
        return self.raw.execute(pyformat(statement), parameters)

    def executemany(self, statement: str, parameters: Iterable[Sequence[Any]], /) -> None:
        """Run one ``?`` statement once per parameter sequence (one batch)."""
        with self.raw.cursor() as cur:
            cur.executemany(pyformat(statement), parameters)


class PostgresBase(SQLBase):
    """The pooled connections of one PostgreSQL database (or schema, via ``search_path``).

    The schema is created or migrated forward to
    :data:`~memrecall.store.postgres.schema.SCHEMA_VERSION` on open; a newer one is refused.
    Also PostgreSQL's side of :class:`~memrecall.store.sqlcommon.base.SQLBase`.
    """

    _SOLE_SOURCE_FIELDS = schema.SOLE_SOURCE_FIELDS
    _FORGET_STATEMENTS = schema.FORGET_STATEMENTS

    def __init__(
        self,
        dsn: str,
        *,
        min_connections: int = 1,
        max_connections: int = 8,
        connect_timeout_s: float = 10.0,
        idle_in_transaction_s: int = 60,
        scrub_on_forget: bool = True,
        scrub_lock_timeout_ms: int = 5_000,
    ) -> None:
        self.dsn = dsn
        self.name = describe(dsn)
        self.scrub_on_forget = scrub_on_forget
        self._scrub_lock_timeout_ms = scrub_lock_timeout_ms
        self._idle_ms = int(idle_in_transaction_s * 1000)
        self._closed = False
        self._close_lock = threading.Lock()
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            dsn,
            min_size=min_connections,
            max_size=max_connections,
            kwargs={"autocommit": True, "connect_timeout": max(1, round(connect_timeout_s))},
            configure=self._configure,
            open=False,
            name="memrecall",
        )
        self._migrate(max(1, round(connect_timeout_s)))
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
        except PoolTimeout:
            self._pool.close()
            raise StoreError(f"{self.name}: cannot connect") from None

    # ------------------------------------------------------------------ connections

    def _configure(self, conn: Conn) -> None:
        # jit off: compiling a plan took about 0.5 s on a fresh table's first queries
        # (bench store, after-write max), and these queries are far too short to gain
        conn.execute(
            sql.SQL("SET idle_in_transaction_session_timeout = {}; SET jit = off").format(
                sql.Literal(self._idle_ms)
            )
        )

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    @contextmanager
    def _connection(self) -> Iterator[Conn]:
        self._check_open()
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout:
            raise StoreError(f"{self.name}: no connection available") from None
        except psycopg.Error as exc:
            # the message may quote row values: keep only the class and the SQLSTATE
            raise StoreError(
                f"{self.name}: {type(exc).__name__} (sqlstate {exc.sqlstate})"
            ) from exc

    @contextmanager
    def _write(self, user_id: str | None) -> Iterator[QmarkConnection]:
        """One READ COMMITTED transaction, holding ``user_id``'s write lock when given."""
        with self._connection() as conn:
            conn.isolation_level = IsolationLevel.READ_COMMITTED
            conn.read_only = False
            with conn.transaction():
                if user_id is not None:
                    lock_user(conn, user_id)
                yield QmarkConnection(conn)

    @contextmanager
    def _read(self) -> Iterator[QmarkConnection]:
        """One REPEATABLE READ, READ ONLY transaction (one snapshot)."""
        with self._connection() as conn:
            conn.isolation_level = IsolationLevel.REPEATABLE_READ
            conn.read_only = True
            with conn.transaction():
                yield QmarkConnection(conn)

    @contextmanager
    def _read_one(self) -> Iterator[QmarkConnection]:
        """No explicit transaction: for reads of a single statement (its own snapshot),
        one round trip instead of three."""
        with self._connection() as conn:
            yield QmarkConnection(conn)

    def _migrate(self, connect_timeout: int) -> None:
        """Connect once (a clear error now, not a pool timeout later) and migrate."""
        try:
            with psycopg.connect(self.dsn, connect_timeout=connect_timeout) as conn:
                schema.migrate(conn, self.name)
        except psycopg.OperationalError as exc:
            # libpq's reason (refused, unknown host, authentication failed) names no secret
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(f"{self.name}: cannot connect: {reason}") from None

    def schema_version(self) -> int:
        """The database's schema version."""
        with self._read() as conn:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
        if row is None:
            raise StoreError(f"{self.name}: no schema version")
        return int(row[0])

    def close(self) -> None:
        """Close every connection (idempotent)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._pool.close()

    # ------------------------------------------------------------------ scrub

    def scrub(self, deleted_by: int | None = None) -> bool:
        """Rewrite the content tables (``VACUUM (FULL)``); True when the dead row versions
        are gone from the table files.

        False when the rewrite could not take its lock within ``scrub_lock_timeout_ms``, or
        when some session, prepared transaction or replication slot could still see rows
        deleted by transaction ``deleted_by`` (VACUUM must keep those): the content is
        already unreachable through every query, and a later scrub removes it.
        """
        tables = sql.SQL(", ").join(sql.Identifier(t) for t in schema.CONTENT_TABLES)
        with self._connection() as conn:
            if deleted_by is not None:
                row = conn.execute(_SNAPSHOT_HOLDERS, {"x": str(deleted_by % _XID_WRAP)}).fetchone()
                if row is None or int(row[0]) > 0:
                    return False
            conn.execute(
                sql.SQL("SET lock_timeout = {}").format(sql.Literal(self._scrub_lock_timeout_ms))
            )
            try:
                conn.execute(sql.SQL("VACUUM (FULL) {}").format(tables))
            except psycopg.errors.LockNotAvailable:
                return False
            finally:
                conn.execute("RESET lock_timeout")
        return True

    # ------------------------------------------------------------------ dialect hooks

    def _ts(self, value: datetime) -> datetime:
        return rows.ts(value)

    def _dt(self, value: Any) -> datetime:
        return rows.dt(value)

    def _upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return rows.upsert(table, columns, key)

    def _advance(self, conn: Connection, user_id: str) -> int:
        """The new memory_revision: the ``seq`` of the audit row (the change cursor)."""
        return rows.advance(conn, user_id)

    def _memory_param(self, memory_id: str) -> dict[str, str]:
        return {"m": memory_id}

    def _forget_mark(self, conn: Connection) -> int | None:
        """The deleting transaction's id, for :meth:`scrub`."""
        row = conn.execute("SELECT pg_current_xact_id()::text").fetchone()
        return None if row is None else int(row[0])

    def _scrub_forgotten(self, mark: int | None) -> bool:
        """:meth:`scrub` after the deleting transaction ``mark``, unless
        ``scrub_on_forget`` is off (then False)."""
        if not self.scrub_on_forget or mark is None:
            return False
        return self.scrub(deleted_by=mark)
