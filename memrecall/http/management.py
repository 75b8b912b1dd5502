"""The management caller's operations: the user acting on their own memories (seed 002 §15, §20).

Every operation runs as :attr:`~memrecall.governance.ToolName.MANAGEMENT_API` in an
:class:`~memrecall.governance.ExecutionContext` for the authenticated user, through the same
:func:`~memrecall.governance.decide` and the same ``memory.policy_denied`` events as the agent
tools (:class:`~memrecall.store.governed.GovernedMemory`): identity, the workspace content
policy and the secret screen apply; session mode and the settings switches do not bind this
caller (docs/governance.md). Writes are recorded as changed via ``user_api``.

Refusals are raised as :class:`Refused`; store errors (``NotFound``, ``RevisionConflict``,
``KeyConflict``, ``CandidateConflict``, ``InvalidInput``) pass through for the HTTP layer to
map. Another user's id is indistinguishable from a missing one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

import attrs

from memrecall.governance import (
    GLOBAL,
    AcceptEdits,
    AccessRequest,
    Candidate,
    CandidateOperation,
    CandidateStatus,
    DenyReason,
    ExecutionContext,
    MemorySettings,
    Operation,
    Refusal,
    Scope,
    ToolName,
    WorkspaceType,
    WriteOrigin,
    decide,
)
from memrecall.store import (
    KEEP,
    ChangedVia,
    InvalidInput,
    Keep,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    NotFound,
    RevisionConflict,
    ScopeType,
    Status,
    StoreError,
)
from memrecall.store.candidates import AcceptOutcome
from memrecall.store.governed import MEMORY_READ, GovernedMemory
from memrecall.store.model import GovernanceEvent

__all__ = ["LEGACY_SCOPE", "Contended", "Management", "Refused", "SaveReply", "scope_of"]

T = TypeVar("T")
TOOL = ToolName.MANAGEMENT_API
LEGACY_SCOPE = MemoryScope.global_()
_LEGACY_ATTEMPTS = 8


class Contended(StoreError):
    """A legacy upsert lost every race for its key (answered 409; the client retries)."""


class Refused(Exception):
    """The policy refused the operation (the event is already written)."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@attrs.frozen
class SaveReply:
    """A create: the record and whether it is new (False: the same content was there)."""

    record: MemoryRecord
    created: bool


class Management:
    """Policy-checked management operations for one server (module docstring)."""

    def __init__(self, governed: GovernedMemory, *, request_ids: Callable[[], str]) -> None:
        self.governed = governed
        self.service = governed.service
        self._request_ids = request_ids

    # ------------------------------------------------------------------ plumbing

    @staticmethod
    def context(user_id: str) -> ExecutionContext:
        """The trusted context of an authenticated management caller."""
        return ExecutionContext(user_id)

    async def _check(
        self, ctx: ExecutionContext, request: AccessRequest, *, memory_id: str | None = None
    ) -> None:
        effective = await self.governed.effective_context(ctx)
        decision = decide(effective, self.governed.policy, request)
        if isinstance(decision, Refusal):
            await self.governed.deny(effective, request, decision, memory_id=memory_id)
            raise Refused(decision)

    @staticmethod
    def _unwrap(result: T | Refusal, item_id: str) -> T:
        """The result, or the refusal raised (a "no such" refusal as ``NotFound``)."""
        if isinstance(result, Refusal):
            if result.reason is DenyReason.BAD_ARGUMENTS:
                raise NotFound(item_id)
            raise Refused(result)
        return result

    async def _audit_read(self, ctx: ExecutionContext, records: Sequence[MemoryRecord]) -> None:
        """The ``memory.read`` event the tools write for a listing: ids and counts only."""
        details: dict[str, str | None] = {
            "tool": TOOL.value,
            "workspace_type": None,
            "results": str(len(records)),
            "memory_ids": ",".join(r.memory_id for r in records),
        }
        await self.service.record_events([GovernanceEvent(MEMORY_READ, ctx.user_id, details)])

    async def _owned(self, ctx: ExecutionContext, memory_id: str) -> MemoryRecord:
        """The caller's record (NotFound for a missing, forgotten or other user's id)."""
        return await self.service.get(ctx.user_id, memory_id)

    # ------------------------------------------------------------------ reads

    async def list_memories(
        self,
        ctx: ExecutionContext,
        *,
        scope: MemoryScope | None,
        status: Status | None,
        after: str | None,
        limit: int,
    ) -> list[MemoryRecord]:
        """A page of the caller's memories in one scope or all, any or one status."""
        await self._check(
            ctx,
            AccessRequest(Operation.READ, TOOL, scope=None if scope is None else scope.as_scope()),
        )
        scopes = None if scope is None else [scope]
        records = await self.service.list_records(
            ctx.user_id, scopes=scopes, status=status, after=after, limit=limit
        )
        await self._audit_read(ctx, records)
        return records

    async def get(self, ctx: ExecutionContext, memory_id: str) -> MemoryRecord:
        """One of the caller's memories (any status)."""
        record = await self._owned(ctx, memory_id)
        await self._check(
            ctx,
            AccessRequest(
                Operation.READ, TOOL, scope=record.scope.as_scope(), owner_user_id=record.user_id
            ),
            memory_id=memory_id,
        )
        await self._audit_read(ctx, [record])
        return record

    async def versions(self, ctx: ExecutionContext, memory_id: str) -> list[MemoryVersion]:
        """Every version of one of the caller's memories, oldest first."""
        await self.get(ctx, memory_id)
        return await self.service.history(ctx.user_id, memory_id)

    async def list_candidates(
        self, ctx: ExecutionContext, status: CandidateStatus | None
    ) -> list[Candidate]:
        """The caller's candidates (one status or all), oldest first."""
        await self._check(ctx, AccessRequest(Operation.READ, TOOL))
        return await self.service.list_candidates(ctx.user_id, status=status)

    async def settings(self, ctx: ExecutionContext) -> MemorySettings:
        """The caller's stored switches."""
        return await self.service.get_settings(ctx.user_id)

    # ------------------------------------------------------------------ writes

    async def create(
        self,
        ctx: ExecutionContext,
        scope: MemoryScope,
        key: str,
        content: str,
        category: str,
        *,
        review_after: datetime | None = None,
        expires_at: datetime | None = None,
    ) -> SaveReply:
        """Create a memory; the same content under the key is an idempotent success and other
        content a ``KeyConflict`` (change it by id)."""
        request = AccessRequest(
            Operation.WRITE_EXPLICIT,
            TOOL,
            scope=scope.as_scope(),
            origin=WriteOrigin.USER_EXPLICIT,
            key=key,
            content=content,
            category=category,
        )
        await self._check(ctx, request)
        outcome = await self.service.save(
            ctx.user_id,
            scope,
            key,
            content,
            category,
            review_after=review_after,
            expires_at=expires_at,
            changed_via=ChangedVia.USER_API,
            request_id=self._request_ids(),
        )
        return SaveReply(outcome.record, outcome.created)

    async def update(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        *,
        expected_revision: int,
        content: str | None,
        category: str | None,
        review_after: datetime | Keep | None = KEEP,
        expires_at: datetime | Keep | None = KEEP,
    ) -> MemoryRecord:
        """A new revision at ``expected_revision`` (``RevisionConflict`` when stale)."""
        record = await self._owned(ctx, memory_id)
        request = AccessRequest(
            Operation.UPDATE,
            TOOL,
            scope=record.scope.as_scope(),
            owner_user_id=record.user_id,
            origin=WriteOrigin.USER_EXPLICIT,
            key=record.key,
            content=content,
            category=category or record.category,
        )
        await self._check(ctx, request, memory_id=memory_id)
        return await self.service.update(
            ctx.user_id,
            memory_id,
            expected_revision=expected_revision,
            content=content,
            category=category,
            review_after=review_after,
            expires_at=expires_at,
            changed_via=ChangedVia.USER_API,
            request_id=self._request_ids(),
        )

    async def restore_version(
        self, ctx: ExecutionContext, memory_id: str, revision: int, *, expected_revision: int
    ) -> MemoryRecord:
        """Copy an old version as a new revision, at ``expected_revision``."""
        record = await self._owned(ctx, memory_id)
        versions = await self.service.history(ctx.user_id, memory_id)
        version = next((v for v in versions if v.revision == revision), None)
        if version is None:
            raise NotFound(f"{memory_id}@{revision}")
        if record.revision != expected_revision:
            raise RevisionConflict(memory_id, expected_revision, record.revision)
        request = AccessRequest(
            Operation.UPDATE,
            TOOL,
            scope=record.scope.as_scope(),
            owner_user_id=record.user_id,
            origin=WriteOrigin.USER_EXPLICIT,
            key=record.key,
            content=version.content,
            category=version.category,
        )
        await self._check(ctx, request, memory_id=memory_id)
        return await self.service.restore_version(
            ctx.user_id,
            memory_id,
            revision,
            expected_revision=expected_revision,
            changed_via=ChangedVia.USER_API,
            request_id=self._request_ids(),
        )

    async def set_status(
        self, ctx: ExecutionContext, memory_id: str, status: Status
    ) -> MemoryRecord:
        """Suppress (hide from recall) or restore a memory (:meth:`GovernedMemory.suppress` /
        :meth:`~GovernedMemory.restore`); content and revision unchanged."""
        change = self.governed.suppress if status is Status.SUPPRESSED else self.governed.restore
        result = await change(ctx, memory_id, tool=TOOL, request_id=self._request_ids())
        return self._unwrap(result, memory_id)

    async def forget(self, ctx: ExecutionContext, memory_id: str) -> MemoryRecord:
        """Forget for good (through :meth:`GovernedMemory.forget`); returns the record as it was."""
        result = await self.governed.forget(
            ctx, memory_id, tool=TOOL, request_id=self._request_ids()
        )
        return self._unwrap(result, memory_id)

    async def accept(
        self, ctx: ExecutionContext, candidate_id: str, edits: AcceptEdits
    ) -> AcceptOutcome:
        """Accept a candidate, optionally edited (:meth:`GovernedMemory.accept_candidate`).
        A scope edit is for a new memory only (``InvalidInput`` otherwise)."""
        if edits.scope is not None:
            candidate = await self.service.get_candidate(ctx.user_id, candidate_id)
            if candidate.operation is not CandidateOperation.CREATE:
                raise InvalidInput("scope: only a candidate for a new memory can change scope")
        result = await self.governed.accept_candidate(ctx, candidate_id, edits)
        return self._unwrap(result, candidate_id)

    async def reject(self, ctx: ExecutionContext, candidate_id: str) -> Candidate:
        """Reject a candidate (through :meth:`GovernedMemory.reject_candidate`)."""
        result = await self.governed.reject_candidate(ctx, candidate_id)
        return self._unwrap(result, candidate_id)

    async def set_settings(
        self, ctx: ExecutionContext, *, saved: bool | None, auto_extract: bool | None
    ) -> MemorySettings:
        """Change either switch (None leaves it)."""
        return await self.service.set_settings(
            ctx.user_id, saved_memory_enabled=saved, auto_extract_enabled=auto_extract
        )

    # ------------------------------------------------------------------ legacy (global only)

    async def _legacy_find(self, ctx: ExecutionContext, memory_key: str) -> MemoryRecord | None:
        return await self.governed.find_key(ctx, LEGACY_SCOPE, memory_key)

    async def legacy_list(self, ctx: ExecutionContext) -> list[MemoryRecord]:
        """Every active, unexpired global memory (the old client reads no other scope)."""
        await self._check(ctx, AccessRequest(Operation.READ, TOOL, scope=GLOBAL))
        records: list[MemoryRecord] = []
        after: str | None = None
        while True:
            page = await self.service.list_records(
                ctx.user_id, scopes=[LEGACY_SCOPE], status=Status.ACTIVE, after=after, limit=1000
            )
            records.extend(self.governed.unexpired(page))
            if len(page) < 1000:
                await self._audit_read(ctx, records)
                return records
            after = page[-1].memory_id

    async def legacy_put(
        self, ctx: ExecutionContext, memory_key: str, content: str, category: str
    ) -> MemoryRecord:
        """The old upsert, global only: create, or replace the global record under the key
        (at the revision just read; retried if another write lands in between), and make it
        visible again if it was suppressed."""
        request = AccessRequest(
            Operation.WRITE_EXPLICIT,
            TOOL,
            scope=GLOBAL,
            origin=WriteOrigin.USER_EXPLICIT,
            key=memory_key,
            content=content,
            category=category,
        )
        await self._check(ctx, request)
        svc = self.service
        for _ in range(_LEGACY_ATTEMPTS):
            existing = await self._legacy_find(ctx, memory_key)
            try:
                if existing is None:
                    outcome = await svc.save(
                        ctx.user_id,
                        LEGACY_SCOPE,
                        memory_key,
                        content,
                        category,
                        request_id=self._request_ids(),
                    )
                    if outcome.created:
                        return outcome.record
                    continue  # created meanwhile by another request: read it again
                record = existing
                if (existing.content, existing.category) != (content, category):
                    record = await svc.replace(
                        ctx.user_id,
                        existing.memory_id,
                        expected_revision=existing.revision,
                        content=content,
                        category=category,
                        request_id=self._request_ids(),
                    )
                if record.status is Status.SUPPRESSED:
                    record = await svc.restore(
                        ctx.user_id, record.memory_id, request_id=self._request_ids()
                    )
            except (RevisionConflict, KeyConflict, NotFound):
                continue  # another request wrote or forgot the key meanwhile: read it again
            return record
        raise Contended("the key kept changing under concurrent writes; try again")

    async def legacy_delete(self, ctx: ExecutionContext, memory_key: str) -> MemoryRecord:
        """Forget the global memory under ``memory_key`` (a workspace one is untouched)."""
        existing = await self._legacy_find(ctx, memory_key)
        if existing is None:
            raise NotFound(memory_key)
        return await self.forget(ctx, existing.memory_id)


def scope_of(scope_type: ScopeType, workspace_type: WorkspaceType | None) -> Scope:
    """Governance's scope for a pair of request fields (raises ValueError when mismatched)."""
    if scope_type is ScopeType.GLOBAL:
        if workspace_type is not None:
            raise ValueError("a global scope takes no workspace_type")
        return GLOBAL
    if workspace_type is None:
        raise ValueError("a workspace scope needs workspace_type")
    return Scope.workspace(workspace_type)
