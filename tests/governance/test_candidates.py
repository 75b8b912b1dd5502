"""The candidate state machine (seed 002 §8, §9.2, §9.3, §18.3)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memrecall.governance import (
    CANDIDATE_TTL,
    GLOBAL,
    Accept,
    AcceptEdits,
    ApplyCandidate,
    Candidate,
    CandidateOperation,
    CandidateStatus,
    Expire,
    ForgetRejection,
    InvalidTransition,
    Purge,
    Rebase,
    RecheckConflict,
    Reject,
    RememberRejection,
    SaveAction,
    Scope,
    WorkspaceType,
    new_candidate,
    plan_save,
    proposal_fingerprint,
    step,
)
from memrecall.governance.candidates import (
    EVENT_TYPES,
    TRANSITIONS,
    CandidateEvent,
    transition_table,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def candidate(
    operation: CandidateOperation = CandidateOperation.UPDATE,
    expected: int | None = 3,
    content: str = "prefers tea with milk",
) -> Candidate:
    create = operation is CandidateOperation.CREATE
    return new_candidate(
        candidate_id="c1",
        user_id="u1",
        operation=operation,
        target_memory_id=None if create else "m1",
        expected_revision=None if create else expected,
        scope=GLOBAL,
        key="drink",
        content=content,
        category="preference",
        source_conversation_id="conv1",
        now=T0,
    )


def test_a_new_candidate_is_pending_and_expires_after_thirty_days() -> None:
    c = candidate()
    assert c.status is CandidateStatus.PENDING
    assert c.expires_at - c.created_at == timedelta(days=30) == CANDIDATE_TTL


def test_accepting_an_unchanged_target_applies_it_and_erases_the_candidate_copy() -> None:
    out = step(candidate(), Accept(T0 + timedelta(days=1), current_revision=3))
    assert out.candidate.status is CandidateStatus.ACCEPTED
    assert out.candidate.content is None
    assert out.candidate.resulting_memory_id == "m1"
    apply = out.effects[0]
    assert isinstance(apply, ApplyCandidate)
    assert apply.expected_revision == 3
    assert apply.content == "prefers tea with milk"


def test_accepting_a_changed_target_goes_back_to_conflict_checking() -> None:
    c = candidate()
    out = step(c, Accept(T0, current_revision=4))
    assert out.candidate == c
    assert out.effects == (RecheckConflict("c1", 4),)
    # The service reclassifies against the current value and rebases the candidate.
    rebased = step(c, Rebase(T0, CandidateOperation.REPLACE, "m1", 4)).candidate
    assert rebased.status is CandidateStatus.PENDING
    assert rebased.expected_revision == 4
    assert isinstance(step(rebased, Accept(T0, 4)).effects[0], ApplyCandidate)


def test_accept_may_edit_content_category_and_a_create_candidates_scope() -> None:
    learning = Scope.workspace(WorkspaceType.LEARNING)
    edits = AcceptEdits(content="prefers green tea", category="habit", scope=learning)
    c = candidate(CandidateOperation.CREATE)
    out = step(c, Accept(T0, None, edits, memory_id="m9"))
    apply = out.effects[0]
    assert isinstance(apply, ApplyCandidate)
    assert (apply.memory_id, apply.content, apply.category, apply.scope) == (
        "m9",
        "prefers green tea",
        "habit",
        learning,
    )
    with pytest.raises(InvalidTransition, match="scope"):
        step(candidate(), Accept(T0, 3, AcceptEdits(scope=learning)))
    with pytest.raises(InvalidTransition, match="memory_id"):
        step(c, Accept(T0, None))


def test_a_create_candidate_whose_key_was_taken_meanwhile_is_rechecked() -> None:
    out = step(candidate(CandidateOperation.CREATE), Accept(T0, current_revision=1, memory_id="m9"))
    assert out.effects == (RecheckConflict("c1", 1),)


def test_rejection_keeps_only_a_fingerprint() -> None:
    c = candidate()
    out = step(c, Reject(T0 + timedelta(days=2)))
    assert out.candidate.status is CandidateStatus.REJECTED
    assert out.candidate.content is None
    fingerprint = proposal_fingerprint("u1", GLOBAL, "drink", "Prefers tea with milk.")
    assert out.candidate.rejected_fingerprint == fingerprint
    assert RememberRejection(fingerprint) in out.effects


def test_a_decision_after_thirty_days_expires_the_candidate() -> None:
    late = T0 + CANDIDATE_TTL
    for event in (Accept(late, 3), Reject(late), Expire(late), Purge(late)):
        out = step(candidate(), event)
        assert out.candidate.status is CandidateStatus.EXPIRED
        assert out.candidate.content is None
        assert not any(isinstance(e, ApplyCandidate) for e in out.effects)


def test_expiring_early_is_an_error() -> None:
    with pytest.raises(InvalidTransition, match="not due"):
        step(candidate(), Expire(T0 + CANDIDATE_TTL - timedelta(seconds=1)))


def test_forgetting_the_memory_erases_a_pending_candidate() -> None:
    out = step(candidate(), Purge(T0))
    assert out.candidate.status is CandidateStatus.EXPIRED
    assert out.candidate.content is None


def test_forgetting_drops_a_rejection_fingerprint_too() -> None:
    rejected = step(candidate(), Reject(T0)).candidate
    fingerprint = rejected.rejected_fingerprint
    assert fingerprint is not None
    out = step(rejected, Purge(T0))
    assert out.candidate.status is CandidateStatus.REJECTED
    assert out.candidate.rejected_fingerprint is None
    assert out.effects == (ForgetRejection(fingerprint),)


def test_inconsistent_targets_are_refused() -> None:
    with pytest.raises(InvalidTransition, match="create candidate"):
        new_candidate(
            candidate_id="c",
            user_id="u",
            operation=CandidateOperation.CREATE,
            target_memory_id="m1",
            expected_revision=1,
            scope=GLOBAL,
            key="k",
            content="c",
            category="x",
            source_conversation_id=None,
            now=T0,
        )


# --------------------------------------------------------------------------- totality

_EVENTS = st.one_of(
    st.builds(
        Accept, st.just(T0), st.one_of(st.none(), st.integers(0, 5)), memory_id=st.just("m9")
    ),
    st.builds(Reject, st.just(T0)),
    st.builds(Expire, st.sampled_from([T0, T0 + CANDIDATE_TTL])),
    st.builds(
        Rebase,
        st.just(T0),
        st.sampled_from(list(CandidateOperation)),
        st.sampled_from([None, "m1"]),
        st.sampled_from([None, 2, 3]),
    ),
    st.builds(Purge, st.just(T0)),
)


@given(
    st.sampled_from(list(CandidateStatus)),
    st.sampled_from(list(CandidateOperation)),
    _EVENTS,
)
def test_every_status_and_event_either_transitions_per_the_table_or_raises(
    status: CandidateStatus, operation: CandidateOperation, event: CandidateEvent
) -> None:
    c = candidate(operation)
    if status is not CandidateStatus.PENDING:
        c = attrs.evolve(c, status=status, content=None)
    if (status, type(event)) not in TRANSITIONS:
        with pytest.raises(InvalidTransition, match="only possible while it is pending"):
            step(c, event)
        return
    try:
        out = step(c, event)
    except InvalidTransition:
        return  # a guard (too early, inconsistent target): clear error, nothing changed
    if status is not CandidateStatus.PENDING:
        assert out.candidate.status is status  # terminal statuses absorb
        assert out.candidate.content is None
        assert not any(isinstance(e, ApplyCandidate) for e in out.effects)
    if out.candidate.status is not CandidateStatus.PENDING:
        assert out.candidate.content is None
    applies = [e for e in out.effects if isinstance(e, ApplyCandidate)]
    if applies:
        assert isinstance(event, Accept)
        assert event.current_revision == c.expected_revision


def test_the_table_covers_every_pending_event() -> None:
    assert {e for s, e in TRANSITIONS if s is CandidateStatus.PENDING} == set(EVENT_TYPES)


def test_governance_doc_embeds_the_current_candidate_table() -> None:
    text = (DOCS / "governance.md").read_text(encoding="utf-8")
    block = re.search(
        r"<!-- candidate-table:start -->\n(.*)<!-- candidate-table:end -->", text, re.DOTALL
    )
    assert block is not None
    assert block.group(1) == transition_table(), "regenerate the candidate table"


# --------------------------------------------------------------------------- stateful


class CandidateFlow(RuleBasedStateMachine):
    """One memory key, concurrent user edits, model-inferred candidates, accept/reject/expire,
    forget; the service loop is modelled as in the store: step, then carry out the effects."""

    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.content: str | None = None  # the active memory under the key; None: no record
        self.revision = 0  # its revision (0: never created)
        self.candidates: dict[str, Candidate] = {}
        self.rejected: set[str] = set()
        self.counter = 0
        self.overwrites: list[tuple[int | None, int]] = []  # (expected, revision at apply)

    def _current(self) -> int | None:
        return None if self.content is None else self.revision

    @rule(text=st.sampled_from(["tea", "tea with milk", "coffee", "water"]))
    def infer(self, text: str) -> None:
        """The model infers a value: only a candidate can come of it."""
        action = plan_save(self.content, text, user_origin=False)
        assert action not in (SaveAction.CREATE, SaveAction.UPDATE)
        if action is SaveAction.NOTHING:
            return
        if proposal_fingerprint("u1", GLOBAL, "drink", text) in self.rejected:
            return  # rejected before: not proposed again
        op = {
            SaveAction.PROPOSE_CREATE: CandidateOperation.CREATE,
            SaveAction.PROPOSE_UPDATE: CandidateOperation.UPDATE,
            SaveAction.PROPOSE_REPLACE: CandidateOperation.REPLACE,
        }[action]
        self.counter += 1
        cid = f"c{self.counter}"
        create = op is CandidateOperation.CREATE
        self.candidates[cid] = new_candidate(
            candidate_id=cid,
            user_id="u1",
            operation=op,
            target_memory_id=None if create else "m1",
            expected_revision=None if create else self.revision,
            scope=GLOBAL,
            key="drink",
            content=text,
            category="preference",
            source_conversation_id=None,
            now=self.now,
        )

    @precondition(lambda self: self.content is not None)
    @rule(text=st.sampled_from(["juice", "tea", "cocoa"]))
    def user_edits(self, text: str) -> None:
        """A concurrent explicit edit by the user moves the revision on."""
        self.content = text
        self.revision += 1

    def _pending(self) -> list[str]:
        return sorted(k for k, c in self.candidates.items() if c.status is CandidateStatus.PENDING)

    @precondition(lambda self: bool(self._pending()))
    @rule(data=st.data())
    def accept(self, data: st.DataObject) -> None:
        cid = data.draw(st.sampled_from(self._pending()))
        out = step(self.candidates[cid], Accept(self.now, self._current(), memory_id="m1"))
        self.candidates[cid] = out.candidate
        for effect in out.effects:
            if isinstance(effect, ApplyCandidate):
                self.overwrites.append((effect.expected_revision, self._current() or 0))
                assert effect.expected_revision == self._current()
                self.content = effect.content
                self.revision += 1
            elif isinstance(effect, RecheckConflict):
                current = self.candidates[cid]
                assert current.content is not None
                action = plan_save(self.content, current.content, user_origin=False)
                if action is SaveAction.NOTHING:
                    # The proposal is already the current value: close it as moot.
                    self.candidates[cid] = step(current, Purge(self.now)).candidate
                else:
                    op = (
                        CandidateOperation.UPDATE
                        if action is SaveAction.PROPOSE_UPDATE
                        else CandidateOperation.REPLACE
                    )
                    rebase = Rebase(self.now, op, "m1", self._current())
                    self.candidates[cid] = step(current, rebase).candidate

    @precondition(lambda self: bool(self._pending()))
    @rule(data=st.data())
    def reject(self, data: st.DataObject) -> None:
        cid = data.draw(st.sampled_from(self._pending()))
        out = step(self.candidates[cid], Reject(self.now))
        self.candidates[cid] = out.candidate
        for effect in out.effects:
            if isinstance(effect, RememberRejection):
                self.rejected.add(effect.fingerprint)

    @rule(days=st.integers(1, 20))
    def time_passes(self, days: int) -> None:
        self.now += timedelta(days=days)
        for cid in self._pending():
            if self.candidates[cid].expires_at <= self.now:
                self.candidates[cid] = step(self.candidates[cid], Expire(self.now)).candidate

    @precondition(lambda self: self.content is not None)
    @rule()
    def forget(self) -> None:
        self.content = None
        for cid, c in list(self.candidates.items()):
            out = step(c, Purge(self.now))
            self.candidates[cid] = out.candidate
            for effect in out.effects:
                if isinstance(effect, ForgetRejection):
                    self.rejected.discard(effect.fingerprint)

    @invariant()
    def an_accepted_candidate_never_overwrote_a_newer_revision(self) -> None:
        for expected, at_apply in self.overwrites:
            assert (expected or 0) == at_apply

    @invariant()
    def closed_candidates_hold_no_content(self) -> None:
        for c in self.candidates.values():
            assert (c.content is None) == (c.status is not CandidateStatus.PENDING)
            if c.rejected_fingerprint is not None:
                assert c.status is CandidateStatus.REJECTED
                assert c.rejected_fingerprint in self.rejected

    @invariant()
    def pending_candidates_are_not_overdue(self) -> None:
        for c in self.candidates.values():
            if c.status is CandidateStatus.PENDING:
                assert c.expires_at > self.now


TestCandidateFlow = CandidateFlow.TestCase
