"""A Hypothesis state machine: the SQLite backend against a plain in-memory model.

Every operation (save, update, replace, suppress, restore, restore-version, confirm, forget,
time passing so records expire) runs on both; after each step the store must agree with the
model on every record, version history, memory_revision, tombstone and on retrieval by key.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import attrs
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memrecall.store import (
    ChangedVia,
    ChangeType,
    ContentChange,
    KeyConflict,
    MemoryRecord,
    MemoryScope,
    NewMemory,
    NotFound,
    RetrievalView,
    RevisionConflict,
    SourceType,
    SQLiteStore,
    Status,
    Store,
    visible_scopes,
)
from memrecall.store.postgres import PostgresStore
from memrecall.store.retrieval import normalize_query

from . import pgserver
from .helpers import GLOBAL, LEARNING, T0

USERS = ("u1", "u2")
SCOPES = (GLOBAL, LEARNING)
KEYS = ("tea", "editor", "pet")
WORDS = st.lists(
    st.sampled_from(["green", "black", "vim", "cat", "dog", "oolong"]), min_size=1, max_size=3
).map(" ".join)


@attrs.define
class Model:
    """One memory as the model sees it."""

    user: str
    scope: MemoryScope
    key: str
    content: str
    status: Status = Status.ACTIVE
    versions: list[str] = attrs.Factory(list)
    expires_at: datetime | None = None

    @property
    def revision(self) -> int:
        return len(self.versions)


class StoreMachine(RuleBasedStateMachine):
    """Drives the backend and the model side by side."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="memstore-"))
        self.store = self.open_store()
        self.now = T0
        self.records: dict[str, Model] = {}
        self.forgotten: dict[str, tuple[str, int]] = {}
        self.revisions = dict.fromkeys(USERS, 0)
        self.counter = 0

    def open_store(self) -> Store:
        """The backend under test: SQLite here (the PostgreSQL run overrides it)."""
        return SQLiteStore(self.dir / "m.db", durable=False)

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _ids(self) -> list[str]:
        return sorted([*self.records, *self.forgotten])

    def _tick(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now

    # ------------------------------------------------------------------ rules

    @rule(
        user=st.sampled_from(USERS),
        scope=st.sampled_from(SCOPES),
        key=st.sampled_from(KEYS),
        content=WORDS,
        ttl=st.none() | st.integers(1, 30),
    )
    def save(self, user: str, scope: MemoryScope, key: str, content: str, ttl: int | None) -> None:
        now = self._tick()
        self.counter += 1
        expires = None if ttl is None else now + timedelta(seconds=ttl)
        new = NewMemory(
            memory_id=f"m{self.counter:04d}",
            user_id=user,
            scope=scope,
            key=key,
            content=content,
            category="c",
            source_type=SourceType.EXPLICIT,
            review_after=None,
            expires_at=expires,
            changed_via=ChangedVia.USER_API,
        )
        existing = [
            m for m in self.records.values() if (m.user, m.scope, m.key) == (user, scope, key)
        ]
        if existing:
            (old,) = existing
            if old.content != content:
                with pytest.raises(KeyConflict) as conflict:
                    self.store.save(new, now)
                assert conflict.value.current_revision == old.revision
                return
            out = self.store.save(new, now)
            assert not out.created
            self.revisions[user] += 1
            return
        out = self.store.save(new, now)
        assert out.created
        self.records[new.memory_id] = Model(
            user, scope, key, content, versions=[content], expires_at=expires
        )
        self.revisions[user] += 1

    @precondition(lambda self: bool(self.records or self.forgotten))
    @rule(
        pick=st.integers(0, 1000),
        content=WORDS,
        stale=st.booleans(),
        kind=st.sampled_from([ChangeType.UPDATE, ChangeType.REPLACE]),
    )
    def change(self, pick: int, content: str, stale: bool, kind: ChangeType) -> None:
        ids = self._ids()
        mid = ids[pick % len(ids)]
        now = self._tick()
        if mid in self.forgotten:
            user, _ = self.forgotten[mid]
            change = ContentChange(kind, content=content)  # type: ignore[arg-type]
            with pytest.raises(NotFound) as missing:
                self.store.change(user, mid, 1, change, now)
            assert missing.value.forgotten
            return
        m = self.records[mid]
        expected = m.revision - 1 if stale else m.revision
        change = ContentChange(kind, content=content)  # type: ignore[arg-type]
        if stale:
            with pytest.raises(RevisionConflict) as stale_write:
                self.store.change(m.user, mid, expected, change, now)
            assert stale_write.value.current_revision == m.revision
            return
        rec = self.store.change(m.user, mid, expected, change, now)
        m.content = content
        m.versions.append(content)
        assert rec.revision == m.revision
        self.revisions[m.user] += 1

    @precondition(lambda self: bool(self.records))
    @rule(pick=st.integers(0, 1000), suppress=st.booleans())
    def set_status(self, pick: int, suppress: bool) -> None:
        mid = sorted(self.records)[pick % len(self.records)]
        m = self.records[mid]
        status = Status.SUPPRESSED if suppress else Status.ACTIVE
        self.store.set_status(m.user, mid, status, self._tick())
        if m.status is not status:
            m.status = status
            self.revisions[m.user] += 1

    @precondition(lambda self: bool(self.records))
    @rule(pick=st.integers(0, 1000), which=st.integers(0, 1000), stale=st.booleans())
    def restore_version(self, pick: int, which: int, stale: bool) -> None:
        mid = sorted(self.records)[pick % len(self.records)]
        m = self.records[mid]
        revision = which % m.revision + 1
        expected = m.revision + (1 if stale else 0)

        def restore() -> MemoryRecord:
            return self.store.restore_version(
                m.user,
                mid,
                revision=revision,
                expected_revision=expected,
                changed_via=ChangedVia.USER_API,
                now=self._tick(),
            )

        if stale:
            with pytest.raises(RevisionConflict) as stale_write:
                restore()
            assert stale_write.value.current_revision == m.revision
            return
        rec = restore()
        m.content = m.versions[revision - 1]
        m.versions.append(m.content)
        assert rec.revision == m.revision
        self.revisions[m.user] += 1

    @precondition(lambda self: bool(self.records))
    @rule(pick=st.integers(0, 1000))
    def forget(self, pick: int) -> None:
        mid = sorted(self.records)[pick % len(self.records)]
        m = self.records.pop(mid)
        result = self.store.forget(m.user, mid, self._tick())
        assert result.tombstone.final_revision == m.revision
        self.forgotten[mid] = (m.user, m.revision)
        self.revisions[m.user] += 1

    @precondition(lambda self: bool(self.records))
    @rule(pick=st.integers(0, 1000))
    def confirm(self, pick: int) -> None:
        mid = sorted(self.records)[pick % len(self.records)]
        self.store.confirm(self.records[mid].user, mid, self._tick())
        self.revisions[self.records[mid].user] += 1

    @rule(seconds=st.integers(1, 40))
    def wait(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)

    # ------------------------------------------------------------------ invariants

    @invariant()
    def records_agree(self) -> None:
        for user in USERS:
            stored = {r.memory_id: r for r in self.store.list_records(user, limit=1000)}
            expected = {mid: m for mid, m in self.records.items() if m.user == user}
            assert set(stored) == set(expected)
            for mid, m in expected.items():
                r = stored[mid]
                assert (r.content, r.status, r.revision, r.key, r.scope) == (
                    m.content,
                    m.status,
                    m.revision,
                    m.key,
                    m.scope,
                )
                assert [v.content for v in self.store.history(user, mid)] == m.versions
            assert self.store.memory_revision(user) == self.revisions[user]
            keys = [(r.scope, r.key) for r in stored.values()]
            assert len(keys) == len(set(keys))

    @invariant()
    def forgotten_stay_forgotten(self) -> None:
        for mid, (user, final) in self.forgotten.items():
            stone = self.store.tombstone(user, mid)
            assert stone is not None
            assert stone.final_revision == final
            try:
                self.store.get(user, mid)
            except NotFound:
                pass
            else:
                raise AssertionError("a forgotten memory came back")

    @invariant()
    def retrieval_by_key(self) -> None:
        for user in USERS:
            for scope in SCOPES:
                view = RetrievalView(*self.store.snapshot(user, visible_scopes(scope.workspace)))
                for key in KEYS:
                    hits = view.search(normalize_query(key), self.now)
                    found = [h.memory_id for h in hits]
                    live = [
                        mid
                        for mid, m in self.records.items()
                        if (m.user, m.scope, m.key) == (user, scope, key)
                        and m.status is Status.ACTIVE
                        and (m.expires_at is None or m.expires_at > self.now)
                    ]
                    for mid, m in self.records.items():
                        if (m.user, m.scope, m.key) == (user, scope, key) and mid not in live:
                            assert mid not in found
                    if live:
                        assert found[0] == live[0]
                    for mid in found:
                        assert mid not in self.forgotten
                        m = self.records[mid]
                        assert m.user == user
                        assert m.status is Status.ACTIVE
                        assert m.expires_at is None or m.expires_at > self.now


StoreMachine.TestCase.settings = settings(stateful_step_count=20)
TestStore = StoreMachine.TestCase


def test_the_same_machine_on_postgresql(postgres_database: str) -> None:
    """Every rule and invariant above, against PostgreSQL (a fresh schema per example)."""

    class OnPostgres(StoreMachine):
        def open_store(self) -> Store:
            return PostgresStore(pgserver.fresh_schema(postgres_database), max_connections=2)

    run_state_machine_as_test(
        OnPostgres, settings=settings(stateful_step_count=20, max_examples=25)
    )
