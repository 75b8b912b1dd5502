"""Candidates (schema v2): proposals, their decisions, rejection fingerprints.

Accepting writes the memory (create or change) and the candidate's new status in one
transaction, so an accepted candidate and its memory never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memrecall.governance import (
    Candidate,
    CandidateStatus,
)

from ..backend import (
    ContentChange,
    NewMemory,
    Rejection,
)
from ..model import (
    CandidateConflict,
    GovernanceEvent,
    InvalidInput,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    NotFound,
)
from .base import Connection
from .memories import MemoryWrites
from .rows import (
    CANDIDATE_COLUMNS,
    candidate_of,
    scope_args,
)

_CANDIDATE_FIELDS = tuple(CANDIDATE_COLUMNS.split(", "))


class CandidateOps(MemoryWrites):
    """Candidate storage of a store."""

    @staticmethod
    def _stored_status(conn: Connection, candidate_id: str) -> str | None:
        row = conn.execute(
            "SELECT status FROM core_memory_candidates WHERE candidate_id = ?", (candidate_id,)
        ).fetchone()
        return None if row is None else str(row[0])

    def _write_candidate(self, conn: Connection, c: Candidate) -> None:
        scope_type, workspace_type = scope_args(MemoryScope.from_scope(c.scope))
        conn.execute(
            self._upsert("core_memory_candidates", _CANDIDATE_FIELDS, ("candidate_id",)),
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
                self._ts(c.created_at),
                self._ts_opt(c.decided_at),
                self._ts(c.expires_at),
            ),
        )

    def _check_status(
        self, conn: Connection, c: Candidate, expected: CandidateStatus | None
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
        with self._write(candidate.user_id) as conn:
            self._check_status(conn, candidate, expected_status)
            self._write_candidate(conn, candidate)
            if rejection is not None:
                conn.execute(
                    self._upsert(
                        "memory_rejections",
                        ("user_id", "fingerprint", "memory_id", "created_at"),
                        ("user_id", "fingerprint"),
                    ),
                    (candidate.user_id, rejection.fingerprint, rejection.memory_id, self._ts(now)),
                )
            self._write_events(conn, events, now)
            self._advance(conn, candidate.user_id)

    def get_candidate(self, user_id: str, candidate_id: str) -> Candidate:
        """See :meth:`memrecall.store.backend.Store.get_candidate`."""
        with self._read() as conn:
            row = conn.execute(
                f"SELECT {CANDIDATE_COLUMNS} FROM core_memory_candidates "
                "WHERE candidate_id = ? AND user_id = ?",
                (candidate_id, user_id),
            ).fetchone()
        if row is None:
            raise NotFound(candidate_id)
        return candidate_of(row, self._dt)

    def list_candidates(
        self, user_id: str, *, status: CandidateStatus | None = None
    ) -> list[Candidate]:
        """See :meth:`memrecall.store.backend.Store.list_candidates`."""
        sql = f"SELECT {CANDIDATE_COLUMNS} FROM core_memory_candidates WHERE user_id = ?"
        args: list[Any] = [user_id]
        if status is not None:
            sql += " AND status = ?"
            args.append(status.value)
        with self._read() as conn:
            rows = conn.execute(sql + " ORDER BY created_at, candidate_id", args).fetchall()
        return [candidate_of(row, self._dt) for row in rows]

    def due_candidates(self, now: datetime, limit: int = 500) -> list[Candidate]:
        """See :meth:`memrecall.store.backend.Store.due_candidates`."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {CANDIDATE_COLUMNS} FROM core_memory_candidates "
                "WHERE status = 'pending' AND expires_at <= ? ORDER BY expires_at LIMIT ?",
                (self._ts(now), limit),
            ).fetchall()
        return [candidate_of(row, self._dt) for row in rows]

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
        with self._write(accepted.user_id) as conn:
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
