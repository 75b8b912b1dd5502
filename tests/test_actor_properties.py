"""Property tests of the real actors on a virtual clock, with drawn schedules.

Each example runs a whole engine under ``trio.testing.MockClock`` (autojump):
a drawn script of user queries, waits, tool results, turn ends, aborts and
resets against a selector with drawn latency (0-40 s, so some calls hit the
30 s ceiling) and drawn answers. A recording observer attributes every effect
to its plan, so the invariants can be checked per plan, against what the
runtime (the test) asked and received:

* provenance: each plan opened with the text the runtime sent for that query,
  its scan started and completed for that text's digest, and its fast
  documents are those a recall of that text finds;
* window: no initial delivery after the plan released the first request;
* surfaced: the session's surfaced set is exactly what the runtime received
  (since the last reset), and it changes only by messages: each ``surfaced``
  message names a block its plan handed the runtime;
* no plan refused an event (a protocol error).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import attrs
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import MockClock

from memrecall.actors import MemoryBlock, SimulatedSelector
from memrecall.actors.selector import SelectorRequest
from memrecall.engine.plan import PlanOptions
from memrecall.events import (
    Deliver,
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Effect,
    EmitTelemetry,
    MemoryType,
    Phase,
    PlanEvent,
    RejectEvent,
    ReleaseInitialWait,
    ScanCompleted,
    StartScan,
    Surfaced,
    SurfacedChange,
    UserQuery,
    text_digest,
)
from memrecall.sources.source import StaticSource, prepare_recall
from memrecall.telemetry.sinks import MemorySink, telemetry_codec
from memrecall.testing import open_test_engine

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
    queries: dict[str, UserQuery] = attrs.field(factory=dict)
    excluded: dict[str, frozenset[str]] = attrs.field(factory=dict)
    changes: list[tuple[str, SurfacedChange]] = attrs.field(factory=list)

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.order.append(plan_id)
        self.queries[plan_id] = query
        self.excluded[plan_id] = excluded
        self.effects[plan_id].extend(effects)

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        self.events[plan_id].append(event)
        self.effects[plan_id].extend(effects)

    def surfaced(self, session_id: str, change: SurfacedChange) -> None:
        self.changes.append((session_id, change))


queries = st.tuples(st.just("query"), st.lists(st.sampled_from([*WORDS, "zzz"]), max_size=3))
steps = st.one_of(
    queries,
    st.tuples(st.just("wait"), st.sampled_from([0.01, 0.05, 0.1, 0.5, 2.0, 31.0])),
    st.tuples(st.just("tool"), st.none()),
    st.tuples(st.just("turn_end"), st.booleans()),
    st.tuples(st.just("abort"), st.none()),
    st.tuples(st.just("reset"), st.none()),
)
# A script is a few turns, each a query then what happens during it: every session gets
# several queries, so what crosses from one query to the next is exercised.
scripts = st.lists(st.tuples(queries, st.lists(steps, max_size=4)), min_size=1, max_size=5).map(
    lambda turns: [step for query, rest in turns for step in (query, *rest)]
)


# The core property of the actors: more examples than the profile's default (time moved here
# from the delivery harness), never fewer than the nightly profile's.
@settings(deadline=None, max_examples=max(200, settings().max_examples))
@given(
    script=scripts,
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
    sent: dict[str, str] = {}  # plan id -> the text the runtime sent
    unreceived: list[str] = []  # surfaced documents the runtime never received
    unsurfaced: list[str] = []  # received documents the session did not surface

    def choose(request: SelectorRequest) -> list[str]:
        paths = request.paths
        return list(dict.fromkeys(paths[p % len(paths)] for p in picks))[: request.limit]

    selector = SimulatedSelector(
        latency=latency, choose=choose, fail=RuntimeError("boom") if fail else None
    )

    async def main() -> None:
        async with open_test_engine(
            StaticSource(POOL),
            selector=selector,
            sinks=[sink],
            observer=recorder,
            wall_clock=lambda: WALL,
            scan_in_thread=False,
            scan_delay=scan_delay,
        ) as engine:
            opened = [await engine.open_session() for _ in range(sessions)]
            received: dict[str, set[str]] = defaultdict(set)
            current: dict[str, str] = {}
            for index, (kind, arg) in enumerate(script):
                session = opened[index % sessions]
                sid = session.session_id
                if kind == "query":
                    text = " ".join(arg)
                    current[sid] = f"{sid}/t{index}"
                    sent[current[sid]] = text
                    block = await session.user_query(text, query_id=f"t{index}")
                    if block is not None:
                        returned[current[sid]].append(("initial", block))
                        received[sid].update(block.paths)
                elif kind == "wait":
                    await trio.sleep(arg)
                elif kind == "tool":
                    if sid not in current:
                        continue
                    block = await session.tool_result()
                    if block is not None:
                        returned[current[sid]].append(("tool", block))
                        received[sid].update(block.paths)
                elif kind == "turn_end":
                    await session.turn_end(tools_requested=arg)
                elif kind == "abort":
                    await session.abort()
                else:
                    await session.reset()
                    received[sid].clear()
                unreceived.extend(session.surfaced - received[sid])
                unsurfaced.extend(received[sid] - session.surfaced)

    trio.run(main, clock=MockClock(autojump_threshold=0))

    assert not unreceived, "the session surfaced documents its runtime never received"
    assert not unsurfaced, "the session did not surface documents its runtime received"
    for session_id, change in recorder.changes:
        if isinstance(change, Surfaced):
            assert change.plan.startswith(f"{session_id}/")
            assert change.paths in [b.paths for _, b in returned[change.plan]], (
                "a surfaced message for a block the runtime did not get from that plan"
            )
    terminal_total = 0
    for plan_id in recorder.order:
        effects = recorder.effects[plan_id]
        check_provenance(recorder, plan_id, sent[plan_id])
        check_window(effects)
        assert not any(isinstance(e, RejectEvent) for e in effects), "a protocol error"
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
    reasons = {r.discard_reason for r in sink.records if isinstance(r, DeliveryRecord)}
    assert DiscardReason.PROTOCOL_ERROR not in reasons


def check_provenance(recorder: Recorder, plan_id: str, text: str) -> None:
    """The plan recalled for the text the runtime sent, and delivered what that recall found."""
    own = text_digest(text)
    assert recorder.queries[plan_id].text == text, "the plan opened with another query's text"
    effects, events = recorder.effects[plan_id], recorder.events[plan_id]
    assert [e.query_digest for e in effects if isinstance(e, StartScan)] == [own]
    scans = [e for e in events if isinstance(e, ScanCompleted)]
    assert all(e.query_digest == own for e in scans), "the scan ran for another query's text"
    # The content: a fresh recall of this plan's own text finds every delivered document.
    recall = prepare_recall(StaticSource(POOL), text, excluded_paths=recorder.excluded[plan_id])
    fast = {d.path for d in recall.fast}
    found = fast | {d.path for d in (*recall.fallback, *recall.manifest.included)}
    for deliver in (e for e in effects if isinstance(e, Deliver)):
        allowed = fast if deliver.phase is Phase.FAST else found
        assert set(deliver.paths) <= allowed, "a document not from this query's recall"


def check_window(effects: list[Effect]) -> None:
    """No initial delivery after the plan released the first request; one release at most."""
    released = 0
    for effect in effects:
        if isinstance(effect, ReleaseInitialWait):
            released += 1
        elif isinstance(effect, Deliver) and effect.point is DeliveryPoint.INITIAL:
            assert not released, "an initial delivery after the window closed"
    assert released <= 1


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
        async with open_test_engine(
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
