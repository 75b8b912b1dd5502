"""The pure plan state machine: totality, absorption, and a stateful model check."""

from __future__ import annotations

from typing import Any

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
    INITIAL_WAIT,
    TERMINAL_STATES,
    TRANSITIONS,
    Plan,
    PlanOptions,
    PlanState,
    start,
    step,
)
from memrecall.events import (
    Abort,
    ArmInitialDeadline,
    CancelWork,
    Deliver,
    DeliveryPoint,
    DeliveryRecord,
    EmitTelemetry,
    Ignore,
    InitialDeadline,
    MemoryDocument,
    Phase,
    ReleaseInitialWait,
    Reset,
    ScanCompleted,
    ScanFailed,
    SelectionRecord,
    SelectorFailed,
    SelectorFailure,
    SelectorSucceeded,
    Shutdown,
    ToolResult,
    TurnEnd,
    UserQuery,
)

from .lifecycle_kit import WALL, doc
from .strategies import plan_events

OPTIONS = PlanOptions(query_length=5, started_at=0.0, wall_time=WALL)


def test_every_state_and_event_pair_is_in_the_table() -> None:
    for state in PlanState:
        for event_type in EVENT_TYPES:
            assert (state, event_type) in TRANSITIONS, (state, event_type)
    assert len(TRANSITIONS) == len(PlanState) * len(EVENT_TYPES)


@given(st.sampled_from(PlanState), plan_events, st.floats(0, 100))
def test_every_pair_transitions_or_is_an_explicit_no_op(
    state: PlanState, event: Any, now: float
) -> None:
    plan = Plan(state, OPTIONS, result=None)
    after, effects = step(plan, event, now)
    changed = after != plan
    assert changed or all(isinstance(e, Ignore) for e in effects)
    assert changed or effects, "a no-op step always says why it did nothing"
    if state in TERMINAL_STATES:
        assert after == plan
        assert all(isinstance(e, Ignore) for e in effects)


def test_start_scans_and_arms_the_deadline() -> None:
    plan, effects = start(OPTIONS)
    assert plan.state is PlanState.SCANNING
    assert [type(e).__name__ for e in effects] == ["StartScan", "ArmInitialDeadline"]
    assert effects[1] == ArmInitialDeadline(at=INITIAL_WAIT)


# -- the stateful model check --------------------------------------------------------------


# Document names are prefixed with their query number, so any document in an effect of
# query N that does not start with "qN-" leaked from another query.
def _docs(query: int, names: list[int]) -> tuple[MemoryDocument, ...]:
    return tuple(doc(f"q{query}-d{n}") for n in dict.fromkeys(names))


class PlanModel(RuleBasedStateMachine):
    """Drive a sequence of plans (one per query, like a session) with arbitrary events.

    The model is deliberately simple: it only tracks what every correct plan must
    satisfy, whatever the interleaving.
    """

    @initialize()
    def open_first(self) -> None:
        self.now = 0.0
        self.query = 0
        self.records: dict[int, list[Any]] = {}
        self.delivered: dict[int, list[str]] = {}
        self.fast_deliveries: dict[int, int] = {}
        self.cancelled_at: dict[int, int] = {}
        self.steps: dict[int, int] = {}
        self._open()

    def _open(self) -> None:
        self.query += 1
        options = PlanOptions(
            query_length=3,
            started_at=self.now,
            wall_time=WALL,
            wait_for_selector=self.query % 2 == 0,  # both fast-result policies
        )
        self.plan, effects = start(options)
        self.records[self.query] = []
        self.delivered[self.query] = []
        self.fast_deliveries[self.query] = 0
        self.steps[self.query] = 0
        self._check(effects)

    def _feed(self, event: Any) -> None:
        before = self.plan
        self.plan, effects = step(self.plan, event, self.now)
        self.steps[self.query] += 1
        if before.terminal:
            assert self.plan == before
            assert all(isinstance(e, Ignore) for e in effects)
        if isinstance(event, Abort | Reset | Shutdown | UserQuery) and not before.terminal:
            self.cancelled_at[self.query] = self.steps[self.query]
        self._check(effects)

    def _check(self, effects: list[Any]) -> None:
        prefix = f"/mem/project/q{self.query}-"
        for effect in effects:
            if isinstance(effect, Deliver):
                assert self.query not in self.cancelled_at, "a cancelled plan delivered"
                assert all(p.startswith(prefix) for p in effect.paths), "cross-query document"
                self.delivered[self.query].extend(effect.paths)
                limit = 2 if effect.phase is Phase.FAST else 5
                assert 1 <= len(effect.paths) <= limit
                if effect.phase is Phase.FAST:
                    assert effect.point is DeliveryPoint.INITIAL
                    self.fast_deliveries[self.query] += 1
            if isinstance(effect, EmitTelemetry):
                self.records[self.query].append(effect.record)

    # -- rules ---------------------------------------------------------------------------

    @rule(seconds=st.sampled_from([0.0, 0.001, 0.05, 0.2, 5.0]))
    def advance(self, seconds: float) -> None:
        self.now += seconds

    @rule(
        fallback=st.lists(st.integers(0, 7), max_size=7),
        fast=st.integers(0, 2),
        candidates=st.integers(0, 3),
    )
    def scan_completes(self, fallback: list[int], fast: int, candidates: int) -> None:
        docs = _docs(self.query, fallback)[:5]
        self._feed(
            ScanCompleted(docs_scanned=8, fallback=docs, fast=docs[:fast], candidates=candidates)
        )

    @rule()
    def scan_fails(self) -> None:
        self._feed(ScanFailed(reason="OSError"))

    @rule(chosen=st.lists(st.integers(0, 7), max_size=5))
    def selector_answers(self, chosen: list[int]) -> None:
        self._feed(SelectorSucceeded(selected=_docs(self.query, chosen)))

    @rule(failure=st.sampled_from(SelectorFailure))
    def selector_fails(self, failure: SelectorFailure) -> None:
        self._feed(SelectorFailed(failure=failure))

    @rule()
    def deadline(self) -> None:
        self._feed(InitialDeadline())

    @rule()
    def tool_result(self) -> None:
        self._feed(ToolResult())

    @rule(tools=st.booleans())
    def turn_end(self, tools: bool) -> None:
        self._feed(TurnEnd(tools_requested=tools))

    @rule(kind=st.sampled_from(["abort", "reset", "shutdown"]))
    def cancel(self, kind: str) -> None:
        self._feed({"abort": Abort(), "reset": Reset(), "shutdown": Shutdown()}[kind])

    @precondition(lambda self: self.query < 6)
    @rule()
    def new_query(self) -> None:
        self._feed(UserQuery(query_id=f"q{self.query + 1}", text="x"))
        self._open()

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def at_most_one_terminal_and_one_fast_record_per_plan(self) -> None:
        for query, records in self.records.items():
            deliveries = [r for r in records if isinstance(r, DeliveryRecord)]
            terminal = [r for r in deliveries if r.phase is Phase.REFINED]
            fast = [r for r in deliveries if r.phase is Phase.FAST]
            assert len(terminal) <= 1
            assert len(fast) <= 1
            assert self.fast_deliveries[query] == len(fast)
            if query < self.query:  # a plan that was followed by another query is over
                assert len(terminal) == 1

    @invariant()
    def terminal_record_matches_terminal_state(self) -> None:
        records = self.records[self.query]
        terminal = [r for r in records if isinstance(r, DeliveryRecord) and r.terminal]
        assert bool(terminal) == self.plan.terminal

    @invariant()
    def no_document_delivered_twice_in_a_query(self) -> None:
        for delivered in self.delivered.values():
            assert len(delivered) == len(set(delivered))

    @invariant()
    def selection_recorded_at_most_once(self) -> None:
        for records in self.records.values():
            assert sum(isinstance(r, SelectionRecord) for r in records) <= 1

    @invariant()
    def discard_reasons_follow_the_rule(self) -> None:
        for records in self.records.values():
            for record in records:
                if isinstance(record, DeliveryRecord) and record.terminal:
                    discarded = record.delivery_point is DeliveryPoint.DISCARDED
                    assert discarded == (record.discard_reason is not None)


PlanModel.TestCase.settings = settings(stateful_step_count=40, deadline=None)
TestPlanModel = PlanModel.TestCase


def test_cancelled_plan_releases_the_wait_and_cancels_work() -> None:
    plan, _ = start(OPTIONS)
    plan, effects = step(plan, Abort(), 0.05)
    assert plan.state is PlanState.DISCARDED
    assert [type(e) for e in effects] == [CancelWork, ReleaseInitialWait, EmitTelemetry]


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
    assert record.record.discard_reason is not None
    assert record.record.discard_reason.value == "already_delivered"
