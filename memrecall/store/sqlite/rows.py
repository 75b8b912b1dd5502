"""Row conversions and the small statements every part of the backend shares.

Times are stored as fixed-width UTC text (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), which sorts and
compares as time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memrecall.governance import (
    Candidate,
    CandidateOperation,
    CandidateStatus,
)

from ..model import (
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    InvalidInput,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    NotFound,
    ScopeType,
    SourceType,
    Status,
    WorkspaceType,
)

COLUMNS = (
    "memory_id, user_id, scope_type, workspace_type, memory_key, content, category, "
    "source_type, status, revision, created_at, updated_at, last_confirmed_at, "
    "review_after, expires_at"
)
VERSION_COLUMNS = (
    "memory_id, revision, content, category, scope_type, workspace_type, change_type, "
    "changed_via, source_candidate_id, created_at"
)


CANDIDATE_COLUMNS = (
    "candidate_id, user_id, operation, target_memory_id, expected_revision, scope_type, "
    "workspace_type, memory_key, content, category, source_conversation_id, status, "
    "resulting_memory_id, rejected_fingerprint, created_at, decided_at, expires_at"
)


def default_db_path() -> Path:
    """``$XDG_DATA_HOME/memrecall/memory.db``, else ``~/.local/share/memrecall/memory.db``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memrecall" / "memory.db"


def ts(value: datetime) -> str:
    if value.tzinfo is None:
        raise InvalidInput("times must be timezone-aware")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def ts_opt(value: datetime | None) -> str | None:
    return None if value is None else ts(value)


def dt(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def dt_opt(text: str | None) -> datetime | None:
    return None if text is None else dt(text)


def scope_of(scope_type: str, workspace_type: str | None) -> MemoryScope:
    return MemoryScope(
        ScopeType(scope_type), None if workspace_type is None else WorkspaceType(workspace_type)
    )


def scope_args(scope: MemoryScope) -> tuple[str, str | None]:
    return scope.type.value, None if scope.workspace is None else scope.workspace.value


def content_hash(content: str) -> str:
    """SHA-256 of the content (hex): what the audit keeps instead of the text."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def record_of(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(
        memory_id=row[0],
        user_id=row[1],
        scope=scope_of(row[2], row[3]),
        key=row[4],
        content=row[5],
        category=row[6],
        source_type=SourceType(row[7]),
        status=Status(row[8]),
        revision=row[9],
        created_at=dt(row[10]),
        updated_at=dt(row[11]),
        last_confirmed_at=dt_opt(row[12]),
        review_after=dt_opt(row[13]),
        expires_at=dt_opt(row[14]),
    )


def candidate_of(row: Sequence[Any]) -> Candidate:
    return Candidate(
        candidate_id=row[0],
        user_id=row[1],
        operation=CandidateOperation(row[2]),
        target_memory_id=row[3],
        expected_revision=row[4],
        scope=scope_of(row[5], row[6]).as_scope(),
        key=row[7],
        content=row[8],
        category=row[9],
        source_conversation_id=row[10],
        status=CandidateStatus(row[11]),
        resulting_memory_id=row[12],
        rejected_fingerprint=row[13],
        created_at=dt(row[14]),
        decided_at=dt_opt(row[15]),
        expires_at=dt(row[16]),
    )


def version_of(row: Sequence[Any]) -> MemoryVersion:
    return MemoryVersion(
        memory_id=row[0],
        revision=row[1],
        content=row[2],
        category=row[3],
        scope=scope_of(row[4], row[5]),
        change_type=ChangeType(row[6]),
        changed_via=ChangedVia(row[7]),
        source_candidate_id=row[8],
        created_at=dt(row[9]),
    )


def scope_filter(sql: str, args: list[Any], scopes: Sequence[MemoryScope]) -> tuple[str, list[Any]]:
    if not scopes:
        return sql + " AND 0", args
    parts = []
    for scope in scopes:
        scope_type, workspace_type = scope_args(scope)
        parts.append("(scope_type = ? AND COALESCE(workspace_type, '') = ?)")
        args.extend([scope_type, workspace_type or ""])
    return sql + " AND (" + " OR ".join(parts) + ")", args


def record_fields(record: MemoryRecord) -> dict[str, Any]:
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


def current_record(conn: sqlite3.Connection, user_id: str, memory_id: str) -> MemoryRecord:
    """The user's current record; raises ``NotFound`` (``forgotten`` if tombstoned)."""
    row = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE memory_id = ? AND user_id = ?",
        (memory_id, user_id),
    ).fetchone()
    if row is None:
        gone = conn.execute(
            "SELECT 1 FROM memory_tombstones WHERE memory_id = ? AND user_id = ?",
            (memory_id, user_id),
        ).fetchone()
        raise NotFound(memory_id, forgotten=gone is not None)
    return record_of(row)


def user_revision(conn: sqlite3.Connection, user_id: str) -> int:
    """The user's memory_revision (0 before the first write)."""
    row = conn.execute(
        "SELECT revision FROM memory_revisions WHERE user_id = ?", (user_id,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def advance(conn: sqlite3.Connection, user_id: str) -> None:
    """Advance the user's memory_revision by one (inside the write's transaction)."""
    conn.execute(
        "INSERT INTO memory_revisions (user_id, revision) VALUES (?, 1) "
        "ON CONFLICT (user_id) DO UPDATE SET revision = revision + 1",
        (user_id,),
    )


def write_events(
    conn: sqlite3.Connection, events: Sequence[GovernanceEvent], now: datetime
) -> None:
    """Append governance audit rows (ids, enums and details only)."""
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
                ts(now),
            ),
        )
