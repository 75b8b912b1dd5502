"""The pure plan state machine: totality, and a reference model that checks every effect.

:class:`Reference` is an independent model of what one plan must do, written
from the rules in docs/architecture.md ("Rules the table implements"), not from
``engine/plan.py``: its stage, whether the initial window is open, what the
fast phase delivered, what it holds back, the settled result, the selector's
outcome, and how the plan must end. :class:`PlanModel` drives a session's
worth of plans with events that can really happen in each stage
(preconditions), and compares every effect of every step — deliveries,
telemetry records with their discard reasons, releases of the initial window —
with what the reference expects, exactly.

The documents come from one shared pool, so plans of different queries see
overlapping documents (minus what the session already surfaced, as the scan
excludes them): a delivery is right only if it is exactly the reference's.

Numbers are the specification's literals (0.100 s, 2 fast documents, 5 per
block), never imported from the code under test.
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from memrecall.engine.plan import (
    EVENT_TYPES,
    TERMINAL_STATES,
    TRANSITIONS,
    Plan,
    PlanOptions,
    PlanProtocolError,
    PlanState,
    fail,
    start,
    step,
)
from memrecall.engine.render import render_block
from memrecall.events import (
    Abort,
    ArmInitialDeadline,
    CallSelector,
    Deliver,
    DeliveryPoint,
    DeliveryRecord,
    DiscardReason,
    Effect,
    EmitTelemetry,
    Ignore,
    InitialDeadline,
    MemoryDocument,
    Phase,
    PlanEvent,
    RejectEvent,
    ReleaseInitialWait,
    Reset,
    ScanCompleted,
    ScanFailed,
    SelectionRecord,
    SelectorFailed,
    SelectorFailure,
    SelectorOutcome,
    SelectorSucceeded,
    Shutdown,
    StartScan,
    Strategy,
    ToolResult,
    TurnEnd,
    UserQuery,
)

from .lifecycle_kit import WALL, doc
from .strategies import plan_events

# -- the specification's numbers -----------------------------------------------------------

SPEC_WAIT = 0.100  # seconds the first request may wait
SPEC_FAST = 2  # documents in a fast block at most
SPEC_BLOCK = 5  # documents in a refined block at most

OPTIONS = PlanOptions(query_length=5, started_at=0.0, wall_time=WALL)


def digest(text: str) -> str:
    """The documented digest: SHA-256 of the UTF-8 text, first 16 hex digits."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# -- totality ----------------------------------------------------------------------------


def test_every_state_and_event_pair_is_in_the_table() -> None:
    for state in PlanState:
        for event_type in EVENT_TYPES:
            assert (state, event_type) in TRANSITIONS, (state, event_type)
    assert len(TRANSITIONS) == len(PlanState) * len(EVENT_TYPES)


@given(st.sampled_from(PlanState), plan_events, st.floats(0, 100), st.booleans())
def test_every_pair_transitions_per_the_table_or_raises_the_protocol_error(
    state: PlanState, event: Any, now: float, deadline_passed: bool
) -> None:
    """h2's totality check: a step changes the plan, says why it did not, or raises."""
    plan = Plan(state, OPTIONS, deadline_passed=deadline_passed)
    kind = event.__struct_config__.tag
    documented = (TRANSITIONS[state, type(event)].__doc__ or "").strip()
    conditional = documented.startswith("ignored if")  # a late deadline: only a second one raises
    if documented.startswith("protocol error") or (conditional and deadline_passed):
        with pytest.raises(PlanProtocolError) as caught:
            step(plan, event, now)
        assert caught.value.state is state
        assert caught.value.event_kind == kind
        # The error moves the plan to its error terminal with its one terminal record.
        failed, effects = fail(plan, caught.value, now)
        assert failed.state is PlanState.FAILED
        assert isinstance(effects[0], RejectEvent)
        terminal = [
            e.record
            for e in effects
            if isinstance(e, EmitTelemetry) and isinstance(e.record, DeliveryRecord)
        ]
        assert [r.discard_reason for r in terminal] == [DiscardReason.PROTOCOL_ERROR]
        assert not any(isinstance(e, Deliver) for e in effects)
        return
    after, effects = step(plan, event, now)
    assert not documented.startswith("protocol error") or "ignored" in documented
    changed = after != plan
    assert changed or all(isinstance(e, Ignore) for e in effects)
    assert changed or effects, "a no-op step always says why it did nothing"
    if state in TERMINAL_STATES:
        assert after == plan
        assert all(isinstance(e, Ignore) for e in effects)


ONE_OF_EACH: tuple[PlanEvent, ...] = (
    UserQuery(query_id="q", text="t"),
    ToolResult(),
    TurnEnd(tools_requested=True),
    Reset(),
    Abort(),
    Shutdown(),
    ScanCompleted(docs_scanned=1, fallback=(), fast=(), candidates=1),
    ScanFailed(reason="x"),
    SelectorSucceeded(selected=()),
    SelectorFailed(failure=SelectorFailure.ERROR),
    InitialDeadline(),
)


@pytest.mark.parametrize("state", list(PlanState))
@pytest.mark.parametrize("deadline_passed", [False, True])
def test_every_pair_exhaustively(state: PlanState, deadline_passed: bool) -> None:
    """The property above on one event of each kind, for every state (nothing left to chance)."""
    assert {type(e) for e in ONE_OF_EACH} == set(EVENT_TYPES)
    check = test_every_pair_transitions_per_the_table_or_raises_the_protocol_error
    for event in ONE_OF_EACH:
        check.hypothesis.inner_test(state, event, 1.0, deadline_passed)  # type: ignore[attr-defined]


@pytest.mark.parametrize("state", [s for s in PlanState if s not in TERMINAL_STATES])
def test_runtime_inputs_are_never_protocol_errors(state: PlanState) -> None:
    runtime: list[PlanEvent] = [
        UserQuery(query_id="q", text="t"),
        ToolResult(),
        TurnEnd(tools_requested=True),
    ]
    runtime += [TurnEnd(tools_requested=False), Reset(), Abort(), Shutdown()]
    for event in runtime:
        step(Plan(state, OPTIONS), event, 1.0)  # never raises


def test_start_scans_for_its_own_query_and_arms_the_deadline_at_100_ms() -> None:
    options = PlanOptions(query_length=5, started_at=7.0, wall_time=WALL, query_digest="abc")
    plan, effects = start(options)
    assert plan.state is PlanState.SCANNING
    assert effects == [StartScan(query_digest="abc"), ArmInitialDeadline(at=7.0 + SPEC_WAIT)]


def test_failing_a_finished_plan_changes_nothing() -> None:
    plan, _ = start(OPTIONS)
    over, _ = step(plan, Abort(), 0.01)
    error = PlanProtocolError(over.state, InitialDeadline(), "late")
    after, effects = fail(over, error, 0.02)
    assert after == over
    assert _normal(effects) == _ignored()


def test_a_scan_of_another_query_is_refused() -> None:
    options = PlanOptions(query_length=5, started_at=0.0, wall_time=WALL, query_digest="mine")
    plan, _ = start(options)
    stray = ScanCompleted(
        docs_scanned=1, fallback=(), fast=(), candidates=1, query_digest=digest("other")
    )
    with pytest.raises(PlanProtocolError, match="another query"):
        step(plan, stray, 0.01)


# -- the reference model -------------------------------------------------------------------

POOL = tuple(doc(f"d{i}") for i in range(8))
"""Every plan draws its documents from this one pool: plans see overlapping documents."""

_OUTCOME_OF = {
    SelectorFailure.ERROR: SelectorOutcome.ERROR,
    SelectorFailure.INVALID: SelectorOutcome.INVALID_ANSWER,
    SelectorFailure.TIMEOUT: SelectorOutcome.TIMEOUT,
    SelectorFailure.HTTP_ERROR: SelectorOutcome.HTTP_ERROR,
    SelectorFailure.UNREACHABLE: SelectorOutcome.UNREACHABLE,
}
_REASON_OF = {
    "abort": DiscardReason.ABORT,
    "reset": DiscardReason.RESET,
    "shutdown": DiscardReason.SHUTDOWN,
}


_CANCEL: dict[str, PlanEvent] = {"abort": Abort(), "reset": Reset(), "shutdown": Shutdown()}


def _kind(event: PlanEvent) -> str:
    return str(event.__struct_config__.tag)


def _ignored() -> list[Effect]:
    """What a step that changes nothing returns (the reason's wording is not specified)."""
    return [Ignore(reason="")]


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


Docs = tuple[MemoryDocument, ...]


@attrs.define
class Reference:
    """What one plan must do, from the specification. Methods return the expected effects."""

    started: float
    query_length: int
    wait_for_selector: bool
    model_selection: bool
    fast_result: bool
    stage: str = "scan"  # scan | select | settled | over
    window: bool = True  # the first request is still waiting
    deadline_passed: bool = False
    docs_scanned: int = 0
    fallback: Docs = ()
    fast_sent: tuple[str, ...] = ()
    held: Docs = ()
    result: tuple[Docs, Strategy] | None = None
    outcome: SelectorOutcome = SelectorOutcome.NOT_CALLED
    ended: str | None = None  # "delivered" | "discarded" | "failed"
    received: list[str] = attrs.field(factory=list)  # what the runtime got, in order

    def state_name(self) -> str:
        """The documented name of the state the plan must be in."""
        if self.ended is not None:
            return self.ended
        name = {"scan": "scanning", "select": "selecting", "settled": "settled"}[self.stage]
        return name if self.window or self.stage == "settled" else f"{name}_late"

    # -- pieces ---------------------------------------------------------------------------

    def _discard_record(
        self, reason: DiscardReason, now: float, outcome: SelectorOutcome
    ) -> EmitTelemetry:
        docs, strategy = self.result or ((), Strategy.NONE)
        return EmitTelemetry(
            record=DeliveryRecord(
                phase=Phase.REFINED,
                delivery_point=DeliveryPoint.DISCARDED,
                discard_reason=reason,
                strategy=strategy,
                docs_selected=len(docs),
                latency_ms=_ms(now - self.started),
                selector_outcome=outcome,
            )
        )

    def end(self, reason: DiscardReason, now: float, *, failed: bool = False) -> list[Effect]:
        """A cancellation (or a protocol error): no delivery, the one terminal record."""
        docs = self.result[0] if self.result else ()
        if not failed and docs and all(d.path in self.fast_sent for d in docs):
            reason = DiscardReason.ALREADY_DELIVERED
        outcome = SelectorOutcome.CANCELLED if self.stage == "select" else self.outcome
        effects: list[Effect] = []
        if self.window:
            effects.append(ReleaseInitialWait())
        effects.append(self._discard_record(reason, now, outcome))
        self.stage, self.window, self.held = "over", False, ()
        self.ended = "failed" if failed else "discarded"
        return effects

    def _consume(self, point: DeliveryPoint, now: float) -> list[Effect]:
        assert self.result is not None
        docs, strategy = self.result
        remaining = tuple(d for d in docs if d.path not in self.fast_sent)
        self.stage = "over"
        if not remaining:
            self.ended = "discarded"
            reason = DiscardReason.ALREADY_DELIVERED if docs else DiscardReason.NO_RELEVANT_RESULTS
            return [self._discard_record(reason, now, self.outcome)]
        self.ended = "delivered"
        paths = tuple(d.path for d in remaining)
        if point is DeliveryPoint.TOOL_RESULT or self.window:
            self.received.extend(paths)
        return [
            Deliver(
                phase=Phase.REFINED,
                point=point,
                prompt=render_block(remaining, WALL),
                paths=paths,
            ),
            EmitTelemetry(
                record=DeliveryRecord(
                    phase=Phase.REFINED,
                    delivery_point=point,
                    strategy=strategy,
                    docs_selected=len(remaining),
                    latency_ms=_ms(now - self.started),
                    selector_outcome=self.outcome,
                )
            ),
        ]

    def _settle(self, docs: Docs, strategy: Strategy, now: float, *, record: bool) -> list[Effect]:
        effects: list[Effect] = []
        if record:
            selection = SelectionRecord(
                query_length=self.query_length,
                docs_scanned=self.docs_scanned,
                docs_selected=len(docs),
                strategy=strategy,
                duration_ms=_ms(now - self.started),
                selector_outcome=self.outcome,
            )
            effects.append(EmitTelemetry(record=selection))
        self.result = (docs, strategy)
        if self.window:
            effects += self._consume(DeliveryPoint.INITIAL, now)
            effects.append(ReleaseInitialWait())
            self.window = False
        else:
            self.stage = "settled"
        return effects

    def _deliver_fast(self, fast: Docs, now: float) -> list[Effect]:
        assert self.window, "a fast result is delivered only while the window is open"
        paths = tuple(d.path for d in fast)
        self.fast_sent, self.held, self.window = paths, (), False
        self.received.extend(paths)
        return [
            Deliver(
                phase=Phase.FAST,
                point=DeliveryPoint.INITIAL,
                prompt=render_block(fast, WALL),
                paths=paths,
            ),
            EmitTelemetry(
                record=DeliveryRecord(
                    phase=Phase.FAST,
                    delivery_point=DeliveryPoint.INITIAL,
                    strategy=Strategy.HEURISTIC,
                    docs_selected=len(fast),
                    latency_ms=_ms(now - self.started),
                )
            ),
            ReleaseInitialWait(),
        ]

    def _top(self) -> tuple[Docs, Strategy]:
        top = self.fallback[:SPEC_BLOCK]
        return top, Strategy.HEURISTIC if top else Strategy.NONE

    # -- events ---------------------------------------------------------------------------

    def scan_completed(self, event: ScanCompleted, now: float) -> list[Effect]:
        """The scan reported: settle without a selector, else call it (and maybe go fast)."""
        self.docs_scanned, self.fallback = event.docs_scanned, event.fallback
        if not self.model_selection:
            return self._settle(*self._top(), now, record=True)
        if event.candidates == 0:
            return self._settle((), Strategy.NONE, now, record=True)
        call = CallSelector(
            candidates=event.candidates, ids=event.ids, manifest_digest=event.manifest_digest
        )
        self.stage = "select"
        fast = event.fast[:SPEC_FAST] if self.fast_result else ()
        if not self.window or not fast:
            return [call]
        if self.wait_for_selector:
            self.held = fast
            return [call]
        return [*self._deliver_fast(fast, now), call]

    def scan_failed(self, now: float) -> list[Effect]:
        """Nothing to recall: settle empty, no selection record."""
        return self._settle((), Strategy.NONE, now, record=False)

    def selector_answered(self, chosen: Docs, now: float) -> list[Effect]:
        """A valid answer settles the recall with the pick (the held fast result is dropped)."""
        self.outcome, self.held = SelectorOutcome.OK, ()
        picked = chosen[:SPEC_BLOCK]
        return self._settle(picked, Strategy.MODEL if picked else Strategy.NONE, now, record=True)

    def selector_failed(self, failure: SelectorFailure, now: float) -> list[Effect]:
        """A failed call settles with the lexical top five."""
        self.outcome, self.held = _OUTCOME_OF[failure], ()
        return self._settle(*self._top(), now, record=True)

    def deadline(self, now: float) -> list[Effect]:
        """The 100 ms ceiling: release the first request (with the held fast result)."""
        self.deadline_passed = True
        if not self.window:
            return _ignored()
        if self.held:
            return self._deliver_fast(self.held, now)
        self.window = False
        return [ReleaseInitialWait()]

    def tool_result(self, now: float) -> list[Effect]:
        """A settled recall is delivered (minus fast documents) at a tool result."""
        if self.stage == "settled":
            return self._consume(DeliveryPoint.TOOL_RESULT, now)
        return _ignored()

    def turn_end(self, tools: bool, now: float) -> list[Effect]:
        """Without tool requests nothing can be delivered later."""
        if tools:
            return _ignored()
        return self.end(DiscardReason.NO_SAFE_DELIVERY_POINT, now)

    def refuse(self, kind: str, now: float) -> list[Effect]:
        """An impossible completion: the error terminal."""
        reject = RejectEvent(state=self.state_name(), event=kind, detail="")
        return [reject, *self.end(DiscardReason.PROTOCOL_ERROR, now, failed=True)]


def _normal(effects: list[Effect]) -> list[Effect]:
    """Effects with the free-text reasons blanked (their wording is not specified)."""
    out: list[Effect] = []
    for effect in effects:
        if isinstance(effect, Ignore):
            assert isinstance(effect.reason, str)
            assert effect.reason, "an ignore says why"
            out.append(Ignore(reason=""))
        elif isinstance(effect, RejectEvent):
            assert isinstance(effect.detail, str)
            assert effect.detail, "a refusal says why"
            out.append(RejectEvent(state=effect.state, event=effect.event, detail=""))
        else:
            out.append(effect)
    return out


POLICIES = st.sampled_from(["fast", "fast", "fast", "wait", "no-selector", "no-fast"])
"""How a plan is configured: the default (fast result at once) most often."""


class PlanModel(RuleBasedStateMachine):
    """A session's plans, one per query, driven by events that can happen in each stage."""

    # -- opening plans ---------------------------------------------------------------------

    @initialize(policy=POLICIES)
    def open_first(self, policy: str) -> None:
        self.now = 0.0
        self.query = 0
        self.surfaced: set[str] = set()  # what the session's runtime received since reset
        self._open(policy)

    def _open(self, policy: str) -> None:
        self.query += 1
        self.text = f"query number {self.query}"
        options = PlanOptions(
            query_length=len(self.text),
            started_at=self.now,
            wall_time=WALL,
            model_selection=policy != "no-selector",
            fast_result=policy != "no-fast",
            wait_for_selector=policy == "wait",
            query_digest=digest(self.text),
        )
        self.ref = Reference(
            started=self.now,
            query_length=len(self.text),
            wait_for_selector=policy == "wait",
            model_selection=policy != "no-selector",
            fast_result=policy != "no-fast",
        )
        self.plan, effects = start(options)
        assert effects == [
            StartScan(query_digest=digest(self.text)),
            ArmInitialDeadline(at=self.now + SPEC_WAIT),
        ]

    def _candidates(self, picks: list[int]) -> Docs:
        """Pool documents by index, minus what the session surfaced (the scan excludes them)."""
        docs = (POOL[i] for i in dict.fromkeys(picks))
        return tuple(d for d in docs if d.path not in self.surfaced)

    # -- feeding ---------------------------------------------------------------------------

    def _expect(self, event: PlanEvent, expected: list[Effect]) -> None:
        before = self.plan
        self.plan, effects = step(self.plan, event, self.now)
        if before.terminal:
            assert self.plan == before
        assert _normal(effects) == expected, (event, effects, expected)
        self._absorb(effects)

    def _absorb(self, effects: list[Effect]) -> None:
        self.surfaced.update(self.ref.received)
        self.ref.received.clear()
        for effect in effects:
            if isinstance(effect, Deliver):
                # Every document it delivers reached the runtime (the window rule).
                assert set(effect.paths) <= self.surfaced

    def _refused(self, event: PlanEvent) -> None:
        with pytest.raises(PlanProtocolError) as caught:
            step(self.plan, event, self.now)
        expected = self.ref.refuse(_kind(event), self.now)
        self.plan, effects = fail(self.plan, caught.value, self.now)
        assert _normal(effects) == expected, (event, effects, expected)
        self._absorb(effects)

    @property
    def open(self) -> bool:
        return self.ref.ended is None

    @property
    def deadline_pending(self) -> bool:
        return self.open and not self.ref.deadline_passed

    # -- time ------------------------------------------------------------------------------

    @rule(seconds=st.sampled_from([0.001, 0.0123456, 0.03, 0.07, 0.2, 5.0]))
    def advance(self, seconds: float) -> None:
        target = self.now + seconds
        deadline_at = self.ref.started + SPEC_WAIT
        if self.deadline_pending and target >= deadline_at:
            self.now = max(self.now, deadline_at)  # the timer fires on the way
            self._expect(InitialDeadline(), self.ref.deadline(self.now))
        self.now = max(self.now, target)

    @precondition(lambda self: self.deadline_pending)
    @rule()
    def deadline(self) -> None:
        self.now = max(self.now, self.ref.started + SPEC_WAIT)
        self._expect(InitialDeadline(), self.ref.deadline(self.now))

    # -- the plan's own workers ------------------------------------------------------------

    @precondition(lambda self: self.open and self.ref.stage == "scan")
    @rule(
        fallback=st.lists(st.integers(0, 7), max_size=7),
        fast=st.sampled_from([(), (0,), (1,), (0, 1), (0, 1)]),
        candidates=st.sampled_from([0, 1, 3, 3, 3]),
        failed=st.sampled_from([False, False, False, False, True]),
    )
    def scan_reports(
        self, fallback: list[int], fast: tuple[int, ...], candidates: int, failed: bool
    ) -> None:
        if failed:
            self._expect(ScanFailed(reason="OSError"), self.ref.scan_failed(self.now))
            return
        docs = self._candidates(fallback)[:SPEC_BLOCK]
        strong = tuple(docs[i] for i in fast if i < len(docs))
        ids = tuple(f"project/{d.relative_path}" for d in docs)
        event = ScanCompleted(
            docs_scanned=len(POOL),
            fallback=docs,
            fast=strong,
            candidates=candidates,
            query_digest=digest(self.text),
            ids=ids,
            manifest_digest=digest("\n".join(ids)),
        )
        self._expect(event, self.ref.scan_completed(event, self.now))

    @precondition(lambda self: self.open and self.ref.stage == "select")
    @rule(
        chosen=st.lists(st.sampled_from([0, 1]) | st.integers(0, 11), max_size=6),
        failure=st.sampled_from([None, None, None, *SelectorFailure]),
    )
    def selector_reports(self, chosen: list[int], failure: SelectorFailure | None) -> None:
        if failure is not None:
            self._expect(
                SelectorFailed(failure=failure), self.ref.selector_failed(failure, self.now)
            )
            return
        # 0-3 pick among the scan's top documents (the manifest's head), 4-11 the whole pool.
        head = self.ref.fallback
        picked = tuple(
            dict.fromkeys(head[i] if i < len(head) else POOL[i % len(POOL)] for i in chosen)
        )
        picked = tuple(d for d in picked if d.path not in self.surfaced)
        self._expect(
            SelectorSucceeded(selected=picked), self.ref.selector_answered(picked, self.now)
        )

    # -- the runtime -----------------------------------------------------------------------

    @rule(
        kind=st.sampled_from(
            ["tool", "tool", "tool", "tools", "tools", "end", "abort", "reset", "shutdown", "query"]
        ),
        policy=POLICIES,
    )
    def runtime(self, kind: str, policy: str) -> None:
        if kind == "query":
            self.new_query(policy)
        elif kind == "tool":
            expected = self.ref.tool_result(self.now) if self.open else _ignored()
            self._expect(ToolResult(), expected)
        elif kind in ("tools", "end"):
            tools = kind == "tools"
            expected = self.ref.turn_end(tools, self.now) if self.open else _ignored()
            self._expect(TurnEnd(tools_requested=tools), expected)
        else:
            event = _CANCEL[kind]
            ended = self.ref.end(_REASON_OF[kind], self.now) if self.open else _ignored()
            self._expect(event, ended)
            if kind == "reset":
                self.surfaced.clear()

    @precondition(lambda self: not self.open)
    @rule(policy=POLICIES)
    def new_query(self, policy: str) -> None:
        """The next user turn (a pending plan is discarded: new_query)."""
        event = UserQuery(query_id=f"q{self.query + 1}", text=f"query number {self.query + 1}")
        expected = self.ref.end(DiscardReason.NEW_QUERY, self.now) if self.open else _ignored()
        self._expect(event, expected)
        self._open(policy)

    # -- what cannot happen: completions no worker of this plan can produce now ------------

    @precondition(lambda self: self.open)
    @rule(
        kind=st.sampled_from(["scan", "selector", "foreign-scan", "deadline"]),
        now=st.integers(0, 3),
    )
    def impossible(self, kind: str, now: int) -> None:
        stage = self.ref.stage
        if now:
            return  # three draws in four do nothing, so plans mostly live on
        if kind == "scan" and stage != "scan":
            self._refused(
                ScanCompleted(
                    docs_scanned=1,
                    fallback=(),
                    fast=(),
                    candidates=0,
                    query_digest=digest(self.text),
                )
            )
        elif kind == "selector" and stage != "select":
            self._refused(SelectorSucceeded(selected=()))
        elif kind == "foreign-scan" and stage == "scan":
            self._refused(
                ScanCompleted(
                    docs_scanned=1,
                    fallback=(),
                    fast=(),
                    candidates=1,
                    query_digest=digest(f"query number {self.query - 1}"),
                )
            )
        elif kind == "deadline" and self.ref.deadline_passed:
            self._refused(InitialDeadline())

    # -- invariants ------------------------------------------------------------------------

    @invariant()
    def the_state_is_the_references(self) -> None:
        assert self.plan.state.value == self.ref.state_name()
        assert self.plan.window_open == (self.ref.window and self.open)
        assert self.plan.terminal == (not self.open)


PlanModel.TestCase.settings = settings(
    stateful_step_count=40, deadline=None, max_examples=max(200, settings().max_examples)
)
TestPlanModel = PlanModel.TestCase


# -- every short story, exhaustively ------------------------------------------------------------
#
# The random walk above explores documents and long sessions; this explores every sequence of
# up to DEPTH events from a fixed alphabet, for every plan configuration, so the deep stories (a
# fast delivery, then a selector answer overlapping it, then a tool result) are checked on every
# run, not when the random draws happen to reach them.

DEPTH = 7
A, B, C, D, E, F = (POOL[i] for i in range(6))


def _scan(fallback: Docs, fast: Docs, candidates: int, text: str) -> ScanCompleted:
    return ScanCompleted(
        docs_scanned=len(POOL),
        fallback=fallback,
        fast=fast,
        candidates=candidates,
        query_digest=digest(text),
        ids=tuple(d.relative_path for d in fallback),
        manifest_digest=digest("m" + text),
    )


_SCANS = {
    "scan-fast": ((A, B, C), (A, B), 3),
    "scan-one-fast": ((A, B, C), (B,), 3),
    "scan-no-fast": ((A, B, C), (), 3),
    "scan-no-candidates": ((A,), (A,), 0),
    "scan-six": ((A, B, C, D, E, F), (A, B), 6),
}
_PICKS = {
    "pick-partial": (B, D),
    "pick-fast": (A, B),
    "pick-none": (),
    "pick-six": (F, E, D, C, B, A),
}
_ALPHABET = (
    "wait-30ms",
    "wait-12.3456ms",
    "wait-200ms",
    "deadline",
    *_SCANS,
    "scan-failed",
    *_PICKS,
    "selector-timeout",
    "tool",
    "tools",
    "end",
    "abort",
    "reset",
    "shutdown",
    "query",
    "impossible",
    "second-deadline",
)


@attrs.define
class _World:
    plan: Plan
    ref: Reference
    now: float

    def key(self) -> tuple[object, ...]:
        return (self.plan, repr(attrs.astuple(self.ref)), round(self.now, 6))


def _feed_world(world: _World, event: PlanEvent, expected: list[Effect], story: list[str]) -> None:
    world.plan, effects = step(world.plan, event, world.now)
    assert _normal(effects) == expected, (story, effects, expected)


def _play(world: _World, symbol: str, story: list[str]) -> bool:
    """Play one symbol on ``world`` (checking it); False if it cannot happen there."""
    event: PlanEvent
    ref, text = world.ref, "the query"
    stage, pending = ref.stage, not ref.deadline_passed
    deadline_at = ref.started + SPEC_WAIT
    if symbol.startswith("wait-"):
        target = world.now + {"wait-30ms": 0.03, "wait-12.3456ms": 0.0123456}.get(symbol, 0.2)
        if pending and target >= deadline_at:
            world.now = max(world.now, deadline_at)
            _feed_world(world, InitialDeadline(), ref.deadline(world.now), story)
        world.now = max(world.now, target)
    elif symbol == "second-deadline":
        if pending:
            return False
        with pytest.raises(PlanProtocolError) as caught:
            step(world.plan, InitialDeadline(), world.now)
        expected = ref.refuse("initial_deadline", world.now)
        world.plan, effects = fail(world.plan, caught.value, world.now)
        assert _normal(effects) == expected, (story, effects, expected)
    elif symbol == "deadline":
        if not pending:
            return False
        world.now = max(world.now, deadline_at)
        _feed_world(world, InitialDeadline(), ref.deadline(world.now), story)
    elif symbol in _SCANS or symbol == "scan-failed":
        if stage != "scan":
            return False
        if symbol == "scan-failed":
            _feed_world(world, ScanFailed(reason="x"), ref.scan_failed(world.now), story)
        else:
            event = _scan(*_SCANS[symbol], text)
            _feed_world(world, event, ref.scan_completed(event, world.now), story)
    elif symbol in _PICKS or symbol == "selector-timeout":
        if stage != "select":
            return False
        if symbol == "selector-timeout":
            failure = SelectorFailure.TIMEOUT
            _feed_world(
                world,
                SelectorFailed(failure=failure),
                ref.selector_failed(failure, world.now),
                story,
            )
        else:
            picked = _PICKS[symbol]
            _feed_world(
                world,
                SelectorSucceeded(selected=picked),
                ref.selector_answered(picked, world.now),
                story,
            )
    elif symbol == "tool":
        _feed_world(world, ToolResult(), ref.tool_result(world.now), story)
    elif symbol in ("tools", "end"):
        tools = symbol == "tools"
        _feed_world(world, TurnEnd(tools_requested=tools), ref.turn_end(tools, world.now), story)
    elif symbol in _REASON_OF:
        event = _CANCEL[symbol]
        _feed_world(world, event, ref.end(_REASON_OF[symbol], world.now), story)
    elif symbol == "query":
        event = UserQuery(query_id="next", text="the next query")
        _feed_world(world, event, ref.end(DiscardReason.NEW_QUERY, world.now), story)
    else:  # a completion no worker of this plan can produce now
        if stage == "scan":
            event = _scan((A,), (), 1, "another query")
        elif stage == "select":
            event = ScanFailed(reason="a second scan")
        else:
            event = SelectorSucceeded(selected=(A,))
        with pytest.raises(PlanProtocolError) as caught:
            step(world.plan, event, world.now)
        expected = ref.refuse(_kind(event), world.now)
        world.plan, effects = fail(world.plan, caught.value, world.now)
        assert _normal(effects) == expected, (story, effects, expected)
    ref.received.clear()
    assert world.plan.state.value == ref.state_name(), story
    return True


@pytest.mark.parametrize("policy", ["fast", "wait", "no-selector", "no-fast"])
def test_every_short_story_matches_the_reference(policy: str) -> None:
    options = PlanOptions(
        query_length=9,
        started_at=1.0,
        wall_time=WALL,
        model_selection=policy != "no-selector",
        fast_result=policy != "no-fast",
        wait_for_selector=policy == "wait",
        query_digest=digest("the query"),
    )
    plan, _ = start(options)
    first = _World(
        plan,
        Reference(
            started=1.0,
            query_length=9,
            wait_for_selector=policy == "wait",
            model_selection=policy != "no-selector",
            fast_result=policy != "no-fast",
        ),
        1.0,
    )
    seen: set[tuple[object, ...]] = set()
    frontier: list[tuple[_World, list[str]]] = [(first, [])]
    while frontier:
        world, story = frontier.pop()
        if len(story) == DEPTH or world.ref.ended is not None:
            continue
        for symbol in _ALPHABET:
            after = _World(world.plan, attrs.evolve(world.ref, received=[]), world.now)
            if not _play(after, symbol, [*story, symbol]):
                continue
            key = after.key()
            if key not in seen:
                seen.add(key)
                frontier.append((after, [*story, symbol]))
    assert len(seen) > 100  # the alphabet reaches far into the machine


# -- examples that pin single rules ------------------------------------------------------------


def test_already_delivered_replaces_any_cancellation_reason() -> None:
    a, b = doc("q1-a"), doc("q1-b")
    plan, _ = start(OPTIONS)
    scanned = ScanCompleted(docs_scanned=2, fallback=(a, b), fast=(a, b), candidates=2)
    plan, _ = step(plan, scanned, 0.01)
    plan, _ = step(plan, SelectorSucceeded(selected=(b,)), 0.5)
    assert plan.state is PlanState.SETTLED
    plan, effects = step(plan, Reset(), 0.6)
    record = effects[-1]
    assert isinstance(record, EmitTelemetry)
    assert isinstance(record.record, DeliveryRecord)
    assert record.record.discard_reason is DiscardReason.ALREADY_DELIVERED
