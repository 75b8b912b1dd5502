"""The recall-plan state machine: everything that decides what a plan does.

One plan serves one user query. :func:`start` opens it, :func:`step` feeds it
one event at a time and returns the new plan and the effects to carry out.
There is no I/O, no clock read and no randomness here: ``now`` (seconds on the
actor's clock) is an input, so the same code runs live under trio, on a
virtual clock in simulations, in replay from a log, and under Hypothesis.

States (``window`` = the bounded initial wait before the first request)::

    SCANNING         scan running, window open
    SCANNING_LATE    scan running, window over
    SELECTING        selector running, window open (no fast result exists)
    SELECTING_LATE   selector running, window over
    SETTLED          result ready, waiting for the next tool result
    DELIVERED        terminal: the refined result was delivered
    DISCARDED        terminal: the plan ended without delivering it
    FAILED           terminal: the plan received an impossible event (a protocol error)

Invariants (each checked by the property tests; docs/architecture.md names the
test and the replay rule of each):

* Every (state, event kind) pair is in :data:`TRANSITIONS`; a pair that changes
  nothing is an explicit :class:`~memrecall.events.Ignore` with its reason.
* A completion that the plan's own workers cannot produce in a state (a
  selector answer while scanning, a second scan result, a second deadline, a
  scan of another query's text) is a protocol error: :func:`step` raises
  :class:`PlanProtocolError` and :func:`fail` moves the plan to FAILED with its
  one terminal record (``protocol_error``). Runtime inputs are never protocol
  errors: one that changes nothing, or an initial deadline arriving after the
  wait already ended, is an ``Ignore``.
* Terminal states absorb: once DELIVERED, DISCARDED or FAILED, every event is ignored.
* The terminal telemetry record (``phase=refined``) is produced only by the
  transition into a terminal state, so exactly once per plan.
* The fast result is delivered at most once, only at the initial point, only
  while the window is open; a cancelled plan never delivers anything.
* A refined delivery never repeats a document the fast phase delivered.
* Every selection record and every refined record carries the selector's
  outcome (:class:`~memrecall.events.telemetry.SelectorOutcome`); a plan that
  ends while its selector call runs records ``cancelled``.
* Provenance: :class:`~memrecall.events.StartScan` carries the digest of the
  plan's own query text; a scan result for any other text is refused.
  :class:`~memrecall.events.CallSelector` carries the manifest ids and digest
  the selector is shown.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, TypeAlias

import attrs
import msgspec

from memrecall.engine.render import MAX_FAST_DOCS, MAX_PROMPT_DOCS, render_block
from memrecall.events.documents import MemoryDocument
from memrecall.events.effects import (
    ArmInitialDeadline,
    CallSelector,
    Deliver,
    Effect,
    EmitTelemetry,
    Ignore,
    RejectEvent,
    ReleaseInitialWait,
    StartScan,
)
from memrecall.events.inputs import (
    Abort,
    InitialDeadline,
    PlanEvent,
    Reset,
    ScanCompleted,
    ScanFailed,
    SelectorFailed,
    SelectorFailure,
    SelectorSucceeded,
    Shutdown,
    ToolResult,
    TurnEnd,
    UserQuery,
)
from memrecall.events.telemetry import (
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Phase,
    SelectionRecord,
    SelectorOutcome,
    Strategy,
)

__all__ = [
    "EVENT_TYPES",
    "INITIAL_WAIT",
    "TERMINAL_STATES",
    "TRANSITIONS",
    "Plan",
    "PlanOptions",
    "PlanProtocolError",
    "PlanState",
    "Result",
    "StepFunction",
    "fail",
    "start",
    "step",
    "transition_table",
]

INITIAL_WAIT = 0.100
"""Seconds the first request may wait for memory. Internal: not configuration."""


class PlanState(enum.Enum):
    """Where a plan is in its life."""

    SCANNING = "scanning"
    SCANNING_LATE = "scanning_late"
    SELECTING = "selecting"
    SELECTING_LATE = "selecting_late"
    SETTLED = "settled"
    DELIVERED = "delivered"
    DISCARDED = "discarded"
    FAILED = "failed"


TERMINAL_STATES = frozenset({PlanState.DELIVERED, PlanState.DISCARDED, PlanState.FAILED})
_WINDOW_OPEN = frozenset({PlanState.SCANNING, PlanState.SELECTING})
_SELECTOR_RUNNING = frozenset({PlanState.SELECTING, PlanState.SELECTING_LATE})


class PlanOptions(msgspec.Struct, frozen=True, kw_only=True):
    """What a plan is told when it opens (recorded in event logs).

    ``started_at`` is on the actor's clock (the one ``now`` comes from);
    ``wall_time`` is unix seconds at the start, used only to render ages.
    ``model_selection`` is False when no selector is configured: the
    deterministic top five is then the result and there is no fast phase.
    ``fast_result`` False gives upstream's earlier single-path design (no fast
    phase, the selector alone); it exists for the delivery evaluation.
    ``wait_for_selector`` True holds a fast result back while the window is
    open: the first request waits for the selector up to the end of the
    window, gets its pick if it answers in time, else the fast result at the
    deadline. False (the default, upstream's rule) delivers a fast result at once.
    """

    query_length: int
    started_at: float
    wall_time: float
    model_selection: bool = True
    fast_result: bool = True
    wait_for_selector: bool = False
    query_digest: str = ""
    """:func:`~memrecall.events.inputs.text_digest` of the query text (the plan actor sets it)."""


class PlanProtocolError(Exception):
    """An event the plan cannot receive in its state (like h11's ``LocalProtocolError``).

    Raised by :func:`step`; the caller then calls :func:`fail`, which moves the
    plan to its error terminal. It always means a bug in memrecall (a worker
    reported something it never could), never a runtime's mistake.
    """

    def __init__(self, state: PlanState, event: PlanEvent, detail: str) -> None:
        self.state = state
        self.event_kind = str(event.__struct_config__.tag)
        self.detail = detail
        super().__init__(f"plan in state {state.value} cannot take {self.event_kind}: {detail}")


@attrs.frozen
class Result:
    """A settled recall: the selected documents (best first) and how they were chosen."""

    selected: tuple[MemoryDocument, ...]
    strategy: Strategy


_NOTHING = Result((), Strategy.NONE)


@attrs.frozen
class Plan:
    """The whole state of one plan; a new value after every step."""

    state: PlanState
    options: PlanOptions
    docs_scanned: int = 0
    fallback: tuple[MemoryDocument, ...] = ()
    fast_delivered: tuple[str, ...] = ()
    fast_held: tuple[MemoryDocument, ...] = ()
    """A fast result held back while the window is open (``wait_for_selector``)."""
    result: Result | None = None
    selector_outcome: SelectorOutcome = SelectorOutcome.NOT_CALLED
    """How the selector call ended so far; ``cancelled`` is decided when a plan ends."""
    deadline_passed: bool = False
    """True once the initial deadline arrived (it arrives at most once)."""

    @property
    def terminal(self) -> bool:
        """True once the plan is over; it then ignores every event."""
        return self.state in TERMINAL_STATES

    @property
    def window_open(self) -> bool:
        """True while the first request is still waiting for this plan."""
        return self.state in _WINDOW_OPEN


Step: TypeAlias = tuple[Plan, list[Effect]]
StepFunction: TypeAlias = Callable[[Plan, PlanEvent, float], Step]
Handler: TypeAlias = Callable[[Plan, Any, float], Step]


def start(options: PlanOptions) -> Step:
    """Open a plan: scan, and arm the initial deadline."""
    plan = Plan(PlanState.SCANNING, options)
    return plan, [
        StartScan(query_digest=options.query_digest),
        ArmInitialDeadline(at=options.started_at + INITIAL_WAIT),
    ]


def _ms(plan: Plan, now: float) -> float:
    return round((now - plan.options.started_at) * 1000.0, 3)


def _paths(documents: tuple[MemoryDocument, ...]) -> tuple[str, ...]:
    return tuple(d.path for d in documents)


# -- terminal transitions: the only places that emit a refined record ------------------


def _consume(plan: Plan, point: DeliveryPoint, now: float) -> Step:
    """Deliver the settled result at ``point`` minus what the fast phase delivered."""
    result = plan.result or _NOTHING
    already = set(plan.fast_delivered)
    remaining = tuple(d for d in result.selected if d.path not in already)
    effects: list[Effect] = []
    if remaining:
        prompt = render_block(remaining, plan.options.wall_time)
        effects.append(
            Deliver(phase=Phase.REFINED, point=point, prompt=prompt, paths=_paths(remaining))
        )
        record = DeliveryRecord(
            phase=Phase.REFINED,
            delivery_point=point,
            strategy=result.strategy,
            docs_selected=len(remaining),
            latency_ms=_ms(plan, now),
            selector_outcome=plan.selector_outcome,
        )
        state = PlanState.DELIVERED
    else:
        reason = (
            DiscardReason.ALREADY_DELIVERED
            if result.selected
            else DiscardReason.NO_RELEVANT_RESULTS
        )
        record = _discard_record(plan, result, reason, now)
        state = PlanState.DISCARDED
    effects.append(EmitTelemetry(record=record))
    return attrs.evolve(plan, state=state), effects


def _discard_record(
    plan: Plan, result: Result, reason: DiscardReason, now: float
) -> DeliveryRecord:
    """The terminal record of a discard: the selector's count, whatever was delivered."""
    return DeliveryRecord(
        phase=Phase.REFINED,
        delivery_point=DeliveryPoint.DISCARDED,
        discard_reason=reason,
        strategy=result.strategy,
        docs_selected=len(result.selected),
        latency_ms=_ms(plan, now),
        selector_outcome=plan.selector_outcome,
    )


def _discard(plan: Plan, reason: DiscardReason, now: float) -> Step:
    """End the plan without delivering; a fully fast-delivered result counts as delivered."""
    result = plan.result or _NOTHING
    if (
        reason is not DiscardReason.PROTOCOL_ERROR
        and result.selected
        and all(d.path in plan.fast_delivered for d in result.selected)
    ):
        reason = DiscardReason.ALREADY_DELIVERED
    effects: list[Effect] = []
    if plan.state in _SELECTOR_RUNNING:
        plan = attrs.evolve(plan, selector_outcome=SelectorOutcome.CANCELLED)
    if plan.window_open:
        effects.append(ReleaseInitialWait())
    effects.append(EmitTelemetry(record=_discard_record(plan, result, reason, now)))
    return attrs.evolve(plan, state=PlanState.DISCARDED), effects


# -- settling ----------------------------------------------------------------------------


def _settle(plan: Plan, result: Result, now: float, *, record_selection: bool = True) -> Step:
    """The recall has its result: deliver at the initial point if the window is open."""
    effects: list[Effect] = []
    if record_selection:
        effects.append(
            EmitTelemetry(
                record=SelectionRecord(
                    query_length=plan.options.query_length,
                    docs_scanned=plan.docs_scanned,
                    docs_selected=len(result.selected),
                    strategy=result.strategy,
                    duration_ms=_ms(plan, now),
                    selector_outcome=plan.selector_outcome,
                )
            )
        )
    plan = attrs.evolve(plan, result=result)
    if plan.window_open:
        plan, delivered = _consume(plan, DeliveryPoint.INITIAL, now)
        return plan, [*effects, *delivered, ReleaseInitialWait()]
    return attrs.evolve(plan, state=PlanState.SETTLED), effects


def _fallback_result(plan: Plan) -> Result:
    fallback = plan.fallback[:MAX_PROMPT_DOCS]
    return Result(fallback, Strategy.HEURISTIC if fallback else Strategy.NONE)


# -- handlers ----------------------------------------------------------------------------


def _on_scan_completed(plan: Plan, event: ScanCompleted, now: float) -> Step:
    if event.query_digest != plan.options.query_digest:
        raise PlanProtocolError(plan.state, event, "the scan ran for another query's text")
    plan = attrs.evolve(plan, docs_scanned=event.docs_scanned, fallback=event.fallback)
    if not plan.options.model_selection:
        return _settle(plan, _fallback_result(plan), now)
    if event.candidates == 0:
        return _settle(plan, _NOTHING, now)
    fast = event.fast[:MAX_FAST_DOCS] if plan.options.fast_result else ()
    call = CallSelector(
        candidates=event.candidates, ids=event.ids, manifest_digest=event.manifest_digest
    )
    if plan.state is PlanState.SCANNING_LATE:
        return attrs.evolve(plan, state=PlanState.SELECTING_LATE), [call]
    if not fast:
        return attrs.evolve(plan, state=PlanState.SELECTING), [call]
    if plan.options.wait_for_selector:
        return attrs.evolve(plan, state=PlanState.SELECTING, fast_held=fast), [call]
    return _deliver_fast(plan, fast, now, [call])


_on_scan_completed.__doc__ = (
    "fast result (delivered only while the wait is open; held to the deadline when waiting"
    " for the selector), call the selector; none: settle"
)


def _deliver_fast(
    plan: Plan, fast: tuple[MemoryDocument, ...], now: float, then: list[Effect]
) -> Step:
    """Deliver ``fast`` at the initial point, release the first request, go on selecting."""
    paths = _paths(fast)
    effects: list[Effect] = [
        Deliver(
            phase=Phase.FAST,
            point=DeliveryPoint.INITIAL,
            prompt=render_block(fast, plan.options.wall_time),
            paths=paths,
        ),
        EmitTelemetry(
            record=DeliveryRecord(
                phase=Phase.FAST,
                delivery_point=DeliveryPoint.INITIAL,
                strategy=Strategy.HEURISTIC,
                docs_selected=len(fast),
                latency_ms=_ms(plan, now),
            )
        ),
        ReleaseInitialWait(),
        *then,
    ]
    plan = attrs.evolve(plan, state=PlanState.SELECTING_LATE, fast_delivered=paths, fast_held=())
    return plan, effects


def _on_scan_failed(plan: Plan, event: ScanFailed, now: float) -> Step:
    """settle with nothing (no selection record)"""
    return _settle(plan, _NOTHING, now, record_selection=False)


def _on_selector_succeeded(plan: Plan, event: SelectorSucceeded, now: float) -> Step:
    """settle with the selector's pick (strategy model, or none if empty)"""
    selected = event.selected[:MAX_PROMPT_DOCS]
    plan = attrs.evolve(plan, selector_outcome=SelectorOutcome.OK, fast_held=())
    return _settle(plan, Result(selected, Strategy.MODEL if selected else Strategy.NONE), now)


def _on_selector_failed(plan: Plan, event: SelectorFailed, now: float) -> Step:
    """settle with the heuristic top five (strategy heuristic)"""
    plan = attrs.evolve(plan, selector_outcome=_OUTCOMES[event.failure], fast_held=())
    return _settle(plan, _fallback_result(plan), now)


_OUTCOMES = {
    SelectorFailure.ERROR: SelectorOutcome.ERROR,
    SelectorFailure.INVALID: SelectorOutcome.INVALID_ANSWER,
    SelectorFailure.TIMEOUT: SelectorOutcome.TIMEOUT,
    SelectorFailure.HTTP_ERROR: SelectorOutcome.HTTP_ERROR,
    SelectorFailure.UNREACHABLE: SelectorOutcome.UNREACHABLE,
}


def _on_deadline(plan: Plan, event: InitialDeadline, now: float) -> Step:
    plan = attrs.evolve(plan, deadline_passed=True)
    if plan.fast_held:
        return _deliver_fast(plan, plan.fast_held, now, [])
    late = {
        PlanState.SCANNING: PlanState.SCANNING_LATE,
        PlanState.SELECTING: PlanState.SELECTING_LATE,
    }
    return attrs.evolve(plan, state=late[plan.state]), [ReleaseInitialWait()]


_on_deadline.__doc__ = (
    "release the first request (with a held fast result, else without memory);"
    " the plan stays pending"
)


def _on_late_deadline(plan: Plan, event: InitialDeadline, now: float) -> Step:
    """ignored if the wait ended early (the timer still fires); a second deadline: protocol error"""
    if plan.deadline_passed:
        raise PlanProtocolError(plan.state, event, "the initial deadline arrives only once")
    return attrs.evolve(plan, deadline_passed=True), [
        Ignore(reason="the initial wait is already over")
    ]


def _on_tool_result(plan: Plan, event: ToolResult, now: float) -> Step:
    """deliver the result minus fast documents, or discard (terminal)"""
    return _consume(plan, DeliveryPoint.TOOL_RESULT, now)


def _on_turn_end(plan: Plan, event: TurnEnd, now: float) -> Step:
    """tools requested: keep pending; otherwise discard no_safe_delivery_point"""
    if event.tools_requested:
        return plan, [Ignore(reason="the turn requested tools: a tool result will follow")]
    return _discard(plan, DiscardReason.NO_SAFE_DELIVERY_POINT, now)


def _cancel(reason: DiscardReason) -> Handler:
    def handler(plan: Plan, event: object, now: float) -> Step:
        return _discard(plan, reason, now)

    handler.__doc__ = f"discard: {reason.value} (terminal)"
    return handler


def _impossible(detail: str) -> Handler:
    def handler(plan: Plan, event: PlanEvent, now: float) -> Step:
        raise PlanProtocolError(plan.state, event, detail)

    handler.__doc__ = f"protocol error: {detail}"
    return handler


def fail(plan: Plan, error: PlanProtocolError, now: float) -> Step:
    """Move a plan that raised ``error`` to FAILED, with its one terminal record.

    Like any cancellation it delivers nothing and releases a still-open initial
    wait (the actor stops the plan's work when it leaves its loop). A plan that
    is already over stays as it is.
    """
    if plan.terminal:
        return plan, [Ignore(reason="the plan is over")]
    plan, effects = _discard(plan, DiscardReason.PROTOCOL_ERROR, now)
    reject = RejectEvent(state=error.state.value, event=error.event_kind, detail=error.detail)
    return attrs.evolve(plan, state=PlanState.FAILED), [reject, *effects]


def _ignore(reason: str) -> Handler:
    def handler(plan: Plan, event: object, now: float) -> Step:
        return plan, [Ignore(reason=reason)]

    handler.__doc__ = f"ignored: {reason}"
    return handler


# -- the table ---------------------------------------------------------------------------

EVENT_TYPES: tuple[type[PlanEvent], ...] = (
    UserQuery,
    ToolResult,
    TurnEnd,
    Reset,
    Abort,
    Shutdown,
    ScanCompleted,
    ScanFailed,
    SelectorSucceeded,
    SelectorFailed,
    InitialDeadline,
)

_CANCELLATIONS: dict[type[PlanEvent], Handler] = {
    UserQuery: _cancel(DiscardReason.NEW_QUERY),
    Reset: _cancel(DiscardReason.RESET),
    Abort: _cancel(DiscardReason.ABORT),
    Shutdown: _cancel(DiscardReason.SHUTDOWN),
    TurnEnd: _on_turn_end,
}

_STALE_SCAN = _impossible("the scan already reported (one scan per plan)")
_STALE_SELECTOR = _impossible("no selector call is running in this state")
_SECOND_DEADLINE = _impossible("the initial deadline arrives only once")
_EARLY_TOOL = _ignore("the first request has not been sent, so no tool result can exist")
_PENDING_TOOL = _ignore("the recall has not settled; it stays pending for a later tool result")
_OVER = _ignore("the plan is over")

TRANSITIONS: dict[tuple[PlanState, type[PlanEvent]], Handler] = {}


def _row(state: PlanState, handlers: dict[type[PlanEvent], Handler]) -> None:
    for event_type in EVENT_TYPES:
        TRANSITIONS[state, event_type] = handlers[event_type]


_row(
    PlanState.SCANNING,
    {
        **_CANCELLATIONS,
        ToolResult: _EARLY_TOOL,
        ScanCompleted: _on_scan_completed,
        ScanFailed: _on_scan_failed,
        SelectorSucceeded: _STALE_SELECTOR,
        SelectorFailed: _STALE_SELECTOR,
        InitialDeadline: _on_deadline,
    },
)
_row(
    PlanState.SCANNING_LATE,
    {
        **_CANCELLATIONS,
        ToolResult: _PENDING_TOOL,
        ScanCompleted: _on_scan_completed,
        ScanFailed: _on_scan_failed,
        SelectorSucceeded: _STALE_SELECTOR,
        SelectorFailed: _STALE_SELECTOR,
        InitialDeadline: _SECOND_DEADLINE,
    },
)
_row(
    PlanState.SELECTING,
    {
        **_CANCELLATIONS,
        ToolResult: _EARLY_TOOL,
        ScanCompleted: _STALE_SCAN,
        ScanFailed: _STALE_SCAN,
        SelectorSucceeded: _on_selector_succeeded,
        SelectorFailed: _on_selector_failed,
        InitialDeadline: _on_deadline,
    },
)
_row(
    PlanState.SELECTING_LATE,
    {
        **_CANCELLATIONS,
        ToolResult: _PENDING_TOOL,
        ScanCompleted: _STALE_SCAN,
        ScanFailed: _STALE_SCAN,
        SelectorSucceeded: _on_selector_succeeded,
        SelectorFailed: _on_selector_failed,
        InitialDeadline: _on_late_deadline,
    },
)
_row(
    PlanState.SETTLED,
    {
        **_CANCELLATIONS,
        ToolResult: _on_tool_result,
        ScanCompleted: _STALE_SCAN,
        ScanFailed: _STALE_SCAN,
        SelectorSucceeded: _STALE_SELECTOR,
        SelectorFailed: _STALE_SELECTOR,
        InitialDeadline: _on_late_deadline,
    },
)
for _terminal in TERMINAL_STATES:
    _row(_terminal, dict.fromkeys(EVENT_TYPES, _OVER))


def transition_table() -> str:
    """The transition table as Markdown (docs/architecture.md embeds it verbatim)."""
    kinds = [t.__struct_config__.tag for t in EVENT_TYPES]
    lines = ["| state | event | what happens |", "| --- | --- | --- |"]
    for state in PlanState:
        for event_type, kind in zip(EVENT_TYPES, kinds, strict=True):
            doc = (TRANSITIONS[state, event_type].__doc__ or "").strip()
            lines.append(f"| `{state.value}` | `{kind}` | {doc} |")
    return "\n".join(lines) + "\n"


def step(plan: Plan, event: PlanEvent, now: float) -> Step:
    """Feed one event at time ``now``; return the new plan and the effects, in order.

    Raises :class:`PlanProtocolError` for an event the plan cannot receive in
    its state; the caller then moves the plan to its error terminal with
    :func:`fail`.
    """
    handler = TRANSITIONS[plan.state, type(event)]
    return handler(plan, event, now)
