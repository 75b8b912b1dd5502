"""The provenance, window, surfaced and protocol rules of the safety catalogue, and replay's checks.

Each rule is shown to hold on recorded runs of the real actors, and to fail:
on a log tampered in exactly the way the rule forbids, and on a run of a
planted fault (a faulty step function), where replay through the correct
machine also diverges.
"""

from __future__ import annotations

from typing import Any

import attrs
import msgspec
import pytest

from memrecall.engine.plan import Plan, PlanState, Step, step
from memrecall.events import (
    CallSelector,
    Deliver,
    DeliveryPoint,
    Phase,
    PlanEvent,
    RejectEvent,
    ReleaseInitialWait,
    ScanCompleted,
    UserQuery,
)
from memrecall.simulation.eventlog import (
    PlanOpened,
    PlanStep,
    RuntimeCall,
    eventlog_codec,
    replay,
)
from memrecall.simulation.runner import SimOptions, run_once
from memrecall.simulation.safety import RULES, check_log


def _options(seed: int, scan_delay: float) -> SimOptions:
    return SimOptions(
        seed=seed,
        sessions=2,
        turns=5,
        documents=30,
        tool_free_share=0.4,
        latency_median=0.6,
        timeout_share=0.0,
        failure_share=0.1,
        cancel_share=0.15,
        reset_share=0.1,
        scan_delay=scan_delay,
    )


ON_TIME = _options(11, 0.0)  # scans finish inside the 100 ms window: fast results delivered
LATE = _options(12, 0.2)  # scans finish after the window: no fast result may be delivered


@pytest.fixture(scope="module")
def recorded() -> dict[str, bytes]:
    return {"on-time": run_once(ON_TIME), "late": run_once(LATE)}


def _records(log: bytes) -> list[tuple[int, Any]]:
    return eventlog_codec.decode_numbered(log)[1]


def _rebuild(log: bytes, records: list[tuple[int, Any]]) -> bytes:
    header, _ = eventlog_codec.decode_numbered(log)
    lines = [eventlog_codec.encode_header(header)]
    lines += [eventlog_codec.encode(record) for _, record in records]
    return b"".join(lines)


def test_the_catalogue_names_the_new_rules() -> None:
    assert {"provenance", "selector-view", "window", "surfaced", "protocol"} <= set(RULES)


@pytest.mark.parametrize("name", ["on-time", "late"])
def test_recorded_runs_hold_every_rule(recorded: dict[str, bytes], name: str) -> None:
    records = _records(recorded[name])
    assert check_log(records) == []
    # The run exercised what the rules talk about.
    asked = [r for _, r in records if isinstance(r, RuntimeCall)]
    opened = [r for _, r in records if isinstance(r, PlanOpened)]
    assert len(asked) >= len(opened) > 4
    assert any(r.excluded for r in opened), "no plan excluded a surfaced document"
    delivered_initially = any(
        isinstance(e, Deliver) and e.point is DeliveryPoint.INITIAL
        for _, r in records
        if not isinstance(r, RuntimeCall)
        for e in r.effects
    )
    assert delivered_initially == (name == "on-time")


@pytest.mark.parametrize("name", ["on-time", "late"])
def test_recorded_runs_replay_soundly(recorded: dict[str, bytes], name: str) -> None:
    report = replay(recorded[name])
    assert report.divergence is None
    assert report.provenance == ()
    assert report.protocol_errors == ()


def _violations(records: list[tuple[int, Any]], rule: str) -> list[str]:
    return [str(v) for v in check_log(records) if v.rule == rule]


def test_a_plan_opened_with_another_text_breaks_provenance(recorded: dict[str, bytes]) -> None:
    log = recorded["on-time"]
    records = _records(log)
    index = [i for i, (_, r) in enumerate(records) if isinstance(r, PlanOpened)][1]
    line, opened = records[index]
    swapped = msgspec.structs.replace(
        opened, query=UserQuery(query_id=opened.query.query_id, text=opened.query.text + " x")
    )
    records[index] = (line, swapped)
    assert _violations(records, "provenance")
    assert replay(_rebuild(log, records)).provenance


def test_a_scan_for_another_text_breaks_provenance(recorded: dict[str, bytes]) -> None:
    records = _records(recorded["on-time"])
    index = next(
        i
        for i, (_, r) in enumerate(records)
        if isinstance(r, PlanStep) and isinstance(r.event, ScanCompleted)
    )
    line, record = records[index]
    stray = msgspec.structs.replace(record.event, query_digest="0" * 16)
    records[index] = (line, msgspec.structs.replace(record, event=stray))
    assert _violations(records, "provenance")
    # The machine itself refuses such a scan: replay reports the refused step.
    assert replay(_rebuild(recorded["on-time"], records)).protocol_errors


def test_an_initial_delivery_after_the_release_breaks_the_window(
    recorded: dict[str, bytes],
) -> None:
    records = _records(recorded["late"])
    index = next(
        i
        for i, (_, r) in enumerate(records)
        if isinstance(r, PlanStep) and any(isinstance(e, ReleaseInitialWait) for e in r.effects)
    )
    line, record = records[index]
    late = Deliver(phase=Phase.FAST, point=DeliveryPoint.INITIAL, prompt="p", paths=("/x",))
    records[index] = (line, msgspec.structs.replace(record, effects=[*record.effects, late]))
    assert _violations(records, "window")


def test_excluding_a_document_never_received_breaks_surfaced(recorded: dict[str, bytes]) -> None:
    records = _records(recorded["on-time"])
    index = [i for i, (_, r) in enumerate(records) if isinstance(r, PlanOpened)][-1]
    line, opened = records[index]
    records[index] = (line, msgspec.structs.replace(opened, excluded=(*opened.excluded, "/x")))
    assert _violations(records, "surfaced")


def test_a_selector_call_without_its_manifest_breaks_the_selector_view(
    recorded: dict[str, bytes],
) -> None:
    records = _records(recorded["on-time"])
    index = next(
        i
        for i, (_, r) in enumerate(records)
        if isinstance(r, PlanStep) and any(isinstance(e, CallSelector) for e in r.effects)
    )
    line, record = records[index]
    effects = [
        msgspec.structs.replace(e, ids=e.ids[1:]) if isinstance(e, CallSelector) else e
        for e in record.effects
    ]
    records[index] = (line, msgspec.structs.replace(record, effects=effects))
    assert _violations(records, "selector-view")
    # Replay reproduces what the selector saw from the scan: the tampered call diverges.
    assert replay(_rebuild(recorded["on-time"], records)).divergence is not None


def test_a_refused_event_breaks_protocol(recorded: dict[str, bytes]) -> None:
    records = _records(recorded["on-time"])
    index = next(i for i, (_, r) in enumerate(records) if isinstance(r, PlanStep))
    line, record = records[index]
    reject = RejectEvent(state="scanning", event="selector_succeeded", detail="planted")
    records[index] = (line, msgspec.structs.replace(record, effects=[reject, *record.effects]))
    assert _violations(records, "protocol")


def late_fast_step(plan: Plan, event: PlanEvent, now: float) -> Step:
    """A planted bug: a scan finishing after the window still delivers the fast result."""
    if isinstance(event, ScanCompleted) and plan.state is PlanState.SCANNING_LATE:
        return step(attrs.evolve(plan, state=PlanState.SCANNING), event, now)
    return step(plan, event, now)


def test_a_late_scan_delivering_its_fast_result_is_caught_and_replay_diverges() -> None:
    log = run_once(LATE, step_function=late_fast_step)
    broken = {v.rule for v in check_log(_records(log))}
    assert {"window", "surfaced"} <= broken
    assert replay(log).divergence is not None
