"""Row conversions and the small statements every part of the backend shares.

Times are ``timestamptz``: written as timezone-aware datetimes, read back in UTC.
Column lists and the content hash are the SQLite backend's (the same rows, the same
audit hashes).

The user lock (:func:`lock_user`) is how this backend keeps the store's invariants under
concurrent writers: every write transaction of a user first takes ``FOR UPDATE`` on the
user's ``memory_revisions`` row, so one user's writes run one at a time across every
connection and process, while different users' writes run side by side.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import TupleRow

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
    SourceType,
    Status,
)
from ..sqlite.rows import (
    CANDIDATE_COLUMNS,
    COLUMNS,
    VERSION_COLUMNS,
    content_hash,
    record_fields,
    scope_args,
    scope_of,
)

__all__ = [
    "CANDIDATE_COLUMNS",
    "COLUMNS",
    "VERSION_COLUMNS",
    "Conn",
    "advance",
    "candidate_of",
    "content_hash",
    "current_record",
    "dt",
    "dt_opt",
    "lock_user",
    "record_fields",
    "record_of",
    "scope_args",
    "scope_filter",
    "scope_of",
    "ts",
    "ts_opt",
    "user_revision",
    "version_of",
    "write_events",
]

Conn = psycopg.Connection[TupleRow]
"""A pooled connection (autocommit; transactions are explicit)."""


def ts(value: datetime) -> datetime:
    """A time to write (refuses a naive one)."""
    if value.tzinfo is None:
        raise InvalidInput("times must be timezone-aware")
    return value


def ts_opt(value: datetime | None) -> datetime | None:
    """:func:`ts`, passing None through."""
    return None if value is None else ts(value)


def dt(value: datetime) -> datetime:
    """A time read back, in UTC."""
    return value.astimezone(UTC)


def dt_opt(value: datetime | None) -> datetime | None:
    """:func:`dt`, passing None through."""
    return None if value is None else dt(value)


def record_of(row: Sequence[Any]) -> MemoryRecord:
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
        last_confirmed_at=dt_opt(row[12]),
        review_after=dt_opt(row[13]),
        expires_at=dt_opt(row[14]),
    )


def candidate_of(row: Sequence[Any]) -> Candidate:
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
        decided_at=dt_opt(row[15]),
        expires_at=dt(row[16]),
    )


def version_of(row: Sequence[Any]) -> MemoryVersion:
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
        parts.append("(scope_type = %s AND COALESCE(workspace_type, '') = %s)")
        args.extend([scope_type, workspace_type or ""])
    return sql + " AND (" + " OR ".join(parts) + ")", args


def current_record(conn: Conn, user_id: str, memory_id: str) -> MemoryRecord:
    """The user's current record; raises ``NotFound`` (``forgotten`` if tombstoned)."""
    row = conn.execute(
        f"SELECT {COLUMNS} FROM memories WHERE memory_id = %s AND user_id = %s",
        (memory_id, user_id),
    ).fetchone()
    if row is None:
        gone = conn.execute(
            "SELECT 1 FROM memory_tombstones WHERE memory_id = %s AND user_id = %s",
            (memory_id, user_id),
        ).fetchone()
        raise NotFound(memory_id, forgotten=gone is not None)
    return record_of(row)


def lock_user(conn: Conn, user_id: str) -> None:
    """Take the user's write lock (module docstring) for the rest of the transaction."""
    conn.execute(
        "INSERT INTO memory_revisions (user_id, revision) VALUES (%s, 0) "
        "ON CONFLICT (user_id) DO NOTHING",
        (user_id,),
    )
    conn.execute("SELECT 1 FROM memory_revisions WHERE user_id = %s FOR UPDATE", (user_id,))


def user_revision(conn: Conn, user_id: str) -> int:
    """The user's memory_revision (0 before the first write)."""
    row = conn.execute(
        "SELECT revision FROM memory_revisions WHERE user_id = %s", (user_id,)
    ).fetchone()
    return 0 if row is None else int(row[0])


def advance(conn: Conn, user_id: str) -> int:
    """Advance the user's memory_revision by one (under the user lock); the new value."""
    row = conn.execute(
        "UPDATE memory_revisions SET revision = revision + 1 WHERE user_id = %s RETURNING revision",
        (user_id,),
    ).fetchone()
    if row is None:  # only when a caller forgot lock_user
        raise RuntimeError("advance: the user's write lock was not taken")
    return int(row[0])


def write_events(conn: Conn, events: Sequence[GovernanceEvent], now: datetime) -> None:
    """Append governance audit rows (ids, enums and details only)."""
    if not events:
        return
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO governance_events (user_id, event_type, memory_id, candidate_id, "
            "details, created_at) VALUES (%s, %s, %s, %s, %s, %s)",
            [
                (
                    e.user_id,
                    e.event_type,
                    e.memory_id,
                    e.candidate_id,
                    json.dumps(e.details, sort_keys=True),
                    ts(now),
                )
                for e in events
            ],
        )
