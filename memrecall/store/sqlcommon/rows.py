"""Row conversions and statement pieces that read the same in every SQL dialect.

The backends store the same tables with the same columns; only the time columns differ
(fixed-width UTC text in SQLite, ``timestamptz`` in PostgreSQL), so the converters take
the dialect's reader of a stored time (``dt``). Statements use ``?`` for parameters
(:mod:`memrecall.store.sqlcommon.base`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from memrecall.governance import (
    Candidate,
    CandidateOperation,
    CandidateStatus,
)

from ..model import (
    ChangedVia,
    ChangeType,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    ScopeType,
    SourceType,
    Status,
    WorkspaceType,
)

__all__ = [
    "AUDIT_COLUMNS",
    "CANDIDATE_COLUMNS",
    "COLUMNS",
    "VERSION_COLUMNS",
    "TimeReader",
    "candidate_of",
    "content_hash",
    "record_fields",
    "record_of",
    "scope_args",
    "scope_filter",
    "scope_of",
    "version_of",
]

COLUMNS = (
    "memory_id, user_id, scope_type, workspace_type, memory_key, content, category, "
    "source_type, status, revision, created_at, updated_at, last_confirmed_at, "
    "review_after, expires_at"
)
"""The ``memories`` columns, in the order :func:`record_of` reads them."""

VERSION_COLUMNS = (
    "memory_id, revision, content, category, scope_type, workspace_type, change_type, "
    "changed_via, source_candidate_id, created_at"
)
"""The ``memory_versions`` columns, in the order :func:`version_of` reads them."""

CANDIDATE_COLUMNS = (
    "candidate_id, user_id, operation, target_memory_id, expected_revision, scope_type, "
    "workspace_type, memory_key, content, category, source_conversation_id, status, "
    "resulting_memory_id, rejected_fingerprint, created_at, decided_at, expires_at"
)
"""The ``core_memory_candidates`` columns, in the order :func:`candidate_of` reads them."""

AUDIT_COLUMNS = (
    "memory_id, user_id, event_type, scope_type, workspace_type, revision, content_hash, "
    "request_id, created_at"
)
"""The ``memory_audit`` columns every backend writes (PostgreSQL adds ``seq``)."""

TimeReader = Callable[[Any], datetime]
"""A dialect's reader of a stored time (timezone-aware, UTC)."""


def _opt(dt: TimeReader, value: Any) -> datetime | None:
    return None if value is None else dt(value)


def scope_of(scope_type: str, workspace_type: str | None) -> MemoryScope:
    """The scope of stored ``scope_type`` / ``workspace_type`` columns."""
    return MemoryScope(
        ScopeType(scope_type), None if workspace_type is None else WorkspaceType(workspace_type)
    )


def scope_args(scope: MemoryScope) -> tuple[str, str | None]:
    """A scope as its ``scope_type`` / ``workspace_type`` column values."""
    return scope.type.value, None if scope.workspace is None else scope.workspace.value


def content_hash(content: str) -> str:
    """SHA-256 of the content (hex): what the audit keeps instead of the text."""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def record_of(row: Sequence[Any], dt: TimeReader) -> MemoryRecord:
    """A ``memories`` row (:data:`COLUMNS`) as a record."""
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
        last_confirmed_at=_opt(dt, row[12]),
        review_after=_opt(dt, row[13]),
        expires_at=_opt(dt, row[14]),
    )


def candidate_of(row: Sequence[Any], dt: TimeReader) -> Candidate:
    """A ``core_memory_candidates`` row (:data:`CANDIDATE_COLUMNS`) as a candidate."""
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
        decided_at=_opt(dt, row[15]),
        expires_at=dt(row[16]),
    )


def version_of(row: Sequence[Any], dt: TimeReader) -> MemoryVersion:
    """A ``memory_versions`` row (:data:`VERSION_COLUMNS`) as a version."""
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
    """``sql`` restricted to ``scopes`` (none: no rows)."""
    if not scopes:
        return sql + " AND false", args
    parts = []
    for scope in scopes:
        scope_type, workspace_type = scope_args(scope)
        parts.append("(scope_type = ? AND COALESCE(workspace_type, '') = ?)")
        args.extend([scope_type, workspace_type or ""])
    return sql + " AND (" + " OR ".join(parts) + ")", args


def record_fields(record: MemoryRecord) -> dict[str, Any]:
    """A record's fields, to build a changed copy (``MemoryRecord(**fields)``)."""
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
