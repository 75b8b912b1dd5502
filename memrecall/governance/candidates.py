"""The memory-candidate state machine (seed 002 §8, §9.2, §9.3): pure, table-driven.

Everything that changes a candidate's status lives in this file. :func:`step` takes a
:class:`Candidate` and one event and returns the new candidate and the effects for the
service to carry out in the same transaction; time is an input. A (status, event) pair
not in :data:`TRANSITIONS`, or a guard that fails (expiring too early, editing the scope of
an update), raises :class:`InvalidTransition` with a message that says what to do.

Statuses: ``pending`` (the only non-terminal one), ``accepted``, ``rejected``, ``expired``.

Invariants (each checked by a test):

* An :class:`ApplyCandidate` effect is produced only when the target's current revision
  equals ``expected_revision`` (for ``create``: no record under the key, both None). A
  stale accept leaves the candidate pending and asks for :class:`RecheckConflict`; the
  service reclassifies and :class:`Rebase`\\ s it. So an accept never overwrites a newer
  revision.
* A pending candidate decided at or after ``expires_at`` becomes ``expired``, whatever
  the decision was.
* Leaving ``pending`` erases the proposed content; a rejection keeps only
  :func:`~.conflicts.content_fingerprint` so the same proposal is not made again.
* Terminal statuses absorb: only :class:`Purge` (forget) is accepted there; the content is
  already gone, and it drops a rejection fingerprint as well (:class:`ForgetRejection`).
* Model-inferred memories reach the store only through here: the policy gives them
  :attr:`~.policy.Outcome.CANDIDATE`, never ``active``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from datetime import datetime, timedelta

import attrs

from memrecall.governance.conflicts import content_fingerprint
from memrecall.governance.context import Scope, ScopeType

__all__ = [
    "CANDIDATE_TTL",
    "TRANSITIONS",
    "Accept",
    "AcceptEdits",
    "ApplyCandidate",
    "Candidate",
    "CandidateAudit",
    "CandidateEffect",
    "CandidateEvent",
    "CandidateOperation",
    "CandidateStatus",
    "CandidateStep",
    "Expire",
    "ForgetRejection",
    "InvalidTransition",
    "Purge",
    "Rebase",
    "RecheckConflict",
    "Reject",
    "RememberRejection",
    "new_candidate",
    "proposal_fingerprint",
    "scope_key",
    "step",
    "transition_table",
]

CANDIDATE_TTL = timedelta(days=30)


class CandidateOperation(enum.StrEnum):
    """What accepting the candidate does to the store."""

    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"


class CandidateStatus(enum.StrEnum):
    """A candidate's status; every status but ``pending`` is terminal."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    EXPIRED = "expired"


def scope_key(scope: Scope) -> str:
    """The stable text of a scope (``global`` or ``workspace:<type>``), used in fingerprints."""
    if scope.scope_type is ScopeType.GLOBAL:
        return "global"
    assert scope.workspace_type is not None
    return f"workspace:{scope.workspace_type.value}"


@attrs.frozen
class Candidate:
    """One proposed memory change awaiting the user (the ``core_memory_candidates`` row).

    Invariant: ``target_memory_id`` and ``expected_revision`` are both None iff the
    operation is ``create``; ``content`` is None iff the status is terminal.
    """

    candidate_id: str
    user_id: str
    operation: CandidateOperation
    target_memory_id: str | None
    expected_revision: int | None
    scope: Scope
    key: str
    content: str | None = attrs.field(repr=False)
    category: str
    source_conversation_id: str | None
    status: CandidateStatus
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    resulting_memory_id: str | None = None
    rejected_fingerprint: str | None = None


def _check_target(operation: CandidateOperation, target: str | None, expected: int | None) -> None:
    if (operation is CandidateOperation.CREATE) != (target is None and expected is None):
        raise InvalidTransition(
            "a create candidate has no target and no expected_revision; "
            "an update or replace candidate needs both"
        )


def new_candidate(
    *,
    candidate_id: str,
    user_id: str,
    operation: CandidateOperation,
    target_memory_id: str | None,
    expected_revision: int | None,
    scope: Scope,
    key: str,
    content: str,
    category: str,
    source_conversation_id: str | None,
    now: datetime,
) -> Candidate:
    """A pending candidate created at ``now``, expiring after :data:`CANDIDATE_TTL`."""
    _check_target(operation, target_memory_id, expected_revision)
    return Candidate(
        candidate_id=candidate_id,
        user_id=user_id,
        operation=operation,
        target_memory_id=target_memory_id,
        expected_revision=expected_revision,
        scope=scope,
        key=key,
        content=content,
        category=category,
        source_conversation_id=source_conversation_id,
        status=CandidateStatus.PENDING,
        created_at=now,
        expires_at=now + CANDIDATE_TTL,
    )


def proposal_fingerprint(user_id: str, scope: Scope, key: str, content: str) -> str:
    """The fingerprint a rejection keeps; the service skips a new proposal that has one."""
    return content_fingerprint(user_id, scope_key(scope), key, content)


# --------------------------------------------------------------------------- events


@attrs.frozen
class AcceptEdits:
    """What the user may change when accepting: content, category, and (create only) scope."""

    content: str | None = attrs.field(default=None, repr=False)
    category: str | None = None
    scope: Scope | None = None


@attrs.frozen
class Accept:
    """The user accepts. ``current_revision``: the target's revision now (for ``create``:
    the revision of any record now under the key, None if none). ``memory_id``: the id
    of the memory to create (``create`` only; the service allocates it)."""

    now: datetime
    current_revision: int | None
    edits: AcceptEdits = AcceptEdits()
    memory_id: str | None = None


@attrs.frozen
class Reject:
    """The user rejects the candidate."""

    now: datetime


@attrs.frozen
class Expire:
    """The periodic sweep found the candidate due (``now >= expires_at``)."""

    now: datetime


@attrs.frozen
class Rebase:
    """After a :class:`RecheckConflict`: the candidate, re-classified against the current record."""

    now: datetime
    operation: CandidateOperation
    target_memory_id: str | None
    expected_revision: int | None


@attrs.frozen
class Purge:
    """Forget: the target memory (or the candidate itself) is being forgotten."""

    now: datetime


CandidateEvent = Accept | Reject | Expire | Rebase | Purge

# --------------------------------------------------------------------------- effects


@attrs.frozen
class ApplyCandidate:
    """Write the accepted change, with the store's own ``expected_revision`` check."""

    candidate_id: str
    operation: CandidateOperation
    memory_id: str
    expected_revision: int | None
    scope: Scope
    key: str
    content: str = attrs.field(repr=False)
    category: str


@attrs.frozen
class RecheckConflict:
    """The target changed since the candidate was made: classify again, then :class:`Rebase`."""

    candidate_id: str
    current_revision: int | None


@attrs.frozen
class RememberRejection:
    """Keep this fingerprint so the same candidate is not proposed again."""

    fingerprint: str


@attrs.frozen
class ForgetRejection:
    """Drop this rejection fingerprint (the user forgot the memory it was about)."""

    fingerprint: str


@attrs.frozen
class CandidateAudit:
    """Write an audit event (``memory.candidate_accepted`` / ``_rejected`` / ``_expired``)."""

    event_type: str
    candidate_id: str


CandidateEffect = (
    ApplyCandidate | RecheckConflict | RememberRejection | ForgetRejection | CandidateAudit
)


@attrs.frozen
class CandidateStep:
    """The result of one :func:`step`."""

    candidate: Candidate
    effects: tuple[CandidateEffect, ...]


class InvalidTransition(Exception):
    """The event cannot happen to the candidate in its current status."""


# --------------------------------------------------------------------------- transitions


def _close(
    c: Candidate,
    status: CandidateStatus,
    now: datetime,
    *,
    resulting_memory_id: str | None = None,
    rejected_fingerprint: str | None = None,
) -> Candidate:
    return attrs.evolve(
        c,
        status=status,
        decided_at=now,
        content=None,
        resulting_memory_id=resulting_memory_id,
        rejected_fingerprint=rejected_fingerprint,
    )


def _expire(c: Candidate, now: datetime) -> CandidateStep:
    audit = CandidateAudit("memory.candidate_expired", c.candidate_id)
    return CandidateStep(_close(c, CandidateStatus.EXPIRED, now), (audit,))


def _pending_accept(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Accept: apply if the target is unchanged, else recheck; expired if past due."""
    assert isinstance(e, Accept)
    if e.now >= c.expires_at:
        return _expire(c, e.now)
    if e.current_revision != c.expected_revision:
        return CandidateStep(c, (RecheckConflict(c.candidate_id, e.current_revision),))
    if e.edits.scope is not None and c.operation is not CandidateOperation.CREATE:
        raise InvalidTransition("only a create candidate's scope can be edited on accept")
    if c.operation is CandidateOperation.CREATE:
        if e.memory_id is None:
            raise InvalidTransition("accepting a create candidate needs the new memory_id")
        memory_id = e.memory_id
    else:
        assert c.target_memory_id is not None
        memory_id = c.target_memory_id
    assert c.content is not None
    apply = ApplyCandidate(
        c.candidate_id,
        c.operation,
        memory_id,
        c.expected_revision,
        e.edits.scope or c.scope,
        c.key,
        e.edits.content if e.edits.content is not None else c.content,
        e.edits.category or c.category,
    )
    closed = _close(c, CandidateStatus.ACCEPTED, e.now, resulting_memory_id=memory_id)
    return CandidateStep(
        closed, (apply, CandidateAudit("memory.candidate_accepted", c.candidate_id))
    )


def _pending_reject(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Reject: erase the content, keep its fingerprint; expired if past due."""
    assert isinstance(e, Reject)
    if e.now >= c.expires_at:
        return _expire(c, e.now)
    assert c.content is not None
    fingerprint = proposal_fingerprint(c.user_id, c.scope, c.key, c.content)
    closed = _close(c, CandidateStatus.REJECTED, e.now, rejected_fingerprint=fingerprint)
    effects = (
        RememberRejection(fingerprint),
        CandidateAudit("memory.candidate_rejected", c.candidate_id),
    )
    return CandidateStep(closed, effects)


def _pending_expire(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Expire: only when due; erases the content."""
    assert isinstance(e, Expire)
    if e.now < c.expires_at:
        raise InvalidTransition(
            f"candidate {c.candidate_id} is not due until {c.expires_at.isoformat()}"
        )
    return _expire(c, e.now)


def _pending_rebase(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Rebase: new operation and expected revision after a recheck; stays pending."""
    assert isinstance(e, Rebase)
    _check_target(e.operation, e.target_memory_id, e.expected_revision)
    rebased = attrs.evolve(
        c,
        operation=e.operation,
        target_memory_id=e.target_memory_id,
        expected_revision=e.expected_revision,
    )
    return CandidateStep(rebased, ())


def _pending_purge(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Purge: the memory is forgotten; the candidate expires and its content is erased."""
    assert isinstance(e, Purge)
    return _expire(c, e.now)


def _terminal_purge(c: Candidate, e: CandidateEvent) -> CandidateStep:
    """Purge after a decision: content is already gone; a rejection fingerprint goes too."""
    if c.rejected_fingerprint is None:
        return CandidateStep(c, ())
    purged = attrs.evolve(c, rejected_fingerprint=None)
    return CandidateStep(purged, (ForgetRejection(c.rejected_fingerprint),))


Handler = Callable[[Candidate, CandidateEvent], CandidateStep]
EVENT_TYPES: tuple[type[CandidateEvent], ...] = (Accept, Reject, Expire, Rebase, Purge)

TRANSITIONS: dict[tuple[CandidateStatus, type[CandidateEvent]], Handler] = {
    (CandidateStatus.PENDING, Accept): _pending_accept,
    (CandidateStatus.PENDING, Reject): _pending_reject,
    (CandidateStatus.PENDING, Expire): _pending_expire,
    (CandidateStatus.PENDING, Rebase): _pending_rebase,
    (CandidateStatus.PENDING, Purge): _pending_purge,
    (CandidateStatus.ACCEPTED, Purge): _terminal_purge,
    (CandidateStatus.REJECTED, Purge): _terminal_purge,
    (CandidateStatus.EXPIRED, Purge): _terminal_purge,
}


def step(candidate: Candidate, event: CandidateEvent) -> CandidateStep:
    """Feed ``event`` to ``candidate``; raise :class:`InvalidTransition` when it cannot happen."""
    handler = TRANSITIONS.get((candidate.status, type(event)))
    if handler is None:
        raise InvalidTransition(
            f"candidate {candidate.candidate_id} is {candidate.status.value}: "
            f"{type(event).__name__.lower()} is only possible while it is pending"
        )
    return handler(candidate, event)


def transition_table() -> str:
    """The transition table as Markdown (docs/governance.md embeds it verbatim)."""
    lines = ["| status | event | what happens |", "| --- | --- | --- |"]
    for status in CandidateStatus:
        for event_type in EVENT_TYPES:
            handler = TRANSITIONS.get((status, event_type))
            doc = (handler.__doc__ or "").strip() if handler else "error: `InvalidTransition`"
            lines.append(f"| `{status.value}` | `{event_type.__name__}` | {doc} |")
    return "\n".join(lines) + "\n"
