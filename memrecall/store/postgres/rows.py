"""PostgreSQL's row types and statements: times, the user lock, memory_revision, upserts.

Times are ``timestamptz``: written as timezone-aware datetimes, read back in UTC.
Column lists, row conversions and the content hash are shared with the SQLite backend
(:mod:`memrecall.store.sqlcommon.rows`: the same rows, the same audit hashes).

The user lock (:func:`lock_user`) is how this backend keeps the store's invariants under
concurrent writers: every write transaction of a user first takes ``FOR UPDATE`` on the
user's ``memory_revisions`` row, so one user's writes run one at a time across every
connection and process, while different users' writes run side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import psycopg
from psycopg.rows import TupleRow

from ..model import InvalidInput
from ..sqlcommon.base import Connection, marks

__all__ = ["Conn", "advance", "dt", "lock_user", "ts", "upsert"]

Conn = psycopg.Connection[TupleRow]
"""A pooled connection (autocommit; transactions are explicit)."""


def ts(value: datetime) -> datetime:
    """A time to write (refuses a naive one)."""
    if value.tzinfo is None:
        raise InvalidInput("times must be timezone-aware")
    return value


def dt(value: datetime) -> datetime:
    """A time read back, in UTC."""
    return value.astimezone(UTC)


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """An insert of one whole row that updates every other column of the row with the
    same ``key`` (``ON CONFLICT ... DO UPDATE``)."""
    update = ", ".join(f"{c} = EXCLUDED.{c}" for c in columns if c not in key)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks(len(columns))}) "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {update}"
    )


def lock_user(conn: Conn, user_id: str) -> None:
    """Take the user's write lock (module docstring) for the rest of the transaction."""
    conn.execute(
        "INSERT INTO memory_revisions (user_id, revision) VALUES (%s, 0) "
        "ON CONFLICT (user_id) DO NOTHING",
        (user_id,),
    )
    conn.execute("SELECT 1 FROM memory_revisions WHERE user_id = %s FOR UPDATE", (user_id,))


def advance(conn: Connection, user_id: str) -> int:
    """Advance the user's memory_revision by one (under the user lock); the new value."""
    row = conn.execute(
        "UPDATE memory_revisions SET revision = revision + 1 WHERE user_id = ? RETURNING revision",
        (user_id,),
    ).fetchone()
    if row is None:  # only when a caller forgot lock_user
        raise RuntimeError("advance: the user's write lock was not taken")
    return int(row[0])
