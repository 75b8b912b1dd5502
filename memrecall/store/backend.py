"""The ``Store`` protocol: the synchronous interface every database backend implements.

Each method is one transaction: it commits entirely or raises and leaves nothing behind.
Methods may be called from several threads at once; the backend owns its connections and
its locking (the SQLite backend's policy is in :mod:`memrecall.store.sqlite`). The SQL
dialect stays inside the backend: the service only sees these methods and the values of
:mod:`memrecall.store.model`.

Inputs arrive checked and normalised by the service (keys normalised, content checked,
times timezone-aware); backends enforce the invariants that need the database: uniqueness
of user + scope + key, ``expected_revision``, and the all-or-nothing write of version row +
current row + the user's ``memory_revision`` + audit row.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Protocol

import attrs

from memrecall.governance import Candidate, CandidateStatus, MemorySettings, ProfileEntry
from memrecall.governance.profile import ProjectableMemory

from .contract_fields import ContractFields
from .model import (
    AuditEvent,
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    SourceType,
    Status,
    Tombstone,
)

__all__ = [
    "KEEP",
    "ContentChange",
    "ForgetResult",
    "Keep",
    "NewMemory",
    "Rejection",
    "SaveOutcome",
    "Store",
    "StoreChanges",
]


class Keep(enum.Enum):
    """Marker type of :data:`KEEP`."""

    KEEP = "keep"


KEEP: Literal[Keep.KEEP] = Keep.KEEP
"""Leave this optional field as it is (distinct from ``None``, which clears it)."""


@attrs.frozen
class NewMemory:
    """A memory to create (all fields checked and normalised)."""

    memory_id: str
    user_id: str
    scope: MemoryScope
    key: str
    content: str
    category: str
    source_type: SourceType
    review_after: datetime | None
    expires_at: datetime | None
    changed_via: ChangedVia
    request_id: str | None = None
    contract_fields: ContractFields | None = None
    """The memory tools' side row, written in the same transaction (None: leave it)."""


@attrs.frozen
class SaveOutcome:
    """What :meth:`Store.save` did: ``created`` False means the same content already existed
    (idempotent; its ``last_confirmed_at`` was refreshed)."""

    record: MemoryRecord
    created: bool


@attrs.frozen
class ContentChange:
    """A new revision's content (``None`` / :data:`KEEP` leave a field as it is)."""

    change_type: Literal[ChangeType.UPDATE, ChangeType.REPLACE]
    content: str | None = None
    category: str | None = None
    review_after: datetime | Literal[Keep.KEEP] | None = KEEP
    expires_at: datetime | Literal[Keep.KEEP] | None = KEEP
    changed_via: ChangedVia = ChangedVia.USER_API
    source_candidate_id: str | None = None
    request_id: str | None = None
    contract_fields: ContractFields | None = None
    """The memory tools' side row, written in the same transaction (None: leave it)."""


@attrs.frozen
class StoreChanges:
    """The answer of :meth:`Store.changes_since` (an incremental index applies it)."""

    memory_revision: int
    cursor: int
    records: tuple[MemoryRecord, ...]
    removed: tuple[str, ...]
    full: bool


@attrs.frozen
class ForgetResult:
    """The tombstone, and whether the files were scrubbed (WAL checkpointed and truncated).

    ``scrubbed`` is False only when another connection held the log open; the content is
    already unreachable through every query, and the next successful scrub removes it
    from the files.
    """

    tombstone: Tombstone
    scrubbed: bool


@attrs.frozen
class Rejection:
    """A rejected candidate's fingerprint (no content), and the memory it was about, if any."""

    fingerprint: str
    memory_id: str | None


class Store(Protocol):
    """A memory database. Every method is one transaction (module docstring)."""

    def save(self, new: NewMemory, now: datetime) -> SaveOutcome:
        """Create a memory at revision 1, or succeed idempotently on identical content.

        ``new.contract_fields``, when given, is written in the same transaction (on the
        idempotent path too), so a memory never exists without the side row it came with.

        Raises :class:`~memrecall.store.model.KeyConflict` when the user already has a memory
        with this scope and key and different content or category.
        """
        ...

    def change(
        self,
        user_id: str,
        memory_id: str,
        expected_revision: int,
        change: ContentChange,
        now: datetime,
    ) -> MemoryRecord:
        """Write revision ``expected_revision + 1`` (version row, current row, memory_revision,
        and ``change.contract_fields`` when given), all in one transaction.

        Raises ``NotFound`` or ``RevisionConflict`` (nothing written).
        """
        ...

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
        """Copy version ``revision``'s content and category as a new revision.

        Raises ``NotFound`` (memory or version) or ``RevisionConflict``.
        """
        ...

    def set_status(
        self,
        user_id: str,
        memory_id: str,
        status: Status,
        now: datetime,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """Suppress or restore. The record's revision stays; memory_revision advances when
        the status changes (a no-op change writes nothing)."""
        ...

    def confirm(
        self,
        user_id: str,
        memory_id: str,
        now: datetime,
        review_after: datetime | Literal[Keep.KEEP] | None = KEEP,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """Set ``last_confirmed_at = now`` (ends a due review), optionally a new review_after."""
        ...

    def forget(
        self, user_id: str, memory_id: str, now: datetime, request_id: str | None = None
    ) -> ForgetResult:
        """Delete the memory's current and historical content (and every other content-bearing
        row that names it), leave a tombstone, then scrub the files."""
        ...

    def get(self, user_id: str, memory_id: str) -> MemoryRecord:
        """The current record, whatever its status. Raises ``NotFound``."""
        ...

    def list_records(
        self,
        user_id: str,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        status: Status | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> list[MemoryRecord]:
        """A page of the user's records ordered by ``memory_id``, those after ``after``."""
        ...

    def history(self, user_id: str, memory_id: str) -> list[MemoryVersion]:
        """Every version, oldest first. Raises ``NotFound``."""
        ...

    def audit_events(self, user_id: str, memory_id: str | None = None) -> list[AuditEvent]:
        """The user's audit rows (or one memory's), oldest first."""
        ...

    def tombstone(self, user_id: str, memory_id: str) -> Tombstone | None:
        """The tombstone of a forgotten memory of this user, if any."""
        ...

    def memory_revision(self, user_id: str) -> int:
        """The user's memory_revision: 0 before the first write, +1 per write."""
        ...

    def snapshot(
        self, user_id: str, scopes: Sequence[MemoryScope]
    ) -> tuple[int, list[MemoryRecord]]:
        """memory_revision and the active records in ``scopes``, read in one transaction.

        Expiry is not applied here (it depends on the caller's clock): retrieval filters it.
        """
        ...

    def changes_since(
        self, user_id: str, scopes: Sequence[MemoryScope], cursor: int | None
    ) -> StoreChanges:
        """What changed for ``user_id`` in ``scopes`` after ``cursor``, read in one transaction.

        ``cursor`` is a value of :attr:`StoreChanges.cursor` from an earlier call, or None for
        everything (``full`` True: ``records`` are all active records in ``scopes``).
        Otherwise ``records`` are the current active records (in ``scopes``) among the
        memories written after the cursor, and ``removed`` the ids of the others (suppressed,
        forgotten, moved out of ``scopes``). The cursor is opaque to callers.
        """
        ...

    def find_key(self, user_id: str, scope: MemoryScope, key: str) -> MemoryRecord | None:
        """The record (any status) under a normalised key in a scope, if any."""
        ...

    # --------------------------------------------------------------- candidates (v2)

    def put_candidate(
        self,
        candidate: Candidate,
        *,
        expected_status: CandidateStatus | None,
        now: datetime,
        rejection: Rejection | None = None,
        events: Sequence[GovernanceEvent] = (),
    ) -> None:
        """Insert (``expected_status`` None) or overwrite a candidate whose stored status is
        still ``expected_status``, plus a rejection fingerprint and audit events, in one
        transaction. Raises ``CandidateConflict`` when the stored status differs."""
        ...

    def get_candidate(self, user_id: str, candidate_id: str) -> Candidate:
        """One of the user's candidates. Raises ``NotFound``."""
        ...

    def list_candidates(
        self, user_id: str, *, status: CandidateStatus | None = None
    ) -> list[Candidate]:
        """The user's candidates, oldest first."""
        ...

    def due_candidates(self, now: datetime, limit: int = 500) -> list[Candidate]:
        """Pending candidates of every user with ``expires_at <= now`` (the expiry sweep)."""
        ...

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
        """Write an accepted candidate in one transaction: the candidate must still be
        pending (else ``CandidateConflict``); then either ``create`` (``KeyConflict`` if the
        key is taken) or ``change`` of ``accepted.resulting_memory_id`` at
        ``expected_revision`` (``RevisionConflict`` if stale); the candidate row becomes
        ``accepted``. Any error writes nothing."""
        ...

    def has_rejection(self, user_id: str, fingerprint: str) -> bool:
        """Whether the user rejected a candidate with this fingerprint."""
        ...

    # --------------------------------------------------------------- settings, events

    def get_settings(self, user_id: str) -> MemorySettings:
        """The user's stored memory settings (defaults when never set)."""
        ...

    def put_settings(self, user_id: str, settings: MemorySettings, now: datetime) -> None:
        """Store the user's memory settings (advances memory_revision)."""
        ...

    def add_events(self, events: Sequence[GovernanceEvent], now: datetime) -> None:
        """Append governance audit events (policy denials and the like)."""
        ...

    def governance_events(self, user_id: str) -> list[GovernanceEvent]:
        """The user's governance audit events, oldest first."""
        ...

    # --------------------------------------------------------------- profile projection

    def set_projection_mark(
        self, user_id: str, memory_id: str, projection: tuple[str, str] | None
    ) -> None:
        """Mark a memory projectable as ``(field, value)``, or unmark it (None)."""
        ...

    def set_profile_setting(self, user_id: str, field: str, value: str | None) -> None:
        """Set (or clear, None) an explicit profile setting; settings beat projections."""
        ...

    def projection_inputs(self, user_id: str) -> tuple[list[ProjectableMemory], dict[str, str]]:
        """The user's projectable memories and explicit profile settings, in one read."""
        ...

    def get_projection(self, user_id: str) -> dict[str, ProfileEntry]:
        """The stored (memory-derived) profile entries by field."""
        ...

    def put_projection(
        self,
        user_id: str,
        entries: dict[str, ProfileEntry],
        now: datetime,
        events: Sequence[GovernanceEvent] = (),
    ) -> None:
        """Replace the user's stored profile entries (one transaction, with events)."""
        ...

    # --------------------------------------------------------------- memory-tool fields (v3)

    def contract_fields(self, user_id: str) -> dict[str, ContractFields]:
        """The memory tools' side rows of the user's memories, by memory_id (docs/tools.md)."""
        ...

    def put_contract_fields(self, user_id: str, memory_id: str, fields: ContractFields) -> None:
        """Write (insert or replace) one memory's side row. Raises ``NotFound``."""
        ...

    def add_hits(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, int]:
        """Add one hit to each of the user's memories named (each id once; unknown ids are
        skipped); the new counts. Changes no revision."""
        ...

    def close(self) -> None:
        """Close every connection (idempotent)."""
        ...
