"""Memory reads: the shared ones (:mod:`memrecall.store.sqlcommon.reads`) with SQLite's
change cursor.

Each method is one deferred read transaction on a pooled reader connection (a consistent
snapshot beside the writer, thanks to WAL).
"""

from __future__ import annotations

from typing import Any

from ..model import MemoryRecord
from ..sqlcommon.base import Connection, marks
from ..sqlcommon.reads import MemoryReads as SharedReads
from .connection import SQLiteBase

_IN_LIST = 500
"""Ids per ``IN (...)`` list: well under SQLite's limit on a statement's parameters."""


class MemoryReads(SharedReads, SQLiteBase):
    """The memory-reading half of :class:`~memrecall.store.sqlite.SQLiteStore`."""

    _CURSOR_COLUMN = "event_id"

    def _change_cursor(self, conn: Connection, user_id: str, revision: int) -> int:
        """The cursor of :meth:`changes_since` is the user's last audit ``event_id``: every
        write appends an audit row in the transaction that advances memory_revision
        (writers are serialised by ``BEGIN IMMEDIATE``, so event ids grow in commit order).
        """
        row = conn.execute(
            "SELECT MAX(event_id) FROM memory_audit WHERE user_id = ?", (user_id,)
        ).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def _active_among(
        self, conn: Connection, active: str, args: list[Any], memory_ids: list[str]
    ) -> list[MemoryRecord]:
        found: list[MemoryRecord] = []
        for start in range(0, len(memory_ids), _IN_LIST):
            part = memory_ids[start : start + _IN_LIST]
            sql = active + f" AND memory_id IN ({marks(len(part))})"
            found.extend(self._record_of(r) for r in conn.execute(sql, [*args, *part]))
        return found
