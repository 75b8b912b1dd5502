"""The memory store's data: scopes, records, versions, audit events, tombstones, errors.

Plain frozen values, shared by every backend and the service. Times are timezone-aware
UTC :class:`~datetime.datetime` values; backends choose their own storage format.
"""

from __future__ import annotations

import enum
from datetime import datetime

import attrs

from memrecall.governance.context import Scope
from memrecall.governance.scopes import ScopeType, WorkspaceType

__all__ = [
    "AuditEvent",
    "AuditType",
    "CandidateConflict",
    "ChangeType",
    "ChangedVia",
    "GovernanceEvent",
    "InvalidInput",
    "KeyConflict",
    "MemoryRecord",
    "MemoryScope",
    "MemoryVersion",
    "NotFound",
    "RevisionConflict",
    "ScopeType",
    "SourceType",
    "Status",
    "StoreError",
    "Tombstone",
    "WorkspaceType",
    "visible_scopes",
]


class SourceType(enum.StrEnum):
    """How a memory became active: the user asked, or the user confirmed a proposal."""

    EXPLICIT = "explicit"
    CONFIRMED = "confirmed"


class Status(enum.StrEnum):
    """Active memories are retrievable; suppressed ones are hidden until restored."""

    ACTIVE = "active"
    SUPPRESSED = "suppressed"


class ChangeType(enum.StrEnum):
    """Why a version row was written."""

    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"
    RESTORE = "restore"


class ChangedVia(enum.StrEnum):
    """Which face made a change (recorded on versions)."""

    USER_API = "user_api"
    AGENT_TOOL = "agent_tool"
    CANDIDATE = "candidate"
    MIGRATION = "migration"


class AuditType(enum.StrEnum):
    """Audit event types written by the store (a subset of seed 002 §17's list)."""

    CREATED = "memory.created"
    UPDATED = "memory.updated"
    CONFIRMED = "memory.confirmed"
    SUPPRESSED = "memory.suppressed"
    RESTORED = "memory.restored"
    DELETED = "memory.deleted"


@attrs.frozen
class MemoryScope:
    """A scope: ``global`` (no workspace), or ``workspace`` with its workspace type.

    Build with :meth:`global_` or :meth:`of_workspace`; the constructor checks the pairing.
    """

    type: ScopeType
    workspace: WorkspaceType | None = None

    def __attrs_post_init__(self) -> None:
        if (self.type is ScopeType.GLOBAL) != (self.workspace is None):
            raise InvalidInput(
                "scope: global takes no workspace type, workspace needs one "
                f"(got {self.type.value!r} with {self.workspace!r})"
            )

    @classmethod
    def global_(cls) -> MemoryScope:
        """The global scope."""
        return cls(ScopeType.GLOBAL, None)

    @classmethod
    def of_workspace(cls, workspace: WorkspaceType) -> MemoryScope:
        """The scope of one workspace type."""
        return cls(ScopeType.WORKSPACE, workspace)

    @classmethod
    def from_scope(cls, scope: Scope) -> MemoryScope:
        """The store's scope for a governance :class:`~memrecall.governance.Scope`."""
        return cls(scope.scope_type, scope.workspace_type)

    def as_scope(self) -> Scope:
        """This scope as governance's :class:`~memrecall.governance.Scope` (same enums)."""
        return Scope(self.type, self.workspace)

    @property
    def label(self) -> str:
        """``global`` or ``workspace:<type>`` (for output and sorting)."""
        if self.workspace is None:
            return self.type.value
        return f"{self.type.value}:{self.workspace.value}"


def visible_scopes(workspace: WorkspaceType | None) -> tuple[MemoryScope, ...]:
    """The scopes a caller in ``workspace`` may read: global, plus that workspace (§5)."""
    if workspace is None:
        return (MemoryScope.global_(),)
    return (MemoryScope.global_(), MemoryScope.of_workspace(workspace))


@attrs.frozen
class MemoryRecord:
    """The current state of one memory (seed 002 §7).

    Invariant: ``revision`` equals the revision of the newest version row.
    """

    memory_id: str
    user_id: str
    scope: MemoryScope
    key: str
    """Normalised key (:func:`memrecall.store.keys.normalize_key`)."""
    content: str
    category: str
    source_type: SourceType
    status: Status
    revision: int
    created_at: datetime
    updated_at: datetime
    last_confirmed_at: datetime | None
    review_after: datetime | None
    expires_at: datetime | None

    def expired(self, now: datetime) -> bool:
        """True once ``expires_at`` has passed: the record is never retrieved again."""
        return self.expires_at is not None and self.expires_at <= now

    def review_due(self, now: datetime) -> bool:
        """True when ``review_after`` has passed and no confirmation came after it."""
        if self.review_after is None or self.review_after > now:
            return False
        return self.last_confirmed_at is None or self.last_confirmed_at < self.review_after


@attrs.frozen
class MemoryVersion:
    """One version row: the content a memory had at one revision (§17)."""

    memory_id: str
    revision: int
    content: str
    category: str
    scope: MemoryScope
    change_type: ChangeType
    changed_via: ChangedVia
    source_candidate_id: str | None
    created_at: datetime


@attrs.frozen
class AuditEvent:
    """One audit row: ids, type, scope, revision, a SHA-256 of the content, time. Never content."""

    event_id: int
    memory_id: str
    user_id: str
    type: AuditType
    scope: MemoryScope
    revision: int
    content_hash: str
    request_id: str | None
    created_at: datetime


@attrs.frozen
class Tombstone:
    """What remains of a forgotten memory."""

    memory_id: str
    user_id: str
    deleted_at: datetime
    final_revision: int


@attrs.frozen
class GovernanceEvent:
    """A governance audit row (policy denials, candidate decisions, projections).

    ``details`` holds enums and ids only (e.g. the :class:`~memrecall.governance.PolicyDeniedEvent`
    fields): never a key, content or content hash. ``event_id`` is 0 until stored.
    """

    event_type: str
    user_id: str
    details: dict[str, str | None] = attrs.field(factory=dict)
    memory_id: str | None = None
    candidate_id: str | None = None
    event_id: int = 0
    created_at: datetime | None = None


class StoreError(Exception):
    """Base of every error the store raises on purpose."""


class InvalidInput(StoreError, ValueError):
    """A key, content, category, scope or time the store refuses (the message says which)."""


class NotFound(StoreError, LookupError):
    """No such memory for this user (never found, another user's, or forgotten)."""

    def __init__(self, memory_id: str, *, forgotten: bool = False) -> None:
        super().__init__(f"memory {memory_id} not found" + (" (forgotten)" if forgotten else ""))
        self.memory_id = memory_id
        self.forgotten = forgotten


class RevisionConflict(StoreError):
    """``expected_revision`` is stale: nothing was written. Carries the current revision."""

    def __init__(self, memory_id: str, expected: int, current: int) -> None:
        super().__init__(f"memory {memory_id}: expected revision {expected}, current is {current}")
        self.memory_id = memory_id
        self.expected = expected
        self.current_revision = current


class KeyConflict(StoreError):
    """A memory with this user, scope and key exists with different content.

    Nothing was written; update it by ``memory_id`` with ``expected_revision``.
    """

    def __init__(self, memory_id: str, current: int) -> None:
        super().__init__(
            f"a memory with this scope and key exists ({memory_id}, revision {current}); "
            "update it by id with expected_revision"
        )
        self.memory_id = memory_id
        self.current_revision = current


class CandidateConflict(StoreError):
    """The candidate is no longer in the status the caller read (someone decided it first)."""

    def __init__(self, candidate_id: str, status: str | None) -> None:
        super().__init__(
            f"candidate {candidate_id} is {status or 'gone'}; read it again before deciding"
        )
        self.candidate_id = candidate_id
        self.status = status
