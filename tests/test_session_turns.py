"""Per-turn rules of a trio session: one user_query at a time, correlation and context for sinks."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence

import attrs
import pytest
import trio
from trio.testing import MockClock

from memrecall.actors import SimulatedSelector
from memrecall.actors.selector import SelectorRequest
from memrecall.actors.session import SessionBusyError, SessionMisuseError
from memrecall.events import Phase, TelemetryRecord
from memrecall.simulation.eventlog import EventLog
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_test_engine

from .lifecycle_kit import DEPLOY_A, POOL, ROTA, WALL, choose, harness, terminals

TURN: contextvars.ContextVar[str] = contextvars.ContextVar("TURN", default="unset")


async def test_a_second_user_query_while_the_first_waits_is_refused(
    autojump_clock: MockClock,
) -> None:
    # The scan takes 80 ms: the first call is still in its initial wait at 40 ms.
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=0.080) as h:
        session = await h.engine.open_session()
        first: list[object] = []

        async def turn() -> None:
            first.append(await session.user_query("deploy"))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn)
            await trio.sleep(0.040)
            with pytest.raises(SessionBusyError, match="user_query"):
                await session.user_query("rota")
        # The first caller was not disturbed: it got its fast result, not a silent None.
        (block,) = first
        assert block is not None
        assert getattr(block, "phase", None) is Phase.FAST
        # Refused means refused: no plan was started or cancelled for the second call.
        assert terminals(h.records) == []
        # Once the first call has returned, the next turn starts as usual.
        second = await session.user_query("rota")
        assert second is not None
        assert second.paths == (ROTA.path,)
    assert issubclass(SessionBusyError, SessionMisuseError)


async def test_a_cancelled_user_query_frees_the_session_for_the_next_turn(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=0.080) as h:
        session = await h.engine.open_session()
        with trio.move_on_after(0.010):
            await session.user_query("deploy")
        block = await session.user_query("rota")
        assert block is not None


@attrs.define
class Correlating:
    """A sink that wants to know the turn: emit_correlated only (no emit)."""

    seen: list[tuple[TelemetryRecord, object, str]] = attrs.field(factory=list)

    def emit_correlated(self, record: TelemetryRecord, correlation: object) -> None:
        self.seen.append((record, correlation, TURN.get()))


@attrs.define
class ContextSelector:
    """Records the ContextVar it sees, then picks DEPLOY_A after ``latency``."""

    turns: list[str] = attrs.field(factory=list)

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        self.turns.append(TURN.get())
        await trio.sleep(0.3)
        return choose(DEPLOY_A)(request)


async def test_each_record_reaches_the_sinks_with_its_turns_correlation_and_context(
    autojump_clock: MockClock,
) -> None:
    correlating = Correlating()
    plain = MemorySink()  # a sink with emit() only still works
    log = EventLog(options={}, seed=0)
    selector = ContextSelector()
    marks = [object(), object()]
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        selector=selector,
        sinks=[correlating, plain],
        observer=log,
        wall_clock=lambda: WALL,
        scan_in_thread=False,
    ) as engine:
        session = await engine.open_session()

        async def turn(name: str, text: str, mark: object) -> None:
            TURN.set(name)  # set by the runtime around its call, in its own task
            await session.user_query(text, correlation=mark)
            await session.turn_end(tools_requested=True)
            await trio.sleep(1.0)
            await session.tool_result()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn, "turn-1", "deploy", marks[0])
        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn, "turn-2", "rota", marks[1])
        await session.turn_end(tools_requested=False)

    assert [r for r, _, _ in correlating.seen] == plain.records
    assert len(terminals(plain.records)) == 2
    expected = {"turn-1": marks[0], "turn-2": marks[1]}
    for _record, correlation, turn_name in correlating.seen:
        assert correlation is expected[turn_name]
    assert {name for _, _, name in correlating.seen} == {"turn-1", "turn-2"}
    # The selector ran in the turn's context too.
    assert selector.turns == ["turn-1", "turn-2"]
    # The correlation value is never stored: not in the records, not in the event log.
    for record, _, _ in correlating.seen:
        assert "correlation" not in type(record).__struct_fields__
    assert b"correlation" not in log.getvalue()


async def test_a_turn_without_correlation_reaches_emit_correlated_with_none(
    autojump_clock: MockClock,
) -> None:
    # The default correlation is None; a turn without one still reaches emit_correlated.
    correlating = Correlating()
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        sinks=[correlating],
        wall_clock=lambda: WALL,
        scan_in_thread=False,
    ) as engine:
        session = await engine.open_session()
        await session.user_query("deploy")
    assert correlating.seen
    assert all(correlation is None for _, correlation, _ in correlating.seen)
    assert all(name == "unset" for _, _, name in correlating.seen)
