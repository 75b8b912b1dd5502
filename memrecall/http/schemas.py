"""Request and response bodies of the management API, as msgspec Structs.

Request bodies are decoded strictly (unknown fields refused, exact types: ``true`` is not
``1``); the same Structs generate the OpenAPI schemas (:mod:`memrecall.http.openapi`).
Response bodies are built from store values by the ``*_body`` functions here, so every
endpoint spells a record the same way.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from memrecall.governance import Candidate, MemorySettings
from memrecall.store import MemoryRecord, MemoryVersion, ScopeType, WorkspaceType

__all__ = [
    "MAX_LIMIT",
    "AcceptBody",
    "CandidateOut",
    "CandidatePage",
    "CreateBody",
    "ErrorOut",
    "ExpectedRevisionBody",
    "LegacyMemory",
    "LegacyPage",
    "MemoryOut",
    "MemoryPage",
    "SettingsBody",
    "SettingsOut",
    "UpdateBody",
    "VersionOut",
    "VersionPage",
    "candidate_body",
    "memory_body",
    "settings_body",
    "version_body",
]

MAX_LIMIT = 200

Revision = Annotated[int, msgspec.Meta(ge=1, le=2**53)]
Text = Annotated[str, msgspec.Meta(min_length=1, max_length=8000)]
Category = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Key = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]


class _Request(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class CreateBody(_Request, frozen=True):
    """POST /me/core-memories: a new memory in a scope."""

    key: Key
    content: Text
    category: Category
    scope_type: ScopeType = ScopeType.GLOBAL
    workspace_type: WorkspaceType | None = None
    review_after: datetime | None = None
    expires_at: datetime | None = None


class UpdateBody(_Request, frozen=True):
    """PATCH /me/core-memories/{id}: content and/or category (and lifecycle times) at a revision.

    ``review_after`` / ``expires_at``: absent keeps the time, ``null`` clears it.
    """

    expected_revision: Revision
    content: Text | msgspec.UnsetType = msgspec.UNSET
    category: Category | msgspec.UnsetType = msgspec.UNSET
    review_after: datetime | msgspec.UnsetType | None = msgspec.UNSET
    expires_at: datetime | msgspec.UnsetType | None = msgspec.UNSET


class ExpectedRevisionBody(_Request, frozen=True):
    """POST …/versions/{revision}/restore: the revision the caller last read."""

    expected_revision: Revision


class AcceptBody(_Request, frozen=True):
    """POST /me/memory-candidates/{id}/accept: optional edits (scope only for a new memory)."""

    content: Text | None = None
    category: Category | None = None
    scope_type: ScopeType | None = None
    workspace_type: WorkspaceType | None = None


class SettingsBody(_Request, frozen=True):
    """PATCH /me/memory-settings: either switch or both (an absent one is unchanged)."""

    saved_memory_enabled: bool | None = None
    auto_extract_enabled: bool | None = None


class LegacyMemory(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """The legacy record (PUT body and GET item): global scope only."""

    memory_key: Key
    content: Text
    category: Category


class MemoryOut(msgspec.Struct, frozen=True):
    """A memory as the formal API shows it."""

    memory_id: str
    key: str
    content: str
    category: str
    scope_type: ScopeType
    workspace_type: WorkspaceType | None
    status: str
    source_type: str
    revision: int
    created_at: datetime
    updated_at: datetime
    last_confirmed_at: datetime | None
    review_after: datetime | None
    expires_at: datetime | None


class VersionOut(msgspec.Struct, frozen=True):
    """One historical version of a memory."""

    revision: int
    content: str
    category: str
    scope_type: ScopeType
    workspace_type: WorkspaceType | None
    change_type: str
    changed_via: str
    source_candidate_id: str | None
    created_at: datetime


class CandidateOut(msgspec.Struct, frozen=True):
    """A candidate memory (content only while pending)."""

    candidate_id: str
    operation: str
    status: str
    target_memory_id: str | None
    expected_revision: int | None
    key: str
    content: str | None
    category: str
    scope_type: ScopeType
    workspace_type: WorkspaceType | None
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None
    resulting_memory_id: str | None


class SettingsOut(msgspec.Struct, frozen=True):
    """The user's two memory switches."""

    saved_memory_enabled: bool
    auto_extract_enabled: bool


class MemoryPage(msgspec.Struct, frozen=True):
    """A page of memories; pass ``next_cursor`` as ``cursor`` for the next (null: no more)."""

    items: list[MemoryOut]
    next_cursor: str | None


class VersionPage(msgspec.Struct, frozen=True):
    """A page of versions, oldest first."""

    items: list[VersionOut]
    next_cursor: str | None


class CandidatePage(msgspec.Struct, frozen=True):
    """A page of candidates, oldest first."""

    items: list[CandidateOut]
    next_cursor: str | None


class LegacyPage(msgspec.Struct, frozen=True):
    """GET /me/memories: every active global memory (unpaginated, as the old client expects)."""

    memories: list[LegacyMemory]


class ErrorOut(msgspec.Struct, frozen=True, omit_defaults=True):
    """Every error: a code, a message safe to show, and details for conflicts and refusals."""

    error: str
    message: str
    memory_id: str | None = None
    current_revision: int | None = None
    reason: str | None = None
    secret_kind: str | None = None
    status: str | None = None


def memory_body(r: MemoryRecord) -> MemoryOut:
    """The formal API's view of a record."""
    return MemoryOut(
        memory_id=r.memory_id,
        key=r.key,
        content=r.content,
        category=r.category,
        scope_type=r.scope.type,
        workspace_type=r.scope.workspace,
        status=r.status.value,
        source_type=r.source_type.value,
        revision=r.revision,
        created_at=r.created_at,
        updated_at=r.updated_at,
        last_confirmed_at=r.last_confirmed_at,
        review_after=r.review_after,
        expires_at=r.expires_at,
    )


def version_body(v: MemoryVersion) -> VersionOut:
    """The formal API's view of a version row."""
    return VersionOut(
        revision=v.revision,
        content=v.content,
        category=v.category,
        scope_type=v.scope.type,
        workspace_type=v.scope.workspace,
        change_type=v.change_type.value,
        changed_via=v.changed_via.value,
        source_candidate_id=v.source_candidate_id,
        created_at=v.created_at,
    )


def candidate_body(c: Candidate) -> CandidateOut:
    """The formal API's view of a candidate."""
    return CandidateOut(
        candidate_id=c.candidate_id,
        operation=c.operation.value,
        status=c.status.value,
        target_memory_id=c.target_memory_id,
        expected_revision=c.expected_revision,
        key=c.key,
        content=c.content,
        category=c.category,
        scope_type=c.scope.scope_type,
        workspace_type=c.scope.workspace_type,
        created_at=c.created_at,
        expires_at=c.expires_at,
        decided_at=c.decided_at,
        resulting_memory_id=c.resulting_memory_id,
    )


def settings_body(s: MemorySettings) -> SettingsOut:
    """The settings as the API shows them."""
    return SettingsOut(s.saved_memory_enabled, s.auto_extract_enabled)
