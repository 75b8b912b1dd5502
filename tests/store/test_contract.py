"""The backend contract: every ``Store`` implementation must pass these (seed 002 §18.1).

Parametrised over :data:`tests.store.conftest.BACKENDS` through the ``store`` fixture.
"""

from __future__ import annotations

import threading

import pytest

from memrecall.store import (
    KEEP,
    AuditType,
    ChangedVia,
    ChangeType,
    ContentChange,
    KeyConflict,
    MemoryScope,
    NotFound,
    RevisionConflict,
    ScopeType,
    Status,
    Store,
    StoreError,
    WorkspaceType,
)
from memrecall.store.sqlite import content_hash

from .helpers import GLOBAL, LEARNING, RESEARCH, T0, TEACHING, ManualClock, new_memory

ALL_SCOPES = (GLOBAL, LEARNING, TEACHING, RESEARCH)


def update(content: str) -> ContentChange:
    return ContentChange(change_type=ChangeType.UPDATE, content=content)


def test_create_writes_revision_one_version_and_audit(store: Store) -> None:
    out = store.save(new_memory(content="likes green tea"), T0)
    assert out.created
    assert out.record.revision == 1
    assert out.record.status is Status.ACTIVE
    assert store.get("u1", out.record.memory_id) == out.record
    versions = store.history("u1", out.record.memory_id)
    assert [(v.revision, v.content, v.change_type) for v in versions] == [
        (1, "likes green tea", ChangeType.CREATE)
    ]
    assert store.memory_revision("u1") == 1
    (event,) = store.audit_events("u1")
    assert event.type is AuditType.CREATED
    assert event.content_hash == content_hash("likes green tea")
    assert "green" not in repr(event)


def test_same_key_in_different_scopes(store: Store) -> None:
    """§18.1: one user may hold the same key in every scope, each its own record."""
    ids = {
        store.save(new_memory(scope=s, content=f"in {s.label}"), T0).record.memory_id
        for s in ALL_SCOPES
    }
    assert len(ids) == 4
    records = store.list_records("u1")
    assert sorted(r.scope.label for r in records) == sorted(s.label for s in ALL_SCOPES)


def test_same_key_same_scope_is_idempotent_or_a_conflict(store: Store, clock: ManualClock) -> None:
    first = store.save(new_memory(content="prefers vim"), clock()).record
    later = clock.advance(60)
    again = store.save(new_memory(content="prefers vim"), later)
    assert not again.created
    assert again.record.memory_id == first.memory_id
    assert again.record.revision == 1
    assert again.record.last_confirmed_at == later
    with pytest.raises(KeyConflict) as info:
        store.save(new_memory(content="prefers emacs"), later)
    assert info.value.memory_id == first.memory_id
    assert info.value.current_revision == 1
    assert store.get("u1", first.memory_id).content == "prefers vim"
    assert len(store.list_records("u1")) == 1


def test_users_are_strictly_isolated(store: Store) -> None:
    """§18.1: another user can neither see nor touch a memory, even by id."""
    mine = store.save(new_memory(user_id="alice", content="alice secret"), T0).record
    theirs = store.save(new_memory(user_id="bob", content="bob note"), T0).record
    assert theirs.memory_id != mine.memory_id  # same key, other user: allowed
    mid = mine.memory_id
    for call in (
        lambda: store.get("bob", mid),
        lambda: store.history("bob", mid),
        lambda: store.change("bob", mid, 1, update("stolen"), T0),
        lambda: store.set_status("bob", mid, Status.SUPPRESSED, T0),
        lambda: store.confirm("bob", mid, T0),
        lambda: store.forget("bob", mid, T0),
        lambda: store.restore_version(
            "bob", mid, revision=1, expected_revision=1, changed_via=ChangedVia.USER_API, now=T0
        ),
    ):
        with pytest.raises(NotFound):
            call()
    assert [r.memory_id for r in store.list_records("bob")] == [theirs.memory_id]
    assert [r.memory_id for r in store.snapshot("bob", ALL_SCOPES)[1]] == [theirs.memory_id]
    assert store.audit_events("bob", mid) == []
    assert store.get("alice", mid) == mine
    assert store.memory_revision("alice") == 1


def test_scope_constraints() -> None:
    """§18.1: global has no workspace type; workspace needs one."""
    with pytest.raises(StoreError):
        MemoryScope(ScopeType.GLOBAL, WorkspaceType.LEARNING)
    with pytest.raises(StoreError):
        MemoryScope(ScopeType.WORKSPACE, None)


def test_snapshot_filters_scope_and_status(store: Store) -> None:
    g = store.save(new_memory(scope=GLOBAL, key="a"), T0).record
    learn = store.save(new_memory(scope=LEARNING, key="b"), T0).record
    store.save(new_memory(scope=TEACHING, key="c"), T0)
    hidden = store.save(new_memory(scope=LEARNING, key="d"), T0).record
    store.set_status("u1", hidden.memory_id, Status.SUPPRESSED, T0)
    revision, records = store.snapshot("u1", (GLOBAL, LEARNING))
    assert revision == store.memory_revision("u1") == 5
    assert {r.memory_id for r in records} == {g.memory_id, learn.memory_id}


def test_stale_expected_revision_never_overwrites(store: Store, clock: ManualClock) -> None:
    rec = store.save(new_memory(content="v1"), clock()).record
    store.change("u1", rec.memory_id, 1, update("v2"), clock.advance(1))
    before = store.memory_revision("u1")
    with pytest.raises(RevisionConflict) as info:
        store.change("u1", rec.memory_id, 1, update("stale write"), clock.advance(1))
    assert info.value.current_revision == 2
    assert store.get("u1", rec.memory_id).content == "v2"
    assert [v.content for v in store.history("u1", rec.memory_id)] == ["v1", "v2"]
    assert store.memory_revision("u1") == before


def test_change_keeps_or_clears_optional_fields(store: Store, clock: ManualClock) -> None:
    due = T0.replace(year=2027)
    rec = store.save(new_memory(review_after=due, expires_at=due), clock()).record
    kept = store.change("u1", rec.memory_id, 1, update("x"), clock.advance(1))
    assert (kept.review_after, kept.expires_at) == (due, due)
    cleared = store.change(
        "u1",
        rec.memory_id,
        2,
        ContentChange(change_type=ChangeType.REPLACE, review_after=None, expires_at=KEEP),
        clock.advance(1),
    )
    assert (cleared.review_after, cleared.expires_at, cleared.content) == (None, due, "x")
    assert store.history("u1", rec.memory_id)[-1].change_type is ChangeType.REPLACE


def test_restore_version_copies_content_as_new_revision(store: Store, clock: ManualClock) -> None:
    rec = store.save(new_memory(content="first", category="a"), clock()).record
    store.change(
        "u1",
        rec.memory_id,
        1,
        ContentChange(change_type=ChangeType.UPDATE, content="second", category="b"),
        clock.advance(1),
    )
    restored = store.restore_version(
        "u1",
        rec.memory_id,
        revision=1,
        expected_revision=2,
        changed_via=ChangedVia.USER_API,
        now=clock.advance(1),
    )
    assert (restored.revision, restored.content, restored.category) == (3, "first", "a")
    history = store.history("u1", rec.memory_id)
    assert [(v.revision, v.content, v.change_type) for v in history] == [
        (1, "first", ChangeType.CREATE),
        (2, "second", ChangeType.UPDATE),
        (3, "first", ChangeType.RESTORE),
    ]
    with pytest.raises(RevisionConflict):
        store.restore_version(
            "u1",
            rec.memory_id,
            revision=2,
            expected_revision=2,
            changed_via=ChangedVia.USER_API,
            now=clock(),
        )
    with pytest.raises(NotFound):
        store.restore_version(
            "u1",
            rec.memory_id,
            revision=9,
            expected_revision=3,
            changed_via=ChangedVia.USER_API,
            now=clock(),
        )


def test_suppress_and_restore(store: Store) -> None:
    rec = store.save(new_memory(), T0).record
    hidden = store.set_status("u1", rec.memory_id, Status.SUPPRESSED, T0)
    assert hidden.status is Status.SUPPRESSED
    assert hidden.revision == 1
    assert store.snapshot("u1", (GLOBAL,))[1] == []
    assert store.memory_revision("u1") == 2
    again = store.set_status("u1", rec.memory_id, Status.SUPPRESSED, T0)  # no-op
    assert again == hidden
    assert store.memory_revision("u1") == 2
    back = store.set_status("u1", rec.memory_id, Status.ACTIVE, T0)
    assert back.status is Status.ACTIVE
    assert [r.memory_id for r in store.snapshot("u1", (GLOBAL,))[1]] == [rec.memory_id]
    types = [e.type for e in store.audit_events("u1", rec.memory_id)]
    assert types == [AuditType.CREATED, AuditType.SUPPRESSED, AuditType.RESTORED]


def test_confirm_ends_a_due_review(store: Store, clock: ManualClock) -> None:
    rec = store.save(new_memory(review_after=T0.replace(day=2)), clock()).record
    later = clock.advance(3 * 86_400)
    assert rec.review_due(later)
    confirmed = store.confirm("u1", rec.memory_id, later)
    assert not confirmed.review_due(later)
    assert confirmed.revision == 1


def test_forget_leaves_only_a_tombstone(store: Store, clock: ManualClock) -> None:
    """§18.1: after forget, no current or historical content; only the tombstone."""
    rec = store.save(new_memory(content="v1"), clock()).record
    store.change("u1", rec.memory_id, 1, update("v2"), clock.advance(1))
    gone_at = clock.advance(1)
    result = store.forget("u1", rec.memory_id, gone_at)
    assert result.tombstone.final_revision == 2
    assert result.tombstone.deleted_at == gone_at
    assert store.tombstone("u1", rec.memory_id) == result.tombstone
    assert store.tombstone("u2", rec.memory_id) is None
    with pytest.raises(NotFound) as info:
        store.get("u1", rec.memory_id)
    assert info.value.forgotten
    with pytest.raises(NotFound):
        store.history("u1", rec.memory_id)
    with pytest.raises(NotFound):
        store.forget("u1", rec.memory_id, gone_at)
    assert store.list_records("u1") == []
    assert store.snapshot("u1", (GLOBAL,))[1] == []
    events = store.audit_events("u1", rec.memory_id)
    assert events[-1].type is AuditType.DELETED
    assert all(e.content_hash in {content_hash("v1"), content_hash("v2")} for e in events)
    # the key is free again
    assert store.save(new_memory(content="fresh"), gone_at).created


def test_list_records_pages(store: Store) -> None:
    ids = sorted(store.save(new_memory(key=f"k{i}"), T0).record.memory_id for i in range(5))
    first = store.list_records("u1", limit=2)
    second = store.list_records("u1", after=first[-1].memory_id, limit=10)
    assert [r.memory_id for r in first + second] == ids
    assert store.list_records("u1", scopes=(LEARNING,)) == []


def test_concurrent_saves_of_one_key_give_one_record(store: Store) -> None:
    """§18.1: concurrent writers never produce two active records for one key."""
    outcomes: list[str] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        try:
            out = store.save(new_memory(content=f"writer {n % 2}"), T0)
            label = "created" if out.created else "same"
        except KeyConflict:
            label = "conflict"
        with lock:
            outcomes.append(label)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("created") == 1
    assert len(store.list_records("u1")) == 1
