"""The SQLite backend (stdlib :mod:`sqlite3`), the embedded default.

Connection policy
-----------------
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

Forget scrubs the files: after the deleting transaction commits, the writer runs
``PRAGMA wal_checkpoint(TRUNCATE)``, which copies the zeroed pages into the main file and
truncates the log. Content is not indexed with FTS5 (its secure-delete option needs SQLite
3.44), so nothing else holds a copy.

Times are stored as fixed-width UTC text (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), which sorts
and compares as time.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from memrecall.governance import (
    Candidate,
    CandidateOperation,
    CandidateStatus,
    MemorySettings,
    ProfileEntry,
)
from memrecall.governance.profile import ProfileSource, ProjectableMemory

from .backend import (
    KEEP,
    ContentChange,
    ForgetResult,
    Keep,
    NewMemory,
    Rejection,
    SaveOutcome,
    StoreChanges,
)
from .contract_fields import ContractFields
from .model import (
    AuditEvent,
    AuditType,
    CandidateConflict,
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    InvalidInput,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    NotFound,
    RevisionConflict,
    ScopeType,
    SourceType,
    Status,
    StoreError,
    Tombstone,
    WorkspaceType,
)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStore", "default_db_path"]

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    # version 1
    (
        """CREATE TABLE memories (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'workspace')),
            workspace_type TEXT CHECK (workspace_type IN ('learning', 'teaching', 'research')),
            memory_key TEXT NOT NULL,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            source_type TEXT NOT NULL CHECK (source_type IN ('explicit', 'confirmed')),
            status TEXT NOT NULL CHECK (status IN ('active', 'suppressed')),
            revision INTEGER NOT NULL CHECK (revision >= 1),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_confirmed_at TEXT,
            review_after TEXT,
            expires_at TEXT,
            CHECK ((scope_type = 'global' AND workspace_type IS NULL)
                OR (scope_type = 'workspace' AND workspace_type IS NOT NULL))
        )""",
        """CREATE UNIQUE INDEX memories_unique_key
            ON memories (user_id, scope_type, COALESCE(workspace_type, ''), memory_key)""",
        """CREATE TABLE memory_versions (
            version_id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL REFERENCES memories (memory_id) ON DELETE CASCADE,
            revision INTEGER NOT NULL,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            scope_type TEXT NOT NULL,
            workspace_type TEXT,
            change_type TEXT NOT NULL,
            changed_via TEXT NOT NULL,
            source_candidate_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (memory_id, revision)
        )""",
        """CREATE TABLE memory_revisions (
            user_id TEXT PRIMARY KEY,
            revision INTEGER NOT NULL
        )""",
        """CREATE TABLE memory_audit (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            scope_type TEXT NOT NULL,
            workspace_type TEXT,
            revision INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            request_id TEXT,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX memory_audit_user ON memory_audit (user_id, event_id)",
        """CREATE TABLE memory_tombstones (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            deleted_at TEXT NOT NULL,
            final_revision INTEGER NOT NULL
        )""",
    ),
    # version 2: governance (candidates, rejections, settings, projections, events)
    (
        """CREATE TABLE core_memory_candidates (
            candidate_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'replace')),
            target_memory_id TEXT,
            expected_revision INTEGER,
            scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'workspace')),
            workspace_type TEXT CHECK (workspace_type IN ('learning', 'teaching', 'research')),
            memory_key TEXT NOT NULL,
            content TEXT,
            category TEXT NOT NULL,
            source_conversation_id TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'accepted', 'rejected', 'expired')),
            resulting_memory_id TEXT,
            rejected_fingerprint TEXT,
            created_at TEXT NOT NULL,
            decided_at TEXT,
            expires_at TEXT NOT NULL,
            CHECK ((status = 'pending') = (content IS NOT NULL)),
            CHECK ((operation = 'create') = (target_memory_id IS NULL))
        )""",
        """CREATE INDEX core_memory_candidates_user
            ON core_memory_candidates (user_id, status, created_at)""",
        """CREATE INDEX core_memory_candidates_due
            ON core_memory_candidates (status, expires_at)""",
        """CREATE TABLE memory_rejections (
            user_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            memory_id TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (user_id, fingerprint)
        )""",
        """CREATE TABLE memory_settings (
            user_id TEXT PRIMARY KEY,
            saved_memory_enabled INTEGER NOT NULL,
            auto_extract_enabled INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE memory_projection_marks (
            memory_id TEXT PRIMARY KEY REFERENCES memories (memory_id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL
        )""",
        """CREATE TABLE profile_settings (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (user_id, field)
        )""",
        """CREATE TABLE profile_projections (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, field)
        )""",
        """CREATE TABLE profile_projection_sources (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            PRIMARY KEY (user_id, field, memory_id)
        )""",
        "CREATE INDEX profile_projection_sources_memory ON profile_projection_sources (memory_id)",
        """CREATE TABLE governance_events (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            memory_id TEXT,
            candidate_id TEXT,
            details TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX governance_events_user ON governance_events (user_id, event_id)",
    ),
    # version 3: the memory tools' fields (memrecall/store/contract_fields.py, docs/tools.md)
    (
        """CREATE TABLE contract_fields (
            memory_id TEXT PRIMARY KEY REFERENCES memories (memory_id) ON DELETE CASCADE,
            title TEXT,
            tags_json TEXT,
            source TEXT,
            scope TEXT,
            hits INTEGER NOT NULL DEFAULT 0 CHECK (hits >= 0)
        )""",
    ),
)
"""Forward migrations: ``MIGRATIONS[n]`` takes the schema from version ``n`` to ``n + 1``.
Append only; never edit a released step."""

SCHEMA_VERSION: Final = len(MIGRATIONS)

_SOLE_SOURCE_FIELDS = """SELECT field FROM profile_projection_sources s
    WHERE s.memory_id = ?1 AND NOT EXISTS (SELECT 1 FROM profile_projection_sources o
        WHERE o.user_id = s.user_id AND o.field = s.field AND o.memory_id <> ?1)
    ORDER BY field"""

FORGET_STATEMENTS: Final[tuple[str, ...]] = (
    # a projection entry whose only source is this memory goes; shared ones are rebuilt
    """DELETE FROM profile_projections WHERE EXISTS (
        SELECT 1 FROM profile_projection_sources s WHERE s.memory_id = ?1
            AND s.user_id = profile_projections.user_id AND s.field = profile_projections.field)
        AND NOT EXISTS (
        SELECT 1 FROM profile_projection_sources s WHERE s.memory_id <> ?1
            AND s.user_id = profile_projections.user_id AND s.field = profile_projections.field)""",
    "DELETE FROM profile_projection_sources WHERE memory_id = ?1",
    "DELETE FROM memory_projection_marks WHERE memory_id = ?1",
    "DELETE FROM core_memory_candidates WHERE ?1 IN (target_memory_id, resulting_memory_id)",
    "DELETE FROM memory_rejections WHERE memory_id = ?1",
    "DELETE FROM contract_fields WHERE memory_id = ?",
    "DELETE FROM memory_versions WHERE memory_id = ?",
    "DELETE FROM memories WHERE memory_id = ?",
)
"""Every statement that removes content naming a memory (one ``?``: the memory_id). A table
that stores memory content (candidates, projections, a search index) adds its statement
here, so forget cannot miss it."""

_COLUMNS = (
    "memory_id, user_id, scope_type, workspace_type, memory_key, content, category, "
    "source_type, status, revision, created_at, updated_at, last_confirmed_at, "
    "review_after, expires_at"
)
_VERSION_COLUMNS = (
    "memory_id, revision, content, category, scope_type, workspace_type, change_type, "
    "changed_via, source_candidate_id, created_at"
)


_CANDIDATE_COLUMNS = (
    "candidate_id, user_id, operation, target_memory_id, expected_revision, scope_type, "
    "workspace_type, memory_key, content, category, source_conversation_id, status, "
    "resulting_memory_id, rejected_fingerprint, created_at, decided_at, expires_at"
)


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/memrecall/memory.db``, else ``~/.local/share/memrecall/memory.db``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memrecall" / "memory.db"


def _ts(value: datetime) -> str:
    if value.tzinfo is None:
        raise InvalidInput("times must be timezone-aware")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ts_opt(value: datetime | None) -> str | None:
    return None if value is None else _ts(value)


def _dt(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def _dt_opt(text: str | None) -> datetime | None:
    return None if text is None else _dt(text)


def _scope(scope_type: str, workspace_type: str | None) -> MemoryScope:
    return MemoryScope(
        ScopeType(scope_type), None if workspace_type is None else WorkspaceType(workspace_type)
    )


def _scope_args(scope: MemoryScope) -> tuple[str, str | None]:
    return scope.type.value, None if scope.workspace is None else scope.workspace.value


def content_hash(content: str) -> str:
    """SHA-256 of the content (hex): what the audit keeps instead of the text."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def _record(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(
        memory_id=row[0],
        user_id=row[1],
        scope=_scope(row[2], row[3]),
        key=row[4],
        content=row[5],
        category=row[6],
        source_type=SourceType(row[7]),
        status=Status(row[8]),
        revision=row[9],
        created_at=_dt(row[10]),
        updated_at=_dt(row[11]),
        last_confirmed_at=_dt_opt(row[12]),
        review_after=_dt_opt(row[13]),
        expires_at=_dt_opt(row[14]),
    )


def _candidate(row: Sequence[Any]) -> Candidate:
    return Candidate(
        candidate_id=row[0],
        user_id=row[1],
        operation=CandidateOperation(row[2]),
        target_memory_id=row[3],
        expected_revision=row[4],
        scope=_scope(row[5], row[6]).as_scope(),
        key=row[7],
        content=row[8],
        category=row[9],
        source_conversation_id=row[10],
        status=CandidateStatus(row[11]),
        resulting_memory_id=row[12],
        rejected_fingerprint=row[13],
        created_at=_dt(row[14]),
        decided_at=_dt_opt(row[15]),
        expires_at=_dt(row[16]),
    )


def _version(row: Sequence[Any]) -> MemoryVersion:
    return MemoryVersion(
        memory_id=row[0],
        revision=row[1],
        content=row[2],
        category=row[3],
        scope=_scope(row[4], row[5]),
        change_type=ChangeType(row[6]),
        changed_via=ChangedVia(row[7]),
        source_candidate_id=row[8],
        created_at=_dt(row[9]),
    )


class SQLiteStore:
    """A :class:`~memrecall.store.backend.Store` in one SQLite file (policy: module docstring).

    ``path`` is created (with its parent directory) if missing and migrated forward to
    :data:`SCHEMA_VERSION`; a file from a newer version is refused.
    """

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
    def _write(self) -> Iterator[sqlite3.Connection]:
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

    def _migrate(self) -> None:
        with self._write() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            current = 0 if row is None else int(row[0])
            target = len(MIGRATIONS)
            if current > target:
                raise StoreError(
                    f"{self.path.name}: schema version {current} is newer than this memrecall "
                    f"({target}); upgrade memrecall"
                )
            for step in MIGRATIONS[current:]:
                for statement in step:
                    conn.execute(statement)
            if row is None:
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (target,))
            elif current != target:
                conn.execute("UPDATE schema_version SET version = ?", (target,))

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

    @staticmethod
    def _current(conn: sqlite3.Connection, user_id: str, memory_id: str) -> MemoryRecord:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE memory_id = ? AND user_id = ?",
            (memory_id, user_id),
        ).fetchone()
        if row is None:
            gone = conn.execute(
                "SELECT 1 FROM memory_tombstones WHERE memory_id = ? AND user_id = ?",
                (memory_id, user_id),
            ).fetchone()
            raise NotFound(memory_id, forgotten=gone is not None)
        return _record(row)

    @staticmethod
    def _advance(conn: sqlite3.Connection, user_id: str) -> None:
        conn.execute(
            "INSERT INTO memory_revisions (user_id, revision) VALUES (?, 1) "
            "ON CONFLICT (user_id) DO UPDATE SET revision = revision + 1",
            (user_id,),
        )

    @staticmethod
    def _audit(
        conn: sqlite3.Connection,
        record: MemoryRecord,
        event: AuditType,
        now: datetime,
        request_id: str | None,
    ) -> None:
        conn.execute(
            "INSERT INTO memory_audit (memory_id, user_id, event_type, scope_type, "
            "workspace_type, revision, content_hash, request_id, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.memory_id,
                record.user_id,
                event.value,
                *_scope_args(record.scope),
                record.revision,
                content_hash(record.content),
                request_id,
                _ts(now),
            ),
        )

    @staticmethod
    def _put_version(
        conn: sqlite3.Connection,
        record: MemoryRecord,
        *,
        change_type: ChangeType,
        changed_via: ChangedVia,
        source_candidate_id: str | None,
        now: datetime,
    ) -> None:
        conn.execute(
            f"INSERT INTO memory_versions ({_VERSION_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.memory_id,
                record.revision,
                record.content,
                record.category,
                *_scope_args(record.scope),
                change_type.value,
                changed_via.value,
                source_candidate_id,
                _ts(now),
            ),
        )

    @staticmethod
    def _put_current(conn: sqlite3.Connection, record: MemoryRecord) -> None:
        conn.execute(
            "UPDATE memories SET content = ?, category = ?, status = ?, revision = ?, "
            "updated_at = ?, last_confirmed_at = ?, review_after = ?, expires_at = ? "
            "WHERE memory_id = ?",
            (
                record.content,
                record.category,
                record.status.value,
                record.revision,
                _ts(record.updated_at),
                _ts_opt(record.last_confirmed_at),
                _ts_opt(record.review_after),
                _ts_opt(record.expires_at),
                record.memory_id,
            ),
        )

    # ------------------------------------------------------------------ writes

    def save(self, new: NewMemory, now: datetime) -> SaveOutcome:
        """See :meth:`memrecall.store.backend.Store.save`."""
        with self._write() as conn:
            return self._save_in(conn, new, now)

    def _save_in(
        self,
        conn: sqlite3.Connection,
        new: NewMemory,
        now: datetime,
        *,
        source_candidate_id: str | None = None,
    ) -> SaveOutcome:
        scope_type, workspace_type = _scope_args(new.scope)
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND scope_type = ? "
            "AND COALESCE(workspace_type, '') = ? AND memory_key = ?",
            (new.user_id, scope_type, workspace_type or "", new.key),
        ).fetchone()
        if row is not None:
            existing = _record(row)
            if existing.content != new.content or existing.category != new.category:
                raise KeyConflict(existing.memory_id, existing.revision)
            refreshed = MemoryRecord(**{**_fields(existing), "last_confirmed_at": now})
            self._put_current(conn, refreshed)
            self._advance(conn, new.user_id)
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
            f"INSERT INTO memories ({_COLUMNS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                _ts(now),
                _ts(now),
                _ts(now),
                _ts_opt(record.review_after),
                _ts_opt(record.expires_at),
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
        self._advance(conn, new.user_id)
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
        with self._write() as conn:
            return self._change_in(conn, user_id, memory_id, expected_revision, change, now)

    def _change_in(  # noqa: PLR0917 (the public change() signature plus the connection)
        self,
        conn: sqlite3.Connection,
        user_id: str,
        memory_id: str,
        expected_revision: int,
        change: ContentChange,
        now: datetime,
    ) -> MemoryRecord:
        current = self._current(conn, user_id, memory_id)
        if current.revision != expected_revision:
            raise RevisionConflict(memory_id, expected_revision, current.revision)
        fields = _fields(current)
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
        self._advance(conn, user_id)
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
        with self._write() as conn:
            current = self._current(conn, user_id, memory_id)
            if current.revision != expected_revision:
                raise RevisionConflict(memory_id, expected_revision, current.revision)
            row = conn.execute(
                "SELECT content, category FROM memory_versions "
                "WHERE memory_id = ? AND revision = ?",
                (memory_id, revision),
            ).fetchone()
            if row is None:
                raise NotFound(f"{memory_id}@{revision}")
            fields = _fields(current)
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
            self._advance(conn, user_id)
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
        with self._write() as conn:
            current = self._current(conn, user_id, memory_id)
            if current.status is status:
                return current
            conn.execute(
                "UPDATE memories SET status = ? WHERE memory_id = ?", (status.value, memory_id)
            )
            record = MemoryRecord(**{**_fields(current), "status": status})
            self._advance(conn, user_id)
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
        with self._write() as conn:
            current = self._current(conn, user_id, memory_id)
            fields = _fields(current)
            fields["last_confirmed_at"] = now
            if review_after is not KEEP:
                fields["review_after"] = review_after
            record = MemoryRecord(**fields)
            self._put_current(conn, record)
            self._advance(conn, user_id)
            self._audit(conn, record, AuditType.CONFIRMED, now, request_id)
            return record

    def forget(
        self, user_id: str, memory_id: str, now: datetime, request_id: str | None = None
    ) -> ForgetResult:
        """See :meth:`memrecall.store.backend.Store.forget`."""
        with self._write() as conn:
            current = self._current(conn, user_id, memory_id)
            self._audit(conn, current, AuditType.DELETED, now, request_id)
            sole = conn.execute(_SOLE_SOURCE_FIELDS, (memory_id,)).fetchall()
            removed = [
                GovernanceEvent("memory.projection_removed", user_id, {"field": str(f)})
                for (f,) in sole
            ]
            self._write_events(conn, removed, now)
            for statement in FORGET_STATEMENTS:
                conn.execute(statement, (memory_id,))
            tombstone = Tombstone(memory_id, user_id, now, current.revision)
            conn.execute(
                "INSERT INTO memory_tombstones (memory_id, user_id, deleted_at, final_revision) "
                "VALUES (?, ?, ?, ?)",
                (memory_id, user_id, _ts(now), current.revision),
            )
            self._advance(conn, user_id)
        return ForgetResult(tombstone, self.scrub())

    def scrub(self) -> bool:
        """Checkpoint the WAL into the main file and truncate it; True when it completed."""
        self._check_open()
        with self._write_lock:
            busy, _log, _done = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return int(busy) == 0

    # ------------------------------------------------------------------ reads

    def get(self, user_id: str, memory_id: str) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.get`."""
        with self._read() as conn:
            return self._current(conn, user_id, memory_id)

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
        sql = f"SELECT {_COLUMNS} FROM memories WHERE user_id = ?"
        args: list[Any] = [user_id]
        if scopes is not None:
            sql, args = _scope_filter(sql, args, scopes)
        if status is not None:
            sql += " AND status = ?"
            args.append(status.value)
        if after is not None:
            sql += " AND memory_id > ?"
            args.append(after)
        sql += " ORDER BY memory_id LIMIT ?"
        args.append(limit)
        with self._read() as conn:
            return [_record(row) for row in conn.execute(sql, args)]

    def history(self, user_id: str, memory_id: str) -> list[MemoryVersion]:
        """See :meth:`memrecall.store.backend.Store.history`."""
        with self._read() as conn:
            self._current(conn, user_id, memory_id)
            rows = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM memory_versions WHERE memory_id = ? "
                "ORDER BY revision",
                (memory_id,),
            )
            return [_version(row) for row in rows]

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
                    scope=_scope(row[4], row[5]),
                    revision=row[6],
                    content_hash=row[7],
                    request_id=row[8],
                    created_at=_dt(row[9]),
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
        return None if row is None else Tombstone(row[0], row[1], _dt(row[2]), row[3])

    # ------------------------------------------------------------------ tool fields

    def contract_fields(self, user_id: str) -> dict[str, ContractFields]:
        """See :meth:`memrecall.store.backend.Store.contract_fields`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT f.memory_id, f.title, f.tags_json, f.source, f.scope, f.hits "
                "FROM contract_fields f JOIN memories m ON m.memory_id = f.memory_id "
                "WHERE m.user_id = ?",
                (user_id,),
            ).fetchall()
        return {
            row[0]: ContractFields(
                title=row[1],
                tags=None if row[2] is None else tuple(json.loads(row[2])),
                source=row[3],
                scope=row[4],
                hits=int(row[5]),
            )
            for row in rows
        }

    def put_contract_fields(self, user_id: str, memory_id: str, fields: ContractFields) -> None:
        """See :meth:`memrecall.store.backend.Store.put_contract_fields`."""
        if fields.hits < 0:
            raise InvalidInput("hits: must be >= 0")
        tags = None if fields.tags is None else json.dumps(list(fields.tags), ensure_ascii=False)
        with self._write() as conn:
            self._current(conn, user_id, memory_id)
            conn.execute(
                "INSERT INTO contract_fields (memory_id, title, tags_json, source, scope, hits) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
                "title = excluded.title, tags_json = excluded.tags_json, "
                "source = excluded.source, scope = excluded.scope, hits = excluded.hits",
                (memory_id, fields.title, tags, fields.source, fields.scope, fields.hits),
            )

    def add_hits(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, int]:
        """See :meth:`memrecall.store.backend.Store.add_hits`."""
        counts: dict[str, int] = {}
        with self._write() as conn:
            for memory_id in dict.fromkeys(memory_ids):
                owned = conn.execute(
                    "SELECT 1 FROM memories WHERE memory_id = ? AND user_id = ?",
                    (memory_id, user_id),
                ).fetchone()
                if owned is None:
                    continue
                conn.execute(
                    "INSERT INTO contract_fields (memory_id, hits) VALUES (?, 1) "
                    "ON CONFLICT (memory_id) DO UPDATE SET hits = hits + 1",
                    (memory_id,),
                )
                row = conn.execute(
                    "SELECT hits FROM contract_fields WHERE memory_id = ?", (memory_id,)
                ).fetchone()
                counts[memory_id] = int(row[0])
        return counts

    def memory_revision(self, user_id: str) -> int:
        """See :meth:`memrecall.store.backend.Store.memory_revision`."""
        with self._read() as conn:
            return self._revision(conn, user_id)

    @staticmethod
    def _revision(conn: sqlite3.Connection, user_id: str) -> int:
        row = conn.execute(
            "SELECT revision FROM memory_revisions WHERE user_id = ?", (user_id,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def snapshot(
        self, user_id: str, scopes: Sequence[MemoryScope]
    ) -> tuple[int, list[MemoryRecord]]:
        """See :meth:`memrecall.store.backend.Store.snapshot`."""
        sql, args = _scope_filter(
            f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND status = 'active'",
            [user_id],
            scopes,
        )
        with self._read() as conn:
            revision = self._revision(conn, user_id)
            records = [_record(row) for row in conn.execute(sql + " ORDER BY memory_id", args)]
        return revision, records

    def changes_since(
        self, user_id: str, scopes: Sequence[MemoryScope], cursor: int | None
    ) -> StoreChanges:
        """See :meth:`memrecall.store.backend.Store.changes_since`.

        The cursor is the user's last audit ``event_id``: every write appends an audit row in
        the transaction that advances memory_revision (writers are serialised by
        ``BEGIN IMMEDIATE``, so event ids grow in commit order).
        """
        active, args = _scope_filter(
            f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND status = 'active'",
            [user_id],
            scopes,
        )
        with self._read() as conn:
            revision = self._revision(conn, user_id)
            row = conn.execute(
                "SELECT MAX(event_id) FROM memory_audit WHERE user_id = ?", (user_id,)
            ).fetchone()
            last = 0 if row is None or row[0] is None else int(row[0])
            if cursor is None:
                records = [_record(r) for r in conn.execute(active + " ORDER BY memory_id", args)]
                return StoreChanges(revision, last, tuple(records), (), full=True)
            changed = [
                str(r[0])
                for r in conn.execute(
                    "SELECT DISTINCT memory_id FROM memory_audit "
                    "WHERE user_id = ? AND event_id > ? AND event_id <= ? ORDER BY memory_id",
                    (user_id, cursor, last),
                )
            ]
            found: dict[str, MemoryRecord] = {}
            for start in range(0, len(changed), 500):
                part = changed[start : start + 500]
                marks = ", ".join("?" * len(part))
                for r in conn.execute(active + f" AND memory_id IN ({marks})", [*args, *part]):
                    record = _record(r)
                    found[record.memory_id] = record
        removed = tuple(m for m in changed if m not in found)
        return StoreChanges(
            revision, last, tuple(found[m] for m in changed if m in found), removed, full=False
        )

    # ------------------------------------------------------------------ governance (v2)

    def find_key(self, user_id: str, scope: MemoryScope, key: str) -> MemoryRecord | None:
        """See :meth:`memrecall.store.backend.Store.find_key`."""
        scope_type, workspace_type = _scope_args(scope)
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE user_id = ? AND scope_type = ? "
                "AND COALESCE(workspace_type, '') = ? AND memory_key = ?",
                (user_id, scope_type, workspace_type or "", key),
            ).fetchone()
        return None if row is None else _record(row)

    @staticmethod
    def _stored_status(conn: sqlite3.Connection, candidate_id: str) -> str | None:
        row = conn.execute(
            "SELECT status FROM core_memory_candidates WHERE candidate_id = ?", (candidate_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    @staticmethod
    def _write_candidate(conn: sqlite3.Connection, c: Candidate) -> None:
        scope_type, workspace_type = _scope_args(MemoryScope.from_scope(c.scope))
        conn.execute(
            f"INSERT OR REPLACE INTO core_memory_candidates ({_CANDIDATE_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                c.candidate_id,
                c.user_id,
                c.operation.value,
                c.target_memory_id,
                c.expected_revision,
                scope_type,
                workspace_type,
                c.key,
                c.content,
                c.category,
                c.source_conversation_id,
                c.status.value,
                c.resulting_memory_id,
                c.rejected_fingerprint,
                _ts(c.created_at),
                _ts_opt(c.decided_at),
                _ts(c.expires_at),
            ),
        )

    @staticmethod
    def _write_events(
        conn: sqlite3.Connection, events: Sequence[GovernanceEvent], now: datetime
    ) -> None:
        for e in events:
            conn.execute(
                "INSERT INTO governance_events (user_id, event_type, memory_id, candidate_id, "
                "details, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    e.user_id,
                    e.event_type,
                    e.memory_id,
                    e.candidate_id,
                    json.dumps(e.details, sort_keys=True),
                    _ts(now),
                ),
            )

    def _check_status(
        self, conn: sqlite3.Connection, c: Candidate, expected: CandidateStatus | None
    ) -> None:
        stored = self._stored_status(conn, c.candidate_id)
        if stored != (None if expected is None else expected.value):
            raise CandidateConflict(c.candidate_id, stored)

    def put_candidate(
        self,
        candidate: Candidate,
        *,
        expected_status: CandidateStatus | None,
        now: datetime,
        rejection: Rejection | None = None,
        events: Sequence[GovernanceEvent] = (),
    ) -> None:
        """See :meth:`memrecall.store.backend.Store.put_candidate`."""
        with self._write() as conn:
            self._check_status(conn, candidate, expected_status)
            self._write_candidate(conn, candidate)
            if rejection is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO memory_rejections "
                    "(user_id, fingerprint, memory_id, created_at) VALUES (?, ?, ?, ?)",
                    (candidate.user_id, rejection.fingerprint, rejection.memory_id, _ts(now)),
                )
            self._write_events(conn, events, now)
            self._advance(conn, candidate.user_id)

    def get_candidate(self, user_id: str, candidate_id: str) -> Candidate:
        """See :meth:`memrecall.store.backend.Store.get_candidate`."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {_CANDIDATE_COLUMNS} FROM core_memory_candidates "
                "WHERE candidate_id = ? AND user_id = ?",
                (candidate_id, user_id),
            ).fetchone()
        if row is None:
            raise NotFound(candidate_id)
        return _candidate(row)

    def list_candidates(
        self, user_id: str, *, status: CandidateStatus | None = None
    ) -> list[Candidate]:
        """See :meth:`memrecall.store.backend.Store.list_candidates`."""
        sql = f"SELECT {_CANDIDATE_COLUMNS} FROM core_memory_candidates WHERE user_id = ?"
        args: list[Any] = [user_id]
        if status is not None:
            sql += " AND status = ?"
            args.append(status.value)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, candidate_id", args).fetchall()
        return [_candidate(row) for row in rows]

    def due_candidates(self, now: datetime, limit: int = 500) -> list[Candidate]:
        """See :meth:`memrecall.store.backend.Store.due_candidates`."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_CANDIDATE_COLUMNS} FROM core_memory_candidates "
                "WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
                (_ts(now), limit),
            ).fetchall()
        return [_candidate(row) for row in rows]

    def apply_candidate(
        self,
        accepted: Candidate,
        *,
        create: NewMemory | None,
        change: ContentChange | None,
        expected_revision: int | None,
        now: datetime,
        events: Sequence[GovernanceEvent] = (),
    ) -> MemoryRecord:
        """See :meth:`memrecall.store.backend.Store.apply_candidate`."""
        with self._write() as conn:
            self._check_status(conn, accepted, CandidateStatus.PENDING)
            if create is not None:
                outcome = self._save_in(
                    conn, create, now, source_candidate_id=accepted.candidate_id
                )
                if not outcome.created:
                    raise KeyConflict(outcome.record.memory_id, outcome.record.revision)
                record = outcome.record
            else:
                if change is None or expected_revision is None:
                    raise InvalidInput("apply_candidate: a change needs expected_revision")
                if accepted.resulting_memory_id is None:
                    raise InvalidInput("apply_candidate: no memory to change")
                record = self._change_in(
                    conn,
                    accepted.user_id,
                    accepted.resulting_memory_id,
                    expected_revision,
                    change,
                    now,
                )
            self._write_candidate(conn, accepted)
            self._write_events(conn, events, now)
            return record

    def has_rejection(self, user_id: str, fingerprint: str) -> bool:
        """See :meth:`memrecall.store.backend.Store.has_rejection`."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT 1 FROM memory_rejections WHERE user_id = ? AND fingerprint = ?",
                (user_id, fingerprint),
            ).fetchone()
        return row is not None

    def get_settings(self, user_id: str) -> MemorySettings:
        """See :meth:`memrecall.store.backend.Store.get_settings`."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT saved_memory_enabled, auto_extract_enabled FROM memory_settings "
                "WHERE user_id = ?",
                (user_id,),
            ).fetchone()
        return MemorySettings() if row is None else MemorySettings(bool(row[0]), bool(row[1]))

    def put_settings(self, user_id: str, settings: MemorySettings, now: datetime) -> None:
        """See :meth:`memrecall.store.backend.Store.put_settings`."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO memory_settings (user_id, saved_memory_enabled, "
                "auto_extract_enabled, updated_at) VALUES (?, ?, ?, ?)",
                (
                    user_id,
                    int(settings.saved_memory_enabled),
                    int(settings.auto_extract_enabled),
                    _ts(now),
                ),
            )
            self._advance(conn, user_id)

    def add_events(self, events: Sequence[GovernanceEvent], now: datetime) -> None:
        """See :meth:`memrecall.store.backend.Store.add_events`."""
        with self._write() as conn:
            self._write_events(conn, events, now)

    def governance_events(self, user_id: str) -> list[GovernanceEvent]:
        """See :meth:`memrecall.store.backend.Store.governance_events`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT event_id, user_id, event_type, memory_id, candidate_id, details, "
                "created_at FROM governance_events WHERE user_id = ? ORDER BY event_id",
                (user_id,),
            ).fetchall()
        return [
            GovernanceEvent(
                event_type=row[2],
                user_id=row[1],
                details=json.loads(row[5]),
                memory_id=row[3],
                candidate_id=row[4],
                event_id=row[0],
                created_at=_dt(row[6]),
            )
            for row in rows
        ]

    def set_projection_mark(
        self, user_id: str, memory_id: str, projection: tuple[str, str] | None
    ) -> None:
        """See :meth:`memrecall.store.backend.Store.set_projection_mark`."""
        with self._write() as conn:
            self._current(conn, user_id, memory_id)
            conn.execute("DELETE FROM memory_projection_marks WHERE memory_id = ?", (memory_id,))
            if projection is not None:
                conn.execute(
                    "INSERT INTO memory_projection_marks (memory_id, user_id, field, value) "
                    "VALUES (?, ?, ?, ?)",
                    (memory_id, user_id, projection[0], projection[1]),
                )

    def set_profile_setting(self, user_id: str, field: str, value: str | None) -> None:
        """See :meth:`memrecall.store.backend.Store.set_profile_setting`."""
        with self._write() as conn:
            conn.execute(
                "DELETE FROM profile_settings WHERE user_id = ? AND field = ?", (user_id, field)
            )
            if value is not None:
                conn.execute(
                    "INSERT INTO profile_settings (user_id, field, value) VALUES (?, ?, ?)",
                    (user_id, field, value),
                )

    def projection_inputs(self, user_id: str) -> tuple[list[ProjectableMemory], dict[str, str]]:
        """See :meth:`memrecall.store.backend.Store.projection_inputs`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT m.memory_id, m.category, m.content, m.status, p.field, p.value, "
                "m.updated_at, m.expires_at FROM memories m JOIN memory_projection_marks p "
                "ON p.memory_id = m.memory_id WHERE m.user_id = ? ORDER BY m.memory_id",
                (user_id,),
            ).fetchall()
            settings = conn.execute(
                "SELECT field, value FROM profile_settings WHERE user_id = ?", (user_id,)
            ).fetchall()
        memories = [
            ProjectableMemory(
                memory_id=row[0],
                category=row[1],
                content=row[2],
                active=row[3] == Status.ACTIVE.value,
                projectable=True,
                projection=(row[4], row[5]),
                updated_at=_dt(row[6]),
                expires_at=_dt_opt(row[7]),
            )
            for row in rows
        ]
        return memories, {str(f): str(v) for f, v in settings}

    def get_projection(self, user_id: str) -> dict[str, ProfileEntry]:
        """See :meth:`memrecall.store.backend.Store.get_projection`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT field, value FROM profile_projections WHERE user_id = ? ORDER BY field",
                (user_id,),
            ).fetchall()
            sources = conn.execute(
                "SELECT field, memory_id FROM profile_projection_sources WHERE user_id = ? "
                "ORDER BY field, memory_id",
                (user_id,),
            ).fetchall()
        ids: dict[str, list[str]] = {}
        for field, memory_id in sources:
            ids.setdefault(field, []).append(memory_id)
        return {f: ProfileEntry(v, ProfileSource.MEMORY, tuple(ids.get(f, ()))) for f, v in rows}

    def put_projection(
        self,
        user_id: str,
        entries: dict[str, ProfileEntry],
        now: datetime,
        events: Sequence[GovernanceEvent] = (),
    ) -> None:
        """See :meth:`memrecall.store.backend.Store.put_projection`."""
        with self._write() as conn:
            conn.execute("DELETE FROM profile_projections WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM profile_projection_sources WHERE user_id = ?", (user_id,))
            for field, entry in entries.items():
                conn.execute(
                    "INSERT INTO profile_projections (user_id, field, value, updated_at) "
                    "VALUES (?, ?, ?, ?)",
                    (user_id, field, entry.value, _ts(now)),
                )
                conn.executemany(
                    "INSERT INTO profile_projection_sources (user_id, field, memory_id) "
                    "VALUES (?, ?, ?)",
                    [(user_id, field, m) for m in entry.memory_ids],
                )
            self._write_events(conn, events, now)


def _scope_filter(
    sql: str, args: list[Any], scopes: Sequence[MemoryScope]
) -> tuple[str, list[Any]]:
    if not scopes:
        return sql + " AND 0", args
    parts = []
    for scope in scopes:
        scope_type, workspace_type = _scope_args(scope)
        parts.append("(scope_type = ? AND COALESCE(workspace_type, '') = ?)")
        args.extend([scope_type, workspace_type or ""])
    return sql + " AND (" + " OR ".join(parts) + ")", args


def _fields(record: MemoryRecord) -> dict[str, Any]:
    return {
        "memory_id": record.memory_id,
        "user_id": record.user_id,
        "scope": record.scope,
        "key": record.key,
        "content": record.content,
        "category": record.category,
        "source_type": record.source_type,
        "status": record.status,
        "revision": record.revision,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "last_confirmed_at": record.last_confirmed_at,
        "review_after": record.review_after,
        "expires_at": record.expires_at,
    }
