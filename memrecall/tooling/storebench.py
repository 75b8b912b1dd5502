"""``memrecall bench store``: the memory store's save throughput and search latency.

For each size N, one user's store (a fresh SQLite file in a temporary directory, the
default durable settings; with ``--postgres URI`` also a fresh schema in that PostgreSQL
database, measured the same way and printed beside SQLite) is filled with N generated memories
(:class:`~memrecall.tooling.storetext.TextGenerator`: a seeded vocabulary of a few
thousand words with Zipf-like frequencies, 8-40 words per memory), one transaction per
save. Then:

- *store save/s*: saves per second of the fill, through the ``Store`` (the backend's
  transaction: checks, version row, current row, memory_revision, audit);
- *service save/s*: :meth:`MemoryService.save` per second over :data:`SERVICE_SAVES` more
  saves at that size (adds the worker-thread hop and whatever the service does after a
  write, e.g. the profile projection);
- *search p50 / p99*: :meth:`MemoryService.search` over distinct generated queries of 1-4
  words (each a cache miss; the retrieval view is already current);
- *after write p50 / max*: a search right after a save (the view applies that one change);
- *recall p50 / max*: the deterministic recall pass over the store as a document source
  (:func:`~memrecall.sources.source.prepare_recall` on a
  :class:`~memrecall.store.source.StoreSource`), after a write each time; by the words
  (``passages=False``: embedding thousands of passages in the background would run beside
  the measurement; ``bench recall`` measures what the passages cost a turn).

Times are wall-clock milliseconds on this machine; nothing is asserted here. The targets
(issue 13): search p99 ≤ 5 ms at 10k; recall inside the 100 ms window.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs
import trio

from memrecall.store import (
    ChangedVia,
    MemoryScope,
    MemoryService,
    SourceType,
    SQLiteStore,
    Store,
    normalize_key,
)
from memrecall.store.backend import NewMemory
from memrecall.store.service import utc_now
from memrecall.tooling.storetext import TextGenerator

__all__ = ["DEFAULT_SIZES", "StoreRow", "percentile", "run_store_bench", "store_bench_main"]

DEFAULT_SIZES = (1000, 10000, 100000)
SERVICE_SAVES = 200
"""Saves timed through the service per size."""
SEARCHES = 300
"""Distinct queries timed per size."""
AFTER_WRITE = 20
"""Write-then-search (and write-then-recall) rounds per size."""


def percentile(values: Sequence[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in [0, 1]) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


@attrs.frozen
class StoreRow:
    """One size's measurements (milliseconds unless named otherwise)."""

    size: int
    store_saves_per_s: float
    service_saves_per_s: float
    searches: int
    search_p50_ms: float
    search_p99_ms: float
    after_write_p50_ms: float
    after_write_max_ms: float
    recall_p50_ms: float
    recall_max_ms: float


async def _measure(size: int, seed: int, store: Store) -> StoreRow:
    from memrecall.sources.source import prepare_recall
    from memrecall.store.source import StoreSource

    gen = TextGenerator(seed)
    service = MemoryService(store)
    scope = MemoryScope.global_()
    user = "bench-user"
    try:
        now = utc_now()
        started = time.perf_counter()
        for n in range(size):
            m = gen.memory()
            new = NewMemory(
                memory_id=f"{n:032x}",
                user_id=user,
                scope=scope,
                key=normalize_key(m.key),
                content=m.content,
                category=m.category,
                source_type=SourceType.EXPLICIT,
                review_after=None,
                expires_at=None,
                changed_via=ChangedVia.USER_API,
            )
            store.save(new, now)
        store_saves = size / (time.perf_counter() - started)
        started = time.perf_counter()
        for _ in range(SERVICE_SAVES):
            m = gen.memory()
            await service.save(user, scope, m.key, m.content, m.category)
        service_saves = SERVICE_SAVES / (time.perf_counter() - started)
        await service.search(user, None, gen.query())  # loads the view once
        seen: set[str] = set()
        times: list[float] = []
        while len(times) < SEARCHES:
            query = gen.query()
            if query in seen:
                continue
            seen.add(query)
            t = time.perf_counter()
            result = await service.search(user, None, query)
            elapsed = time.perf_counter() - t
            if not result.cached:
                times.append(elapsed * 1000)
        after: list[float] = []
        recall: list[float] = []
        source = StoreSource(service.store, user, passages=False)
        await trio.to_thread.run_sync(source.snapshot)  # loads the source once
        for _ in range(AFTER_WRITE):
            m = gen.memory()
            await service.save(user, scope, m.key, m.content, m.category)
            t = time.perf_counter()
            await service.search(user, None, m.content.split()[0])
            after.append((time.perf_counter() - t) * 1000)
            m = gen.memory()
            await service.save(user, scope, m.key, m.content, m.category)
            query = gen.query()
            t = time.perf_counter()
            await trio.to_thread.run_sync(prepare_recall, source, query)
            recall.append((time.perf_counter() - t) * 1000)
    finally:
        service.close()
    return StoreRow(
        size=size,
        store_saves_per_s=round(store_saves, 1),
        service_saves_per_s=round(service_saves, 1),
        searches=len(times),
        search_p50_ms=round(percentile(times, 0.5), 3),
        search_p99_ms=round(percentile(times, 0.99), 3),
        after_write_p50_ms=round(percentile(after, 0.5), 3),
        after_write_max_ms=round(max(after), 3),
        recall_p50_ms=round(percentile(recall, 0.5), 3),
        recall_max_ms=round(max(recall), 3),
    )


@contextmanager
def _postgres_schema(uri: str, size: int) -> Iterator[Store]:
    """A PostgresStore in a fresh schema of ``uri``'s database, dropped afterwards."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import make_conninfo

    from memrecall.store.postgres import PostgresStore

    name = f"memrecall_bench_{size}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(uri, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    try:
        yield PostgresStore(make_conninfo(uri, options=f"-c search_path={name}"))
    finally:
        with psycopg.connect(uri, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))


def run_store_bench(
    sizes: Sequence[int], *, seed: int = 0, postgres: str | None = None
) -> list[StoreRow]:
    """Measure every size, each in a fresh database: a SQLite file in a temporary
    directory, or (``postgres``, a ``postgresql://`` URI) a fresh schema in that database,
    dropped afterwards."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="memrecall-storebench-") as tmp:
        for size in sizes:
            if postgres is None:
                store: Store = SQLiteStore(Path(tmp) / f"bench-{size}.db")
                rows.append(trio.run(_measure, size, seed, store))
            else:
                with _postgres_schema(postgres, size) as store:
                    rows.append(trio.run(_measure, size, seed, store))
    return rows


_HEADER = (
    "size",
    "store save/s",
    "service save/s",
    "search p50",
    "search p99",
    "after write p50",
    "after write max",
    "recall p50",
    "recall max",
)


def _side_by_side(lite: Sequence[StoreRow], pg: Sequence[StoreRow]) -> None:
    """One block per size: a line per measurement, SQLite and PostgreSQL beside each other."""
    names = [a.name for a in attrs.fields(StoreRow) if a.name not in {"size", "searches"}]
    print(f"{'size':>8}  {'measurement':<22}{'sqlite':>12}{'postgres':>12}")
    for a, b in zip(lite, pg, strict=True):
        for name in names:
            print(f"{a.size:>8}  {name:<22}{getattr(a, name):>12}{getattr(b, name):>12}")
    print("times in ms; search = MemoryService.search (distinct queries, cache misses)")


def store_bench_main(
    sizes: Sequence[int], *, as_json: bool = False, seed: int = 0, postgres: str | None = None
) -> int:
    """Run the bench and print a table (or one JSON object with ``rows``); with
    ``postgres`` (a ``postgresql://`` URI) also on PostgreSQL, printed side by side
    (JSON: ``postgres_rows``)."""
    rows = run_store_bench(sizes, seed=seed)
    if postgres is not None:
        pg_rows = run_store_bench(sizes, seed=seed, postgres=postgres)
        if as_json:
            print(
                json.dumps(
                    {
                        "rows": [attrs.asdict(r) for r in rows],
                        "postgres_rows": [attrs.asdict(r) for r in pg_rows],
                    }
                )
            )
        else:
            _side_by_side(rows, pg_rows)
        return 0
    if as_json:
        print(json.dumps({"rows": [attrs.asdict(r) for r in rows]}))
        return 0
    print("  ".join(f"{h:>15}" for h in _HEADER))
    for r in rows:
        cells = (
            r.size,
            r.store_saves_per_s,
            r.service_saves_per_s,
            r.search_p50_ms,
            r.search_p99_ms,
            r.after_write_p50_ms,
            r.after_write_max_ms,
            r.recall_p50_ms,
            r.recall_max_ms,
        )
        print("  ".join(f"{c:>15}" for c in cells))
    print("times in ms; search = MemoryService.search (distinct queries, cache misses)")
    return 0
