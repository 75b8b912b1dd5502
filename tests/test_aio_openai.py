"""An asyncio program with memrecall.aio and the OpenAI-compatible selector on loopback.

The fake chat-completions server (:mod:`tests.fake_openai`) runs in a thread; the
tests wait for what it saw (a request, a hang-up) through its threading events,
from an executor thread, never by sleeping.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from trio.testing import MockClock

from memrecall import aio
from memrecall.events import (
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Phase,
    SelectorOutcome,
    Strategy,
)
from memrecall.selectors import OpenAICompatibleSelector
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import SelectorAnswered, open_aio_test_engine

from .fake_openai import Behaviour, FakeOpenAI, serve
from .test_openai_selector import QUERY, pick_last, write_tree


def selector(server: FakeOpenAI) -> OpenAICompatibleSelector:
    return OpenAICompatibleSelector(base_url=server.base_url, model="fake-model")


def test_fast_block_first_then_the_models_pick_at_the_tool_result(tmp_path: Path) -> None:
    tree = write_tree(tmp_path)
    sink = MemorySink()

    async def main(server: FakeOpenAI) -> tuple[object, object]:
        done = SelectorAnswered(asyncio.Event())
        async with open_aio_test_engine(
            tree,
            selector=selector(server),
            sinks=[sink],
            catalog_cache=None,
            observer=done,
            clock=MockClock(),  # standing still: the fast block comes when the scan is done
        ) as engine:
            session = await engine.open_session()
            first = await session.user_query(QUERY)
            await session.turn_end(tools_requested=True)
            await done.event.wait()
            later = await session.tool_result()
            await session.turn_end(tools_requested=False)
        return first, later

    # 2 s: well after the 100 ms window even on a loaded machine, so the first block is FAST
    with serve(Behaviour(delay=2.0, answer=pick_last)) as server:
        first, later = asyncio.run(main(server))
    assert isinstance(first, aio.MemoryBlock)
    assert first.phase is Phase.FAST  # before the first request, while the model thinks
    assert first.paths[0].endswith("kafka-lag.md")
    assert isinstance(later, aio.MemoryBlock)
    assert later.phase is Phase.REFINED
    assert not set(later.paths) & set(first.paths)
    (terminal,) = [r for r in sink.records if isinstance(r, DeliveryRecord) and r.terminal]
    assert terminal.delivery_point is DeliveryPoint.TOOL_RESULT
    assert terminal.strategy is Strategy.MODEL
    assert terminal.selector_outcome is SelectorOutcome.OK


def test_cancelling_the_asyncio_caller_closes_the_http_request(tmp_path: Path) -> None:
    tree = write_tree(tmp_path)
    sink = MemorySink()

    async def main(server: FakeOpenAI) -> bool:
        async with open_aio_test_engine(
            tree,
            selector=selector(server),
            sinks=[sink],
            catalog_cache=None,
            wait_for_selector=True,  # the first request waits for the model ...
            clock=MockClock(),  # ... and trio's clock stands still: only the cancel ends it
        ) as engine:
            session = await engine.open_session()
            caller = asyncio.create_task(session.user_query(QUERY))
            assert await asyncio.to_thread(server.received.wait, 5.0)
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            return await asyncio.to_thread(server.disconnected.wait, 5.0)

    with serve(Behaviour(delay=10.0)) as server:  # answers only if the client never hangs up
        hung_up = asyncio.run(main(server))
        assert hung_up  # the endpoint saw the client hang up while it was still delaying
        assert not server.answered.is_set()
    (terminal,) = [r for r in sink.records if isinstance(r, DeliveryRecord) and r.terminal]
    assert terminal.discard_reason is DiscardReason.ABORT
    assert terminal.selector_outcome is SelectorOutcome.CANCELLED
