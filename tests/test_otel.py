"""The OpenTelemetry sink (``memrecall[otel]``), checked with the SDK's in-memory exporters.

Expected counts come from a plain recording sink running beside the OpenTelemetry one, never
from the sink under test.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterator, Mapping

import pytest
import trio
from hypothesis import given, settings

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from memrecall import (
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Phase,
    SelectionRecord,
    SelectorOutcome,
    SimulatedSelector,
    StaticSource,
    Strategy,
    TelemetryRecord,
)
from memrecall.telemetry.otel import DIMENSIONS, MEASURES, OpenTelemetrySink
from memrecall.testing import open_test_engine

from .lifecycle_kit import POOL, WALL
from .strategies import telemetry_records

ENUMS: dict[str, type[enum.StrEnum]] = {
    "strategy": Strategy,
    "selector_outcome": SelectorOutcome,
    "phase": Phase,
    "delivery_point": DeliveryPoint,
    "discard_reason": DiscardReason,
}


class Telemetry:
    """An SDK tracer and meter provider with in-memory exporters, and a sink on them."""

    def __init__(self, *, span_events: bool = True) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("runtime")
        self.sink = OpenTelemetrySink(
            meter_provider=self.meter_provider,
            tracer_provider=self.tracer_provider,
            span_events=span_events,
        )

    def points(self) -> dict[str, list[object]]:
        """Metric name -> its data points."""
        out: dict[str, list[object]] = {}
        data = self.reader.get_metrics_data()
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out

    def finished(self) -> dict[str, ReadableSpan]:
        return {span.name: span for span in self.spans.get_finished_spans()}

    def close(self) -> None:
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


@pytest.fixture
def otel() -> Iterator[Telemetry]:
    telemetry = Telemetry()
    yield telemetry
    telemetry.close()


class TurnSink:
    """Records each record with the correlation value it came with (the oracle)."""

    def __init__(self) -> None:
        self.seen: list[tuple[TelemetryRecord, object]] = []

    def emit_correlated(self, record: TelemetryRecord, correlation: object) -> None:
        self.seen.append((record, correlation))


def _key(record: TelemetryRecord) -> tuple[str, frozenset[tuple[str, str]]]:
    """A record's kind and its enum fields, written out independently of the sink."""
    fields = {
        name: getattr(record, name).value
        for name in ENUMS
        if getattr(record, name, None) is not None
    }
    return type(record).__name__, frozenset(fields.items())


def _check_attributes(attributes: Mapping[str, object] | None, *, metric: bool) -> None:
    """Only listed fields; every text value is a value of that field's enum."""
    for name, value in (attributes or {}).items():
        assert name in DIMENSIONS or (not metric and name in MEASURES), name
        if name in DIMENSIONS:
            assert value in {member.value for member in ENUMS[name]}, (name, value)
        else:
            assert isinstance(value, int | float), (name, value)


async def test_an_engine_run_reaches_metrics_and_the_turns_spans(
    otel: Telemetry, autojump_clock: trio.testing.MockClock
) -> None:
    oracle = TurnSink()
    turn1 = otel.tracer.start_span("turn 1")
    turn2 = otel.tracer.start_span("turn 2")
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        selector=SimulatedSelector(latency=0.3),
        sinks=[oracle, otel.sink],
        wall_clock=lambda: WALL,
        scan_in_thread=False,
    ) as engine:
        session = await engine.open_session()
        # turn 1: the runtime's span is current around user_query (no correlation value)
        with trace.use_span(turn1, end_on_exit=False):
            await session.user_query("deploy checklist")
        await session.turn_end(tools_requested=True)
        await trio.sleep(1)  # virtual time: the selector answers
        await session.tool_result()
        await session.turn_end(tools_requested=False)
        # turn 2: the span itself is the correlation value; nothing is current
        await session.user_query("on-call rota", correlation=turn2)
        await session.turn_end(tools_requested=False)
    turn1.end()
    turn2.end()

    records = [record for record, _ in oracle.seen]
    assert len(records) >= 4  # fast + selection + refined in turn 1, a discard in turn 2
    spans = otel.finished()
    per_span = Counter("turn 2" if c is turn2 else "turn 1" for _, c in oracle.seen)
    assert {name: len(spans[name].events) for name in ("turn 1", "turn 2")} == per_span
    for span in spans.values():
        for event in span.events:
            _check_attributes(event.attributes, metric=False)

    expected = Counter(_key(record) for record in records)
    points = otel.points()
    counted: Counter[tuple[str, frozenset[tuple[str, str]]]] = Counter()
    for metric, kind in (
        ("memrecall.recall.count", "SelectionRecord"),
        ("memrecall.recall.delivery.count", "DeliveryRecord"),
    ):
        for point in points.get(metric, []):
            attributes = dict(getattr(point, "attributes", None) or {})
            _check_attributes(attributes, metric=True)
            counted[kind, frozenset(attributes.items())] += int(getattr(point, "value", 0))
    assert counted == expected


def test_histograms_hold_each_duration_once(otel: Telemetry) -> None:
    records: list[TelemetryRecord] = [
        SelectionRecord(
            query_length=12,
            docs_scanned=40,
            docs_selected=3,
            strategy=Strategy.MODEL,
            duration_ms=250.0,
            selector_outcome=SelectorOutcome.OK,
        ),
        DeliveryRecord(
            phase=Phase.FAST,
            delivery_point=DeliveryPoint.INITIAL,
            strategy=Strategy.HEURISTIC,
            docs_selected=2,
            latency_ms=18.5,
        ),
        DeliveryRecord(
            phase=Phase.REFINED,
            delivery_point=DeliveryPoint.DISCARDED,
            strategy=Strategy.MODEL,
            docs_selected=0,
            latency_ms=400.0,
            discard_reason=DiscardReason.NO_SAFE_DELIVERY_POINT,
            selector_outcome=SelectorOutcome.CANCELLED,
        ),
    ]
    for record in records:
        otel.sink.emit(record)
    points = otel.points()
    durations = [
        p for p in points["memrecall.recall.duration"] if isinstance(p, HistogramDataPoint)
    ]
    latencies = [
        p for p in points["memrecall.recall.delivery.latency"] if isinstance(p, HistogramDataPoint)
    ]
    assert [(p.count, p.sum) for p in durations] == [(1, 250.0)]
    assert sorted((p.count, p.sum) for p in latencies) == [(1, 18.5), (1, 400.0)]
    assert otel.spans.get_finished_spans() == ()  # no span current, no correlation: metrics only


def test_a_span_context_correlation_gets_a_linked_span(otel: Telemetry) -> None:
    parent = otel.tracer.start_span("remote turn")
    context = parent.get_span_context()
    record = DeliveryRecord(
        phase=Phase.FAST,
        delivery_point=DeliveryPoint.INITIAL,
        strategy=Strategy.HEURISTIC,
        docs_selected=1,
        latency_ms=9.0,
    )
    otel.sink.emit_correlated(record, context)
    parent.end()
    spans = otel.finished()
    linked = spans["memrecall.recall.delivery"]
    assert [link.context for link in linked.links] == [context]
    assert [event.name for event in linked.events] == ["memrecall.recall.delivery"]
    assert spans["remote turn"].events == ()


def test_other_correlation_values_are_ignored_and_never_exported(otel: Telemetry) -> None:
    record = SelectionRecord(
        query_length=5, docs_scanned=2, docs_selected=1, strategy=Strategy.HEURISTIC, duration_ms=1
    )
    secret = "turn-7 /home/ann/.qwen/memories/style.md"
    with otel.tracer.start_as_current_span("current"):
        otel.sink.emit_correlated(record, secret)
    (span,) = otel.spans.get_finished_spans()
    assert [event.name for event in span.events] == ["memrecall.recall"]  # on the current span
    exported = repr([span.to_json() for span in otel.spans.get_finished_spans()])
    exported += repr(otel.reader.get_metrics_data())
    assert "turn-7" not in exported
    assert "style.md" not in exported


def test_span_events_can_be_turned_off() -> None:
    telemetry = Telemetry(span_events=False)
    record = SelectionRecord(
        query_length=5, docs_scanned=2, docs_selected=1, strategy=Strategy.NONE, duration_ms=1
    )
    with telemetry.tracer.start_as_current_span("current"):
        telemetry.sink.emit(record)
    (span,) = telemetry.spans.get_finished_spans()
    assert span.events == ()
    assert (
        sum(int(getattr(p, "value", 0)) for p in telemetry.points()["memrecall.recall.count"]) == 1
    )
    telemetry.close()


@settings(max_examples=40)
@given(telemetry_records)
def test_any_record_yields_only_enum_count_and_duration_attributes(record: TelemetryRecord) -> None:
    telemetry = Telemetry()
    with telemetry.tracer.start_as_current_span("current"):
        telemetry.sink.emit(record)
    (span,) = telemetry.spans.get_finished_spans()
    (event,) = span.events
    _check_attributes(event.attributes, metric=False)
    for points in telemetry.points().values():
        for point in points:
            _check_attributes(getattr(point, "attributes", None), metric=True)
    telemetry.close()
