"""Retrieval through the service (seed 002 §10) and the query cache (§16)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memrecall.store import (
    InvalidInput,
    MemoryService,
    SQLiteStore,
    WorkspaceType,
    count_tokens,
)

from .helpers import GLOBAL, LEARNING, TEACHING, ManualClock

LEARN = WorkspaceType.LEARNING
TEACH = WorkspaceType.TEACHING


def ids(result: object) -> list[str]:
    return [h.memory_id for h in result.hits]  # type: ignore[attr-defined]


async def test_no_match_returns_nothing(service: MemoryService) -> None:
    await service.save("u1", GLOBAL, "editor", "prefers vim for editing", "preference")
    await service.save("u1", GLOBAL, "drink", "likes green tea", "preference")
    for query in ("zebra migration patterns", "", "the and of", "!!!"):
        assert (await service.search("u1", None, query)).hits == ()


async def test_exact_key_comes_first(service: MemoryService, clock: ManualClock) -> None:
    keyed = await service.save("u1", GLOBAL, "coffee order", "a flat white", "preference")
    clock.advance(10)
    wordy = await service.save(
        "u1", GLOBAL, "cafe", "coffee order coffee order: the coffee order is long", "misc"
    )
    result = await service.search("u1", None, "Coffee-Order")
    assert ids(result) == [keyed.record.memory_id, wordy.record.memory_id]
    assert result.hits[0].exact_key
    assert not result.hits[1].exact_key


async def test_workspace_overrides_global_with_same_key(
    service: MemoryService, clock: ManualClock
) -> None:
    g = await service.save("u1", GLOBAL, "editor", "uses vim everywhere", "tools")
    w = await service.save(
        "u1",
        LEARNING,
        "editor",
        "uses emacs for lessons",
        "tools",
        expires_at=clock() + timedelta(hours=1),
    )
    assert ids(await service.search("u1", LEARN, "editor")) == [w.record.memory_id]
    assert ids(await service.search("u1", TEACH, "editor")) == [g.record.memory_id]
    assert ids(await service.search("u1", None, "editor")) == [g.record.memory_id]
    clock.advance(2 * 3600)  # the workspace record expired: global shows again
    assert ids(await service.search("u1", LEARN, "editor")) == [g.record.memory_id]


async def test_suppressed_and_expired_are_never_retrieved(
    service: MemoryService, clock: ManualClock
) -> None:
    """§18.1: suppressed and expired records never reach ordinary retrieval."""
    hidden = await service.save("u1", GLOBAL, "a", "kayak trip planning notes", "plans")
    soon = await service.save(
        "u1",
        GLOBAL,
        "b",
        "kayak rental booking",
        "plans",
        expires_at=clock() + timedelta(seconds=60),
    )
    assert set(ids(await service.search("u1", None, "kayak"))) == {
        hidden.record.memory_id,
        soon.record.memory_id,
    }
    await service.suppress("u1", hidden.record.memory_id)
    assert ids(await service.search("u1", None, "kayak")) == [soon.record.memory_id]
    clock.advance(61)
    assert (await service.search("u1", None, "kayak")).hits == ()
    assert (await service.search("u1", None, "b")).hits == ()  # not even by exact key
    await service.restore("u1", hidden.record.memory_id)
    assert ids(await service.search("u1", None, "kayak")) == [hidden.record.memory_id]


async def test_review_due_lowers_priority_until_confirmed(
    service: MemoryService, clock: ManualClock
) -> None:
    old = await service.save("u1", GLOBAL, "k1", "green tea every morning", "habits")
    clock.advance(10)
    due = await service.save(
        "u1",
        GLOBAL,
        "k2",
        "green tea every morning",
        "habits",
        review_after=clock() + timedelta(days=1),
    )
    # same score: newer first (update time is the tie-break)
    assert ids(await service.search("u1", None, "green tea")) == [
        due.record.memory_id,
        old.record.memory_id,
    ]
    clock.advance(2 * 86_400)
    result = await service.search("u1", None, "green tea")
    assert ids(result) == [old.record.memory_id, due.record.memory_id]
    assert result.hits[1].review_due
    await service.confirm("u1", due.record.memory_id)
    assert ids(await service.search("u1", None, "green tea"))[0] == due.record.memory_id


async def test_budgets(service: MemoryService) -> None:
    long = " ".join(f"alpaca{i} wool notes" for i in range(200))
    for i in range(8):
        await service.save("u1", GLOBAL, f"wool {i}", long, "fibre")
    for i in range(8):
        await service.save("u1", GLOBAL, f"short {i}", f"vicuna note {i}", "fibre")
    assert len((await service.search("u1", None, "vicuna")).hits) == service.budget.limit == 5
    result = await service.search("u1", None, "alpaca wool")
    assert 1 < len(result.hits) <= 5
    assert all(h.tokens <= 160 for h in result.hits)
    assert sum(h.tokens for h in result.hits) <= 600
    for hit in result.hits:
        assert hit.truncated
        assert long.startswith(hit.content)
        assert count_tokens(hit.content) == hit.tokens
    assert len((await service.search("u1", None, "alpaca wool", limit=2)).hits) == 2
    with pytest.raises(InvalidInput):
        await service.search("u1", None, "alpaca", limit=0)


async def test_budget_total_cuts_the_last_hit(tmp_path: Path) -> None:
    from memrecall.store import Budget

    svc = MemoryService(
        SQLiteStore(tmp_path / "m.db"),
        clock=ManualClock(),
        budget=Budget(limit=5, total_tokens=250, per_content_tokens=160),
    )
    long = " ".join(f"llama{i} fleece" for i in range(200))
    for i in range(3):
        await svc.save("u1", GLOBAL, f"fleece {i}", long, "fibre")
    hits = (await svc.search("u1", None, "llama fleece")).hits
    assert hits[0].tokens <= 160
    assert sum(h.tokens for h in hits) <= 250
    assert len(hits) == 2
    svc.close()


async def test_category_filter_and_user_isolation(service: MemoryService) -> None:
    a = await service.save("u1", GLOBAL, "x", "bicycle repair tips", "hobby")
    await service.save("u1", GLOBAL, "y", "bicycle commute route", "travel")
    await service.save("u2", GLOBAL, "z", "bicycle shop owner", "hobby")
    assert ids(await service.search("u1", None, "bicycle", category="HOBBY ")) == [
        a.record.memory_id
    ]
    assert len((await service.search("u1", None, "bicycle")).hits) == 2
    assert [h.key for h in (await service.search("u2", None, "bicycle")).hits] == ["z"]


async def test_cache_hits_and_is_invalidated_by_writes(
    service: MemoryService, clock: ManualClock
) -> None:
    rec = (await service.save("u1", GLOBAL, "pet", "a cat named miso", "family")).record
    first = await service.search("u1", None, "cat miso")
    again = await service.search("u1", None, "  CAT   miso ")
    assert not first.cached
    assert again.cached
    assert again.hits == first.hits
    await service.update("u1", rec.memory_id, expected_revision=1, content="a cat named tofu")
    fresh = await service.search("u1", None, "cat miso")
    assert not fresh.cached
    assert fresh.hits[0].content == "a cat named tofu"
    clock.advance(61)
    assert not (await service.search("u1", None, "cat miso")).cached


async def test_cache_never_crosses_scopes(service: MemoryService) -> None:
    """§16: the same user and query from another workspace must not reuse a cached result."""
    g = await service.save("u1", GLOBAL, "style", "deadline style is strict", "work")
    lw = await service.save("u1", LEARNING, "notes", "deadline for homework friday", "study")
    tw = await service.save("u1", TEACHING, "grading", "deadline grading rubric", "class")
    learning = await service.search("u1", LEARN, "deadline")
    assert set(ids(learning)) == {g.record.memory_id, lw.record.memory_id}
    teaching = await service.search("u1", TEACH, "deadline")
    assert not teaching.cached
    assert set(ids(teaching)) == {g.record.memory_id, tw.record.memory_id}
    only_global = await service.search("u1", None, "deadline")
    assert not only_global.cached
    assert ids(only_global) == [g.record.memory_id]
    assert (await service.search("u1", LEARN, "deadline")).cached
    other_user = await service.search("u2", LEARN, "deadline")
    assert other_user.hits == ()


async def test_cache_respects_expiry_inside_its_ttl(
    service: MemoryService, clock: ManualClock
) -> None:
    await service.save(
        "u1",
        GLOBAL,
        "parcel",
        "parcel arrives tuesday",
        "errand",
        expires_at=clock() + timedelta(seconds=20),
    )
    assert len((await service.search("u1", None, "parcel")).hits) == 1
    clock.advance(30)  # within the 60 s TTL, after the expiry
    assert (await service.search("u1", None, "parcel")).hits == ()


async def test_writes_from_another_process_are_seen(tmp_path: Path) -> None:
    clock = ManualClock()
    path = tmp_path / "m.db"
    reader = MemoryService(SQLiteStore(path), clock=clock)
    writer = MemoryService(SQLiteStore(path), clock=clock)
    rec = (await writer.save("u1", GLOBAL, "car", "drives a blue van", "misc")).record
    assert ids(await reader.search("u1", None, "blue van")) == [rec.memory_id]
    await writer.suppress("u1", rec.memory_id)
    assert (await reader.search("u1", None, "blue van")).hits == ()
    reader.close()
    writer.close()


async def test_phrase_match_ranks_above_scattered_words(
    service: MemoryService, clock: ManualClock
) -> None:
    phrase = await service.save(
        "u1", GLOBAL, "p", "I take oat milk in my coffee every single morning at home", "diet"
    )
    clock.advance(10)  # the scattered one is newer and mentions the words more often
    scattered = await service.save("u1", GLOBAL, "s", "milk, oat, milk, oat, milk and oat", "diet")
    result = await service.search("u1", None, "oat milk")
    assert ids(result) == [phrase.record.memory_id, scattered.record.memory_id]
