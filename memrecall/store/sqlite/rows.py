"""SQLite's row types and statements: times, the whole-row upsert, memory_revision.

Times are stored as fixed-width UTC text (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), which sorts and
compares as time. Column lists and row conversions are shared with every SQL backend
(:mod:`memrecall.store.sqlcommon.rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ..model import InvalidInput
from ..sqlcommon.base import Connection, marks

__all__ = ["advance", "dt", "ts", "upsert"]


def ts(value: datetime) -> str:
    """A time to write (refuses a naive one)."""
    if value.tzinfo is None:
        raise InvalidInput("times must be timezone-aware")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def dt(text: str) -> datetime:
    """A time read back, in UTC."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def upsert(table: str, columns: Sequence[str], key: Sequence[str]) -> str:
    """``INSERT OR REPLACE`` of one whole row (the ``key`` is the table's own)."""
    return f"INSERT OR REPLACE INTO {table} ({', '.join(columns)}) VALUES ({marks(len(columns))})"


def advance(conn: Connection, user_id: str) -> None:
    """Advance the user's memory_revision by one (inside the write's transaction)."""
    conn.execute(
        "INSERT INTO memory_revisions (user_id, revision) VALUES (?, 1) "
        "ON CONFLICT (user_id) DO UPDATE SET revision = revision + 1",
        (user_id,),
    )
