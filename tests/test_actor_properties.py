"""Property tests of the real actors on a virtual clock, with drawn schedules.

Each example runs a whole engine under ``trio.testing.MockClock`` (autojump):
a drawn script of user queries, waits, tool results, turn ends, aborts and
resets against a selector with drawn latency (0-40 s, so some calls hit the
30 s ceiling) and drawn answers. A recording observer attributes every effect
to its plan, so the invariants can be checked per plan.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import attrs
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import MockClock

from memrecall.actors import MemoryBlock, SimulatedSelector, open_engine
from memrecall.actors.selector import SelectorRequest
from memrecall.engine.plan import PlanOptions
from memrecall.events import (
    Deliver,
    DeliveryRecord,
    Effect,
    EmitTelemetry,
    MemoryType,
    Phase,
    PlanEvent,
    UserQuery,
)
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink, telemetry_codec

from .lifecycle_kit import WALL, doc

WORDS = ["deploy", "rollback", "postgres", "dashboard", "latency", "rota", "vault", "freeze"]
POOL = tuple(
    doc(
        f"m{i}",
        title=f"{WORDS[i % len(WORDS)]} notes {i}",
        description=f"about {WORDS[(i * 3) % len(WORDS)]}",
        body=f"{WORDS[(i * 5) % len(WORDS)]} details",
        kind=list(MemoryType)[i % 4],
        mtime=WALL - 1000 * i,
    )
    for i in range(14)
)


@attrs.define
class Recorder:
    """A PlanObserver that keeps everything, per plan."""

    effects: dict[str, list[Effect]] = attrs.field(factory=lambda: defaultdict(list))
    events: dict[str, list[PlanEvent]] = attrs.field(factory=lambda: defaultdict(list))
    order: list[str] = attrs.field(factory=list)

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.order.append(plan_id)
        self.effects[plan_id].extend(effects)

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        self.events[plan_id].append(event)
        self.effects[plan_id].extend(effects)


steps = st.one_of(
    st.tuples(st.just("query"), st.lists(st.sampled_from([*WORDS, "zzz"]), max_size=3)),
    st.tuples(st.just("wait"), st.sampled_from([0.01, 0.05, 0.1, 0.5, 2.0, 31.0])),
    st.tuples(st.just("tool"), st.none()),
    st.tuples(st.just("turn_end"), st.booleans()),
    st.tuples(st.just("abort"), st.none()),
    st.tuples(st.just("reset"), st.none()),
)


@settings(deadline=None)
@given(
    script=st.lists(steps, min_size=1, max_size=14),
    latency=st.floats(0.0, 40.0),
    scan_delay=st.sampled_from([0.0, 0.03, 0.15]),
    picks=st.lists(st.integers(0, 20), max_size=6),
    fail=st.booleans(),
    sessions=st.integers(1, 2),
)
def test_actor_invariants_hold_for_any_schedule(  # noqa: PLR0917
    script: list[tuple[str, Any]],
    latency: float,
    scan_delay: float,
    picks: list[int],
    fail: bool,
    sessions: int,
) -> None:
    recorder = Recorder()
    sink = MemorySink()
    returned: dict[str, list[tuple[str, MemoryBlock]]] = defaultdict(list)

    def choose(request: SelectorRequest) -> list[str]:
        paths = request.paths
        return list(dict.fromkeys(paths[p % len(paths)] for p in picks))[: request.limit]

    selector = SimulatedSelector(
        latency=latency, choose=choose, fail=RuntimeError("boom") if fail else None
    )

    async def main() -> None:
        async with open_engine(
            StaticSource(POOL),
            selector=selector,
            sinks=[sink],
            observer=recorder,
            wall_clock=lambda: WALL,
            scan_in_thread=False,
            scan_delay=scan_delay,
        ) as engine:
            opened = [await engine.open_session() for _ in range(sessions)]
            for index, (kind, arg) in enumerate(script):
                session = opened[index % sessions]
                current = f"{session.session_id}/q{session._queries}"
                if kind == "query":
                    block = await session.user_query(" ".join(arg))
                    current = f"{session.session_id}/q{session._queries}"
                    if block is not None:
                        returned[current].append(("initial", block))
                elif kind == "wait":
                    await trio.sleep(arg)
                elif kind == "tool":
                    if session._queries == 0:
                        continue
                    block = await session.tool_result()
                    if block is not None:
                        returned[current].append(("tool", block))
                elif kind == "turn_end":
                    await session.turn_end(tools_requested=arg)
                elif kind == "abort":
                    await session.abort()
                else:
                    await session.reset()

    trio.run(main, clock=MockClock(autojump_threshold=0))

    terminal_total = 0
    for plan_id in recorder.order:
        effects = recorder.effects[plan_id]
        records = [e.record for e in effects if isinstance(e, EmitTelemetry)]
        deliveries = [r for r in records if isinstance(r, DeliveryRecord)]
        terminal = [r for r in deliveries if r.phase is Phase.REFINED]
        fast = [r for r in deliveries if r.phase is Phase.FAST]
        assert len(terminal) == 1, plan_id  # every plan ended, exactly once
        assert len(fast) <= 1
        terminal_total += 1
        delivers = [e for e in effects if isinstance(e, Deliver)]
        paths = [p for d in delivers for p in d.paths]
        assert len(paths) == len(set(paths)), "a document delivered twice in one query"
        for d in delivers:
            assert len(d.paths) <= (2 if d.phase is Phase.FAST else 5)
        # What the runtime got for this query is exactly what this plan delivered:
        # nothing crosses a query boundary.
        got = [block for _, block in returned[plan_id]]
        assert [b.paths for b in got] == [d.paths for d in delivers]
        # A cancellation is the last thing that can happen to a plan's deliveries.
        seen_end = False
        for effect in effects:
            if isinstance(effect, EmitTelemetry) and isinstance(effect.record, DeliveryRecord):
                seen_end = seen_end or effect.record.terminal
            elif isinstance(effect, Deliver):
                assert not seen_end, "delivery after the terminal record"
    assert sum(r.terminal for r in sink.records if isinstance(r, DeliveryRecord)) == terminal_total


SECRET = st.text(alphabet="ABCDEFGHJKLMNPQRSTUVWXYZ", min_size=12, max_size=16).map(
    lambda s: "Zq" + s
)


@settings(deadline=None)
@given(
    query_secret=SECRET,
    title_secret=SECRET,
    body_secret=SECRET,
    path_secret=SECRET,
    latency=st.sampled_from([0.01, 0.5, 35.0]),
)
def test_telemetry_never_carries_query_text_memory_content_or_paths(
    query_secret: str, title_secret: str, body_secret: str, path_secret: str, latency: float
) -> None:
    pool = (
        doc(
            path_secret, title=f"deploy {title_secret}", description=title_secret, body=body_secret
        ),
        doc("other", title="deploy notes", body=f"see {body_secret}"),
    )
    sink = MemorySink()

    async def main() -> None:
        async with open_engine(
            StaticSource(pool),
            selector=SimulatedSelector(latency=latency),
            sinks=[sink],
            wall_clock=lambda: WALL,
            scan_in_thread=False,
        ) as engine:
            session = await engine.open_session(session_id=f"session-{path_secret}")
            await session.user_query(f"deploy {query_secret}", query_id=query_secret)
            await trio.sleep(1.0)
            await session.tool_result()
            await session.user_query(f"{title_secret} {body_secret}")
            await session.turn_end(tools_requested=False)

    trio.run(main, clock=MockClock(autojump_threshold=0))
    assert sink.records, "the run must emit telemetry for this test to mean anything"
    blob = b"".join(telemetry_codec.encode(r) for r in sink.records)
    for secret in (query_secret, title_secret, body_secret, path_secret):
        assert secret.encode() not in blob
        assert secret.lower().encode() not in blob
