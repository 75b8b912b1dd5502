"""Lifecycle test helpers: documents, a scriptable selector, an engine on a virtual clock."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import attrs
import trio

from memrecall.actors import Engine, SimulatedSelector
from memrecall.actors.selector import Selector, SelectorRequest
from memrecall.events import (
    DeliveryPoint,
    DeliveryRecord,
    MemoryDocument,
    MemoryType,
    Phase,
    Scope,
    TelemetryRecord,
)
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_test_engine
from tests.factories import memory

WALL = 1_780_000_000.0  # a fixed wall time: rendered ages never depend on the test machine


def doc(
    name: str,
    *,
    title: str | None = None,
    description: str = "",
    body: str = "",
    kind: MemoryType = MemoryType.PROJECT,
    scope: Scope = Scope.PROJECT,
    mtime: float = WALL - 3600,
) -> MemoryDocument:
    """A document whose path is ``/mem/<scope>/<name>.md``."""
    title = title if title is not None else name
    root = f"/mem/{scope.value}"
    return memory(
        title, description, body, name=name, root=root, kind=kind, scope=scope, mtime=mtime
    )


# Three documents about deployment (lexical matches for "deploy") and two unrelated ones.
DEPLOY_A = doc("deploy-a", title="Deploy checklist", mtime=WALL - 100)
DEPLOY_B = doc("deploy-b", title="Deploy rollback", mtime=WALL - 200)
DEPLOY_C = doc(
    "deploy-c", title="Sign-off process", description="how a deploy is approved", mtime=WALL - 300
)
ROTA = doc("rota", title="On-call rota", mtime=WALL - 400)
STYLE = doc("style", title="Answer tersely", kind=MemoryType.FEEDBACK, mtime=WALL - 500)
POOL = (DEPLOY_A, DEPLOY_B, DEPLOY_C, ROTA, STYLE)


def choose(*documents: MemoryDocument) -> Callable[[SelectorRequest], Sequence[str]]:
    """A choice function that picks these documents (if they are candidates)."""
    wanted = [d.path for d in documents]
    return lambda request: [p for p in wanted if p in request.paths]


def deliveries(records: Sequence[TelemetryRecord]) -> list[tuple[str, str, str | None, str, int]]:
    """Delivery records as (phase, point, reason, strategy, docs) tuples."""
    return [
        (
            r.phase.value,
            r.delivery_point.value,
            None if r.discard_reason is None else r.discard_reason.value,
            r.strategy.value,
            r.docs_selected,
        )
        for r in records
        if isinstance(r, DeliveryRecord)
    ]


def terminals(records: Sequence[TelemetryRecord]) -> list[DeliveryRecord]:
    """The terminal (refined) delivery records."""
    return [r for r in records if isinstance(r, DeliveryRecord) and r.phase is Phase.REFINED]


def fast_records(records: Sequence[TelemetryRecord]) -> list[DeliveryRecord]:
    """The fast delivery records."""
    return [
        r
        for r in records
        if isinstance(r, DeliveryRecord)
        and r.phase is Phase.FAST
        and r.delivery_point is DeliveryPoint.INITIAL
    ]


@attrs.define
class Harness:
    """An engine over a static pool with a memory sink, on trio's (mock) clock."""

    engine: Engine
    sink: MemorySink
    selector: Selector | None

    @property
    def records(self) -> list[TelemetryRecord]:
        """Every record emitted so far."""
        return self.sink.records


@asynccontextmanager
async def harness(
    pool: Sequence[MemoryDocument] = POOL,
    *,
    selector: Selector | None = None,
    model: bool = True,
    scan_delay: float = 0.0,
) -> AsyncIterator[Harness]:
    """Open an engine; ``model=False`` runs without a selector (heuristic only)."""
    if model and selector is None:
        selector = SimulatedSelector(latency=1.0)
    sink = MemorySink()
    async with open_test_engine(
        StaticSource(tuple(pool), scorer="reference"),
        selector=selector if model else None,
        sinks=[sink],
        wall_clock=lambda: WALL,
        scan_in_thread=False,
        scan_delay=scan_delay,
    ) as engine:
        yield Harness(engine, sink, selector if model else None)


def elapsed(since: float) -> float:
    """Virtual seconds since ``since``, rounded to the microsecond."""
    return round(trio.current_time() - since, 6)
