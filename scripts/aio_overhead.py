"""What calling memrecall from asyncio costs: the same calls under trio and through memrecall.aio.

Runs ``--turns`` turns (``user_query`` then ``turn_end``) on one session over a
small static pool without a selector, first natively under ``trio.run``, then
from ``asyncio.run`` through :mod:`memrecall.aio` (trio in guest mode), then
through the alternative it replaced (trio in a thread of its own, each call a
blocking ``trio.from_thread.run`` in an executor thread), and prints the median
and 95th percentile of each call's round trip::

    uv run python scripts/aio_overhead.py --turns 500

Timings are wall time on this machine and noisy when it is busy.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import statistics
import threading
import time
from collections.abc import Awaitable, Callable

import trio

from memrecall import aio
from memrecall.actors import Session, open_engine
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources.source import StaticSource

WALL = 1_780_000_000.0


def _pool() -> StaticSource:
    docs = []
    for i, title in enumerate(["Deploy checklist", "Deploy rollback", "On-call rota"]):
        docs.append(
            MemoryDocument(
                scope=Scope.PROJECT,
                path=f"/mem/project/doc-{i}.md",
                relative_path=f"doc-{i}.md",
                type=MemoryType.PROJECT,
                title=title,
                description=title.lower(),
                body=f"{title}: steps and owners.",
                mtime=WALL - 100 * (i + 1),
            )
        )
    return StaticSource(tuple(docs), scorer="reference")


Samples = dict[str, list[float]]


async def _timed(samples: Samples, name: str, call: Callable[[], Awaitable[object]]) -> None:
    began = time.perf_counter()
    await call()
    samples.setdefault(name, []).append(time.perf_counter() - began)


async def _trio_main(turns: int) -> Samples:
    samples: Samples = {}
    async with open_engine(_pool(), selector=None) as engine:
        session = await engine.open_session()
        for _ in range(turns):
            await _timed(samples, "user_query", lambda: session.user_query("deploy"))
            await _timed(samples, "turn_end", lambda: session.turn_end(tools_requested=False))
    return samples


async def _asyncio_main(turns: int) -> Samples:
    samples: Samples = {}
    async with aio.open_engine(_pool(), selector=None) as engine:
        session = await engine.open_session()
        for _ in range(turns):
            await _timed(samples, "user_query", lambda: session.user_query("deploy"))
            await _timed(samples, "turn_end", lambda: session.turn_end(tools_requested=False))
    return samples


async def _thread_main(turns: int) -> Samples:
    """The alternative: trio in its own thread, each call a blocking hop from an executor."""
    samples: Samples = {}
    ready: queue.Queue[tuple[trio.lowlevel.TrioToken, Session, trio.Event]] = queue.Queue()

    async def host() -> None:
        async with open_engine(_pool(), selector=None) as engine:
            session = await engine.open_session()
            stop = trio.Event()
            ready.put((trio.lowlevel.current_trio_token(), session, stop))
            await stop.wait()

    thread = threading.Thread(target=trio.run, args=(host,))
    thread.start()
    loop = asyncio.get_running_loop()
    token, session, stop = await loop.run_in_executor(None, ready.get)

    def hop(fn: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[object]]:
        return lambda: loop.run_in_executor(
            None, lambda: trio.from_thread.run(fn, trio_token=token)
        )

    for _ in range(turns):
        await _timed(samples, "user_query", hop(lambda: session.user_query("deploy")))
        await _timed(samples, "turn_end", hop(lambda: session.turn_end(tools_requested=False)))
    trio.from_thread.run_sync(stop.set, trio_token=token)
    await loop.run_in_executor(None, thread.join)
    return samples


def _report(host: str, samples: Samples) -> None:
    for name, unsorted in samples.items():
        values = sorted(unsorted)
        p95 = values[int(0.95 * (len(values) - 1))]
        print(
            f"{host:8} {name:11} median {statistics.median(values) * 1e3:7.3f} ms"
            f"   p95 {p95 * 1e3:7.3f} ms   (n={len(values)})"
        )


def main() -> None:
    """Parse the options, run both hosts, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300, help="turns per host (default 300)")
    args = parser.parse_args()
    print(f"{args.turns} turns per host; wall time, noisy on a busy machine")
    _report("trio", trio.run(_trio_main, args.turns))
    _report("asyncio", asyncio.run(_asyncio_main(args.turns)))
    _report("thread", asyncio.run(_thread_main(args.turns)))


if __name__ == "__main__":
    main()
