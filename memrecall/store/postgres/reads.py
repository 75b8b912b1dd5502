"""Memory reads: records, pages, history, audit, tombstones, snapshots and changes.

Each method is one REPEATABLE READ, READ ONLY transaction on a pooled connection: one
consistent snapshot, beside any writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from .connection import PostgresBase
from .rows import (
    COLUMNS,
    VERSION_COLUMNS,
    current_record,
    dt,
    record_of,
    scope_args,
    scope_filter,
    scope_of,
    user_revision,
    version_of,
)


class MemoryReads(PostgresBase):
    """The memory-reading half of :class:`~memrecall.store.postgres.PostgresStore`."""

    def get(self, user_id: str, memory_id: str) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.get`."""
        with self._read() as conn:
            return current_record(conn, user_id, memory_id)

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
        sql = f"SELECT {COLUMNS} FROM memories WHERE user_id = %s"
        args: list[Any] = [user_id]
        if scopes is not None:
            sql, args = scope_filter(sql, args, scopes)
        if status is not None:
            sql += " AND status = %s"
            args.append(status.value)
        if after is not None:
            sql += " AND memory_id > %s"
            args.append(after)
        sql += " ORDER BY memory_id LIMIT %s"
        args.append(limit)
        with self._read() as conn:
            return [record_of(row) for row in conn.execute(sql, args)]

    def history(self, user_id: str, memory_id: str) -> list[MemoryVersion]:
        """See :meth:`memrecall.store.backend.Store.history`."""
        with self._read() as conn:
            current_record(conn, user_id, memory_id)
            rows = conn.execute(
                f"SELECT {VERSION_COLUMNS} FROM memory_versions WHERE memory_id = %s "
                "ORDER BY revision",
                (memory_id,),
            )
            return [version_of(row) for row in rows]

    def audit_events(self, user_id: str, memory_id: str | None = None) -> list[AuditEvent]:
        """See :meth:`memrecall.store.backend.Store.audit_events`."""
        sql = (
            "SELECT event_id, memory_id, user_id, event_type, scope_type, workspace_type, "
            "revision, content_hash, request_id, created_at FROM memory_audit WHERE user_id = %s"
        )
        args: list[Any] = [user_id]
        if memory_id is not None:
            sql += " AND memory_id = %s"
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
                    created_at=dt(row[9]),
                )
                for row in conn.execute(sql, args)
            ]

    def tombstone(self, user_id: str, memory_id: str) -> Tombstone | None:
        """See :meth:`memrecall.store.backend.Store.tombstone`."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT memory_id, user_id, deleted_at, final_revision FROM memory_tombstones "
                "WHERE memory_id = %s AND user_id = %s",
                (memory_id, user_id),
            ).fetchone()
        return None if row is None else Tombstone(row[0], row[1], dt(row[2]), row[3])

    # ------------------------------------------------------------------ tool fields

    def memory_revision(self, user_id: str) -> int:
        """See :meth:`memrecall.store.backend.Store.memory_revision`."""
        with self._read_one() as conn:
            return user_revision(conn, user_id)

    def snapshot(
        self, user_id: str, scopes: Sequence[MemoryScope]
    ) -> tuple[int, list[MemoryRecord]]:
        """See :meth:`memrecall.store.backend.Store.snapshot`."""
        sql, args = scope_filter(
            f"SELECT {COLUMNS} FROM memories WHERE user_id = %s AND status = 'active'",
            [user_id],
            scopes,
        )
        with self._read() as conn:
            revision = user_revision(conn, user_id)
            records = [record_of(row) for row in conn.execute(sql + " ORDER BY memory_id", args)]
        return revision, records

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
                revision = user_revision(conn, user_id)
            if revision == cursor:
                return StoreChanges(revision, cursor, (), (), full=False)
        active, args = scope_filter(
            f"SELECT {COLUMNS} FROM memories WHERE user_id = %s AND status = 'active'",
            [user_id],
            scopes,
        )
        with self._read() as conn:
            revision = user_revision(conn, user_id)
            if cursor is None:
                records = [record_of(r) for r in conn.execute(active + " ORDER BY memory_id", args)]
                return StoreChanges(revision, revision, tuple(records), (), full=True)
            changed = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT memory_id FROM memory_audit "
                    "WHERE user_id = %s AND seq > %s AND seq <= %s ORDER BY memory_id",
                    (user_id, cursor, revision),
                )
            ]
            found: dict[str, MemoryRecord] = {}
            if changed:
                for r in conn.execute(active + " AND memory_id = ANY(%s)", [*args, changed]):
                    record = record_of(r)
                    found[record.memory_id] = record
        removed = tuple(m for m in changed if m not in found)
        return StoreChanges(
            revision, revision, tuple(found[m] for m in changed if m in found), removed, full=False
        )

    def find_key(self, user_id: str, scope: MemoryScope, key: str) -> MemoryRecord | None:
        """See :meth:`memrecall.store.backend.Store.find_key`."""
        scope_type, workspace_type = scope_args(scope)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {COLUMNS} FROM memories WHERE user_id = %s AND scope_type = %s "
                "AND COALESCE(workspace_type, '') = %s AND memory_key = %s",
                (user_id, scope_type, workspace_type or "", key),
            ).fetchone()
        return None if row is None else record_of(row)
