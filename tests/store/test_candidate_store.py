"""Candidates persisted in the store: accept (with edits), reject, expire, stale revisions,
fingerprints, forget (seed 002 §8, §9.2, §9.3, §17, §18.3); schema v2 from a v1 file."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memrecall.governance import (
    CANDIDATE_TTL,
    AcceptEdits,
    Candidate,
    CandidateOperation,
    CandidateStatus,
    Scope,
)
from memrecall.store import (
    ChangeType,
    ContentChange,
    MemoryRecord,
    MemoryService,
    NotFound,
    SQLiteStore,
    Store,
    WorkspaceType,
)
from memrecall.store.model import (
    CandidateConflict,
    ChangedVia,
    InvalidInput,
    MemoryScope,
    SourceType,
)
from memrecall.store.sqlite import schema as sqlite_backend

from .helpers import GLOBAL, LEARNING, T0, ManualClock
from .test_sqlite import db_bytes


async def propose(
    svc: MemoryService,
    key: str = "tz",
    content: str = "lives in Lisbon",
    source_conversation_id: str | None = None,
) -> Candidate:
    """A create candidate for u1 in global."""
    out = await svc.propose_candidate(
        "u1", GLOBAL, key, content, "fact", source_conversation_id=source_conversation_id
    )
    assert out.candidate is not None
    return out.candidate


async def test_accept_create_writes_a_confirmed_memory(service: MemoryService) -> None:
    c = await propose(service, source_conversation_id="conv-7")
    assert c.source_conversation_id == "conv-7"
    assert await service.list_records("u1") == []
    out = await service.accept_candidate("u1", c.candidate_id)
    assert out.record is not None
    assert out.candidate.status is CandidateStatus.ACCEPTED
    assert out.candidate.resulting_memory_id == out.record.memory_id
    assert out.candidate.content is None
    assert out.record.source_type is SourceType.CONFIRMED
    [version] = await service.history("u1", out.record.memory_id)
    assert version.changed_via is ChangedVia.CANDIDATE
    assert version.source_candidate_id == c.candidate_id
    stored = await service.get_candidate("u1", c.candidate_id)
    assert stored == out.candidate
    with pytest.raises(CandidateConflict):  # decided: stays decided
        await service.reject_candidate("u1", c.candidate_id)
    types = [e.event_type for e in await service.governance_events("u1")]
    assert types == ["memory.candidate_created", "memory.candidate_accepted"]


async def test_accept_with_edits(service: MemoryService) -> None:
    c = await propose(service)
    edits = AcceptEdits(
        content="lives in Porto", category="home", scope=Scope.workspace(WorkspaceType.LEARNING)
    )
    out = await service.accept_candidate("u1", c.candidate_id, edits)
    assert out.record is not None
    assert (out.record.content, out.record.category, out.record.scope) == (
        "lives in Porto",
        "home",
        LEARNING,
    )


async def test_stale_expected_revision_rebases_and_never_overwrites(service: MemoryService) -> None:
    rec = (await service.save("u1", GLOBAL, "editor", "uses vim", "p")).record
    out = await service.propose_candidate(
        "u1",
        GLOBAL,
        "editor",
        "uses vim and tmux",
        "p",
        operation=CandidateOperation.UPDATE,
        target=rec,
    )
    assert out.candidate is not None
    newer = await service.update("u1", rec.memory_id, expected_revision=1, content="uses helix")
    accepted = await service.accept_candidate("u1", out.candidate.candidate_id)
    assert accepted.record is not None
    assert accepted.rebased
    assert accepted.candidate.status is CandidateStatus.PENDING
    assert accepted.candidate.expected_revision == newer.revision
    assert accepted.candidate.operation is CandidateOperation.REPLACE  # helix -> vim and tmux
    assert (await service.get("u1", rec.memory_id)).content == "uses helix"
    # accepted again, against the revision the user has now seen: it applies
    again = await service.accept_candidate("u1", out.candidate.candidate_id)
    assert again.record is not None
    assert again.candidate.status is CandidateStatus.ACCEPTED
    assert (again.record.content, again.record.revision) == ("uses vim and tmux", 3)


async def test_stale_create_equal_to_the_new_value_is_closed(service: MemoryService) -> None:
    c = await propose(service)
    await service.save("u1", GLOBAL, "tz", "Lives in Lisbon.", "fact")
    out = await service.accept_candidate("u1", c.candidate_id)
    assert out.candidate.status is CandidateStatus.EXPIRED
    assert out.candidate.content is None
    assert not out.rebased
    assert len(await service.list_records("u1")) == 1


async def test_reject_keeps_only_a_fingerprint_and_blocks_the_same_proposal(
    service: MemoryService, tmp_path: Path
) -> None:
    c = await propose(service, content="secretly likes jazz fusion")
    rejected = await service.reject_candidate("u1", c.candidate_id)
    assert rejected.status is CandidateStatus.REJECTED
    assert rejected.content is None
    assert rejected.rejected_fingerprint is not None
    again = await service.propose_candidate(
        "u1", GLOBAL, "TZ", "Secretly likes  jazz fusion.", "fact"
    )
    assert again.candidate is None
    assert again.skipped == "rejected_before"
    other = await service.propose_candidate(
        "u2", GLOBAL, "tz", "secretly likes jazz fusion", "fact"
    )
    assert other.candidate is not None  # fingerprints are per user


async def test_rejected_content_is_gone_from_the_files(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    svc = MemoryService(SQLiteStore(path), clock=ManualClock())
    c = await propose(svc, content="prefers the ultramarine kumquat")
    await svc.reject_candidate("u1", c.candidate_id)
    assert svc.store.scrub()  # type: ignore[attr-defined]
    assert b"kumquat" not in db_bytes(path)
    svc.close()


async def test_duplicate_pending_proposal_is_not_made_twice(service: MemoryService) -> None:
    c = await propose(service)
    again = await service.propose_candidate("u1", GLOBAL, "tz", "lives in lisbon", "fact")
    assert again.skipped == "duplicate"
    assert again.candidate == c
    assert len(await service.list_candidates("u1")) == 1


async def test_expiry_after_thirty_days(service: MemoryService, clock: ManualClock) -> None:
    c = await propose(service)
    assert c.expires_at == c.created_at + CANDIDATE_TTL
    assert await service.expire_candidates(c.expires_at - timedelta(seconds=1)) == 0
    assert await service.expire_candidates(c.expires_at) == 1
    expired = await service.get_candidate("u1", c.candidate_id)
    assert expired.status is CandidateStatus.EXPIRED
    assert expired.content is None
    assert await service.expire_candidates(c.expires_at + timedelta(days=1)) == 0
    late = await propose(service, key="k2", content="other")
    clock.now = late.expires_at  # accepting when due expires it instead
    out = await service.accept_candidate("u1", late.candidate_id)
    assert out.candidate.status is CandidateStatus.EXPIRED
    assert out.record is None
    assert len(await service.list_records("u1")) == 0


async def test_candidates_are_per_user(service: MemoryService) -> None:
    c = await propose(service)
    with pytest.raises(NotFound):
        await service.get_candidate("u2", c.candidate_id)
    with pytest.raises(NotFound):
        await service.accept_candidate("u2", c.candidate_id)
    assert await service.list_candidates("u2") == []


async def test_accept_edit_with_a_secret_is_refused_by_the_service(service: MemoryService) -> None:
    c = await propose(service)
    with pytest.raises(InvalidInput) as info:
        await service.accept_candidate(
            "u1", c.candidate_id, AcceptEdits(content="my password is Hunter2!x")
        )
    assert "Hunter2" not in str(info.value)


async def test_forget_removes_candidate_contents_and_fingerprints(tmp_path: Path) -> None:
    """Forget extends to candidates: pending and rejected proposals about the memory leave no
    byte behind, and the rejection fingerprint goes (the same proposal may be made again)."""
    path = tmp_path / "m.db"
    svc = MemoryService(SQLiteStore(path), clock=ManualClock())
    rec = (
        await svc.save("u1", MemoryScope.global_(), "pet", "has a cat named Pixel", "fact")
    ).record
    pending = await svc.propose_candidate(
        "u1",
        GLOBAL,
        "pet",
        "has a cat named Pixel and a tortoise named Zanzibarquill",
        "fact",
        operation=CandidateOperation.UPDATE,
        target=rec,
    )
    rejected = await svc.propose_candidate(
        "u1",
        GLOBAL,
        "pet",
        "has a parrot named Quetzalwhistle",
        "fact",
        operation=CandidateOperation.REPLACE,
        target=rec,
    )
    assert pending.candidate is not None
    assert rejected.candidate is not None
    await svc.reject_candidate("u1", rejected.candidate.candidate_id)
    assert b"Zanzibarquill" in db_bytes(path)
    result = await svc.forget("u1", rec.memory_id)
    assert result.scrubbed
    raw = db_bytes(path)
    for word in (b"Zanzibarquill", b"Quetzalwhistle", b"Pixel"):
        assert word not in raw
    assert await svc.list_candidates("u1") == []
    again = await svc.propose_candidate(
        "u1", GLOBAL, "pet", "has a parrot named Quetzalwhistle", "fact"
    )
    assert again.candidate is not None
    svc.close()


def test_a_version_1_file_migrates_to_the_candidate_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    with monkeypatch.context() as m:
        m.setattr(sqlite_backend, "MIGRATIONS", sqlite_backend.MIGRATIONS[:1])
        old = SQLiteStore(path)
        assert old.schema_version() == 1
        old.close()
    store = SQLiteStore(path)
    assert store.schema_version() == sqlite_backend.SCHEMA_VERSION
    store.close()
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    conn.close()
    assert {
        "core_memory_candidates",
        "memory_rejections",
        "memory_settings",
        "profile_projections",
        "governance_events",
    } <= tables


class _RacingStore:
    """A store proxy: a user edit lands just before the first candidate write."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.raced = False

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def apply_candidate(self, accepted: Candidate, **kw: Any) -> MemoryRecord:
        if not self.raced and accepted.resulting_memory_id is not None:
            self.raced = True
            rev = self.inner.get(accepted.user_id, accepted.resulting_memory_id).revision
            change = ContentChange(ChangeType.UPDATE, content="uses kakoune")
            self.inner.change(accepted.user_id, accepted.resulting_memory_id, rev, change, T0)
        return self.inner.apply_candidate(accepted, **kw)


async def test_an_edit_racing_the_accept_is_never_overwritten(store: Store) -> None:
    """The revision check runs again inside the write's transaction: an edit that lands
    between the accept's read and its write wins, and the candidate is rebased."""
    racing = _RacingStore(store)
    svc = MemoryService(racing, clock=ManualClock())  # type: ignore[arg-type]
    rec = (await svc.save("u1", GLOBAL, "editor", "uses vim", "p")).record
    out = await svc.propose_candidate(
        "u1", GLOBAL, "editor", "uses emacs", "p", operation=CandidateOperation.REPLACE, target=rec
    )
    assert out.candidate is not None
    accepted = await svc.accept_candidate("u1", out.candidate.candidate_id)
    assert racing.raced
    assert accepted.rebased
    assert accepted.candidate.status is CandidateStatus.PENDING
    current = await svc.get("u1", rec.memory_id)
    assert (current.content, current.revision) == ("uses kakoune", 2)
    assert accepted.candidate.expected_revision == 2


async def test_forget_leaves_the_id_only_in_tombstone_and_audit_tables(tmp_path: Path) -> None:
    """After forget, no governance table (candidates, rejections, projection marks or
    sources) still names the memory; only the tombstone and audit trails do."""
    path = tmp_path / "m.db"
    svc = MemoryService(SQLiteStore(path), clock=ManualClock())
    rec = (await svc.save("u1", GLOBAL, "style", "examples first", "preference")).record
    await svc.mark_projectable("u1", rec.memory_id, ("explanation_preference", "example_first"))
    for text, op in (
        ("examples first always", CandidateOperation.UPDATE),
        ("no", CandidateOperation.REPLACE),
    ):
        out = await svc.propose_candidate(
            "u1", GLOBAL, "style", text, "preference", operation=op, target=rec
        )
        assert out.candidate is not None
    assert out.candidate is not None
    await svc.reject_candidate("u1", out.candidate.candidate_id)
    await svc.forget("u1", rec.memory_id)
    svc.close()
    conn = sqlite3.connect(path)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    naming = set()
    for table in tables:
        for row in conn.execute(f"SELECT * FROM {table}"):
            if rec.memory_id in row:
                naming.add(table)
    conn.close()
    assert naming == {"memory_tombstones", "memory_audit", "governance_events"}
