"""Event-sourced runs: record every plan transition, and replay a recorded run.

An event log is JSON Lines (see :mod:`memrecall.events.codec`): a header
(content ``eventlog``, engine version, options, seed) and one record per plan
transition. ``opened`` records a plan's options, query, exclusion set and the
effects of :func:`~memrecall.engine.plan.start`; each ``step`` records the
event a plan consumed, its per-plan sequence number, the time on the actor's
clock, and every effect (telemetry included) that the step produced.

Recording is an observer on the plan actors: each transition is encoded into
an in-memory buffer (microseconds, no I/O on the turn's path); the buffer is
written out when the run ends.

:func:`replay` folds the recorded events through the pure state machine and
checks that every effect is byte-identical to the record. It never re-runs
trio: the log is the truth, because trio's scheduler is deliberately
non-deterministic.

Event logs hold query text and memory content (they must, to be replayable):
they are local debugging artefacts, unlike telemetry, which never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import msgspec

from memrecall import __version__
from memrecall.engine.plan import Plan, PlanOptions, StepFunction, start, step
from memrecall.events.codec import JsonlCodec, LogDecodeError, LogHeader
from memrecall.events.effects import Effect
from memrecall.events.inputs import PlanEvent, UserQuery

__all__ = [
    "Divergence",
    "EventLog",
    "LogRecord",
    "PlanOpened",
    "PlanStep",
    "ReplayReport",
    "eventlog_codec",
    "replay",
]


class PlanOpened(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="opened"):
    """A plan opened: its options, query, exclusion set, and the effects of ``start``."""

    plan: str
    options: PlanOptions
    query: UserQuery
    excluded: tuple[str, ...]
    effects: list[Effect]


class PlanStep(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="step"):
    """A plan consumed its ``seq``-th event at time ``t`` and produced ``effects``."""

    plan: str
    seq: int
    t: float
    event: PlanEvent
    effects: list[Effect]


LogRecord = PlanOpened | PlanStep

eventlog_codec: JsonlCodec[Any] = JsonlCodec(LogRecord, content="eventlog")
"""The codec of event-log files."""


class EventLog:
    """A :class:`~memrecall.actors.plan.PlanObserver` that records every transition."""

    def __init__(self, *, options: dict[str, Any] | None = None, seed: int | None = None) -> None:
        self.header = LogHeader(
            content="eventlog", engine_version=__version__, options=options or {}, seed=seed
        )
        self._lines: list[bytes] = [eventlog_codec.encode_header(self.header)]

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        """Record a plan's opening."""
        record = PlanOpened(
            plan=plan_id,
            options=options,
            query=query,
            excluded=tuple(sorted(excluded)),
            effects=effects,
        )
        self._lines.append(eventlog_codec.encode(record))

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        """Record one transition."""
        record = PlanStep(plan=plan_id, seq=seq, t=now, event=event, effects=effects)
        self._lines.append(eventlog_codec.encode(record))

    def getvalue(self) -> bytes:
        """The whole log so far."""
        return b"".join(self._lines)

    def write(self, path: str | Path) -> None:
        """Write the log to ``path``."""
        Path(path).write_bytes(self.getvalue())


@attrs.frozen
class Divergence:
    """The first record whose effects differ from what the machine produces now."""

    line: int
    plan: str
    seq: int
    recorded: str
    replayed: str

    def __str__(self) -> str:
        return (
            f"line {self.line}: plan {self.plan} step {self.seq} diverges\n"
            f"  recorded: {self.recorded}\n"
            f"  replayed: {self.replayed}"
        )


@attrs.frozen
class ReplayReport:
    """What replaying a log found."""

    header: LogHeader
    records: int
    plans: int
    divergence: Divergence | None

    @property
    def ok(self) -> bool:
        """True when every recorded effect was reproduced exactly."""
        return self.divergence is None


_ENCODER = msgspec.json.Encoder(order="deterministic")


def _encode(effects: list[Effect]) -> str:
    return _ENCODER.encode(effects).decode("utf-8")


def replay(data: bytes, *, step_function: StepFunction = step) -> ReplayReport:
    """Fold a recorded log through the state machine; report the first divergence.

    Raises :class:`~memrecall.events.codec.LogDecodeError` for a line that cannot
    be decoded, or for a step of a plan the log never opened.
    """
    header, numbered = eventlog_codec.decode_numbered(data)
    plans: dict[str, Plan] = {}
    for line, record in numbered:
        if isinstance(record, PlanOpened):
            plan, effects = start(record.options)
            seq = 0
        else:
            if record.plan not in plans:
                raise LogDecodeError(line, f"step for plan {record.plan!r}, which never opened")
            plan, effects = step_function(plans[record.plan], record.event, record.t)
            seq = record.seq
        plans[record.plan] = plan
        recorded, replayed = _encode(record.effects), _encode(effects)
        if recorded != replayed:
            return ReplayReport(
                header,
                len(numbered),
                len(plans),
                Divergence(line, record.plan, seq, recorded, replayed),
            )
    return ReplayReport(header, len(numbered), len(plans), None)
