"""The messages that change a session's surfaced set.

A session excludes from its later recalls every document its runtime has
received since the last reset (its *surfaced set*). The set changes only
through these messages, and the event log records each one when the session
applies it:

* :class:`Surfaced`: a plan handed a block to the runtime (the initial block
  when it released the first request, or the block in reply to a tool
  result). The plan actor sends it to its session before the runtime can
  see the block, so the session applies it before the runtime's next call.
* :class:`SurfacedCleared`: the session forgot its surfaced set (a reset).

They carry their own time (the sender's clock), so a session can apply a
message wherever it reads the set without consulting a clock.
"""

from __future__ import annotations

import msgspec

from .telemetry import DeliveryPoint

__all__ = ["Surfaced", "SurfacedChange", "SurfacedCleared"]


class Surfaced(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="surfaced"):
    """Plan ``plan`` handed the runtime a block of ``paths`` at ``point`` (time ``t``)."""

    plan: str
    t: float
    point: DeliveryPoint
    paths: tuple[str, ...]


class SurfacedCleared(
    msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="surfaced_cleared"
):
    """The session forgot its surfaced set at time ``t`` (the runtime reset the conversation)."""

    t: float


SurfacedChange = Surfaced | SurfacedCleared
"""A change of a session's surfaced set, as the event log records it."""
