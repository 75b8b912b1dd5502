"""The profile projection as a derived table (seed 002 §6, §18.3)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from memrecall.governance import ProfileEntry
from memrecall.governance.profile import ProfileSource
from memrecall.store import MemoryService, SQLiteStore, Store

from .helpers import GLOBAL, T0, ManualClock, new_memory

FIELD = "explanation_preference"


async def projectable(svc: MemoryService, key: str, content: str, value: str) -> str:
    """Save a preference memory marked as feeding FIELD; return its id."""
    rec = (await svc.save("u1", GLOBAL, key, content, "preference")).record
    await svc.mark_projectable("u1", rec.memory_id, (FIELD, value))
    return rec.memory_id


async def test_projection_is_built_from_projectable_memories(service: MemoryService) -> None:
    mid = await projectable(service, "style", "I like examples before definitions", "example_first")
    await service.save("u1", GLOBAL, "other", "unrelated note", "preference")
    assert await service.profile("u1") == {
        FIELD: ProfileEntry("example_first", ProfileSource.MEMORY, (mid,))
    }
    assert await service.profile("u2") == {}
    types = [e.event_type for e in await service.governance_events("u1")]
    assert types == ["memory.projection_created"]


async def test_explicit_settings_win(service: MemoryService) -> None:
    await projectable(service, "style", "examples first please", "example_first")
    await service.set_profile_setting("u1", FIELD, "definition_first")
    assert await service.profile("u1") == {}  # the setting is the source of truth, not copied
    await service.set_profile_setting("u1", FIELD, None)
    assert (await service.profile("u1"))[FIELD].value == "example_first"


async def test_suppress_and_forget_remove_only_sole_source_entries(
    service: MemoryService, clock: ManualClock
) -> None:
    a = await projectable(service, "style", "examples first", "example_first")
    clock.advance(1)
    b = await projectable(service, "style2", "show me an example first", "example_first")
    assert (await service.profile("u1"))[FIELD].memory_ids == tuple(sorted((a, b)))
    await service.suppress("u1", a)
    assert (await service.profile("u1"))[FIELD].memory_ids == (b,)
    await service.forget("u1", b)
    assert await service.profile("u1") == {}
    await service.restore("u1", a)
    assert (await service.profile("u1"))[FIELD].memory_ids == (a,)
    await service.forget("u1", a)
    assert await service.profile("u1") == {}
    assert [e.event_type for e in await service.governance_events("u1")][-1] == (
        "memory.projection_removed"
    )


async def test_forget_removes_a_sole_source_entry_even_without_a_rebuild(store: Store) -> None:
    """Forget's own transaction drops the entry; no projector needs to run afterwards."""
    svc = MemoryService(store, clock=ManualClock())
    mid = await projectable(svc, "style", "examples first", "example_first")
    svc._projector = None  # the rebuild after forget is off: the store alone must clean up
    await svc.forget("u1", mid)
    assert await svc.profile("u1") == {}


async def test_a_failing_projection_never_rolls_back_the_write(store: Store) -> None:
    calls = []

    def broken(store: Store, user_id: str, now: datetime) -> None:
        calls.append(user_id)
        raise RuntimeError("projection exploded")

    svc = MemoryService(store, clock=ManualClock(), projector=broken)
    rec = (await svc.save("u1", GLOBAL, "style", "examples first", "preference")).record
    await svc.mark_projectable("u1", rec.memory_id, (FIELD, "example_first"))
    updated = await svc.update("u1", rec.memory_id, expected_revision=1, content="examples!")
    assert calls == ["u1", "u1", "u1"]
    assert svc.projection_failures == 3
    assert (await svc.get("u1", rec.memory_id)).content == "examples!"
    assert updated.revision == 2
    assert len(await svc.history("u1", rec.memory_id)) == 2


def _projection_read_steps(tmp_path: Path, unmarked: int) -> int:
    """SQLite VM steps of one ``projection_inputs`` read for a user with one marked memory
    and ``unmarked`` other memories."""
    store = SQLiteStore(tmp_path / f"steps-{unmarked}.db", durable=False)
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    try:
        marked = store.save(new_memory(key="style", content="examples first"), T0).record
        store.set_projection_mark("u1", marked.memory_id, (FIELD, "example_first"))
        for n in range(unmarked):
            store.save(new_memory(key=f"note {n}", content=f"unrelated note {n}"), T0)
        with store._read() as conn:
            conn.set_progress_handler(count, 1)
        memories, _settings = store.projection_inputs("u1")
        with store._read() as conn:
            conn.set_progress_handler(None, 1)
        assert [m.memory_id for m in memories] == [marked.memory_id]
    finally:
        store.close()
    return steps


def test_projection_reads_follow_the_marked_memories_not_all_memories(tmp_path: Path) -> None:
    """The projection runs after every write: its read must not visit every memory."""
    small = _projection_read_steps(tmp_path, 10)
    large = _projection_read_steps(tmp_path, 400)
    assert large <= small * 1.5, (small, large)
