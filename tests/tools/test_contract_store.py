"""The memory tools over a real SQLite store (memrecall.tools.memory_tools)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memrecall.governance import ExecutionContext, SessionMode
from memrecall.store import MemoryService, SQLiteStore
from memrecall.tools.contract import (
    ExpandResult,
    PrunePlan,
    RecallResult,
    Refusal,
    RememberResult,
    record_bytes,
)
from memrecall.tools.memory_tools import ForgetDone, MemoryTools, ToolSession, store_key
from tests.store.helpers import ManualClock


def db_bytes(directory: Path, pattern: str) -> bytes:
    """Every byte of the database files (main, -wal, -shm)."""
    return b"".join(p.read_bytes() for p in directory.glob(pattern))


GOOD: dict[str, Any] = {
    "kind": "lesson",
    "title": "adb needs the emulator booted first",
    "body": "Run adb wait-for-device before installing; the emulator takes 40 s to boot.",
    "tags": ["android", "adb"],
    "source": "session:abc",
}


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def clock() -> ManualClock:
    """A manual clock."""
    return ManualClock()


@pytest.fixture
def service(tmp_path: Path, clock: ManualClock) -> Iterator[MemoryService]:
    """A service over a SQLite file in tmp_path."""
    svc = MemoryService(SQLiteStore(tmp_path / "memory.db", durable=False), clock=clock)
    yield svc
    svc.close()


def tools_for(
    service: MemoryService,
    clock: ManualClock,
    *,
    mode: SessionMode = SessionMode.NORMAL,
    max_bytes: int = 100_000,
    project: str | None = None,
    user: str = "u1",
) -> MemoryTools:
    """Tools for one trusted session."""
    session = ToolSession(ExecutionContext(user, mode=mode), project=project, max_bytes=max_bytes)
    return MemoryTools(service, session, clock=clock)


async def test_remember_writes_one_store_record_with_its_fields(
    service: MemoryService, clock: ManualClock
) -> None:
    tools = tools_for(service, clock)
    done = await tools.remember(**GOOD, scope="project:alpha")
    assert isinstance(done, RememberResult)
    stored = await service.get("u1", done.id)
    assert (stored.content, stored.category) == (GOOD["body"], GOOD["kind"])
    assert stored.key == store_key("lesson", GOOD["title"], "project:alpha")
    view = await tools.load_view()
    (record,) = view.records
    assert (record.title, record.tags, record.source, record.scope) == (
        GOOD["title"],
        ("android", "adb"),
        "session:abc",
        "project:alpha",
    )
    assert done.records == 1
    assert done.bytes_used == record_bytes(record)


async def test_validation_failures_come_in_contract_order_and_write_nothing(
    service: MemoryService, clock: ManualClock
) -> None:
    tools = tools_for(service, clock)
    bad = {"kind": "rumour", "title": "short", "body": " ", "tags": [], "source": "x:y"}
    expected = ["invalid-kind", "invalid-title", "invalid-body", "invalid-tags", "invalid-source"]
    args: dict[str, object] = dict(bad)
    for code, field in zip(expected, ["kind", "title", "body", "tags", "source"], strict=True):
        refusal = await tools.remember(**args, scope="nope")
        assert isinstance(refusal, Refusal)
        assert refusal.code == code
        args[field] = GOOD[field]
    refusal = await tools.remember(**args, scope="nope")
    assert isinstance(refusal, Refusal)
    assert refusal.code == "invalid-scope"
    assert await service.list_records("u1") == []


async def test_same_kind_title_scope_becomes_a_new_revision(
    service: MemoryService, clock: ManualClock
) -> None:
    tools = tools_for(service, clock)
    first = await tools.remember(**GOOD)
    second = await tools.remember(**{**GOOD, "body": "new body text", "tags": ["emulator"]})
    elsewhere = await tools.remember(**GOOD, scope="project:beta")
    assert isinstance(first, RememberResult)
    assert isinstance(second, RememberResult)
    assert isinstance(elsewhere, RememberResult)
    assert first.id == second.id != elsewhere.id
    stored = await service.get("u1", first.id)
    assert (stored.content, stored.revision) == ("new body text", 2)
    view = await tools.load_view()
    merged = next(r for r in view.records if r.id == first.id)
    assert merged.tags == ("emulator", "android", "adb")


def _fail_side_rows(db: Path) -> None:
    """Make every write of a side row fail inside the database (a crash between the record
    and its fields, whatever code path writes them)."""
    conn = sqlite3.connect(db)
    for event in ("INSERT", "UPDATE"):
        conn.execute(
            f"CREATE TRIGGER fail_side_row_{event.lower()} BEFORE {event} ON contract_fields "
            "BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        )
    conn.commit()
    conn.close()


async def test_remember_writes_record_and_fields_together_or_not_at_all(
    tmp_path: Path, service: MemoryService, clock: ManualClock
) -> None:
    tools = tools_for(service, clock)
    first = await tools.remember(**GOOD)
    assert isinstance(first, RememberResult)
    revision = await service.memory_revision("u1")
    audit = await service.audit("u1")
    _fail_side_rows(tmp_path / "memory.db")
    # a new memory: nothing of it may stay behind
    with pytest.raises(sqlite3.IntegrityError, match="injected failure"):
        await tools.remember(**{**GOOD, "title": "a different lesson title"})
    assert [r.memory_id for r in await service.list_records("u1")] == [first.id]
    # a new revision of the first: its old body, revision and fields stay
    with pytest.raises(sqlite3.IntegrityError, match="injected failure"):
        await tools.remember(**{**GOOD, "body": "a changed body", "tags": ["other"]})
    (stored,) = await service.list_records("u1")
    assert (stored.memory_id, stored.content, stored.revision) == (first.id, GOOD["body"], 1)
    assert await service.memory_revision("u1") == revision
    assert await service.audit("u1") == audit
    (record,) = (await tools.load_view()).records
    assert (record.title, record.tags) == (GOOD["title"], ("android", "adb"))


async def test_record_too_large_writes_nothing(service: MemoryService, clock: ManualClock) -> None:
    tools = tools_for(service, clock, max_bytes=2000)
    refusal = await tools.remember(**{**GOOD, "body": "x" * 300})
    assert isinstance(refusal, Refusal)
    assert refusal.code == "record-too-large"
    assert refusal.limit_bytes == 200
    assert refusal.record_bytes is not None
    assert refusal.record_bytes > 200
    assert await service.list_records("u1") == []


async def test_store_changed_externally_reports_both_sides_then_retry_succeeds(
    service: MemoryService, clock: ManualClock
) -> None:
    mine = tools_for(service, clock)
    other = tools_for(service, clock)
    assert isinstance(await mine.recall("adb"), RecallResult)
    assert isinstance(await other.remember(**GOOD), RememberResult)
    refusal = await mine.remember(**{**GOOD, "title": "another lesson about adb"})
    assert isinstance(refusal, Refusal)
    assert refusal.code == "store-changed-externally"
    assert refusal.seen is not None
    assert refusal.current is not None
    assert refusal.seen.revision < refusal.current.revision
    assert len(await service.list_records("u1")) == 1
    retried = await mine.remember(**{**GOOD, "title": "another lesson about adb"})
    assert isinstance(retried, RememberResult)
    assert retried.records == 2


async def test_expand_by_another_session_is_not_an_external_change(
    service: MemoryService, clock: ManualClock
) -> None:
    mine = tools_for(service, clock)
    other = tools_for(service, clock)
    done = await mine.remember(**GOOD)
    assert isinstance(done, RememberResult)
    assert isinstance(await other.expand([done.id]), ExpandResult)
    again = await mine.remember(**{**GOOD, "title": "a second lesson title"})
    assert isinstance(again, RememberResult)


async def test_secret_in_body_or_title_is_refused(
    service: MemoryService, clock: ManualClock
) -> None:
    tools = tools_for(service, clock)
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    in_body = await tools.remember(**{**GOOD, "body": f"the deploy key is {key}"})
    in_title = await tools.remember(**{**GOOD, "title": f"deploy key {key}"})
    assert isinstance(in_body, Refusal)
    assert in_body.code == "secret"
    assert key not in in_body.message
    assert isinstance(in_title, Refusal)
    assert in_title.code == "secret"
    assert await service.list_records("u1") == []


@pytest.mark.parametrize(
    ("mode", "code"),
    [(SessionMode.NO_WRITE, "session-no-write"), (SessionMode.ISOLATED, "session-isolated")],
)
async def test_session_modes(
    service: MemoryService, clock: ManualClock, mode: SessionMode, code: str
) -> None:
    writer = tools_for(service, clock)
    done = await writer.remember(**GOOD)
    assert isinstance(done, RememberResult)
    tools = tools_for(service, clock, mode=mode)
    for refusal in (
        await tools.remember(**{**GOOD, "title": "some other title here"}),
        await tools.forget(done.id),
        await tools.prune(dry_run=False),
    ):
        assert isinstance(refusal, Refusal)
        assert refusal.code == code
    recalled = await tools.recall("adb emulator")
    expanded = await tools.expand([done.id])
    if mode is SessionMode.ISOLATED:
        assert isinstance(recalled, Refusal)
        assert isinstance(expanded, Refusal)
    else:
        assert isinstance(recalled, RecallResult)
        assert [row.id for row in recalled.rows] == [done.id]
        assert isinstance(expanded, ExpandResult)
        # a no-write session reads but leaves the hit counter alone
        assert (await tools.load_view()).records[0].hits == 0
    assert len(await service.list_records("u1")) == 1


async def test_recall_rows_never_carry_bodies_and_respect_the_session_project(
    service: MemoryService, clock: ManualClock
) -> None:
    writer = tools_for(service, clock)
    for scope, title in [(None, "global adb lesson one"), ("project:alpha", "alpha adb lesson")]:
        await writer.remember(**{**GOOD, "title": title}, scope=scope)
    await writer.remember(**{**GOOD, "title": "beta adb lesson"}, scope="project:beta")
    tools = tools_for(service, clock, project="project:alpha")
    result = await tools.recall("adb emulator")
    assert isinstance(result, RecallResult)
    assert {row.scope for row in result.rows} == {"global", "project:alpha"}
    assert GOOD["body"] not in result.text
    refused = await tools.recall("adb", scope="project:beta")
    assert isinstance(refused, Refusal)
    assert refused.code == "scope-not-visible"


async def test_expand_increments_hits_persistently(
    service: MemoryService, clock: ManualClock, tmp_path: Path
) -> None:
    tools = tools_for(service, clock)
    done = await tools.remember(**GOOD)
    assert isinstance(done, RememberResult)
    first = await tools.expand([done.id, "missing-id", done.id])
    assert isinstance(first, ExpandResult)
    assert first.missing == ("missing-id",)
    assert first.found[0].body == GOOD["body"]
    await tools.expand([done.id])
    reopened = MemoryService(SQLiteStore(tmp_path / "memory.db", durable=False), clock=clock)
    try:
        view = await tools_for(reopened, clock).load_view()
    finally:
        reopened.close()
    assert view.records[0].hits == 2


async def test_prune_dry_run_touches_nothing_and_false_evicts_by_forgetting(
    service: MemoryService, clock: ManualClock, tmp_path: Path
) -> None:
    tools = tools_for(service, clock, max_bytes=5000)
    ids = []
    for n in range(16):
        clock.advance(3600)
        done = await tools.remember(
            **{**GOOD, "title": f"lesson number {n:02d} about adb", "body": f"zebra{n} " * 20}
        )
        assert isinstance(done, RememberResult)
        ids.append(done.id)
    before = await service.list_records("u1")
    for dry in (True, "false", 0, None):
        plan = await tools.prune(dry_run=dry)
        assert isinstance(plan, PrunePlan)
        assert plan.dry_run
        assert plan.evictions
    assert await service.list_records("u1") == before
    plan = await tools.prune(dry_run=False)
    assert isinstance(plan, PrunePlan)
    assert not plan.dry_run
    evicted = {e.id for e in plan.evictions}
    assert evicted
    left = {r.memory_id for r in await service.list_records("u1")}
    assert left == set(ids) - evicted
    for memory_id in evicted:
        assert (await service.tombstone("u1", memory_id)) is not None
    data = db_bytes(tmp_path, "memory.db*")
    oldest = ids[0]
    assert oldest in evicted
    assert b"zebra0 " not in data


async def test_forget_removes_body_and_fields_from_every_byte(
    service: MemoryService, clock: ManualClock, tmp_path: Path
) -> None:
    tools = tools_for(service, clock)
    done = await tools.remember(
        **{
            **GOOD,
            "title": "quokka marmalade recipe title",
            "body": "quokka marmalade body",
            "tags": ["quokkatag"],
            "source": "file:quokka-notes.md",
        }
    )
    assert isinstance(done, RememberResult)
    gone = await tools.forget(done.id)
    assert isinstance(gone, ForgetDone)
    assert gone.records == 0
    missing = await tools.forget(done.id)
    assert isinstance(missing, Refusal)
    assert missing.code == "not-found"
    data = db_bytes(tmp_path, "memory.db*")
    for text in (b"quokka", b"marmalade", b"quokkatag"):
        assert text not in data


async def test_users_never_see_each_other(service: MemoryService, clock: ManualClock) -> None:
    mine = tools_for(service, clock, user="u1")
    done = await mine.remember(**GOOD)
    assert isinstance(done, RememberResult)
    theirs = tools_for(service, clock, user="u2")
    recalled = await theirs.recall("adb emulator")
    assert isinstance(recalled, RecallResult)
    assert recalled.rows == ()
    expanded = await theirs.expand([done.id])
    assert isinstance(expanded, ExpandResult)
    assert expanded.missing == (done.id,)
    refused = await theirs.forget(done.id)
    assert isinstance(refused, Refusal)
    assert len(await service.list_records("u1")) == 1
