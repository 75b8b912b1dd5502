"""The governed face of the store: every call goes through the rules of :mod:`memrecall.governance`.

:class:`GovernedMemory` wraps a :class:`~memrecall.store.service.MemoryService`. Each method
takes the trusted :class:`~memrecall.governance.ExecutionContext` (never a user id or
workspace argument), and

1. folds the user's **stored** memory settings into the context's (both must allow);
2. builds the :class:`~memrecall.governance.AccessRequest` and asks
   :func:`~memrecall.governance.decide` (tool scope, settings, session mode, owner,
   visibility, origin, workspace content policy, secret screen of key/content/category);
3. on a :class:`~memrecall.governance.Refusal` writes a ``memory.policy_denied`` governance
   event (ids and enums only: no key, content or content hash) and returns the refusal;
4. otherwise carries out the allowed outcome: reads only the allowed scopes; a write of
   the user's text is classified with :func:`~memrecall.governance.plan_save` (create,
   idempotent refresh, explicit replace, or a candidate that keeps the old value); a
   model-inferred text only ever becomes a candidate.

Refusals are returned, not raised: a tool turns them into a structured result.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import attrs
import msgspec

from memrecall.governance import (
    DEFAULT_POLICY,
    POLICY_DENIED,
    AcceptEdits,
    AccessRequest,
    Allowed,
    Candidate,
    CandidateOperation,
    DenyReason,
    ExecutionContext,
    MemorySettings,
    Operation,
    Outcome,
    PolicyDocument,
    Refusal,
    SaveAction,
    TargetRecord,
    ToolName,
    WriteOrigin,
    access_request,
    decide,
    plan_save,
    policy_denied_event,
)
from memrecall.governance.tool_args import ListArgs, SaveArgs, UpdateArgs

from .candidates import AcceptOutcome
from .keys import normalize_key
from .model import (
    ChangedVia,
    GovernanceEvent,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    NotFound,
    RevisionConflict,
    ScopeType,
    SourceType,
    Status,
    StoreError,
    WorkspaceType,
)
from .service import MemoryService, SearchResult

__all__ = ["MEMORY_READ", "MEMORY_SEARCH", "GovernedMemory", "SaveKind", "SaveResult"]

MEMORY_SEARCH = "memory.search"
"""Governance event of an allowed search (§17): tool, workspace, counts, returned ids."""
MEMORY_READ = "memory.read"
"""Governance event of an allowed list (§17): tool, scopes, counts, returned ids."""

_SAVE_ATTEMPTS = 4


class SaveKind(enum.StrEnum):
    """What a governed save or update did."""

    CREATED = "created"  # a new active memory
    REFRESHED = "refreshed"  # same content: idempotent, last_confirmed_at refreshed
    UPDATED = "updated"  # an explicit replace or an update by id: new revision, audited
    PROPOSED = "proposed"  # a pending candidate; the active memory (if any) is unchanged
    UNCHANGED = "unchanged"  # model-inferred text equal to the current value: nothing to do
    ALREADY_REJECTED = "already_rejected"  # the user rejected this proposal before
    CONFLICT = "conflict"  # the record changed meanwhile (update by id): nothing written


@attrs.frozen
class SaveResult:
    """The outcome of an allowed write: the kind, the record and/or candidate involved."""

    kind: SaveKind
    record: MemoryRecord | None = None
    candidate: Candidate | None = None


def _details(
    ctx: ExecutionContext, request: AccessRequest, refusal: Refusal
) -> dict[str, str | None]:
    payload = msgspec.to_builtins(policy_denied_event(ctx, request, refusal))
    assert isinstance(payload, dict)
    drop = {"event_type", "user_id", "memory_id"}
    return {k: None if v is None else str(v) for k, v in payload.items() if k not in drop}


class GovernedMemory:
    """Policy-checked memory operations over a :class:`MemoryService` (module docstring)."""

    def __init__(self, service: MemoryService, policy: PolicyDocument = DEFAULT_POLICY) -> None:
        self.service = service
        self.policy = policy

    # ------------------------------------------------------------------ plumbing

    async def effective_context(self, ctx: ExecutionContext) -> ExecutionContext:
        """``ctx`` with the user's stored settings folded in (a switch is on only if both
        the runtime's context and the stored settings have it on)."""
        stored = await self.service.get_settings(ctx.user_id)
        settings = MemorySettings(
            ctx.settings.saved_memory_enabled and stored.saved_memory_enabled,
            ctx.settings.auto_extract_enabled and stored.auto_extract_enabled,
        )
        return attrs.evolve(ctx, settings=settings)

    async def deny(
        self,
        ctx: ExecutionContext,
        request: AccessRequest,
        refusal: Refusal,
        *,
        memory_id: str | None = None,
    ) -> Refusal:
        """Write the ``memory.policy_denied`` event for ``refusal`` and return it."""
        event = GovernanceEvent(
            POLICY_DENIED, ctx.user_id, _details(ctx, request, refusal), memory_id=memory_id
        )
        await self.service.record_events([event])
        return refusal

    async def _decide(
        self,
        ctx: ExecutionContext,
        request: AccessRequest | Refusal,
        *,
        tool: ToolName,
        memory_id: str | None = None,
    ) -> Allowed | Refusal:
        if isinstance(request, Refusal):  # the arguments themselves were refused
            return await self.deny(ctx, AccessRequest(request.operation, tool), request)
        effective = await self.effective_context(ctx)
        decision = decide(effective, self.policy, request)
        if isinstance(decision, Refusal):
            return await self.deny(effective, request, decision, memory_id=memory_id)
        return decision

    async def _target(self, ctx: ExecutionContext, memory_id: str) -> MemoryRecord | None:
        try:
            return await self.service.get(ctx.user_id, memory_id)
        except NotFound:
            return None

    async def _no_such_memory(
        self, ctx: ExecutionContext, operation: Operation, tool: ToolName, memory_id: str
    ) -> Refusal:
        refusal = Refusal(operation, DenyReason.BAD_ARGUMENTS, "no such memory")
        return await self.deny(ctx, AccessRequest(operation, tool), refusal, memory_id=memory_id)

    async def _audit_read(
        self,
        ctx: ExecutionContext,
        event_type: str,
        tool: ToolName,
        memory_ids: Sequence[str],
        **details: str | None,
    ) -> None:
        """Write a read's governance event: enums, counts and ids only (never the query,
        a key, content or category text)."""
        payload: dict[str, str | None] = {
            "tool": tool.value,
            "workspace_type": ctx.route.workspace_type.value if ctx.route else None,
            "results": str(len(memory_ids)),
            "memory_ids": ",".join(memory_ids),
            **details,
        }
        await self.service.record_events([GovernanceEvent(event_type, ctx.user_id, payload)])

    async def find_key(
        self, ctx: ExecutionContext, scope: MemoryScope, key: str
    ) -> MemoryRecord | None:
        """The caller's memory under ``key`` in ``scope`` (any status), or None.

        ``key`` is normalised as a save normalises it (``InvalidInput`` for a key no save
        would take). Only ``ctx.user_id``'s records are looked at: another user's memory
        under the same key is invisible. This is a lookup, not an access decision: it
        writes no governance event, and callers check the operation they go on to do
        (save, forget, ...) as usual.
        """
        normalized = normalize_key(key)
        svc = self.service
        return await svc._run(lambda: svc.store.find_key(ctx.user_id, scope, normalized))

    def unexpired(self, records: Sequence[MemoryRecord]) -> list[MemoryRecord]:
        """``records`` less those past their ``expires_at`` by the service's clock (order
        kept): what a read shows of a listing."""
        now = self.service._now()
        return [r for r in records if not r.expired(now)]

    # ------------------------------------------------------------------ reads

    async def search(
        self,
        ctx: ExecutionContext,
        query: str,
        *,
        category: str | None = None,
        limit: int | None = None,
        tool: ToolName = ToolName.SEARCH,
    ) -> SearchResult | Refusal:
        """Search the memories visible from the context's workspace."""
        decision = await self._decide(
            ctx, AccessRequest(Operation.READ, tool, category=category), tool=tool
        )
        if isinstance(decision, Refusal):
            return decision
        workspace = ctx.route.workspace_type if ctx.route else None
        result = await self.service.search(
            ctx.user_id, workspace, query, category=category, limit=limit
        )
        await self._audit_read(
            ctx,
            MEMORY_SEARCH,
            tool,
            [h.memory_id for h in result.hits],
            category_filter="yes" if category is not None else "no",
            cached="yes" if result.cached else "no",
        )
        return result

    async def list(
        self,
        ctx: ExecutionContext,
        *,
        scope: ScopeType | None = None,
        workspace_type: WorkspaceType | None = None,
        limit: int = 100,
    ) -> list[MemoryRecord] | Refusal:
        """Active, unexpired memories in the visible scopes (or one of them)."""
        request = access_request(ctx, ListArgs(scope=scope, workspace_type=workspace_type))
        decision = await self._decide(ctx, request, tool=ToolName.LIST)
        if isinstance(decision, Refusal):
            return decision
        scopes = sorted((MemoryScope.from_scope(s) for s in decision.scopes), key=lambda s: s.label)
        records = await self.service.list_records(
            ctx.user_id, scopes=scopes, status=Status.ACTIVE, limit=limit
        )
        live = self.unexpired(records)
        await self._audit_read(
            ctx,
            MEMORY_READ,
            ToolName.LIST,
            [r.memory_id for r in live],
            scopes=",".join(s.label for s in scopes),
        )
        return live

    # ------------------------------------------------------------------ writes

    async def save(
        self,
        ctx: ExecutionContext,
        key: str,
        content: str,
        category: str,
        scope_type: ScopeType,
        *,
        origin: WriteOrigin = WriteOrigin.USER_EXPLICIT,
        explicit_replace: bool = False,
        source_conversation_id: str | None = None,
        projection: tuple[str, str] | None = None,
        request_id: str | None = None,
    ) -> SaveResult | Refusal:
        """Save under a key: screened, policy-checked, conflict-classified (module docstring).

        ``origin`` is the runtime's knowledge of where the text came from;
        ``explicit_replace`` is the user's explicit request to overwrite the current value;
        ``projection`` marks the memory as feeding a profile field (user's text only).
        """
        args = SaveArgs(memory_key=key, content=content, category=category, scope_type=scope_type)
        request = access_request(ctx, args, origin=origin)
        decision = await self._decide(ctx, request, tool=ToolName.SAVE)
        if isinstance(decision, Refusal):
            return decision
        assert isinstance(request, AccessRequest)
        assert request.scope is not None
        scope = MemoryScope.from_scope(request.scope)
        normalized = normalize_key(key)
        user_text = decision.outcome is Outcome.ACTIVE
        svc = self.service
        for _ in range(_SAVE_ATTEMPTS):
            existing = await self.find_key(ctx, scope, key)
            action = plan_save(
                None if existing is None else existing.content,
                content,
                user_origin=user_text,
                explicit_replace=explicit_replace,
            )
            if action is SaveAction.REFRESH and existing and existing.category != category:
                action = SaveAction.PROPOSE_UPDATE  # same text, new category: the user decides
            try:
                result = await self._carry_out(
                    ctx,
                    action,
                    existing,
                    scope,
                    normalized,
                    content,
                    category,
                    source_conversation_id,
                    request_id,
                )
            except (KeyConflict, RevisionConflict):
                continue  # someone wrote the key meanwhile: classify again
            if projection is not None and user_text and result.record is not None:
                await svc.mark_projectable(ctx.user_id, result.record.memory_id, projection)
            return result
        raise StoreError("save: the key kept changing under concurrent writes; try again")

    async def _carry_out(  # noqa: PLR0917
        self,
        ctx: ExecutionContext,
        action: SaveAction,
        existing: MemoryRecord | None,
        scope: MemoryScope,
        key: str,
        content: str,
        category: str,
        source_conversation_id: str | None,
        request_id: str | None,
    ) -> SaveResult:
        svc, user = self.service, ctx.user_id
        match action:
            case SaveAction.CREATE:
                saved = await svc.save(
                    user,
                    scope,
                    key,
                    content,
                    category,
                    source_type=SourceType.EXPLICIT,
                    changed_via=ChangedVia.AGENT_TOOL,
                    request_id=request_id,
                )
                if not saved.created:
                    raise KeyConflict(saved.record.memory_id, saved.record.revision)
                return SaveResult(SaveKind.CREATED, saved.record)
            case SaveAction.REFRESH:
                assert existing is not None
                record = await svc.confirm(user, existing.memory_id, request_id=request_id)
                return SaveResult(SaveKind.REFRESHED, record)
            case SaveAction.UPDATE:
                assert existing is not None
                record = await svc.replace(
                    user,
                    existing.memory_id,
                    expected_revision=existing.revision,
                    content=content,
                    category=category,
                    changed_via=ChangedVia.AGENT_TOOL,
                    request_id=request_id,
                )
                return SaveResult(SaveKind.UPDATED, record)
            case SaveAction.NOTHING:
                return SaveResult(SaveKind.UNCHANGED, existing)
        operation = {
            SaveAction.PROPOSE_CREATE: CandidateOperation.CREATE,
            SaveAction.PROPOSE_UPDATE: CandidateOperation.UPDATE,
            SaveAction.PROPOSE_REPLACE: CandidateOperation.REPLACE,
        }[action]
        proposed = await svc.propose_candidate(
            user,
            scope,
            key,
            content,
            category,
            operation=operation,
            target=None if operation is CandidateOperation.CREATE else existing,
            source_conversation_id=source_conversation_id,
        )
        if proposed.skipped == "rejected_before":
            return SaveResult(SaveKind.ALREADY_REJECTED, existing)
        return SaveResult(SaveKind.PROPOSED, existing, proposed.candidate)

    async def update(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        *,
        content: str | None = None,
        category: str | None = None,
        origin: WriteOrigin = WriteOrigin.USER_EXPLICIT,
        expected_revision: int | None = None,
        request_id: str | None = None,
    ) -> SaveResult | Refusal:
        """Change a memory by id: the user's text writes a new revision (never over a newer
        one); model-inferred text becomes an update candidate.

        ``expected_revision`` is the revision the caller's change was made against (the one
        it showed or read). When given, nothing is written or proposed unless the memory is
        still at that revision: otherwise the result is :attr:`SaveKind.CONFLICT` with the
        current record, so the caller can show the newer text. When None, the change is
        made against the revision this call reads.
        """
        target = await self._target(ctx, memory_id)
        if target is None:
            return await self._no_such_memory(ctx, Operation.UPDATE, ToolName.UPDATE, memory_id)
        if content is None and category is None:
            refusal = Refusal(Operation.UPDATE, DenyReason.BAD_ARGUMENTS, "nothing to update")
            return await self.deny(ctx, AccessRequest(Operation.UPDATE, ToolName.UPDATE), refusal)
        owner = TargetRecord(memory_id, target.user_id, target.scope.as_scope())
        request = access_request(
            ctx, UpdateArgs(memory_id, content, category), origin=origin, target=owner
        )
        # the key is screened too (the policy's subject patterns read it)
        if isinstance(request, AccessRequest):
            request = attrs.evolve(request, key=target.key)
        decision = await self._decide(ctx, request, tool=ToolName.UPDATE, memory_id=memory_id)
        if isinstance(decision, Refusal):
            return decision
        if expected_revision is not None and expected_revision != target.revision:
            return SaveResult(SaveKind.CONFLICT, target)
        if decision.outcome is Outcome.CANDIDATE:
            proposed = await self.service.propose_candidate(
                ctx.user_id,
                target.scope,
                target.key,
                target.content if content is None else content,
                target.category if category is None else category,
                operation=CandidateOperation.UPDATE,
                target=target,
            )
            if proposed.skipped == "rejected_before":
                return SaveResult(SaveKind.ALREADY_REJECTED, target)
            return SaveResult(SaveKind.PROPOSED, target, proposed.candidate)
        try:
            record = await self.service.update(
                ctx.user_id,
                memory_id,
                expected_revision=target.revision,
                content=content,
                category=category,
                changed_via=ChangedVia.AGENT_TOOL,
                request_id=request_id,
            )
        except RevisionConflict:
            return SaveResult(SaveKind.CONFLICT, await self._target(ctx, memory_id))
        return SaveResult(SaveKind.UPDATED, record)

    async def forget(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        *,
        tool: ToolName = ToolName.FORGET,
        request_id: str | None = None,
    ) -> MemoryRecord | Refusal:
        """Forget a memory for good (returns the record as it was)."""
        target = await self._authorised_target(ctx, memory_id, Operation.FORGET, tool)
        if isinstance(target, Refusal):
            return target
        await self.service.forget(ctx.user_id, memory_id, request_id=request_id)
        return target

    async def suppress(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        *,
        tool: ToolName = ToolName.MANAGEMENT_API,
        request_id: str | None = None,
    ) -> MemoryRecord | Refusal:
        """Hide a memory from retrieval (restorable). The user's management operation:
        policy-checked (owner, scope, session mode); the store audits ``memory.suppressed``."""
        return await self._set_status(ctx, memory_id, Status.SUPPRESSED, tool, request_id)

    async def restore(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        *,
        tool: ToolName = ToolName.MANAGEMENT_API,
        request_id: str | None = None,
    ) -> MemoryRecord | Refusal:
        """Make a suppressed memory active again (policy-checked like :meth:`suppress`)."""
        return await self._set_status(ctx, memory_id, Status.ACTIVE, tool, request_id)

    async def _set_status(
        self,
        ctx: ExecutionContext,
        memory_id: str,
        status: Status,
        tool: ToolName,
        request_id: str | None,
    ) -> MemoryRecord | Refusal:
        target = await self._authorised_target(ctx, memory_id, Operation.SUPPRESS, tool)
        if isinstance(target, Refusal):
            return target
        if status is Status.SUPPRESSED:
            return await self.service.suppress(ctx.user_id, memory_id, request_id=request_id)
        return await self.service.restore(ctx.user_id, memory_id, request_id=request_id)

    async def _authorised_target(
        self, ctx: ExecutionContext, memory_id: str, operation: Operation, tool: ToolName
    ) -> MemoryRecord | Refusal:
        """The caller's memory ``memory_id`` if ``operation`` on it is allowed, else the
        (audited) refusal: a missing or foreign id and a policy denial alike."""
        target = await self._target(ctx, memory_id)
        if target is None:
            return await self._no_such_memory(ctx, operation, tool, memory_id)
        request = AccessRequest(
            operation, tool, scope=target.scope.as_scope(), owner_user_id=target.user_id
        )
        decision = await self._decide(ctx, request, tool=tool, memory_id=memory_id)
        if isinstance(decision, Refusal):
            return decision
        return target

    # ------------------------------------------------------------------ candidates (management)

    async def accept_candidate(
        self, ctx: ExecutionContext, candidate_id: str, edits: AcceptEdits | None = None
    ) -> AcceptOutcome | Refusal:
        """The user accepts a candidate (management API); edited text is screened again."""
        edits = edits or AcceptEdits()
        try:
            cand = await self.service.get_candidate(ctx.user_id, candidate_id)
        except NotFound:
            refusal = Refusal(
                Operation.DECIDE_CANDIDATE, DenyReason.BAD_ARGUMENTS, "no such candidate"
            )
            request = AccessRequest(Operation.DECIDE_CANDIDATE, ToolName.MANAGEMENT_API)
            return await self.deny(ctx, request, refusal)
        request = AccessRequest(
            Operation.DECIDE_CANDIDATE,
            ToolName.MANAGEMENT_API,
            scope=edits.scope or cand.scope,
            owner_user_id=cand.user_id,
            origin=WriteOrigin.USER_CONFIRMED,
            key=cand.key,
            content=edits.content if edits.content is not None else cand.content,
            category=edits.category or cand.category,
        )
        decision = await self._decide(
            ctx, request, tool=ToolName.MANAGEMENT_API, memory_id=cand.target_memory_id
        )
        if isinstance(decision, Refusal):
            return decision
        return await self.service.accept_candidate(ctx.user_id, candidate_id, edits)

    async def reject_candidate(
        self, ctx: ExecutionContext, candidate_id: str
    ) -> Candidate | Refusal:
        """The user rejects a candidate (management API)."""
        cand = await self.service.get_candidate(ctx.user_id, candidate_id)
        request = AccessRequest(
            Operation.DECIDE_CANDIDATE,
            ToolName.MANAGEMENT_API,
            scope=cand.scope,
            owner_user_id=cand.user_id,
            origin=WriteOrigin.USER_CONFIRMED,
        )
        decision = await self._decide(
            ctx, request, tool=ToolName.MANAGEMENT_API, memory_id=cand.target_memory_id
        )
        if isinstance(decision, Refusal):
            return decision
        return await self.service.reject_candidate(ctx.user_id, candidate_id)
