"""An OpenTelemetry sink: telemetry records as metrics and span events (the ``otel`` extra).

Install with ``pip install 'memrecall[otel]'`` (the OpenTelemetry API); the runtime sets up
the SDK and its exporters as usual. Every record becomes

- a metric point: ``memrecall.recall.count`` and ``memrecall.recall.duration`` (ms) for a
  :class:`~memrecall.events.telemetry.SelectionRecord`, ``memrecall.recall.delivery.count``
  and ``memrecall.recall.delivery.latency`` (ms) for a
  :class:`~memrecall.events.telemetry.DeliveryRecord`, with the record's **enums only** as
  attributes (strategy, selector outcome, phase, delivery point, discard reason: a handful
  of values each, so the series stay few);
- a span event (``memrecall.recall`` / ``memrecall.recall.delivery``) with the enums, the
  counts and the durations, on the span the runtime passed as the turn's correlation value
  (``session.user_query(..., correlation=span)``) when that is an OpenTelemetry ``Span``;
  else on the span that was current around that ``user_query`` call (sinks run in its
  :mod:`contextvars` context), if it is recording. When the correlation value is a
  ``SpanContext`` (a span that cannot take events here, e.g. a remote parent), the record
  becomes a short span of its own, linked to it. Any other correlation value is ignored.

Attributes are built from an explicit list of record fields, so no text, path or id can
reach them: records carry none, and a field added later stays out until it is listed here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

try:
    from opentelemetry import metrics, trace
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "memrecall.telemetry.otel needs OpenTelemetry: pip install 'memrecall[otel]'"
    ) from exc

from memrecall import __version__
from memrecall.events.telemetry import DeliveryRecord, SelectionRecord, TelemetryRecord

__all__ = ["DIMENSIONS", "MEASURES", "OpenTelemetrySink"]

INSTRUMENTATION_NAME: Final = "memrecall"

DIMENSIONS: Final = ("strategy", "selector_outcome", "phase", "delivery_point", "discard_reason")
"""Record fields that become metric and event attributes: enums, few values each."""

MEASURES: Final = ("query_length", "docs_scanned", "docs_selected", "duration_ms", "latency_ms")
"""Record fields that become event attributes only: counts and durations."""

AttributeValue = str | int | float


def _dimensions(record: TelemetryRecord) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for field in DIMENSIONS:
        value = getattr(record, field, None)
        if value is not None:
            out[field] = str(value.value)
    return out


def _measures(record: TelemetryRecord) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    for field in MEASURES:
        value = getattr(record, field, None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[field] = value
    return out


class OpenTelemetrySink:
    """A telemetry sink that records to OpenTelemetry metrics and span events.

    ``meter_provider`` and ``tracer_provider`` default to the global ones the
    runtime configured. ``span_events=False`` records metrics only. ``emit`` is
    synchronous and quick, as the sink contract asks: instruments and spans are
    in-memory operations; export happens in the SDK's own processors.
    """

    name = "opentelemetry"

    def __init__(
        self,
        *,
        meter_provider: metrics.MeterProvider | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        span_events: bool = True,
    ) -> None:
        meter = metrics.get_meter(INSTRUMENTATION_NAME, __version__, meter_provider)
        self._tracer = trace.get_tracer(INSTRUMENTATION_NAME, __version__, tracer_provider)
        self._span_events = span_events
        self._recalls = meter.create_counter(
            "memrecall.recall.count", unit="{recall}", description="Recalls that settled."
        )
        self._recall_duration = meter.create_histogram(
            "memrecall.recall.duration", unit="ms", description="Recall start to settled result."
        )
        self._deliveries = meter.create_counter(
            "memrecall.recall.delivery.count",
            unit="{delivery}",
            description="Recall deliveries and discards, by phase and delivery point.",
        )
        self._delivery_latency = meter.create_histogram(
            "memrecall.recall.delivery.latency",
            unit="ms",
            description="Recall start to delivery or discard.",
        )

    def emit(self, record: TelemetryRecord) -> None:
        """Record one telemetry record (no correlation value)."""
        self.emit_correlated(record, None)

    def emit_correlated(self, record: TelemetryRecord, correlation: object) -> None:
        """Record one telemetry record; ``correlation`` as the module docstring says."""
        dimensions = _dimensions(record)
        if isinstance(record, SelectionRecord):
            self._recalls.add(1, dimensions)
            self._recall_duration.record(record.duration_ms, dimensions)
            event = "memrecall.recall"
        elif isinstance(record, DeliveryRecord):
            self._deliveries.add(1, dimensions)
            self._delivery_latency.record(record.latency_ms, dimensions)
            event = "memrecall.recall.delivery"
        else:
            return
        if self._span_events:
            self._add_event(event, {**dimensions, **_measures(record)}, correlation)

    def _add_event(
        self, event: str, attributes: Mapping[str, AttributeValue], correlation: object
    ) -> None:
        if isinstance(correlation, trace.SpanContext):
            if correlation.is_valid:
                link = trace.Link(correlation)
                span = self._tracer.start_span(event, links=[link])
                span.add_event(event, attributes)
                span.end()
            return
        span = correlation if isinstance(correlation, trace.Span) else trace.get_current_span()
        if span.is_recording():
            span.add_event(event, attributes)
