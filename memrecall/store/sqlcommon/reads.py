"""Memory reads: records, pages, history, audit, tombstones, snapshots and changes.

Each method is one read transaction of the backend (one consistent snapshot); the change
cursor of :meth:`MemoryReads.changes_since` is the backend's (:meth:`_change_cursor`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from ..backend import (
    StoreChanges,
)
from ..model import (
    AuditEvent,
    AuditType,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    Status,
    Tombstone,
)
from .base import Connection, SQLBase
from .rows import (
    COLUMNS,
    VERSION_COLUMNS,
    scope_args,
    scope_filter,
    scope_of,
    version_of,
)

_ACTIVE = f"SELECT {COLUMNS} FROM memories WHERE user_id = ? AND status = 'active'"


class MemoryReads(SQLBase):
    """The memory-reading half of a store."""

    _CURSOR_COLUMN: ClassVar[str]
    """The ``memory_audit`` column that :meth:`_change_cursor` values compare with."""

    @abstractmethod
    def _change_cursor(self, conn: Connection, user_id: str, revision: int) -> int:
        """The change cursor now, in the read's snapshot (``revision``: the user's
        memory_revision in it)."""

    @abstractmethod
    def _active_among(
        self, conn: Connection, active: str, args: list[Any], memory_ids: list[str]
    ) -> list[MemoryRecord]:
        """The rows of ``active`` (a query and its arguments) among ``memory_ids``."""

    def get(self, user_id: str, memory_id: str) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.get`."""
        with self._read() as conn:
            return self._current_record(conn, user_id, memory_id)

    def list_records(
        self,
        user_id: str,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        status: Status | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> list[MemoryRecord]:
        """See :meth:`memrecall.store.backend.Store.list_records`."""
        sql = f"SELECT {COLUMNS} FROM memories WHERE user_id = ?"
        args: list[Any] = [user_id]
        if scopes is not None:
            sql, args = scope_filter(sql, args, scopes)
        if status is not None:
            sql += " AND status = ?"
            args.append(status.value)
        if after is not None:
            sql += " AND memory_id > ?"
            args.append(after)
        sql += " ORDER BY memory_id LIMIT ?"
        args.append(limit)
        with self._read() as conn:
            return [self._record_of(row) for row in conn.execute(sql, args)]

    def history(self, user_id: str, memory_id: str) -> list[MemoryVersion]:
        """See :meth:`memrecall.store.backend.Store.history`."""
        with self._read() as conn:
            self._current_record(conn, user_id, memory_id)
            rows = conn.execute(
                f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? "
                "ORDER BY revision",
                (memory_id,),
            )
            return [version_of(row, self._dt) for row in rows]

    def audit_events(self, user_id: str, memory_id: str | None = None) -> list[AuditEvent]:
        """See :meth:`memrecall.store.backend.Store.audit_events`."""
        sql = (
            "SELECT event_id, memory_id, user_id, event_type, scope_type, workspace_type, "
            "revision, content_hash, request_id, created_at FROM memory_audit WHERE user_id = ?"
        )
        args: list[Any] = [user_id]
        if memory_id is not None:
            sql += " AND memory_id = ?"
            args.append(memory_id)
        sql += " ORDER BY event_id"
        with self._read() as conn:
            return [
                AuditEvent(
                    event_id=row[0],
                    memory_id=row[1],
                    user_id=row[2],
                    type=AuditType(row[3]),
                    scope=scope_of(row[4], row[5]),
                    revision=row[6],
                    content_hash=row[7],
                    request_id=row[8],
                    created_at=self._dt(row[9]),
                )
                for row in conn.execute(sql, args)
            ]

    def tombstone(self, user_id: str, memory_id: str) -> Tombstone | None:
        """See :meth:`memrecall.store.backend.Store.tombstone`."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT memory_id, user_id, deleted_at, final_revision FROM memory_tombstones "
                "WHERE memory_id = ? AND user_id = ?",
                (memory_id, user_id),
            ).fetchone()
        return None if row is None else Tombstone(row[0], row[1], self._dt(row[2]), row[3])

    # ------------------------------------------------------------------ tool fields

    def memory_revision(self, user_id: str) -> int:
        """See :meth:`memrecall.store.backend.Store.memory_revision`."""
        with self._read_one() as conn:
            return self._user_revision(conn, user_id)

    def snapshot(
        self, user_id: str, scopes: Sequence[MemoryScope]
    ) -> tuple[int, list[MemoryRecord]]:
        """See :meth:`memrecall.store.backend.Store.snapshot`."""
        sql, args = scope_filter(_ACTIVE, [user_id], scopes)
        with self._read() as conn:
            revision = self._user_revision(conn, user_id)
            records = [
                self._record_of(row) for row in conn.execute(sql + " ORDER BY memory_id", args)
            ]
        return revision, records

    def changes_since(
        self, user_id: str, scopes: Sequence[MemoryScope], cursor: int | None
    ) -> StoreChanges:
        """See :meth:`memrecall.store.backend.Store.changes_since`.

        The memories named by the user's audit rows after ``cursor`` (up to the cursor
        now, :meth:`_change_cursor`), as they are in one snapshot: each active one in
        ``scopes`` as a record, the others as removed.
        """
        active, args = scope_filter(_ACTIVE, [user_id], scopes)
        with self._read() as conn:
            revision = self._user_revision(conn, user_id)
            last = self._change_cursor(conn, user_id, revision)
            if cursor is None:
                records = [
                    self._record_of(r) for r in conn.execute(active + " ORDER BY memory_id", args)
                ]
                return StoreChanges(revision, last, tuple(records), (), full=True)
            column = self._CURSOR_COLUMN
            changed = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT memory_id FROM memory_audit "
                    f"WHERE user_id = ? AND {column} > ? AND {column} <= ? ORDER BY memory_id",
                    (user_id, cursor, last),
                )
            ]
            found = {r.memory_id: r for r in self._active_among(conn, active, args, changed)}
        removed = tuple(m for m in changed if m not in found)
        return StoreChanges(
            revision, last, tuple(found[m] for m in changed if m in found), removed, full=False
        )

    def find_key(self, user_id: str, scope: MemoryScope, key: str) -> MemoryRecord | None:
        """See :meth:`memrecall.store.backend.Store.find_key`."""
        scope_type, workspace_type = scope_args(scope)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM memories WHERE user_id = ? AND scope_type = ? "
                "AND COALESCE(workspace_type, '') = ? AND memory_key = ?",
                (user_id, scope_type, workspace_type or "", key),
            ).fetchone()
        return None if row is None else self._record_of(row)
