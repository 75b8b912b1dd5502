"""The property catalogue, checked over an event log.

Every simulation run, and every ``memrecall replay``, checks these on each
record (safety) and at the end of the log (liveness):

``one-terminal``    at most one terminal (refined) delivery record per plan
``fast-once``       at most one fast delivery per plan, and only at the initial point
``absorbing``       after its terminal record a plan produces nothing but ``ignore``
``own-documents``   a plan delivers only documents it was given by its own scan or selector
``provenance``      a plan recalls for its own query: opened with the text the runtime asked
                    (where the log records the runtime's calls), its scan started and
                    completed for that text's digest
``selector-view``   a selector call carries the manifest ids and digest its plan's scan reported
``window``          no initial delivery after the plan released the initial wait, which it
                    releases at most once
``surfaced``        a session's surfaced set changes only by the messages the log records
                    (``session`` records): each ``surfaced`` message names documents its plan
                    handed the runtime (the initial block, credited when the first request is
                    released, or a block in reply to a tool result), and each plan opens
                    excluding exactly the session's surfaced set
``no-duplicate``    no document is delivered twice by a plan, nor one the session had surfaced
``bounded``         a fast block holds at most 2 documents, a refined block at most 5
``privacy``         telemetry holds no free text: only its kind, enum values and numbers
``protocol``        no plan refused an event (a ``reject_event`` effect, a ``protocol_error`` end)
``terminates``      (liveness) every plan that opened has ended
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import msgspec

from memrecall.engine.render import MAX_FAST_DOCS, MAX_PROMPT_DOCS
from memrecall.events.effects import (
    CallSelector,
    Deliver,
    EmitTelemetry,
    Ignore,
    RejectEvent,
    ReleaseInitialWait,
    StartScan,
)
from memrecall.events.inputs import (
    ScanCompleted,
    SelectorSucceeded,
    ToolResult,
    UserQuery,
    text_digest,
)
from memrecall.events.surfaced import Surfaced
from memrecall.events.telemetry import (
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Phase,
    SelectorOutcome,
    Strategy,
    TelemetryRecord,
)
from memrecall.simulation.eventlog import LogRecord, PlanOpened, RuntimeCall, SessionChange

__all__ = ["RULES", "Violation", "check_log"]

# The only strings a telemetry record may hold: its kind and enum values.
_ALLOWED_STRINGS = frozenset(
    {"selection", "delivery"}
    | {
        e.value
        for enum in (Phase, DeliveryPoint, DiscardReason, Strategy, SelectorOutcome)
        for e in enum
    }
)


def _free_text(record: TelemetryRecord) -> set[str]:
    """Every string value in ``record`` that is not a kind or enum value."""
    values = msgspec.to_builtins(record)
    return {v for v in values.values() if isinstance(v, str) and v not in _ALLOWED_STRINGS}


RULES = (
    "one-terminal",
    "fast-once",
    "absorbing",
    "own-documents",
    "provenance",
    "selector-view",
    "window",
    "surfaced",
    "no-duplicate",
    "bounded",
    "privacy",
    "protocol",
    "terminates",
)


@attrs.frozen
class Violation:
    """A broken property: where, which rule, and what happened."""

    line: int
    plan: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"line {self.line}: plan {self.plan}: {self.rule}: {self.detail}"


@attrs.define
class _PlanView:
    opened_line: int
    session: str
    digest: str
    excluded: frozenset[str]
    given: set[str] = attrs.field(factory=set)
    delivered: set[str] = attrs.field(factory=set)
    terminal: bool = False
    fast: int = 0
    released: bool = False
    manifest: tuple[tuple[str, ...], str] | None = None  # the scan's ids and manifest digest
    pending_initial: set[str] = attrs.field(factory=set)  # delivered initially, not yet released
    handed: dict[DeliveryPoint, set[str]] = attrs.field(factory=dict)  # what the runtime got


def _session_of(record: PlanOpened) -> str:
    """The session part of a plan id ``<session>/<query id>``."""
    suffix = "/" + record.query.query_id
    return record.plan[: -len(suffix)] if record.plan.endswith(suffix) else record.plan


def check_log(records: Iterable[tuple[int, LogRecord]], *, final: bool = True) -> list[Violation]:
    """Check every property on numbered log records; ``final`` adds the liveness check."""
    plans: dict[str, _PlanView] = {}
    asked: dict[str, str] = {}  # plan id -> the text the runtime asked for
    surfaced: dict[str, set[str]] = {}  # session -> its surfaced set, as the log records it
    out: list[Violation] = []
    for line, record in records:
        if isinstance(record, RuntimeCall):
            if isinstance(record.event, UserQuery):
                asked[f"{record.session}/{record.event.query_id}"] = record.event.text
            continue
        if isinstance(record, SessionChange):
            out.extend(_surfaced_change(line, record, plans, surfaced))
            continue
        event = None
        if isinstance(record, PlanOpened):
            view = _PlanView(
                line,
                _session_of(record),
                text_digest(record.query.text),
                frozenset(record.excluded),
            )
            plans[record.plan] = view
            effects = record.effects
        else:
            view = plans[record.plan]
            event = record.event
            if isinstance(event, ScanCompleted):
                view.given.update(d.path for d in (*event.fallback, *event.fast))
            elif isinstance(event, SelectorSucceeded):
                view.given.update(d.path for d in event.selected)
            effects = record.effects

        def fail(rule: str, detail: str, line: int = line, plan: str = record.plan) -> None:
            out.append(Violation(line, plan, rule, detail))

        if isinstance(record, PlanOpened):
            wanted = asked.get(record.plan)
            if wanted is not None and wanted != record.query.text:
                fail("provenance", "opened with another text than the runtime asked")
            if record.options.query_digest != view.digest:
                fail("provenance", "the plan's options carry another query's digest")
            known = surfaced.get(view.session, set())
            if extra := view.excluded - known:
                fail("surfaced", f"excludes {len(extra)} documents never surfaced")
            if missing := known - view.excluded:
                fail("surfaced", f"does not exclude {len(missing)} surfaced documents")
        elif isinstance(event, ScanCompleted):
            view.manifest = (event.ids, event.manifest_digest)
            if event.query_digest != view.digest:
                fail("provenance", "the scan ran for another query's text")
        was_terminal = view.terminal
        for effect in effects:
            if was_terminal and not isinstance(effect, Ignore):
                fail("absorbing", f"{effect.__struct_config__.tag} after the terminal record")
            if isinstance(effect, StartScan) and effect.query_digest != view.digest:
                fail("provenance", "the recall started for another query's text")
            if isinstance(effect, CallSelector) and (
                view.manifest != (effect.ids, effect.manifest_digest) or not effect.ids
            ):
                fail("selector-view", "the selector call does not carry its scan's manifest")
            if isinstance(effect, RejectEvent):
                fail("protocol", f"refused {effect.event} in state {effect.state}: {effect.detail}")
            if isinstance(effect, ReleaseInitialWait):
                if view.released:
                    fail("window", "the initial wait released twice")
                else:  # the runtime gets the initial block as its first request is released
                    view.handed.setdefault(DeliveryPoint.INITIAL, set()).update(
                        view.pending_initial
                    )
                view.released = True
            if isinstance(effect, Deliver):
                if effect.point is DeliveryPoint.INITIAL:
                    if view.released:
                        fail("window", "an initial delivery after the wait was released")
                    else:
                        view.pending_initial.update(effect.paths)
                elif isinstance(event, ToolResult):
                    view.handed.setdefault(DeliveryPoint.TOOL_RESULT, set()).update(effect.paths)
                limit = MAX_FAST_DOCS if effect.phase is Phase.FAST else MAX_PROMPT_DOCS
                if not 1 <= len(effect.paths) <= limit:
                    fail("bounded", f"{effect.phase} block with {len(effect.paths)} documents")
                for path in effect.paths:
                    if path not in view.given:
                        fail("own-documents", f"delivered {path}, which this plan was not given")
                    if path in view.delivered or path in view.excluded:
                        fail("no-duplicate", f"delivered {path} again")
                    view.delivered.add(path)
            if isinstance(effect, EmitTelemetry):
                leaked = _free_text(effect.record)
                if leaked:
                    fail("privacy", f"telemetry carries free text: {sorted(leaked)}")
                record_ = effect.record
                if isinstance(record_, DeliveryRecord):
                    if record_.phase is Phase.FAST:
                        view.fast += 1
                        if view.fast > 1 or record_.delivery_point is not DeliveryPoint.INITIAL:
                            fail("fast-once", "a second fast delivery or one off the initial point")
                    elif view.terminal:
                        fail("one-terminal", "a second terminal record")
                    else:
                        view.terminal = True
                    if record_.discard_reason is DiscardReason.PROTOCOL_ERROR:
                        fail("protocol", "the plan ended with a protocol error")
    if final:
        for plan_id, view in plans.items():
            if not view.terminal:
                out.append(Violation(view.opened_line, plan_id, "terminates", "never ended"))
    return out


def _surfaced_change(
    line: int, record: SessionChange, plans: dict[str, _PlanView], surfaced: dict[str, set[str]]
) -> list[Violation]:
    """Apply one recorded change of a session's surfaced set; what it breaks."""
    known = surfaced.setdefault(record.session, set())
    change = record.change
    if not isinstance(change, Surfaced):
        known.clear()  # a reset
        return []
    view = plans.get(change.plan)
    if view is None or view.session != record.session:
        return [Violation(line, change.plan, "surfaced", "a document surfaced by no plan of ours")]
    known.update(change.paths)
    unreceived = set(change.paths) - view.handed.get(change.point, set())
    if unreceived:
        detail = f"surfaced {len(unreceived)} documents the runtime never received"
        return [Violation(line, change.plan, "surfaced", detail)]
    return []
