"""Memory writes: save, change, restore a version, suppress/restore, confirm, forget.

Each public method is one write transaction of the backend (``_write(user_id)``) that
writes the current row, a version row when the content changes, the user's
memory_revision and one audit row (content hash only) together: the audit step
(:meth:`~memrecall.store.sqlcommon.base.SQLBase._audit`) advances memory_revision, so a
write is one advance and one audit row, whatever its kind. After forget's transaction the
backend scrubs its files (``_scrub_forgotten``: a WAL checkpoint in SQLite, ``VACUUM
(FULL)`` in PostgreSQL).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ..backend import (
    KEEP,
    ContentChange,
    ForgetResult,
    Keep,
    NewMemory,
    SaveOutcome,
)
from ..model import (
    AuditType,
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    KeyConflict,
    MemoryRecord,
    NotFound,
    RevisionConflict,
    Status,
    Tombstone,
)
from .base import Connection, SQLBase, marks
from .contract import check_contract_fields, write_contract_row
from .rows import (
    COLUMNS,
    VERSION_COLUMNS,
    record_fields,
    scope_args,
)


class MemoryWrites(SQLBase):
    """The memory-writing half of a store."""

    def _put_version(
        self,
        conn: Connection,
        record: MemoryRecord,
        *,
        change_type: ChangeType,
        changed_via: ChangedVia,
        source_candidate_id: str | None,
        now: datetime,
    ) -> None:
        conn.execute(
            f"INSERT INTO memory_versions ({VERSION_COLUMNS}) VALUES ({marks(10)})",
            (
                record.memory_id,
                record.revision,
                record.content,
                record.category,
                *scope_args(record.scope),
                change_type.value,
                changed_via.value,
                source_candidate_id,
                self._ts(now),
            ),
        )

    def _put_current(self, conn: Connection, record: MemoryRecord) -> None:
        conn.execute(
            "UPDATE memories SET content = ?, category = ?, status = ?, revision = ?, "
            "updated_at = ?, last_confirmed_at = ?, review_after = ?, expires_at = ? "
            "WHERE memory_id = ?",
            (
                record.content,
                record.category,
                record.status.value,
                record.revision,
                self._ts(record.updated_at),
                self._ts_opt(record.last_confirmed_at),
                self._ts_opt(record.review_after),
                self._ts_opt(record.expires_at),
                record.memory_id,
            ),
        )

    # ------------------------------------------------------------------ writes

    def save(self, new: NewMemory, now: datetime) -> SaveOutcome:
        """See :meth:`memrecall.store.backend.Store.save`."""
        if new.contract_fields is not None:
            check_contract_fields(new.contract_fields)
        with self._write(new.user_id) as conn:
            return self._save_in(conn, new, now)

    def _save_in(
        self,
        conn: Connection,
        new: NewMemory,
        now: datetime,
        *,
        source_candidate_id: str | None = None,
    ) -> SaveOutcome:
        scope_type, workspace_type = scope_args(new.scope)
        row = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE user_id = ? AND scope_type = ? "
            "AND COALESCE(workspace_type, '') = ? AND memory_key = ?",
            (new.user_id, scope_type, workspace_type or "", new.key),
        ).fetchone()
        if row is not None:
            existing = self._record_of(row)
            if existing.content != new.content or existing.category != new.category:
                raise KeyConflict(existing.memory_id, existing.revision)
            refreshed = MemoryRecord(**{**record_fields(existing), "last_confirmed_at": now})
            self._put_current(conn, refreshed)
            if new.contract_fields is not None:
                write_contract_row(conn, refreshed.memory_id, new.contract_fields)
            self._audit(conn, refreshed, AuditType.CONFIRMED, now, new.request_id)
            return SaveOutcome(refreshed, created=False)
        record = MemoryRecord(
            memory_id=new.memory_id,
            user_id=new.user_id,
            scope=new.scope,
            key=new.key,
            content=new.content,
            category=new.category,
            source_type=new.source_type,
            status=Status.ACTIVE,
            revision=1,
            created_at=now,
            updated_at=now,
            last_confirmed_at=now,
            review_after=new.review_after,
            expires_at=new.expires_at,
        )
        conn.execute(
            f"INSERT INTO memories ({COLUMNS}) VALUES ({marks(15)})",
            (
                record.memory_id,
                record.user_id,
                scope_type,
                workspace_type,
                record.key,
                record.content,
                record.category,
                record.source_type.value,
                record.status.value,
                record.revision,
                self._ts(now),
                self._ts(now),
                self._ts(now),
                self._ts_opt(record.review_after),
                self._ts_opt(record.expires_at),
            ),
        )
        self._put_version(
            conn,
            record,
            change_type=ChangeType.CREATE,
            changed_via=new.changed_via,
            source_candidate_id=source_candidate_id,
            now=now,
        )
        if new.contract_fields is not None:
            write_contract_row(conn, record.memory_id, new.contract_fields)
        self._audit(conn, record, AuditType.CREATED, now, new.request_id)
        return SaveOutcome(record, created=True)

    def change(
        self,
        user_id: str,
        memory_id: str,
        expected_revision: int,
        change: ContentChange,
        now: datetime,
    ) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.change`."""
        if change.contract_fields is not None:
            check_contract_fields(change.contract_fields)
        with self._write(user_id) as conn:
            return self._change_in(conn, user_id, memory_id, expected_revision, change, now)

    def _change_in(  # noqa: PLR0917 (the public change() signature plus the connection)
        self,
        conn: Connection,
        user_id: str,
        memory_id: str,
        expected_revision: int,
        change: ContentChange,
        now: datetime,
    ) -> MemoryRecord:
        current = self._current_record(conn, user_id, memory_id)
        if current.revision != expected_revision:
            raise RevisionConflict(memory_id, expected_revision, current.revision)
        fields = record_fields(current)
        fields.update(revision=current.revision + 1, updated_at=now)
        if change.content is not None:
            fields["content"] = change.content
        if change.category is not None:
            fields["category"] = change.category
        if change.review_after is not KEEP:
            fields["review_after"] = change.review_after
        if change.expires_at is not KEEP:
            fields["expires_at"] = change.expires_at
        record = MemoryRecord(**fields)
        self._put_current(conn, record)
        self._put_version(
            conn,
            record,
            change_type=change.change_type,
            changed_via=change.changed_via,
            source_candidate_id=change.source_candidate_id,
            now=now,
        )
        if change.contract_fields is not None:
            write_contract_row(conn, memory_id, change.contract_fields)
        self._audit(conn, record, AuditType.UPDATED, now, change.request_id)
        return record

    def restore_version(
        self,
        user_id: str,
        memory_id: str,
        *,
        revision: int,
        expected_revision: int,
        changed_via: ChangedVia,
        now: datetime,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.restore_version`."""
        with self._write(user_id) as conn:
            current = self._current_record(conn, user_id, memory_id)
            if current.revision != expected_revision:
                raise RevisionConflict(memory_id, expected_revision, current.revision)
            row = conn.execute(
                "SELECT content, category FROM memory_versions "
                "WHERE memory_id = ? AND revision = ?",
                (memory_id, revision),
            ).fetchone()
            if row is None:
                raise NotFound(f"{memory_id}@{revision}")
            fields = record_fields(current)
            fields.update(
                content=row[0], category=row[1], revision=current.revision + 1, updated_at=now
            )
            record = MemoryRecord(**fields)
            self._put_current(conn, record)
            self._put_version(
                conn,
                record,
                change_type=ChangeType.RESTORE,
                changed_via=changed_via,
                source_candidate_id=None,
                now=now,
            )
            self._audit(conn, record, AuditType.UPDATED, now, request_id)
            return record

    def set_status(
        self,
        user_id: str,
        memory_id: str,
        status: Status,
        now: datetime,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.set_status`."""
        with self._write(user_id) as conn:
            current = self._current_record(conn, user_id, memory_id)
            if current.status is status:
                return current
            conn.execute(
                "UPDATE memories SET status = ? WHERE memory_id = ?", (status.value, memory_id)
            )
            record = MemoryRecord(**{**record_fields(current), "status": status})
            event = AuditType.SUPPRESSED if status is Status.SUPPRESSED else AuditType.RESTORED
            self._audit(conn, record, event, now, request_id)
            return record

    def confirm(
        self,
        user_id: str,
        memory_id: str,
        now: datetime,
        review_after: datetime | Literal[Keep.KEEP] | None = KEEP,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.confirm`."""
        with self._write(user_id) as conn:
            current = self._current_record(conn, user_id, memory_id)
            fields = record_fields(current)
            fields["last_confirmed_at"] = now
            if review_after is not KEEP:
                fields["review_after"] = review_after
            record = MemoryRecord(**fields)
            self._put_current(conn, record)
            self._audit(conn, record, AuditType.CONFIRMED, now, request_id)
            return record

    def forget(
        self, user_id: str, memory_id: str, now: datetime, request_id: str | None = None
    ) -> ForgetResult:
        """See :meth:`memrecall.store.backend.Store.forget`."""
        param = self._memory_param(memory_id)
        with self._write(user_id) as conn:
            current = self._current_record(conn, user_id, memory_id)
            self._audit(conn, current, AuditType.DELETED, now, request_id)
            sole = conn.execute(self._SOLE_SOURCE_FIELDS, param).fetchall()
            removed = [
                GovernanceEvent("memory.projection_removed", user_id, {"field": str(f)})
                for (f,) in sole
            ]
            self._write_events(conn, removed, now)
            for statement in self._FORGET_STATEMENTS:
                conn.execute(statement, param)
            tombstone = Tombstone(memory_id, user_id, now, current.revision)
            conn.execute(
                "INSERT INTO memory_tombstones (memory_id, user_id, deleted_at, final_revision) "
                "VALUES (?, ?, ?, ?)",
                (memory_id, user_id, self._ts(now), current.revision),
            )
            mark = self._forget_mark(conn)
        return ForgetResult(tombstone, self._scrub_forgotten(mark))
