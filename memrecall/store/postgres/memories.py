"""Memory writes: save, change, restore a version, suppress/restore, confirm, forget.

Each public method is one transaction under the user's write lock
(:mod:`memrecall.store.postgres.connection`) that writes the current row, a version row
when the content changes, the user's memory_revision and one audit row (content hash only,
stamped with that memory_revision: the change cursor) together. Forget then scrubs the
table files (``VACUUM (FULL)``) unless ``scrub_on_forget`` is off.
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
from .connection import PostgresBase
from .contract import check_contract_fields, write_contract_row
from .rows import (
    COLUMNS,
    VERSION_COLUMNS,
    Conn,
    advance,
    content_hash,
    current_record,
    record_fields,
    record_of,
    scope_args,
    ts,
    ts_opt,
    write_events,
)
from .schema import FORGET_STATEMENTS, SOLE_SOURCE_FIELDS


class MemoryWrites(PostgresBase):
    """The memory-writing half of :class:`~memrecall.store.postgres.PostgresStore`.

    Every audit row advances memory_revision (:meth:`_audit`), so a write is one lock, one
    advance and one audit row, whatever its kind."""

    @staticmethod
    def _audit(
        conn: Conn,
        record: MemoryRecord,
        event: AuditType,
        now: datetime,
        request_id: str | None,
    ) -> None:
        seq = advance(conn, record.user_id)
        conn.execute(
            "INSERT INTO memory_audit (memory_id, user_id, event_type, scope_type, "
            "workspace_type, revision, content_hash, request_id, created_at, seq) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                record.memory_id,
                record.user_id,
                event.value,
                *scope_args(record.scope),
                record.revision,
                content_hash(record.content),
                request_id,
                ts(now),
                seq,
            ),
        )

    @staticmethod
    def _put_version(
        conn: Conn,
        record: MemoryRecord,
        *,
        change_type: ChangeType,
        changed_via: ChangedVia,
        source_candidate_id: str | None,
        now: datetime,
    ) -> None:
        conn.execute(
            f"INSERT INTO memory_versions ({VERSION_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                record.memory_id,
                record.revision,
                record.content,
                record.category,
                *scope_args(record.scope),
                change_type.value,
                changed_via.value,
                source_candidate_id,
                ts(now),
            ),
        )

    @staticmethod
    def _put_current(conn: Conn, record: MemoryRecord) -> None:
        conn.execute(
            "UPDATE memories SET content = %s, category = %s, status = %s, revision = %s, "
            "updated_at = %s, last_confirmed_at = %s, review_after = %s, expires_at = %s "
            "WHERE memory_id = %s",
            (
                record.content,
                record.category,
                record.status.value,
                record.revision,
                ts(record.updated_at),
                ts_opt(record.last_confirmed_at),
                ts_opt(record.review_after),
                ts_opt(record.expires_at),
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
        conn: Conn,
        new: NewMemory,
        now: datetime,
        *,
        source_candidate_id: str | None = None,
    ) -> SaveOutcome:
        scope_type, workspace_type = scope_args(new.scope)
        row = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE user_id = %s AND scope_type = %s "
            "AND COALESCE(workspace_type, '') = %s AND memory_key = %s",
            (new.user_id, scope_type, workspace_type or "", new.key),
        ).fetchone()
        if row is not None:
            existing = record_of(row)
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
            f"INSERT INTO memories ({COLUMNS}) VALUES "
            "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
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
                ts(now),
                ts(now),
                ts(now),
                ts_opt(record.review_after),
                ts_opt(record.expires_at),
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
        conn: Conn,
        user_id: str,
        memory_id: str,
        expected_revision: int,
        change: ContentChange,
        now: datetime,
    ) -> MemoryRecord:
        current = current_record(conn, user_id, memory_id)
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
            current = current_record(conn, user_id, memory_id)
            if current.revision != expected_revision:
                raise RevisionConflict(memory_id, expected_revision, current.revision)
            row = conn.execute(
                "SELECT content, category FROM memory_versions "
                "WHERE memory_id = %s AND revision = %s",
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
            current = current_record(conn, user_id, memory_id)
            if current.status is status:
                return current
            conn.execute(
                "UPDATE memories SET status = %s WHERE memory_id = %s", (status.value, memory_id)
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
            current = current_record(conn, user_id, memory_id)
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
        with self._write(user_id) as conn:
            current = current_record(conn, user_id, memory_id)
            self._audit(conn, current, AuditType.DELETED, now, request_id)
            sole = conn.execute(SOLE_SOURCE_FIELDS, {"m": memory_id}).fetchall()
            removed = [
                GovernanceEvent("memory.projection_removed", user_id, {"field": str(f)})
                for (f,) in sole
            ]
            write_events(conn, removed, now)
            for statement in FORGET_STATEMENTS:
                conn.execute(statement, {"m": memory_id})
            tombstone = Tombstone(memory_id, user_id, now, current.revision)
            conn.execute(
                "INSERT INTO memory_tombstones (memory_id, user_id, deleted_at, final_revision) "
                "VALUES (%s, %s, %s, %s)",
                (memory_id, user_id, ts(now), current.revision),
            )
            xid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()
        if not self.scrub_on_forget or xid is None:
            return ForgetResult(tombstone, scrubbed=False)
        return ForgetResult(tombstone, self.scrub(deleted_by=int(xid[0])))
