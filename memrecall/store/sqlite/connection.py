"""Connection policy: pragmas, the writer lock, the reader pool, opening and closing.

* One **writer** connection, used under a :class:`threading.Lock`: writes in one process
  are serialised, and each write transaction starts with ``BEGIN IMMEDIATE`` so writers in
  *other* processes queue on SQLite's lock (``busy_timeout``) instead of reading a revision
  that another writer is about to change.
* A pool of at most ``readers`` **reader** connections; a read takes one from the pool,
  runs one (deferred) transaction and gives it back, so a connection is only ever used by
  one thread at a time. WAL lets readers run beside the writer.
* Every connection: ``foreign_keys=ON``, ``secure_delete=ON`` (deleted content is
  overwritten with zeros), ``busy_timeout``, ``synchronous=FULL`` (``durable=False``
  gives NORMAL: still safe against a killed process, may lose the last commits on power
  loss). The database is in WAL mode.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from ..model import (
    StoreError,
)
from ..sqlcommon.base import Connection, SQLBase
from . import rows, schema


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/memrecall/memory.db``, else ``~/.local/share/memrecall/memory.db``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memrecall" / "memory.db"


class SQLiteBase(SQLBase):
    """The connections of one SQLite file: a writer under a lock, a pool of readers.

    ``path`` is created (with its parent directory) if missing and migrated forward to
    :data:`~memrecall.store.sqlite.schema.SCHEMA_VERSION`; a file from a newer version is
    refused. Also SQLite's side of :class:`~memrecall.store.sqlcommon.base.SQLBase`.
    """

    _SOLE_SOURCE_FIELDS = schema.SOLE_SOURCE_FIELDS
    _FORGET_STATEMENTS = schema.FORGET_STATEMENTS

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        readers: int = 4,
        busy_timeout_ms: int = 10_000,
        durable: bool = True,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._busy_timeout_ms = busy_timeout_ms
        self._synchronous = "FULL" if durable else "NORMAL"
        self._write_lock = threading.Lock()
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._readers = threading.BoundedSemaphore(readers)
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._closed = False
        self._writer = self._connect()
        self._writer.execute("PRAGMA journal_mode=WAL")
        self._migrate()

    # ------------------------------------------------------------------ connections

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=self._busy_timeout_ms / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        with self._all_lock:
            self._all.append(conn)
        return conn

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    @contextmanager
    def _write(self, user_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction on the writer (every write is serialised,
        so ``user_id`` is not needed)."""
        self._check_open()
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One deferred transaction on a pooled reader (a snapshot beside the writer)."""
        self._check_open()
        with self._readers:
            try:
                conn = self._pool.get_nowait()
            except queue.Empty:
                conn = self._connect()
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            finally:
                self._pool.put(conn)

    def _read_one(self) -> AbstractContextManager[sqlite3.Connection]:
        """A read of one statement: the same as :meth:`_read`."""
        return self._read()

    def _migrate(self) -> None:
        with self._write() as conn:
            schema.migrate(conn, self.path.name)

    def schema_version(self) -> int:
        """The file's schema version."""
        with self._read() as conn:
            return int(conn.execute("SELECT version FROM schema_version").fetchone()[0])

    def close(self) -> None:
        """Close every connection (idempotent)."""
        if self._closed:
            return
        self._closed = True
        with self._write_lock, self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()

    # ------------------------------------------------------------------ helpers

    def scrub(self) -> bool:
        """Checkpoint the WAL into the main file and truncate it; True when it completed."""
        self._check_open()
        with self._write_lock:
            busy, _log, _done = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return int(busy) == 0

    # ------------------------------------------------------------------ dialect hooks

    def _ts(self, value: datetime) -> str:
        return rows.ts(value)

    def _dt(self, value: Any) -> datetime:
        return rows.dt(value)

    def _upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        return rows.upsert(table, columns, key)

    def _advance(self, conn: Connection, user_id: str) -> None:
        rows.advance(conn, user_id)

    def _memory_param(self, memory_id: str) -> tuple[str]:
        return (memory_id,)

    def _forget_mark(self, conn: Connection) -> None:
        return None

    def _scrub_forgotten(self, mark: int | None) -> bool:
        """Checkpoint and truncate the WAL (:meth:`scrub`): ``secure_delete`` zeroed the
        freed pages, the checkpoint carries them into the main file."""
        return self.scrub()
