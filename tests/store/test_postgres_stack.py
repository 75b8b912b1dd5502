"""The layers above the store run unchanged on PostgreSQL: the same story told through the
memory tools and the recall source gives the same answers on both backends."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from memrecall.governance import ExecutionContext
from memrecall.sources.source import prepare_recall
from memrecall.store import MemoryService, SQLiteStore, Store, WorkspaceType
from memrecall.store.postgres import PostgresStore
from memrecall.store.source import StoreSource
from memrecall.tools.memory_tools import MemoryTools, ToolSession

from .helpers import ManualClock

WORDS = ("adb", "emulator", "cache", "deploy", "ledger", "retry", "flaky", "token", "snapshot")


async def _story(store: Store) -> dict[str, object]:
    """Tool calls and recalls from one seeded script; every answer, for comparison."""
    clock = ManualClock()
    ids = (f"id{n:04d}" for n in itertools.count())
    service = MemoryService(store, clock=clock, ids=lambda: next(ids))
    tools = MemoryTools(service, ToolSession(ExecutionContext("u1")), clock=clock)
    rng = random.Random(11)
    answers: dict[str, object] = {}
    remembered: list[str] = []
    for n in range(12):
        clock.advance(60)
        words = rng.choices(WORDS, k=6)
        done = await tools.remember(
            kind=rng.choice(("fact", "lesson")),
            title=f"note {n} about {words[0]} and {words[1]}",
            body=" ".join(words),
            tags=[words[2]],
            source="session:s",
        )
        answers[f"remember {n}"] = done
        remembered.append(getattr(done, "id", ""))
    answers["forget"] = await tools.forget(remembered[3])
    for query in ("emulator retry", "deploy cache ledger", "flaky token"):
        answers[f"recall {query}"] = await tools.recall(query)
        source = StoreSource(store, "u1", WorkspaceType.LEARNING, clock=clock)
        answers[f"source {query}"] = prepare_recall(source, query)
    answers["expand"] = await tools.expand(remembered[:3])
    service.close()
    return answers


async def test_tools_and_recall_source_answer_the_same(postgres_dsn: str, tmp_path: Path) -> None:
    lite = await _story(SQLiteStore(tmp_path / "m.db", durable=False))
    pg = await _story(PostgresStore(postgres_dsn))
    assert pg == lite
