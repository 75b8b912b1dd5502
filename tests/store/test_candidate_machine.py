"""A Hypothesis state machine over the governed store's candidates (seed 002 §8, §9, §18.3).

Saves (the user's and model-inferred), concurrent user edits, accept (with and without
edits), reject, time passing, the expiry sweep and forget run against the SQLite store
through :class:`GovernedMemory` and :class:`MemoryService`, beside a small model of the
memories' content. Checked after every step:

* the candidate state diagram: ``pending`` is the only status that changes; a candidate
  leaves it only to ``accepted`` / ``rejected`` / ``expired`` and never comes back;
  ``content`` is present iff pending;
* an accepted candidate never overwrote a newer revision: the version it wrote is exactly
  ``expected_revision + 1`` and the memory was at ``expected_revision`` just before;
* memory content changes only by the user's own writes or an accepted candidate (the model);
* after the sweep, no pending candidate is due.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pytest
import trio
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memrecall.governance import (
    AcceptEdits,
    CandidateOperation,
    CandidateStatus,
    ExecutionContext,
    WriteOrigin,
)
from memrecall.store import MemoryService, NotFound, SQLiteStore
from memrecall.store.governed import GovernedMemory, SaveResult
from memrecall.store.model import CandidateConflict, ScopeType

from .helpers import GLOBAL, T0

T = TypeVar("T")
KEYS = ("tea", "editor")
TEXT = st.lists(
    st.sampled_from(["green", "black", "vim", "oolong", "daily"]), min_size=1, max_size=3
).map(" ".join)
CTX = ExecutionContext("u1")
ALLOWED = {
    (CandidateStatus.PENDING, CandidateStatus.PENDING),
    (CandidateStatus.PENDING, CandidateStatus.ACCEPTED),
    (CandidateStatus.PENDING, CandidateStatus.REJECTED),
    (CandidateStatus.PENDING, CandidateStatus.EXPIRED),
}


class CandidateMachine(RuleBasedStateMachine):
    """The store's candidates against the state diagram and a model of memory content."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="memcand-"))
        self.store = SQLiteStore(self.dir / "m.db", durable=False)
        self.now = T0
        self.ids = (f"id{i:05d}" for i in itertools.count())
        self.content: dict[str, str] = {}  # key -> content (model of the active memories)
        self.status: dict[str, CandidateStatus] = {}  # candidate id -> last seen status

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def run(self, fn: Callable[[GovernedMemory], Awaitable[T]]) -> T:
        svc = MemoryService(self.store, clock=lambda: self.now, ids=lambda: next(self.ids))

        async def main() -> T:
            return await fn(GovernedMemory(svc))

        return trio.run(main)

    def record_id(self, key: str) -> str | None:
        found = self.store.find_key("u1", GLOBAL, key)
        return None if found is None else found.memory_id

    # ------------------------------------------------------------------ rules

    @rule(key=st.sampled_from(KEYS), text=TEXT, inferred=st.booleans())
    def save(self, key: str, text: str, inferred: bool) -> None:
        origin = WriteOrigin.MODEL_INFERRED if inferred else WriteOrigin.USER_EXPLICIT
        result = self.run(lambda g: g.save(CTX, key, text, "note", ScopeType.GLOBAL, origin=origin))
        assert isinstance(result, SaveResult)
        if key not in self.content and not inferred:
            self.content[key] = text  # the only save that writes: a new key from the user

    @rule(key=st.sampled_from(KEYS), text=TEXT)
    def user_edits_concurrently(self, key: str, text: str) -> None:
        mid = self.record_id(key)
        if mid is None:
            return
        revision = self.store.get("u1", mid).revision
        self.run(lambda g: g.service.update("u1", mid, expected_revision=revision, content=text))
        self.content[key] = text

    @rule(data=st.data(), edit=st.one_of(st.none(), TEXT))
    def accept(self, data: st.DataObject, edit: str | None) -> None:
        candidates = self.store.list_candidates("u1")
        if not candidates:
            return
        c = data.draw(st.sampled_from(candidates))
        before = None
        if c.target_memory_id is not None:
            before = self.store.get("u1", c.target_memory_id).revision
        try:
            out = self.run(
                lambda g: g.service.accept_candidate(
                    "u1", c.candidate_id, AcceptEdits(content=edit)
                )
            )
        except CandidateConflict:
            assert c.status is not CandidateStatus.PENDING
            return
        assert c.status is CandidateStatus.PENDING
        if out.candidate.status is CandidateStatus.ACCEPTED:
            assert out.record is not None
            assert c.expires_at > self.now
            if c.operation is CandidateOperation.CREATE:
                assert out.record.revision == 1
            else:
                assert before == c.expected_revision  # never over a newer revision
                assert out.record.revision == c.expected_revision + 1  # type: ignore[operator]
            assert c.content is not None
            self.content[c.key] = edit if edit is not None else c.content

    @rule(data=st.data())
    def reject(self, data: st.DataObject) -> None:
        candidates = self.store.list_candidates("u1")
        if not candidates:
            return
        c = data.draw(st.sampled_from(candidates))
        try:
            self.run(lambda g: g.service.reject_candidate("u1", c.candidate_id))
        except CandidateConflict:
            assert c.status is not CandidateStatus.PENDING

    @rule(days=st.integers(min_value=1, max_value=45))
    def time_passes(self, days: int) -> None:
        self.now += timedelta(days=days)

    @rule()
    def sweep(self) -> None:
        self.run(lambda g: g.service.expire_candidates(self.now))
        due = self.store.due_candidates(self.now)
        assert due == []

    @rule(key=st.sampled_from(KEYS))
    def forget(self, key: str) -> None:
        mid = self.record_id(key)
        if mid is None:
            return
        self.run(lambda g: g.service.forget("u1", mid))
        del self.content[key]
        for c in self.store.list_candidates("u1"):
            assert mid not in (c.target_memory_id, c.resulting_memory_id)
        with pytest.raises(NotFound) as info:
            self.store.get("u1", mid)
        assert info.value.forgotten

    # ------------------------------------------------------------------ invariants

    @invariant()
    def candidates_follow_the_diagram(self) -> None:
        seen = {}
        for c in self.store.list_candidates("u1"):
            seen[c.candidate_id] = c.status
            assert (c.status is CandidateStatus.PENDING) == (c.content is not None)
            before = self.status.get(c.candidate_id)
            if before is not None and before is not c.status:
                assert (before, c.status) in ALLOWED
            if c.status is CandidateStatus.ACCEPTED:
                assert c.resulting_memory_id is not None
        self.status.update(seen)

    @invariant()
    def accepted_versions_sit_on_their_expected_revision(self) -> None:
        for c in self.store.list_candidates("u1", status=CandidateStatus.ACCEPTED):
            assert c.resulting_memory_id is not None
            history = self.store.history("u1", c.resulting_memory_id)
            [written] = [v for v in history if v.source_candidate_id == c.candidate_id]
            expected = 0 if c.expected_revision is None else c.expected_revision
            assert written.revision == expected + 1

    @invariant()
    def memories_match_the_model(self) -> None:
        stored = {r.key: r.content for r in self.store.list_records("u1")}
        assert stored == self.content


CandidateMachine.TestCase.settings = settings(stateful_step_count=25)
TestCandidates = CandidateMachine.TestCase
