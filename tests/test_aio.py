"""memrecall from asyncio (``memrecall.aio``): the lifecycle guarantees with an asyncio host.

Each test is a plain function that runs its scenario with ``asyncio.run``. Where a
test must hold the 100 ms initial wait open, the guest run gets a frozen
``MockClock`` (no autojump: trio's time only moves when the test says so), and the
test learns that the plan opened from a plan observer, never by sleeping.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Unpack

import attrs
import pytest
import trio
from trio.testing import MockClock

from memrecall import aio
from memrecall.actors.selector import SelectorRequest
from memrecall.actors.session import SessionBusyError, SessionClosedError
from memrecall.actors.settings import EngineKeywords
from memrecall.aio import AioSelector, AsyncioEngine
from memrecall.engine.plan import PlanOptions
from memrecall.events import (
    DiscardReason,
    Effect,
    Phase,
    PlanEvent,
    SelectionRecord,
    SelectorOutcome,
    SelectorSucceeded,
    Strategy,
    TelemetryRecord,
    UserQuery,
)
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_aio_test_engine

from .lifecycle_kit import DEPLOY_A, DEPLOY_C, POOL, WALL, terminals

SOURCE = StaticSource(POOL, scorer="reference")
TURN: contextvars.ContextVar[str] = contextvars.ContextVar("TURN", default="unset")


class PlanWatcher:
    """A plan observer (``opened``/``stepped``) that sets asyncio events."""

    def __init__(self) -> None:
        self.plan_opened = asyncio.Event()
        self.selector_answered = asyncio.Event()

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.plan_opened.set()

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        if isinstance(event, SelectorSucceeded):
            self.selector_answered.set()


@attrs.define
class AsyncioSelector:
    """The runtime's own asyncio selector: waits on asyncio objects, knows nothing of trio."""

    pick: Sequence[str] = ()
    release: asyncio.Event | None = None  # None: answer at once
    started: asyncio.Event = attrs.field(factory=asyncio.Event)
    cancelled: int = 0
    seen_turns: list[str] = attrs.field(factory=list)

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        asyncio.current_task()  # raises outside an asyncio task: proves where we run
        self.seen_turns.append(TURN.get())
        self.started.set()
        try:
            if self.release is not None:
                await self.release.wait()
            else:
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return [request.ids[request.paths.index(p)] for p in self.pick if p in request.paths]


def open_here(
    *,
    selector: AioSelector | None = None,
    scan_delay: float = 0.0,
    clock: trio.abc.Clock | None = None,
    **options: Unpack[EngineKeywords],
) -> AbstractAsyncContextManager[AsyncioEngine]:
    """The engine of every test here: the shared pool, a fixed wall clock, the scan on the
    loop (so timing follows the selector, not a thread)."""
    return open_aio_test_engine(
        SOURCE,
        selector=selector,
        wall_clock=lambda: WALL,
        scan_in_thread=False,
        scan_delay=scan_delay,
        clock=clock,
        **options,
    )


def never() -> asyncio.Event:
    """An event nobody sets: a selector waiting on it answers only if cancelled."""
    return asyncio.Event()


def test_the_fast_result_goes_at_once_while_an_asyncio_selector_is_slow() -> None:
    async def main() -> tuple[object, list[TelemetryRecord], int]:
        sink = MemorySink()
        selector = AsyncioSelector(release=never())
        async with open_here(
            selector=selector,
            sinks=[sink],
        ) as engine:
            session = await engine.open_session()
            block = await session.user_query("deploy")
            await selector.started.wait()  # the selector is still running now
        return block, list(sink.records), selector.cancelled

    block, records, cancelled = asyncio.run(main())
    assert block is not None
    assert getattr(block, "phase", None) is Phase.FAST
    # Closing the engine ended the plan (one terminal record) and cancelled the selector task.
    assert cancelled == 1
    (terminal,) = terminals(records)
    assert terminal.discard_reason is DiscardReason.SHUTDOWN
    assert terminal.selector_outcome is SelectorOutcome.CANCELLED


def test_the_initial_wait_ends_at_the_ceiling_when_the_scan_is_slow() -> None:
    async def main() -> tuple[object, float]:
        async with open_here(selector=None, scan_delay=60.0) as engine:
            session = await engine.open_session()
            began = time.monotonic()
            block = await session.user_query("deploy")
            return block, time.monotonic() - began

    block, waited = asyncio.run(main())
    assert block is None  # the scan (60 s) had not finished: the request goes without memory
    assert waited < 10.0  # structural: released by the 100 ms ceiling, not by the scan


def test_every_plan_records_exactly_one_terminal_event_under_asyncio() -> None:
    async def main() -> tuple[list[TelemetryRecord], int]:
        sink = MemorySink()
        watcher = PlanWatcher()
        selector = AsyncioSelector(pick=(DEPLOY_C.path,))
        async with open_here(
            selector=selector,
            sinks=[sink],
            observer=watcher,
        ) as engine:
            session = await engine.open_session()
            turns = 0
            # A tool-using turn: the model's pick follows at the tool result.
            await session.user_query("deploy")
            turns += 1
            await session.turn_end(tools_requested=True)
            await watcher.selector_answered.wait()
            extra = await session.tool_result()
            assert extra is not None
            assert extra.paths == (DEPLOY_C.path,)
            await session.turn_end(tools_requested=False)
            # A tool-free turn, a reset mid-turn, and a turn left open at close.
            for ending in ("tool_free", "reset", "open"):
                await session.user_query("rota")
                turns += 1
                if ending == "tool_free":
                    await session.turn_end(tools_requested=False)
                elif ending == "reset":
                    await session.reset()
        return list(sink.records), turns

    records, turns = asyncio.run(main())
    finals = terminals(records)
    assert len(finals) == turns
    model = [r for r in records if isinstance(r, SelectionRecord) and r.strategy is Strategy.MODEL]
    assert model
    assert model[0].selector_outcome is SelectorOutcome.OK


def test_cancelling_the_asyncio_caller_aborts_the_plan_and_its_selector_call() -> None:
    async def main() -> tuple[list[TelemetryRecord], int]:
        sink = MemorySink()
        selector = AsyncioSelector(release=never())
        async with open_here(
            selector=selector,
            sinks=[sink],
            wait_for_selector=True,  # the fast result is held: user_query waits on the selector
            clock=MockClock(),  # frozen: the 100 ms deadline never comes
        ) as engine:
            session = await engine.open_session()
            caller = asyncio.create_task(session.user_query("deploy"))
            await selector.started.wait()
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            # The session goes on: the next turn works.
            await session.turn_end(tools_requested=False)
            records = list(sink.records)
        return records, selector.cancelled

    records, cancelled = asyncio.run(main())
    assert cancelled == 1
    (terminal,) = terminals(records)
    assert terminal.discard_reason is DiscardReason.ABORT
    assert terminal.selector_outcome is SelectorOutcome.CANCELLED


def test_cancelled_while_the_scan_runs_the_plan_is_aborted_too() -> None:
    async def main() -> list[TelemetryRecord]:
        sink = MemorySink()
        watcher = PlanWatcher()
        async with open_here(
            selector=None,
            sinks=[sink],
            observer=watcher,
            scan_delay=1.0,
            clock=MockClock(),
        ) as engine:
            session = await engine.open_session()
            caller = asyncio.create_task(session.user_query("deploy"))
            await watcher.plan_opened.wait()
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            await session.close()
            return list(sink.records)

    records = asyncio.run(main())
    (terminal,) = terminals(records)
    assert terminal.discard_reason is DiscardReason.ABORT


def test_leaving_the_engine_shuts_every_plan_down_also_when_cancelled() -> None:
    async def body(sink: MemorySink, entered: asyncio.Event) -> None:
        async with open_here(
            selector=AsyncioSelector(release=never()),
            sinks=[sink],
        ) as engine:
            for _ in range(3):
                session = await engine.open_session()
                await session.user_query("deploy")
            entered.set()
            await never().wait()

    async def main() -> list[TelemetryRecord]:
        sink = MemorySink()
        entered = asyncio.Event()
        task = asyncio.create_task(body(sink, entered))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return list(sink.records)

    records = asyncio.run(main())
    finals = terminals(records)
    assert [r.discard_reason for r in finals] == [DiscardReason.SHUTDOWN] * 3


def test_a_second_concurrent_user_query_is_refused_and_the_first_goes_on() -> None:
    async def main() -> tuple[object, object]:
        selector = AsyncioSelector(pick=(DEPLOY_A.path,), release=never())
        async with open_here(
            selector=selector,
            wait_for_selector=True,
            clock=MockClock(),
        ) as engine:
            session = await engine.open_session()
            first = asyncio.create_task(session.user_query("deploy"))
            await selector.started.wait()
            second = asyncio.create_task(session.user_query("rota"))
            assert selector.release is not None
            selector.release.set()
            answers = await asyncio.gather(first, second, return_exceptions=True)
            return answers[0], answers[1]

    first, second = asyncio.run(main())
    assert isinstance(second, SessionBusyError)
    assert first is not None  # the first caller got its block, not a silent None


def test_the_callers_context_and_correlation_reach_the_selector_and_the_sinks() -> None:
    @attrs.define
    class Correlating:
        seen: list[tuple[str, object, str]] = attrs.field(factory=list)

        def emit_correlated(self, record: object, correlation: object) -> None:
            self.seen.append((type(record).__name__, correlation, TURN.get()))

    async def main() -> tuple[list[tuple[str, object, str]], list[str]]:
        sink = Correlating()
        selector = AsyncioSelector(pick=(DEPLOY_A.path,))
        watcher = PlanWatcher()
        async with open_here(
            selector=selector,
            sinks=[sink],
            observer=watcher,
        ) as engine:
            session = await engine.open_session()
            TURN.set("turn-1")
            await session.user_query("deploy", correlation=("span", 1))
            await watcher.selector_answered.wait()
            TURN.set("turn-2")
            await session.user_query("rota", correlation=("span", 2))
            await session.turn_end(tools_requested=False)
        return sink.seen, selector.seen_turns

    seen, selector_turns = asyncio.run(main())
    assert selector_turns == ["turn-1", "turn-2"][: len(selector_turns)]
    assert selector_turns
    for _kind, correlation, turn in seen:
        assert correlation == ("span", int(turn.removeprefix("turn-")))
    assert {turn for _, _, turn in seen} == {"turn-1", "turn-2"}


def test_a_bare_coroutine_function_is_a_selector_and_errors_stay_with_the_caller() -> None:
    async def pick_nothing(request: SelectorRequest) -> Sequence[str]:
        await asyncio.sleep(0)
        return []

    async def main() -> None:
        async with aio.open_engine(SOURCE, selector=pick_nothing) as engine:
            session = await engine.open_session()
            with pytest.raises(TypeError, match="text"):
                await session.user_query(3)  # type: ignore[arg-type]
            await session.close()
            with pytest.raises(SessionClosedError):
                await session.user_query("deploy")

    asyncio.run(main())


def test_an_opening_error_reaches_the_asyncio_caller() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="scorer"):
            async with aio.open_engine(SOURCE, scorer="bm25"):  # type: ignore[arg-type]
                pass  # pragma: no cover - must not be reached

    asyncio.run(main())


def test_two_engines_share_one_guest_run_on_a_loop() -> None:
    async def main() -> tuple[object, object]:
        async with aio.open_engine(SOURCE) as one, aio.open_engine(SOURCE) as two:
            a = await (await one.open_session()).user_query("deploy")
            b = await (await two.open_session()).user_query("deploy")
        return a, b

    a, b = asyncio.run(main())
    assert a is not None
    assert b is not None
