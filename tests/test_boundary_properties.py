"""Garbage calls never hurt anyone else (issue 10), as a property over drawn scripts.

A drawn script interleaves valid runtime calls on three sessions with garbage:
wrong argument types and values, calls on a closed session, ``tool_result()``
before any query, bad session ids. Every garbage call must fail in its caller
with the expected error; the engine must run to the end; every plan must have
exactly one terminal record; and each valid call must return what it returns
when the same script runs without the garbage (a differential oracle).

Runs on trio's MockClock with ``scan_in_thread=False``; under Hypothesis trio's
scheduler is seeded, so an example replays. The example count comes from the
active profile (tests/conftest.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import MockClock

from memrecall.actors import (
    Engine,
    Session,
    SessionClosedError,
    SessionMisuseError,
    SimulatedSelector,
)
from memrecall.engine.plan import PlanOptions
from memrecall.events import DeliveryRecord, Effect, EmitTelemetry, PlanEvent, UserQuery
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_test_engine

from .lifecycle_kit import POOL, WALL

VALID_SESSIONS = 3
WORDS = ["deploy", "rollback", "rota", "tersely", "sign-off", "zzz"]

Garbage = Callable[[Engine, Session, Session, Session], Awaitable[object]]
"""A garbage call, given the engine, a valid session, a closed session and a fresh one."""

GARBAGE: list[tuple[Garbage, type[Exception]]] = [
    (lambda e, s, c, f: s.user_query(None), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query(42), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query(b"deploy"), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query(["deploy"]), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query("deploy \udcff"), ValueError),
    (lambda e, s, c, f: s.user_query("deploy", recent_tools="bash"), TypeError),
    (lambda e, s, c, f: s.user_query("deploy", recent_tools=[1]), TypeError),  # type: ignore[list-item]
    (lambda e, s, c, f: s.user_query("deploy", recent_tools=None), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query("deploy", query_id=""), ValueError),
    (lambda e, s, c, f: s.user_query("deploy", query_id=1.5), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.user_query("deploy", query_id="x" * 500), ValueError),
    (lambda e, s, c, f: s.turn_end(tools_requested=None), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.turn_end(tools_requested=0), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.turn_end(tools_requested="true"), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: s.tool_result(1), TypeError),  # type: ignore[call-arg]
    (lambda e, s, c, f: c.user_query("deploy"), SessionClosedError),
    (lambda e, s, c, f: c.tool_result(), SessionClosedError),
    (lambda e, s, c, f: c.reset(), SessionClosedError),
    (lambda e, s, c, f: f.tool_result(), SessionMisuseError),
    (lambda e, s, c, f: e.open_session(""), ValueError),
    (lambda e, s, c, f: e.open_session(7), TypeError),  # type: ignore[arg-type]
    (lambda e, s, c, f: e.open_session(s.session_id), ValueError),
]

valid_steps = st.one_of(
    st.tuples(st.just("query"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
    st.tuples(st.just("wait"), st.sampled_from([0.01, 0.05, 0.2, 0.5, 2.0])),
    st.tuples(st.just("tool"), st.none()),
    st.tuples(st.just("turn_end"), st.booleans()),
    st.tuples(st.just("abort"), st.none()),
    st.tuples(st.just("reset"), st.none()),
)
steps = st.one_of(
    st.tuples(st.just("valid"), st.integers(0, VALID_SESSIONS - 1), valid_steps),
    st.tuples(
        st.just("garbage"), st.integers(0, VALID_SESSIONS - 1), st.integers(0, len(GARBAGE) - 1)
    ),
)


class TerminalCounter:
    """A PlanObserver counting, per plan, the terminal records its transitions emit."""

    def __init__(self) -> None:
        self.terminals: Counter[str] = Counter()

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.count(plan_id, effects)

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        self.count(plan_id, effects)

    def count(self, plan_id: str, effects: list[Effect]) -> None:
        self.terminals[plan_id] += 0  # every opened plan appears
        for effect in effects:
            record = effect.record if isinstance(effect, EmitTelemetry) else None
            if isinstance(record, DeliveryRecord) and record.terminal:
                self.terminals[plan_id] += 1


def run_script(
    script: list[tuple[str, int, Any]], *, garbage: bool, latency: float
) -> tuple[list[object], TerminalCounter]:
    """Run ``script`` (its garbage too if ``garbage``); return each valid call's result."""
    sink = MemorySink()
    observer = TerminalCounter()
    results: list[object] = []

    async def main() -> None:
        async with open_test_engine(
            StaticSource(POOL, scorer="reference"),
            selector=SimulatedSelector(latency=latency),
            sinks=[sink],
            observer=observer,
            wall_clock=lambda: WALL,
            scan_in_thread=False,
        ) as engine:
            sessions = [await engine.open_session(f"v{i}") for i in range(VALID_SESSIONS)]
            closed = await engine.open_session("closed")
            await closed.close()
            fresh = await engine.open_session("fresh")
            for kind, index, arg in script:
                session = sessions[index]
                if kind == "garbage":
                    if garbage:
                        call, error = GARBAGE[arg]
                        try:
                            await call(engine, session, closed, fresh)
                        except error:
                            pass
                        else:  # pragma: no cover - a failing example says so
                            raise AssertionError(f"garbage call {arg} did not raise {error}")
                    continue
                results.append(await valid_call(session, arg))

    trio.run(main, clock=MockClock(autojump_threshold=0))
    assert sum(r.terminal for r in sink.records if isinstance(r, DeliveryRecord)) == sum(
        observer.terminals.values()
    )
    return results, observer


async def valid_call(session: Session, step: tuple[str, Any]) -> object:
    """Carry out one valid step; return what the runtime would see."""
    kind, arg = step
    if kind == "query":
        return paths_of(await session.user_query(" ".join(arg)))
    if kind == "wait":
        await trio.sleep(arg)
    elif kind == "tool":
        if session._queries == 0:
            return "skipped"
        return paths_of(await session.tool_result())
    elif kind == "turn_end":
        await session.turn_end(tools_requested=arg)
    elif kind == "abort":
        await session.abort()
    else:
        await session.reset()
    return None


def paths_of(block: object) -> object:
    """A block's phase and paths (comparable across runs), or None."""
    if block is None:
        return None
    return (block.phase, block.paths)  # type: ignore[attr-defined]


@settings(deadline=None)
@given(
    script=st.lists(steps, min_size=1, max_size=30),
    latency=st.sampled_from([0.05, 0.3, 1.0, 31.0]),
)
def test_garbage_calls_never_hurt_the_engine_or_other_calls(
    script: list[tuple[str, int, Any]], latency: float
) -> None:
    with_garbage, observer = run_script(script, garbage=True, latency=latency)
    without, _ = run_script(script, garbage=False, latency=latency)
    # The engine ran to the end (trio.run returned) and valid calls got exactly the
    # deliveries they get when nobody sends garbage.
    assert with_garbage == without
    queries = sum(1 for kind, _, arg in script if kind == "valid" and arg[0] == "query")
    assert len(observer.terminals) == queries  # garbage never opened a plan
    assert all(count == 1 for count in observer.terminals.values())  # each ended once
