"""The service keeps its retrieval views current incrementally: a write is read back alone,
never the whole user; results equal a view rebuilt from scratch; forget leaves no trace."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memrecall.store import (
    Budget,
    KeyConflict,
    MemoryScope,
    MemoryService,
    RetrievalView,
    SQLiteStore,
    WorkspaceType,
)
from memrecall.store.backend import StoreChanges
from memrecall.store.retrieval import normalize_query

from .helpers import GLOBAL, LEARNING, ManualClock


class CountingStore:
    """A store that counts the records every read hands to retrieval."""

    def __init__(self, inner: SQLiteStore) -> None:
        self.inner = inner
        self.loaded = 0
        self.full_loads = 0

    def changes_since(
        self, user_id: str, scopes: Sequence[MemoryScope], cursor: int | None
    ) -> StoreChanges:
        changes = self.inner.changes_since(user_id, scopes, cursor)
        self.loaded += len(changes.records)
        self.full_loads += changes.full
        return changes

    def snapshot(self, user_id: str, scopes: Sequence[MemoryScope]) -> Any:
        result = self.inner.snapshot(user_id, scopes)
        self.loaded += len(result[1])
        self.full_loads += 1
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _service(tmp_path: Path) -> tuple[MemoryService, CountingStore]:
    store = CountingStore(SQLiteStore(tmp_path / "m.db", durable=False))
    return MemoryService(store, clock=ManualClock()), store


async def test_a_write_is_read_back_alone(tmp_path: Path) -> None:
    service, store = _service(tmp_path)
    first = None
    for i in range(40):
        out = await service.save("u1", GLOBAL, f"note {i}", f"walnut harbour fact {i}", "fact")
        first = first or out.record.memory_id
    await service.search("u1", None, "walnut")
    assert store.full_loads == 1
    assert store.loaded == 40
    saved = await service.save("u1", GLOBAL, "boat", "the walnut boat is blue", "fact")
    result = await service.search("u1", None, "walnut boat")
    assert result.hits[0].memory_id == saved.record.memory_id
    assert store.full_loads == 1
    assert store.loaded == 41
    await service.update(
        "u1", saved.record.memory_id, expected_revision=1, content="the walnut boat is red"
    )
    assert first is not None
    await service.suppress("u1", first)
    await service.search("u1", None, "walnut red")
    assert store.full_loads == 1
    assert store.loaded == 42  # the update; a suppressed record is only removed
    service.close()


async def test_forgotten_text_never_comes_back(tmp_path: Path) -> None:
    service, store = _service(tmp_path)
    await service.save("u1", GLOBAL, "drink", "likes green tea", "preference")
    secret = await service.save("u1", GLOBAL, "secret", "zanzibar lighthouse tea", "misc")
    await service.search("u1", None, "zanzibar")
    views = [view for view, _lock in service._search.views.values()]
    assert views
    assert all("zanzibar" in v.index.vocabulary() for v in views)
    await service.forget("u1", secret.record.memory_id)
    # the live view was cleaned at once, before any search
    assert all("zanzibar" not in v.index.vocabulary() for v in views)
    assert all(secret.record.memory_id not in v.records for v in views)
    for query in ("zanzibar", "zanzibar lighthouse", "secret", "tea"):
        result = await service.search("u1", None, query)
        assert all("zanzibar" not in hit.content for hit in result.hits)
        assert all(hit.memory_id != secret.record.memory_id for hit in result.hits)
    assert store.full_loads == 1
    service.close()


async def test_service_search_equals_a_rebuilt_view(tmp_path: Path) -> None:
    service, store = _service(tmp_path)
    clock = service._clock
    assert isinstance(clock, ManualClock)
    rng = random.Random(7)
    words = "coffee tea green vim editor charge charges order harbour walnut".split()
    live: list[str] = []
    for step in range(120):
        clock.advance(rng.choice((0, 1, 30)))
        action = rng.random()
        scope = rng.choice((GLOBAL, LEARNING))
        content = " ".join(rng.choices(words, k=rng.randint(1, 6)))
        if action < 0.45 or not live:
            try:
                outcome = await service.save(
                    "u1", scope, rng.choice(words), content, rng.choice(("a", "b"))
                )
            except KeyConflict:
                continue
            if outcome.created:
                live.append(outcome.record.memory_id)
        elif action < 0.7:
            memory_id = rng.choice(live)
            record = await service.get("u1", memory_id)
            await service.update(
                "u1", memory_id, expected_revision=record.revision, content=content
            )
        elif action < 0.8:
            memory_id = rng.choice(live)
            await service.suppress("u1", memory_id)
        elif action < 0.9:
            memory_id = rng.choice(live)
            await service.restore("u1", memory_id)
        else:
            await service.forget("u1", live.pop(rng.randrange(len(live))))
        workspace = rng.choice((None, WorkspaceType.LEARNING))
        query = " ".join(rng.choices(words, k=rng.randint(1, 3)))
        limit = rng.randint(1, 5)
        got = await service.search("u1", workspace, query, limit=limit)
        scopes = (GLOBAL,) if workspace is None else (GLOBAL, LEARNING)
        revision, records = store.inner.snapshot("u1", scopes)
        rebuilt = RetrievalView(revision, records).search(
            normalize_query(query), clock.now, budget=Budget(limit=limit)
        )
        assert list(got.hits) == rebuilt, step
    # two views (global-only and learning), each loaded whole once
    assert store.full_loads == 2
    service.close()
