"""The plan machine's selector-related rules: the optional wait for a fast selector and
the selector outcome on the telemetry records (pure: no actors, no clock)."""

from __future__ import annotations

from typing import Any

from memrecall.engine.plan import INITIAL_WAIT, Plan, PlanOptions, PlanState, start, step
from memrecall.events import (
    Abort,
    CallSelector,
    Deliver,
    EmitTelemetry,
    InitialDeadline,
    ReleaseInitialWait,
    ScanCompleted,
    SelectorFailed,
    SelectorFailure,
    SelectorSucceeded,
    ToolResult,
)
from memrecall.events.telemetry import (
    DeliveryPoint,
    DeliveryRecord,
    Phase,
    SelectionRecord,
    SelectorOutcome,
    Strategy,
)

from .lifecycle_kit import WALL, doc

FALLBACK = tuple(doc(f"f{i}") for i in range(5))
PICK = (doc("model-pick"), FALLBACK[0])
SCAN = ScanCompleted(docs_scanned=9, fallback=FALLBACK, fast=FALLBACK[:2], candidates=9)


def opened(*, wait: bool, model_selection: bool = True) -> Plan:
    options = PlanOptions(
        query_length=4,
        started_at=0.0,
        wall_time=WALL,
        model_selection=model_selection,
        wait_for_selector=wait,
    )
    return start(options)[0]


def delivers(effects: list[Any]) -> list[Deliver]:
    return [e for e in effects if isinstance(e, Deliver)]


def records(effects: list[Any]) -> list[Any]:
    return [e.record for e in effects if isinstance(e, EmitTelemetry)]


def test_by_default_the_fast_result_goes_at_once() -> None:
    plan, effects = step(opened(wait=False), SCAN, 0.01)
    (fast,) = delivers(effects)
    assert fast.phase is Phase.FAST
    assert any(isinstance(e, ReleaseInitialWait) for e in effects)
    assert plan.state is PlanState.SELECTING_LATE


def test_waiting_holds_the_fast_result_and_a_prompt_pick_goes_first() -> None:
    plan, effects = step(opened(wait=True), SCAN, 0.01)
    assert delivers(effects) == []
    assert not any(isinstance(e, ReleaseInitialWait) for e in effects)
    assert any(isinstance(e, CallSelector) for e in effects)
    assert plan.state is PlanState.SELECTING
    plan, effects = step(plan, SelectorSucceeded(selected=PICK), 0.03)
    (block,) = delivers(effects)
    assert block.phase is Phase.REFINED
    assert block.point is DeliveryPoint.INITIAL
    assert block.paths == tuple(d.path for d in PICK)  # the pick, not the fast result
    assert any(isinstance(e, ReleaseInitialWait) for e in effects)
    assert plan.state is PlanState.DELIVERED


def test_waiting_delivers_the_fast_result_at_the_deadline_and_the_pick_later() -> None:
    plan, _ = step(opened(wait=True), SCAN, 0.01)
    plan, effects = step(plan, InitialDeadline(), INITIAL_WAIT)
    (fast,) = delivers(effects)
    assert fast.phase is Phase.FAST
    assert fast.point is DeliveryPoint.INITIAL
    assert any(isinstance(e, ReleaseInitialWait) for e in effects)
    (record,) = records(effects)
    assert record.phase is Phase.FAST
    assert record.selector_outcome is None  # the selector has not answered yet
    assert plan.state is PlanState.SELECTING_LATE
    plan, _ = step(plan, SelectorSucceeded(selected=PICK), 0.5)
    plan, effects = step(plan, ToolResult(), 0.6)
    (refined,) = delivers(effects)
    assert refined.paths == (PICK[0].path,)  # minus the fast-delivered document
    assert records(effects)[-1].selector_outcome is SelectorOutcome.OK


def test_waiting_with_a_failed_selector_gives_the_fallback_at_once() -> None:
    plan, _ = step(opened(wait=True), SCAN, 0.01)
    plan, effects = step(plan, SelectorFailed(failure=SelectorFailure.HTTP_ERROR), 0.02)
    (block,) = delivers(effects)
    assert block.phase is Phase.REFINED
    assert block.paths == tuple(d.path for d in FALLBACK)
    selection, terminal = records(effects)
    assert isinstance(selection, SelectionRecord)
    assert selection.strategy is Strategy.HEURISTIC
    assert selection.selector_outcome is SelectorOutcome.HTTP_ERROR
    assert terminal.selector_outcome is SelectorOutcome.HTTP_ERROR


def test_each_failure_has_its_own_outcome() -> None:
    seen = set()
    for failure in SelectorFailure:
        plan, _ = step(opened(wait=False), SCAN, 0.01)
        _, effects = step(plan, SelectorFailed(failure=failure), 0.2)
        (selection,) = [r for r in records(effects) if isinstance(r, SelectionRecord)]
        seen.add(selection.selector_outcome)
    assert len(seen) == len(SelectorFailure)
    assert SelectorOutcome.OK not in seen
    assert None not in seen


def test_a_plan_ended_while_the_selector_runs_records_cancelled() -> None:
    plan, _ = step(opened(wait=False), SCAN, 0.01)
    _, effects = step(plan, Abort(), 0.2)
    (terminal,) = records(effects)
    assert isinstance(terminal, DeliveryRecord)
    assert terminal.selector_outcome is SelectorOutcome.CANCELLED


def test_without_a_selector_the_outcome_is_not_called() -> None:
    _, effects = step(opened(wait=False, model_selection=False), SCAN, 0.01)
    outcomes = {r.selector_outcome for r in records(effects)}
    assert outcomes == {SelectorOutcome.NOT_CALLED}
