"""Effects: what the pure plan state machine asks its actor to do.

Effects are data. The actor carries them out in order; nothing in an effect
requires the actor to make a decision of its own.
"""

from __future__ import annotations

import msgspec

from .telemetry import DeliveryPoint, Phase, TelemetryRecord

__all__ = [
    "ArmInitialDeadline",
    "CallSelector",
    "Deliver",
    "Effect",
    "EmitTelemetry",
    "Ignore",
    "RejectEvent",
    "ReleaseInitialWait",
    "StartScan",
]


class _Effect(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """Base of every effect; the tag field is ``kind``."""


class StartScan(_Effect, frozen=True, tag="start_scan"):
    """Scan the memory tree and rank candidates (in a worker thread).

    ``query_digest`` is the digest of the query text the recall must run with
    (:func:`~memrecall.events.inputs.text_digest`); the scan reports the digest
    of the text it used, and the plan refuses any other.
    """

    query_digest: str = ""


class ArmInitialDeadline(_Effect, frozen=True, tag="arm_initial_deadline"):
    """Feed :class:`~memrecall.events.inputs.InitialDeadline` back at time ``at`` (seconds)."""

    at: float


class CallSelector(_Effect, frozen=True, tag="call_selector"):
    """Ask the selector to choose among the ``candidates`` prepared by the scan.

    ``ids`` (manifest order) and ``manifest_digest`` are what the selector is
    shown; the actor refuses to call it with any other manifest.
    """

    candidates: int
    ids: tuple[str, ...] = ()
    manifest_digest: str = ""


class Deliver(_Effect, frozen=True, tag="deliver"):
    """Put ``prompt`` in front of the first request (initial) or after the tool output.

    ``paths`` are the delivered documents; the session adds them to its
    surfaced set so later recalls of the session skip them.
    """

    phase: Phase
    point: DeliveryPoint
    prompt: str
    paths: tuple[str, ...]


class ReleaseInitialWait(_Effect, frozen=True, tag="release_initial_wait"):
    """The bounded initial wait is over; the first request may go now."""


class RejectEvent(_Effect, frozen=True, tag="reject_event"):
    """The plan received an event it cannot receive in its state (a protocol error).

    The plan has moved to its error terminal; the actor reports this loudly.
    ``state`` and ``event`` name the pair, ``detail`` says what was wrong.
    """

    state: str
    event: str
    detail: str


class Ignore(_Effect, frozen=True, tag="ignore"):
    """The event changes nothing in this state; ``reason`` says why (for logs and debugging)."""

    reason: str


class EmitTelemetry(_Effect, frozen=True, tag="emit_telemetry"):
    """Hand one record to the telemetry sinks."""

    record: TelemetryRecord


Effect = (
    StartScan
    | ArmInitialDeadline
    | CallSelector
    | Deliver
    | ReleaseInitialWait
    | EmitTelemetry
    | RejectEvent
    | Ignore
)
