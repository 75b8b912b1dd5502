"""Throughput of the actors in simulation, and the memory an idle session holds.

``uv run python -m memrecall.simulation.throughput`` prints both. Plans per second:
many sessions run short tool-using conversations on a virtual clock (so only
the engine's own CPU cost is measured, not waiting), over a 200-document pool,
with the selector answering after 300 virtual ms. Memory: tracemalloc's
difference after opening 1,000 sessions that have not yet seen a query, and
what is still allocated after 10,000 sessions were each opened, asked one
query and closed (the engine keeps no closed session or plan, so this stays
flat: a few KiB of allocator and interpreter noise whatever the count).
"""

from __future__ import annotations

import gc
import time
import tracemalloc

import attrs
import trio
import trio.testing

from memrecall.actors import Engine, Session, SimulatedSelector
from memrecall.simulation.runner import WALL, build_pool, options_for_seed
from memrecall.sources.source import StaticSource
from memrecall.testing import open_test_engine

__all__ = ["idle_session_bytes", "main", "open_close_growth", "plans_per_second"]


def plans_per_second(sessions: int = 50, turns: int = 20) -> tuple[int, float]:
    """Run ``sessions * turns`` plans; return (plans, plans per wall-clock second)."""
    options = options_for_seed(1)
    pool = build_pool(attrs.evolve(options, documents=200))
    words = ["deploy rollback", "postgres failover", "vault secret", "zebra", "kafka lag"]

    async def converse(session: Session, index: int) -> None:
        for turn in range(turns):
            await session.user_query(words[(index + turn) % len(words)])
            await session.turn_end(tools_requested=True)
            await trio.sleep(0.5)
            await session.tool_result()
            await session.turn_end(tools_requested=False)

    async def main() -> None:
        async with open_test_engine(
            StaticSource(pool),
            selector=SimulatedSelector(latency=0.3),
            wall_clock=lambda: WALL,
            scan_in_thread=False,
        ) as engine:
            opened = [await engine.open_session() for _ in range(sessions)]
            async with trio.open_nursery() as nursery:
                for index, session in enumerate(opened):
                    nursery.start_soon(converse, session, index)

    begun = time.perf_counter()
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    elapsed = time.perf_counter() - begun
    plans = sessions * turns
    return plans, plans / elapsed


def idle_session_bytes(sessions: int = 1000) -> float:
    """Bytes held per open session that has not seen a query yet."""
    result: list[float] = []

    async def main() -> None:
        async with open_test_engine(StaticSource(()), scan_in_thread=False) as engine:
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            held = [await engine.open_session() for _ in range(sessions)]
            after = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
            result.append((after - before) / len(held))

    trio.run(main)
    return result[0]


def open_close_growth(cycles: int = 10_000, warmup: int = 500) -> tuple[int, float]:
    """Open, query and close ``cycles`` sessions; return (cycles, bytes still held after them).

    Tracing starts after ``warmup`` cycles (so caches and interned strings
    filled by the first recalls are not counted) and the result is what the
    traced allocations of the remaining cycles still hold at the end.
    """
    options = options_for_seed(1)
    pool = build_pool(attrs.evolve(options, documents=50))
    result: list[float] = []

    async def cycle(engine: Engine, index: int) -> None:
        session = await engine.open_session()
        await session.user_query("deploy rollback" if index % 2 else "postgres failover")
        await session.close()

    async def main() -> None:
        async with open_test_engine(
            StaticSource(pool), wall_clock=lambda: WALL, scan_in_thread=False
        ) as engine:
            for index in range(warmup):
                await cycle(engine, index)
            await trio.testing.wait_all_tasks_blocked()
            gc.collect()
            tracemalloc.start()
            try:
                for index in range(warmup, cycles):
                    await cycle(engine, index)
                await trio.testing.wait_all_tasks_blocked()
                gc.collect()
                result.append(tracemalloc.get_traced_memory()[0])
            finally:
                tracemalloc.stop()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return cycles, result[0]


def main() -> None:
    """Print the throughput table."""
    plans, rate = plans_per_second()
    per_session = idle_session_bytes()
    cycles, held = open_close_growth()
    print("actors in simulation (virtual clock; engine CPU only)")
    print("| measure | value |")
    print("|---|---:|")
    print(f"| plans run | {plans} |")
    print(f"| plans per second | {rate:,.0f} |")
    print(f"| memory per idle session | {per_session / 1024:.1f} KiB |")
    print(f"| memory held after {cycles:,} open/query/close cycles | {held / 1024:.1f} KiB |")


if __name__ == "__main__":
    main()
