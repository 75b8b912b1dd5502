"""Event-sourced runs: record every plan transition, and replay a recorded run.

An event log is JSON Lines (see :mod:`memrecall.events.codec`): a header
(content ``eventlog``, engine version, options, seed) and one record per plan
transition. ``opened`` records a plan's options, query, exclusion set and the
effects of :func:`~memrecall.engine.plan.start`; each ``step`` records the
event a plan consumed, its per-plan sequence number, the time on the actor's
clock, and every effect (telemetry included) that the step produced. A
``runtime`` record is what the runtime asked a session (written by the driver
of a run, :meth:`EventLog.runtime`): it is the independent account of each
query's text that provenance is checked against.
A ``session`` record is a change of a session's surfaced set
(:mod:`memrecall.events.surfaced`), written as the session applies it.

Recording is an observer on the plan actors: each transition is encoded into
an in-memory buffer (microseconds, no I/O on the turn's path); the buffer is
written out when the run ends.

:func:`replay` folds the recorded events through the pure state machine and
checks that every effect is byte-identical to the record. It never re-runs
trio: the log is the truth, because trio's scheduler is deliberately
non-deterministic. A step the machine refuses
(:class:`~memrecall.engine.plan.PlanProtocolError`) is replayed as the actor
handles it, through :func:`~memrecall.engine.plan.fail`. Replay also checks
provenance: each plan opened for a query the runtime asked must carry that
query's text, and the recall it started must be for that text.

Event logs hold query text and memory content (they must, to be replayable):
they are local debugging artefacts, unlike telemetry, which never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import msgspec

from memrecall import __version__
from memrecall.engine.plan import (
    Plan,
    PlanOptions,
    PlanProtocolError,
    StepFunction,
    fail,
    start,
    step,
)
from memrecall.events.codec import JsonlCodec, LogDecodeError, LogHeader
from memrecall.events.effects import Effect, StartScan
from memrecall.events.inputs import PlanEvent, RuntimeEvent, UserQuery, text_digest
from memrecall.events.surfaced import SurfacedChange

__all__ = [
    "Divergence",
    "EventLog",
    "LogRecord",
    "PlanOpened",
    "PlanStep",
    "ReplayReport",
    "RuntimeCall",
    "SessionChange",
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


class RuntimeCall(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="runtime"):
    """The runtime called ``session`` with ``event`` at time ``t`` (recorded by the driver)."""

    session: str
    t: float
    event: RuntimeEvent


class SessionChange(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="session"):
    """``session`` applied ``change`` to its surfaced set (the change carries its time)."""

    session: str
    change: SurfacedChange


LogRecord = PlanOpened | PlanStep | RuntimeCall | SessionChange

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

    def runtime(self, session: str, now: float, event: RuntimeEvent) -> None:
        """Record what the runtime asked ``session`` (call it before making the call)."""
        record = RuntimeCall(session=session, t=now, event=event)
        self._lines.append(eventlog_codec.encode(record))

    def surfaced(self, session_id: str, change: SurfacedChange) -> None:
        """Record a change of a session's surfaced set."""
        self._lines.append(eventlog_codec.encode(SessionChange(session=session_id, change=change)))

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
    """What replaying a log found.

    ``provenance`` lists plans that did not recall for their own query: opened
    with another text than the runtime asked for, or a recall started for
    another text than the plan's. ``protocol_errors`` lists the steps the
    machine refused (each a bug: the plan ended ``protocol_error``).
    """

    header: LogHeader
    records: int
    plans: int
    divergence: Divergence | None
    provenance: tuple[str, ...] = ()
    protocol_errors: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """True when every effect was reproduced, provenance holds and no event was refused."""
        return self.divergence is None and not self.provenance and not self.protocol_errors


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
    asked: dict[str, str] = {}  # plan id -> the text the runtime asked for
    provenance: list[str] = []
    refused: list[str] = []
    for line, record in numbered:
        if isinstance(record, RuntimeCall):
            if isinstance(record.event, UserQuery):
                asked[f"{record.session}/{record.event.query_id}"] = record.event.text
            continue
        if isinstance(record, SessionChange):
            continue  # the session's surfaced set: checked by the safety rules, not the machine
        if isinstance(record, PlanOpened):
            provenance.extend(_provenance(line, record, asked))
            plan, effects = start(record.options)
            seq = 0
        else:
            if record.plan not in plans:
                raise LogDecodeError(line, f"step for plan {record.plan!r}, which never opened")
            try:
                plan, effects = step_function(plans[record.plan], record.event, record.t)
            except PlanProtocolError as error:
                refused.append(f"line {line}: plan {record.plan}: {error}")
                plan, effects = fail(plans[record.plan], error, record.t)
            seq = record.seq
        plans[record.plan] = plan
        recorded, replayed = _encode(record.effects), _encode(effects)
        if recorded != replayed:
            return ReplayReport(
                header,
                len(numbered),
                len(plans),
                Divergence(line, record.plan, seq, recorded, replayed),
                tuple(provenance),
                tuple(refused),
            )
    return ReplayReport(header, len(numbered), len(plans), None, tuple(provenance), tuple(refused))


def _provenance(line: int, record: PlanOpened, asked: dict[str, str]) -> list[str]:
    """How an opened plan departs from its own query (empty when it does not)."""
    problems = []
    own = text_digest(record.query.text)
    wanted = asked.get(record.plan)
    if wanted is not None and wanted != record.query.text:
        problems.append(f"line {line}: plan {record.plan} opened with another text than asked")
    if record.options.query_digest != own:
        problems.append(f"line {line}: plan {record.plan} options carry another query's digest")
    scans = [e for e in record.effects if isinstance(e, StartScan)]
    if any(e.query_digest != own for e in scans):
        problems.append(f"line {line}: plan {record.plan} recalls for another query's text")
    return problems
