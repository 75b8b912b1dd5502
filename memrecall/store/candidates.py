"""Candidates in the store: propose, accept (with edits), reject, expire (seed 002 §8, §9).

The state machine is :func:`memrecall.governance.step`; this module carries out its
effects against the :class:`~memrecall.store.backend.Store`:

* every status change is a compare-and-set on the stored status
  (``put_candidate(expected_status=...)``), so two deciders cannot both win;
* an :class:`~memrecall.governance.ApplyCandidate` is written by ``apply_candidate`` in one
  transaction with the memory write, whose own ``expected_revision`` check guards it again:
  an accept never overwrites a revision newer than the one the candidate was made against;
* a stale accept (:class:`~memrecall.governance.RecheckConflict`) re-classifies the proposal
  against the current record with :func:`~memrecall.governance.plan_save` and rebases the
  candidate (it stays pending for the user to look at again), or closes it when the
  proposal already equals the current value;
* a rejection keeps only the proposal's fingerprint; a later identical proposal is skipped.

The service's methods (``propose_candidate``, ``list_candidates``, ``accept_candidate``,
``reject_candidate``, ``expire_candidates``) call these functions.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING, Literal

import attrs

from memrecall.governance import (
    Accept,
    AcceptEdits,
    ApplyCandidate,
    Candidate,
    CandidateAudit,
    CandidateOperation,
    CandidateStatus,
    CandidateStep,
    Expire,
    InvalidTransition,
    Purge,
    Rebase,
    RecheckConflict,
    Reject,
    RememberRejection,
    SaveAction,
    WriteOrigin,
    new_candidate,
    plan_save,
    proposal_fingerprint,
    screen_write,
    step,
)
from memrecall.governance.candidates import CandidateEvent

from .backend import ContentChange, NewMemory, Rejection
from .keys import check_category, check_content, normalize_key
from .model import (
    CandidateConflict,
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    InvalidInput,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    RevisionConflict,
    SourceType,
    StoreError,
)

if TYPE_CHECKING:
    from .service import MemoryService

__all__ = [
    "CANDIDATE_CREATED",
    "CANDIDATE_REBASED",
    "AcceptOutcome",
    "ProposeOutcome",
    "accept",
    "expire_due",
    "propose",
    "reject",
]

CANDIDATE_CREATED = "memory.candidate_created"
CANDIDATE_REBASED = "memory.candidate_rebased"
_ACCEPT_ATTEMPTS = 4


@attrs.frozen
class ProposeOutcome:
    """A new pending candidate, or why none was made (``rejected_before``: the user rejected
    the same proposal; ``duplicate``: the same proposal is already pending, returned)."""

    candidate: Candidate | None
    skipped: Literal["rejected_before", "duplicate"] | None = None


@attrs.frozen
class AcceptOutcome:
    """The candidate after the decision and the memory it wrote (None when it did not apply:
    ``rebased`` True means the target changed and the candidate waits again, pending)."""

    candidate: Candidate
    record: MemoryRecord | None
    rebased: bool = False


def _step(c: Candidate, event: CandidateEvent) -> CandidateStep:
    """:func:`~memrecall.governance.step`, with a decided candidate reported as the store's
    :class:`CandidateConflict` (a ``StoreError``) rather than governance's exception."""
    try:
        return step(c, event)
    except InvalidTransition:
        if c.status is CandidateStatus.PENDING:
            raise
        raise CandidateConflict(c.candidate_id, c.status.value) from None


def _event(event_type: str, c: Candidate, memory_id: str | None = None) -> GovernanceEvent:
    return GovernanceEvent(
        event_type,
        c.user_id,
        {"operation": c.operation.value, "status": c.status.value},
        memory_id=memory_id or c.target_memory_id or c.resulting_memory_id,
        candidate_id=c.candidate_id,
    )


async def propose(
    svc: MemoryService,
    user_id: str,
    *,
    operation: CandidateOperation,
    scope: MemoryScope,
    key: str,
    content: str,
    category: str,
    target: MemoryRecord | None,
    source_conversation_id: str | None = None,
) -> ProposeOutcome:
    """Create a pending candidate unless the user rejected the same proposal before."""
    normalized = normalize_key(key)
    check_content(content)
    check_category(category)
    fingerprint = proposal_fingerprint(user_id, scope.as_scope(), normalized, content)
    store = svc.store
    if await svc._run(functools.partial(store.has_rejection, user_id, fingerprint)):
        return ProposeOutcome(None, "rejected_before")
    pending = await svc._run(
        functools.partial(store.list_candidates, user_id, status=CandidateStatus.PENDING)
    )
    for c in pending:
        assert c.content is not None
        same = proposal_fingerprint(user_id, c.scope, c.key, c.content) == fingerprint
        if same and c.target_memory_id == (target.memory_id if target else None):
            return ProposeOutcome(c, "duplicate")
    now = svc._now()
    candidate = new_candidate(
        candidate_id=svc._ids(),
        user_id=user_id,
        operation=operation,
        target_memory_id=None if target is None else target.memory_id,
        expected_revision=None if target is None else target.revision,
        scope=scope.as_scope(),
        key=normalized,
        content=content,
        category=category,
        source_conversation_id=source_conversation_id,
        now=now,
    )
    await svc._run(
        functools.partial(
            store.put_candidate,
            candidate,
            expected_status=None,
            now=now,
            events=[_event(CANDIDATE_CREATED, candidate)],
        )
    )
    svc._forget_cached(user_id)
    return ProposeOutcome(candidate)


def _check_edits(edits: AcceptEdits) -> None:
    texts = []
    if edits.content is not None:
        check_content(edits.content)
        texts.append(edits.content)
    if edits.category is not None:
        check_category(edits.category)
        texts.append(edits.category)
    refusal = screen_write(WriteOrigin.USER_CONFIRMED, *texts)
    if refusal is not None:
        raise InvalidInput(f"edits: {refusal.message}")


async def _current(svc: MemoryService, c: Candidate, edits: AcceptEdits) -> MemoryRecord | None:
    store = svc.store
    if c.operation is CandidateOperation.CREATE:
        scope = MemoryScope.from_scope(edits.scope or c.scope)
        return await svc._run(functools.partial(store.find_key, c.user_id, scope, c.key))
    assert c.target_memory_id is not None
    try:
        return await svc._run(functools.partial(store.get, c.user_id, c.target_memory_id))
    except StoreError:
        return None


def _rebase_event(
    c: Candidate, current: MemoryRecord | None, proposal: str, now: datetime
) -> Rebase | Purge:
    if current is None:
        return Rebase(now, CandidateOperation.CREATE, None, None)
    action = plan_save(current.content, proposal, user_origin=False)
    if action is SaveAction.NOTHING:
        return Purge(now)
    operation = (
        CandidateOperation.UPDATE
        if action is SaveAction.PROPOSE_UPDATE
        else CandidateOperation.REPLACE
    )
    return Rebase(now, operation, current.memory_id, current.revision)


async def accept(
    svc: MemoryService, user_id: str, candidate_id: str, edits: AcceptEdits
) -> AcceptOutcome:
    """Accept a pending candidate (optionally edited); see the module docstring."""
    _check_edits(edits)
    store = svc.store
    for _ in range(_ACCEPT_ATTEMPTS):
        c = await svc._run(functools.partial(store.get_candidate, user_id, candidate_id))
        current = await _current(svc, c, edits)
        now = svc._now()
        memory_id = svc._ids() if c.operation is CandidateOperation.CREATE else None
        result = _step(c, Accept(now, current.revision if current else None, edits, memory_id))
        audit = [
            _event(e.event_type, result.candidate)
            for e in result.effects
            if isinstance(e, CandidateAudit)
        ]
        apply = next((e for e in result.effects if isinstance(e, ApplyCandidate)), None)
        if any(isinstance(e, RecheckConflict) for e in result.effects):
            assert c.content is not None
            proposal = edits.content if edits.content is not None else c.content
            event = _rebase_event(c, current, proposal, now)
            rebased = _step(c, event).candidate
            await svc._run(
                functools.partial(
                    store.put_candidate,
                    rebased,
                    expected_status=CandidateStatus.PENDING,
                    now=now,
                    events=[_event(CANDIDATE_REBASED, rebased)],
                )
            )
            svc._forget_cached(user_id)
            return AcceptOutcome(rebased, current, rebased=isinstance(event, Rebase))
        if apply is None:  # expired on the way
            await svc._run(
                functools.partial(
                    store.put_candidate,
                    result.candidate,
                    expected_status=CandidateStatus.PENDING,
                    now=now,
                    events=audit,
                )
            )
            return AcceptOutcome(result.candidate, None)
        create = change = None
        if apply.operation is CandidateOperation.CREATE:
            create = NewMemory(
                memory_id=apply.memory_id,
                user_id=user_id,
                scope=MemoryScope.from_scope(apply.scope),
                key=apply.key,
                content=apply.content,
                category=apply.category,
                source_type=SourceType.CONFIRMED,
                review_after=None,
                expires_at=None,
                changed_via=ChangedVia.CANDIDATE,
            )
        else:
            replace = apply.operation is CandidateOperation.REPLACE
            change = ContentChange(
                change_type=ChangeType.REPLACE if replace else ChangeType.UPDATE,
                content=apply.content,
                category=apply.category,
                changed_via=ChangedVia.CANDIDATE,
                source_candidate_id=c.candidate_id,
            )
        try:
            record = await svc._run(
                functools.partial(
                    store.apply_candidate,
                    result.candidate,
                    create=create,
                    change=change,
                    expected_revision=apply.expected_revision,
                    now=now,
                    events=audit,
                )
            )
        except (RevisionConflict, KeyConflict):
            continue  # the target moved between the read and the write: step again
        svc._forget_cached(user_id)
        await svc._project(user_id)
        return AcceptOutcome(result.candidate, record)
    raise CandidateConflict(candidate_id, CandidateStatus.PENDING.value)


async def reject(svc: MemoryService, user_id: str, candidate_id: str) -> Candidate:
    """Reject a pending candidate: its content goes, its fingerprint stays."""
    store = svc.store
    c = await svc._run(functools.partial(store.get_candidate, user_id, candidate_id))
    now = svc._now()
    result = _step(c, Reject(now))
    rejection = next(
        (
            Rejection(e.fingerprint, c.target_memory_id)
            for e in result.effects
            if isinstance(e, RememberRejection)
        ),
        None,
    )
    audit = [
        _event(e.event_type, result.candidate)
        for e in result.effects
        if isinstance(e, CandidateAudit)
    ]
    await svc._run(
        functools.partial(
            store.put_candidate,
            result.candidate,
            expected_status=CandidateStatus.PENDING,
            now=now,
            rejection=rejection,
            events=audit,
        )
    )
    svc._forget_cached(user_id)
    return result.candidate


async def expire_due(svc: MemoryService, now: datetime) -> int:
    """The expiry sweep: every pending candidate due at ``now`` becomes expired. Returns the
    number expired (one decided concurrently is skipped)."""
    store = svc.store
    count = 0
    while True:
        due = await svc._run(functools.partial(store.due_candidates, now))
        progressed = False
        for c in due:
            result = _step(c, Expire(now))
            audit = [
                _event(e.event_type, result.candidate)
                for e in result.effects
                if isinstance(e, CandidateAudit)
            ]
            try:
                await svc._run(
                    functools.partial(
                        store.put_candidate,
                        result.candidate,
                        expected_status=CandidateStatus.PENDING,
                        now=now,
                        events=audit,
                    )
                )
            except CandidateConflict:
                continue
            count += 1
            progressed = True
        if not due or not progressed:
            return count
