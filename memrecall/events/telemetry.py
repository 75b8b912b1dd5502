"""Telemetry records: enums, counts and durations only.

Invariant (checked by a property test): no field of a record can carry query
text, memory content, a path or an id. ``query_length`` (UTF-16 code units, as
upstream) is the only query-derived value.
"""

from __future__ import annotations

import enum

import msgspec

__all__ = [
    "DeliveryPoint",
    "DeliveryRecord",
    "DiscardReason",
    "Phase",
    "SelectionRecord",
    "SelectorOutcome",
    "Strategy",
    "TelemetryRecord",
]


class Phase(enum.StrEnum):
    """Delivery stage: the deterministic fast result or the refined (selected) one."""

    FAST = "fast"
    REFINED = "refined"


class DeliveryPoint(enum.StrEnum):
    """Where a result went: before the first request, after a tool result, or nowhere."""

    INITIAL = "initial"
    TOOL_RESULT = "tool_result"
    DISCARDED = "discarded"


class DiscardReason(enum.StrEnum):
    """Why a plan ended without delivering its refined result."""

    NO_SAFE_DELIVERY_POINT = "no_safe_delivery_point"
    NEW_QUERY = "new_query"
    RESET = "reset"
    ABORT = "abort"
    SHUTDOWN = "shutdown"
    NO_RELEVANT_RESULTS = "no_relevant_results"
    ALREADY_DELIVERED = "already_delivered"
    PROTOCOL_ERROR = "protocol_error"
    """The plan received an event it could not receive in its state (a bug: see the logs)."""


class Strategy(enum.StrEnum):
    """How a result was selected; orthogonal to :class:`Phase`."""

    NONE = "none"
    HEURISTIC = "heuristic"
    MODEL = "model"


class SelectorOutcome(enum.StrEnum):
    """What became of the plan's selector call (the cause behind ``strategy=heuristic``).

    ``not_called``: no selector is configured, the scan found no candidates or
    failed, or the plan ended before the scan did. ``ok``: a valid answer (an
    empty one included). ``timeout``: the selector's own timeout or the 30 s
    ceiling. ``http_error``: the endpoint answered with a non-success status.
    ``unreachable``: no connection could be made. ``invalid_answer``: the
    answer broke the contract (not JSON, wrong shape, unknown entries, too
    many). ``error``: the selector raised anything else. ``cancelled``: the
    plan ended (new query, reset, abort, shutdown, no delivery point) while the
    call was running.
    """

    NOT_CALLED = "not_called"
    OK = "ok"
    TIMEOUT = "timeout"
    HTTP_ERROR = "http_error"
    UNREACHABLE = "unreachable"
    INVALID_ANSWER = "invalid_answer"
    ERROR = "error"
    CANCELLED = "cancelled"


class SelectionRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="selection"):
    """Emitted once when a recall settles (never for the fast result or a cancelled recall)."""

    query_length: int
    docs_scanned: int
    docs_selected: int
    strategy: Strategy
    duration_ms: float
    selector_outcome: SelectorOutcome | None = None
    """How the selector call ended; ``None`` only in logs written before the field existed."""


class DeliveryRecord(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="delivery"):
    """A delivery outcome. ``phase=refined`` records are terminal: exactly one per plan."""

    phase: Phase
    delivery_point: DeliveryPoint
    strategy: Strategy
    docs_selected: int
    latency_ms: float
    discard_reason: DiscardReason | None = None
    selector_outcome: SelectorOutcome | None = None
    """How the selector call ended, on refined (terminal) records; ``None`` on fast
    records (the selector is called after them) and in logs written before the field
    existed."""

    @property
    def terminal(self) -> bool:
        """True for the one record that ends a plan (every refined record)."""
        return self.phase is Phase.REFINED


TelemetryRecord = SelectionRecord | DeliveryRecord
"""Either record: what a telemetry sink's ``emit`` receives."""
