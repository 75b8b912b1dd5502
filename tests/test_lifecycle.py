"""The recall lifecycle through the real actors, on trio's MockClock (autojump).

Each test mirrors a case of the upstream client tests (reference section 10.7),
translated to memrecall's API, with exact virtual times.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import msgspec
import pytest
import trio
import trio.testing
from trio.testing import MockClock

from memrecall.actors import SessionMisuseError, SimulatedSelector
from memrecall.actors.selector import SelectorRequest
from memrecall.actors.session import SessionClosedError
from memrecall.engine.plan import Plan, Step, step
from memrecall.events import CallSelector, Phase, PlanEvent, SelectorOutcome
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_test_engine

from .lifecycle_kit import (
    DEPLOY_A,
    DEPLOY_B,
    DEPLOY_C,
    POOL,
    ROTA,
    WALL,
    choose,
    deliveries,
    elapsed,
    fast_records,
    harness,
    terminals,
)


async def test_fast_result_on_a_tool_free_turn_while_the_selector_is_in_flight(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0)) as h:
        session = await h.engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("deploy")
        assert elapsed(t0) == 0.0
        assert block is not None
        assert block.phase is Phase.FAST
        assert block.paths == (DEPLOY_A.path, DEPLOY_B.path)
        assert "## Relevant memory" in block.prompt
        assert "Deploy checklist (deploy-a.md)" in block.prompt
        await session.turn_end(tools_requested=False)
    assert deliveries(h.records) == [
        ("fast", "initial", None, "heuristic", 2),
        ("refined", "discarded", "no_safe_delivery_point", "none", 0),
    ]


async def test_the_initial_wait_ends_when_the_fast_result_arrives(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=0.030) as h:
        session = await h.engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("deploy")
        assert elapsed(t0) == 0.030
        assert block is not None
        assert block.phase is Phase.FAST


async def test_fast_result_wins_even_when_the_selector_settles_inside_the_budget(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.005, choose=choose(DEPLOY_C))
    async with harness(selector=selector, scan_delay=0.010) as h:
        session = await h.engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("deploy")
        assert elapsed(t0) == 0.010
        assert block is not None
        assert block.phase is Phase.FAST
        assert DEPLOY_C.path not in block.paths
        assert fast_records(h.records)[0].latency_ms == 10.0


async def test_refined_result_arrives_at_the_tool_result_minus_fast_documents(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.600, choose=choose(DEPLOY_A, DEPLOY_C))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        fast = await session.user_query("deploy")
        assert fast is not None
        assert DEPLOY_A.path in fast.paths
        await trio.sleep(1.0)
        refined = await session.tool_result()
        assert refined is not None
        assert refined.phase is Phase.REFINED
        assert refined.paths == (DEPLOY_C.path,)
        assert "deploy-a.md" not in refined.prompt
        assert "deploy-c.md" in refined.prompt
    assert deliveries(h.records) == [
        ("fast", "initial", None, "heuristic", 2),
        ("refined", "tool_result", None, "model", 1),
    ]


async def test_all_overlap_at_the_tool_result_is_already_delivered(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.600, choose=choose(DEPLOY_B))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        await trio.sleep(1.0)
        assert await session.tool_result() is None
    assert terminals(h.records)[0].discard_reason is not None
    assert deliveries(h.records)[-1] == ("refined", "discarded", "already_delivered", "model", 1)


async def test_tool_free_turn_with_a_fully_fast_delivered_result_is_already_delivered(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.600, choose=choose(DEPLOY_A, DEPLOY_B))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        await trio.sleep(1.0)
        await session.turn_end(tools_requested=False)
    assert deliveries(h.records)[-1] == ("refined", "discarded", "already_delivered", "model", 2)


async def test_partial_overlap_keeps_no_safe_delivery_point(autojump_clock: MockClock) -> None:
    selector = SimulatedSelector(latency=0.600, choose=choose(DEPLOY_A, DEPLOY_C))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        await trio.sleep(1.0)
        await session.turn_end(tools_requested=False)
    assert deliveries(h.records)[-1] == (
        "refined",
        "discarded",
        "no_safe_delivery_point",
        "model",
        2,
    )


async def test_no_fast_result_when_the_turn_is_cancelled_inside_the_window(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=0.080) as h:
        session = await h.engine.open_session()
        got: list[object] = []
        t0 = trio.current_time()

        async def turn() -> None:
            got.append(await session.user_query("deploy"))
            got.append(elapsed(t0))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(turn)
            await trio.sleep(0.050)
            await session.abort()
        await trio.sleep(1.0)
        assert got == [None, 0.050]
        assert session.surfaced == frozenset()
    assert deliveries(h.records) == [("refined", "discarded", "abort", "none", 0)]


async def test_a_fast_result_never_crosses_a_query_boundary(autojump_clock: MockClock) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=0.080) as h:
        session = await h.engine.open_session()
        # The first caller stops waiting at 40 ms (its plan goes on scanning); the next
        # turn starts while that scan still runs.
        with trio.move_on_after(0.040):
            await session.user_query("deploy")
        second = await session.user_query("rota")
        assert second is not None
        assert second.paths == (ROTA.path,)
    assert deliveries(h.records)[0] == ("refined", "discarded", "new_query", "none", 0)


async def test_surfaced_documents_are_excluded_from_later_recalls_until_reset(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0)) as h:
        session = await h.engine.open_session()
        first = await session.user_query("deploy")
        assert first is not None
        assert session.surfaced == {DEPLOY_A.path, DEPLOY_B.path}
        second = await session.user_query("deploy")
        assert second is not None
        assert second.paths == (DEPLOY_C.path,)
        await session.reset()
        assert session.surfaced == frozenset()
        third = await session.user_query("deploy")
        assert third is not None
        assert third.paths == (DEPLOY_A.path, DEPLOY_B.path)


async def test_the_wait_is_held_for_exactly_the_budget_when_nothing_settles(
    autojump_clock: MockClock,
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0), scan_delay=2.0) as h:
        session = await h.engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("deploy")
        assert block is None
        assert elapsed(t0) == 0.100


async def test_a_recall_settling_inside_the_budget_without_fast_result_is_delivered_initially(
    autojump_clock: MockClock,
) -> None:
    # "approval" matches nothing lexically, so there is no fast result.
    selector = SimulatedSelector(latency=0.010, choose=choose(DEPLOY_C))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        t0 = trio.current_time()
        block = await session.user_query("approval")
        assert elapsed(t0) == 0.010
        assert block is not None
        assert block.phase is Phase.REFINED
        assert block.paths == (DEPLOY_C.path,)
    assert deliveries(h.records) == [("refined", "initial", None, "model", 1)]


async def test_an_empty_selection_is_discarded_as_no_relevant_results(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.010, choose=lambda request: [])
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        assert await session.user_query("approval") is None
    assert deliveries(h.records) == [("refined", "discarded", "no_relevant_results", "none", 0)]


async def test_a_late_result_is_delivered_at_the_first_tool_result_with_zero_wait(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.300, choose=choose(ROTA))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        assert await session.user_query("approval") is None
        t0 = trio.current_time()
        assert await session.tool_result() is None  # not settled yet: nothing, no wait
        assert elapsed(t0) == 0.0
        await session.turn_end(tools_requested=True)
        await trio.sleep(0.5)
        block = await session.tool_result()
        assert block is not None
        assert block.paths == (ROTA.path,)
    assert deliveries(h.records) == [("refined", "tool_result", None, "model", 1)]


@pytest.mark.parametrize(
    ("action", "reason"),
    [("reset", "reset"), ("abort", "abort"), ("close", "shutdown")],
)
async def test_cancellations_record_their_reason(
    autojump_clock: MockClock, action: str, reason: str
) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0)) as h:
        session = await h.engine.open_session()
        await session.user_query("approval")
        await getattr(session, action)()
        await trio.sleep(10.0)
    assert deliveries(h.records) == [("refined", "discarded", reason, "none", 0)]


async def test_engine_exit_shuts_pending_plans_down(autojump_clock: MockClock) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0)) as h:
        session = await h.engine.open_session()
        await session.user_query("approval")
    assert deliveries(h.records) == [("refined", "discarded", "shutdown", "none", 0)]
    with pytest.raises(SessionClosedError):
        await session.user_query("again")


async def test_host_cancellation_still_records_one_terminal_per_plan(
    autojump_clock: MockClock,
) -> None:
    with trio.move_on_after(0.5):
        async with harness(selector=SimulatedSelector(latency=5.0)) as h:
            first = await h.engine.open_session()
            second = await h.engine.open_session()
            await first.user_query("deploy")
            await second.user_query("approval")
            await trio.sleep_forever()
    assert sorted(deliveries(h.records)) == [
        ("fast", "initial", None, "heuristic", 2),
        ("refined", "discarded", "shutdown", "none", 0),
        ("refined", "discarded", "shutdown", "none", 0),
    ]


async def test_selector_failure_falls_back_to_the_heuristic_top_five(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.2, fail=RuntimeError("network down"))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        await trio.sleep(1.0)
        block = await session.tool_result()
        assert block is not None
        assert block.paths == (DEPLOY_C.path,)  # the top five minus the two fast documents
    assert deliveries(h.records)[-1] == ("refined", "tool_result", None, "heuristic", 1)


async def test_selector_timeout_at_thirty_seconds_falls_back(autojump_clock: MockClock) -> None:
    async with harness(selector=SimulatedSelector(latency=40.0)) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        t0 = trio.current_time()
        await trio.sleep(29.9)
        assert await session.tool_result() is None
        await trio.sleep(0.2)
        block = await session.tool_result()
        assert block is not None
        assert elapsed(t0) == 30.1
    assert deliveries(h.records)[-1] == ("refined", "tool_result", None, "heuristic", 1)


@pytest.mark.parametrize(
    "answer",
    [
        "not a list",
        ["/mem/project/unknown.md"],
        [DEPLOY_A.path, DEPLOY_B.path, DEPLOY_C.path, ROTA.path, DEPLOY_A.path, DEPLOY_B.path],
    ],
)
async def test_invalid_selector_answers_fall_back(
    autojump_clock: MockClock, answer: object
) -> None:
    selector = SimulatedSelector(latency=0.2, choose=lambda request: answer)  # type: ignore[arg-type,return-value]
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("deploy")
        await trio.sleep(1.0)
        await session.tool_result()
    assert deliveries(h.records)[-1][3] == "heuristic"


async def test_without_a_selector_the_heuristic_result_is_delivered_initially(
    autojump_clock: MockClock,
) -> None:
    async with harness(model=False) as h:
        session = await h.engine.open_session()
        block = await session.user_query("deploy")
        assert block is not None
        assert block.phase is Phase.REFINED
        assert block.paths == (DEPLOY_A.path, DEPLOY_B.path, DEPLOY_C.path)
    assert deliveries(h.records) == [("refined", "initial", None, "heuristic", 3)]
    assert [type(r).__name__ for r in h.records] == ["SelectionRecord", "DeliveryRecord"]


async def test_a_tool_result_before_any_query_is_misuse(autojump_clock: MockClock) -> None:
    async with harness() as h:
        session = await h.engine.open_session()
        with pytest.raises(SessionMisuseError, match="before any user_query"):
            await session.tool_result()


async def test_a_turn_that_requested_tools_keeps_the_plan_pending(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.5, choose=choose(ROTA))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        await session.user_query("approval")
        await session.turn_end(tools_requested=True)
        assert terminals(h.records) == []
        await trio.sleep(1.0)
        assert await session.tool_result() is not None
        await session.turn_end(tools_requested=False)
    assert len(terminals(h.records)) == 1


async def test_sessions_do_not_share_surfaced_documents(autojump_clock: MockClock) -> None:
    async with harness(selector=SimulatedSelector(latency=5.0)) as h:
        one = await h.engine.open_session()
        two = await h.engine.open_session()
        a = await one.user_query("deploy")
        b = await two.user_query("deploy")
        assert a is not None
        assert b is not None
        assert a.paths == b.paths


async def test_the_scan_runs_in_a_worker_thread_by_default() -> None:
    # Without the mock-clock opt-out, the deterministic pass runs off the event loop.
    from memrecall.sources.source import StaticSource
    from memrecall.testing import open_test_engine

    from .lifecycle_kit import POOL, WALL

    seen: list[bool] = []

    class Spy(StaticSource):
        def snapshot(self):  # type: ignore[no-untyped-def]
            try:
                trio.lowlevel.current_task()
            except RuntimeError:
                seen.append(True)  # no trio task here: we are in a worker thread
            return super().snapshot()

    async with open_test_engine(Spy(POOL), wall_clock=lambda: WALL) as engine:
        session = await engine.open_session()
        await session.user_query("deploy")
    assert seen == [True]


async def test_one_terminal_record_per_plan_across_many_turns(autojump_clock: MockClock) -> None:
    selector = SimulatedSelector(latency=0.3, choose=choose(DEPLOY_C, ROTA))
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        for query in ("deploy", "rota", "approval", "deploy rota"):
            await session.user_query(query)
            await trio.sleep(0.5)
            await session.tool_result()
            await session.turn_end(tools_requested=False)
    assert len(terminals(h.records)) == 4


async def test_a_blank_query_settles_empty_without_calling_the_selector(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.2)
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        assert await session.user_query("   ") is None
    assert selector.calls == 0
    assert deliveries(h.records) == [("refined", "discarded", "no_relevant_results", "none", 0)]


@attrs.define
class _Watched:
    """A selector that answers after 20 s, and notes when its call was cancelled."""

    cancelled_at: list[float] = attrs.field(factory=list)

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        try:
            await trio.sleep(20.0)
        except trio.Cancelled:
            self.cancelled_at.append(trio.current_time())
            raise
        return []


@pytest.mark.parametrize("end", ["abort", "reset", "turn_end", "new_query"])
async def test_a_plan_that_ends_stops_its_selector_call_at_once(
    autojump_clock: MockClock, end: str
) -> None:
    """The plan's work is cancelled when it ends (the actor's finally; no effect needed)."""
    selector = _Watched()
    async with harness(selector=selector) as h:
        session = await h.engine.open_session()
        start = trio.current_time()
        await session.user_query("deploy")
        await trio.sleep(0.5)
        if end == "abort":
            await session.abort()
        elif end == "reset":
            await session.reset()
        elif end == "turn_end":
            await session.turn_end(tools_requested=False)
        else:
            await session.user_query("rota")
        await trio.testing.wait_all_tasks_blocked()
        assert selector.cancelled_at, "the selector call outlived its plan"
        assert selector.cancelled_at[0] - start == pytest.approx(0.5)


def _strip_manifest(plan: Plan, event: PlanEvent, now: float) -> Step:
    """A planted bug: the plan asks for a selector call without naming the manifest."""
    plan, effects = step(plan, event, now)
    return plan, [
        msgspec.structs.replace(e, ids=()) if isinstance(e, CallSelector) else e for e in effects
    ]


async def test_the_selector_is_never_shown_a_manifest_the_log_does_not_name(
    autojump_clock: MockClock,
) -> None:
    selector = SimulatedSelector(latency=0.5)
    sink = MemorySink()
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        selector=selector,
        sinks=[sink],
        wall_clock=lambda: WALL,
        scan_in_thread=False,
        step_function=_strip_manifest,
    ) as engine:
        session = await engine.open_session()
        await session.user_query("deploy")
        await session.turn_end(tools_requested=True)
        await trio.sleep(1.0)
        await session.tool_result()
    assert selector.calls == 0
    (terminal,) = terminals(sink.records)
    assert terminal.selector_outcome is SelectorOutcome.ERROR
