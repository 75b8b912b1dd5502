"""Memory reads: the shared ones (:mod:`memrecall.store.sqlcommon.reads`) with
PostgreSQL's change cursor.

Each method is one REPEATABLE READ, READ ONLY transaction on a pooled connection: one
consistent snapshot, beside any writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..backend import StoreChanges
from ..model import MemoryRecord, MemoryScope
from ..sqlcommon.base import Connection
from ..sqlcommon.reads import MemoryReads as SharedReads
from .connection import PostgresBase


class MemoryReads(SharedReads, PostgresBase):
    """The memory-reading half of :class:`~memrecall.store.postgres.PostgresStore`."""

    _CURSOR_COLUMN = "seq"

    def changes_since(
        self, user_id: str, scopes: Sequence[MemoryScope], cursor: int | None
    ) -> StoreChanges:
        """See :meth:`memrecall.store.backend.Store.changes_since`.

        The cursor is the user's memory_revision in the read's snapshot. Every audit row
        carries the memory_revision its write produced (``seq``), assigned under the user's
        write lock, so one user's ``seq`` values grow in commit order: a write this snapshot
        does not see commits later with a larger ``seq`` than the cursor returned, and the
        next call finds it. (The audit ``event_id`` comes from a sequence, which is not
        transactional: it follows commit order only while every writer holds the lock and
        no session caches sequence values; ``seq`` follows it by construction.) When the
        user's memory_revision still equals the cursor, one statement answers.
        """
        if cursor is not None:  # the common case, nothing new: one statement
            with self._read_one() as conn:
                revision = self._user_revision(conn, user_id)
            if revision == cursor:
                return StoreChanges(revision, cursor, (), (), full=False)
        return super().changes_since(user_id, scopes, cursor)

    def _change_cursor(self, conn: Connection, user_id: str, revision: int) -> int:
        """The user's memory_revision (:meth:`changes_since`)."""
        return revision

    def _active_among(
        self, conn: Connection, active: str, args: list[Any], memory_ids: list[str]
    ) -> list[MemoryRecord]:
        if not memory_ids:
            return []
        sql = active + " AND memory_id = ANY(?)"
        return [self._record_of(r) for r in conn.execute(sql, [*args, memory_ids])]
