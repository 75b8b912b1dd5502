"""The provenance, window, surfaced and protocol rules of the safety catalogue, and replay's checks.

Each rule is shown to hold on recorded runs of the real actors, and to fail:
on a log tampered in exactly the way the rule forbids, and on a run of a
planted fault (a faulty step function), where replay through the correct
machine also diverges.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import attrs
import msgspec
import pytest
import trio

from memrecall.actors.plan import OneShot, PlanActor
from memrecall.actors.session import Session
from memrecall.engine.plan import Plan, PlanOptions, PlanState, Step, start, step
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
    Phase,
    PlanEvent,
    RejectEvent,
    ReleaseInitialWait,
    ScanCompleted,
    SelectorSucceeded,
    Shutdown,
    StartScan,
    Surfaced,
    SurfacedCleared,
    ToolResult,
    UserQuery,
    text_digest,
)
from memrecall.simulation.eventlog import (
    EventLog,
    PlanOpened,
    PlanStep,
    RuntimeCall,
    SessionChange,
    eventlog_codec,
    replay,
)
from memrecall.simulation.runner import SimOptions, run_once
from memrecall.simulation.safety import RULES, check_log
from tests.factories import memory


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
        if isinstance(r, PlanOpened | PlanStep)
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
    assert "window" in broken
    # Nobody received that block, so the session's surfaced set did not change.
    assert "surfaced" not in broken
    assert replay(log).divergence is not None


# --------------------------------------------------------------------------- the surfaced set


def _changes(records: list[tuple[int, Any]]) -> list[tuple[int, SessionChange]]:
    return [(i, r) for i, (_, r) in enumerate(records) if isinstance(r, SessionChange)]


@pytest.mark.parametrize("name", ["on-time", "late"])
def test_every_surfaced_set_change_is_in_the_log(recorded: dict[str, bytes], name: str) -> None:
    records = _records(recorded[name])
    changes = [r.change for _, r in _changes(records)]
    assert any(isinstance(c, Surfaced) for c in changes)
    assert any(isinstance(c, SurfacedCleared) for c in changes)
    points = {c.point for c in changes if isinstance(c, Surfaced)}
    # Late scans never deliver initially: only tool results surface documents there.
    expected = {DeliveryPoint.TOOL_RESULT}
    assert points == (expected | {DeliveryPoint.INITIAL} if name == "on-time" else expected)


def test_surfacing_a_document_the_runtime_never_received_breaks_surfaced(
    recorded: dict[str, bytes],
) -> None:
    records = _records(recorded["on-time"])
    index, change = next((i, r) for i, r in _changes(records) if isinstance(r.change, Surfaced))
    line = records[index][0]
    assert isinstance(change.change, Surfaced)
    stray = msgspec.structs.replace(change.change, paths=(*change.change.paths, "/x"))
    records[index] = (line, msgspec.structs.replace(change, change=stray))
    assert any("never received" in v for v in _violations(records, "surfaced"))


def test_a_surfaced_set_that_changes_without_its_message_breaks_surfaced(
    recorded: dict[str, bytes],
) -> None:
    # Drop each message in turn: the next plan of that session excludes documents the log
    # never surfaced (or, for a dropped reset, fails to exclude ones it had).
    records = _records(recorded["on-time"])
    caught = 0
    changes = _changes(records)
    for index, _ in changes:
        kept = records[:index] + records[index + 1 :]
        caught += bool(_violations(kept, "surfaced"))
    assert caught >= len(changes) // 2 > 0


def surface_every_delivery(monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted bug: the plan actor surfaces whatever the machine delivers (a callback on
    ``deliver``, as before issue 11), whether or not the runtime is ever handed the block."""
    original = PlanActor._carry_out

    def carry_out(self: PlanActor, effects: list[Effect], reply: OneShot | None) -> None:
        for effect in effects:
            if isinstance(effect, Deliver):
                self._surface(effect.point, effect.paths)
        original(self, effects, reply)

    monkeypatch.setattr(PlanActor, "_carry_out", carry_out)


def test_surfacing_a_block_nobody_received_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    surface_every_delivery(monkeypatch)
    log = run_once(LATE, step_function=late_fast_step)
    surfaced = _violations(_records(log), "surfaced")
    assert any("never received" in v for v in surfaced)


def test_a_session_that_ignores_its_messages_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def apply_without_updating(self: Session) -> None:
        while True:
            try:
                message = self._surfaced_inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            if self._surfaced_observer is not None:
                self._surfaced_observer.surfaced(self.session_id, message)

    monkeypatch.setattr(Session, "_apply_surfaced", apply_without_updating)
    log = run_once(ON_TIME)
    surfaced = _violations(_records(log), "surfaced")
    assert any("does not exclude" in v for v in surfaced)


# --------------------------------------------------------------------------- one rule at a time
#
# A hand-built log of two plans of one session, folded through the real machine: plan 1 scans
# (fast result d1 d2, at the limit of 2), its selector picks d3..d7 (the limit of 5), and a tool
# result delivers them; plan 2 opens excluding all seven, then shuts down. Each tampering below
# breaks exactly one check, so the violations must be exactly one of that rule, with a detail.

TEXT = "deploy rollback"
DOCS = [memory(f"deploy note {i}", name=f"d{i}") for i in range(9)]
PATHS = [d.path for d in DOCS]
FIRST, SECOND = "s/q1", "s/q2"


def _fold(plan_id: str, text: str, excluded: tuple[str, ...], events: list[Any]) -> list[Any]:
    options = PlanOptions(
        query_length=len(text), started_at=0.0, wall_time=1.7e9, query_digest=text_digest(text)
    )
    plan, effects = start(options)
    query = UserQuery(query_id=plan_id.split("/")[1], text=text)
    out: list[Any] = [
        PlanOpened(plan=plan_id, options=options, query=query, excluded=excluded, effects=effects)
    ]
    for seq, (t, event) in enumerate(events, start=1):
        plan, effects = step(plan, event, t)
        out.append(PlanStep(plan=plan_id, seq=seq, t=t, event=event, effects=effects))
    return out


def story() -> list[Any]:
    """The valid log (records without line numbers)."""
    scan = ScanCompleted(
        docs_scanned=9,
        fallback=(DOCS[1], DOCS[2], DOCS[3], DOCS[8]),
        fast=(DOCS[1], DOCS[2]),
        candidates=9,
        query_digest=text_digest(TEXT),
        ids=tuple(f"id{i}" for i in range(9)),
        manifest_digest="ab" * 8,
    )
    first = _fold(
        FIRST,
        TEXT,
        (),
        [(0.01, scan), (0.5, SelectorSucceeded(selected=tuple(DOCS[3:8]))), (1.0, ToolResult())],
    )
    second = _fold(SECOND, "rota", tuple(sorted(PATHS[1:8])), [(2.0, Shutdown())])
    asked = RuntimeCall(session="s", t=0.0, event=UserQuery(query_id="q1", text=TEXT))
    initial = Surfaced(plan=FIRST, t=0.01, point=DeliveryPoint.INITIAL, paths=tuple(PATHS[1:3]))
    tool = Surfaced(plan=FIRST, t=1.0, point=DeliveryPoint.TOOL_RESULT, paths=tuple(PATHS[3:8]))
    return [
        asked,
        first[0],
        first[1],
        SessionChange(session="s", change=initial),
        first[2],
        first[3],
        SessionChange(session="s", change=tool),
        *second,
    ]


def _numbered(records: list[Any]) -> list[tuple[int, Any]]:
    return list(enumerate(records, start=2))


def _effects(record: Any, *extra: Effect) -> Any:
    return msgspec.structs.replace(record, effects=[*record.effects, *extra])


def _edit_effects(record: Any, kind: type[Effect], **changes: Any) -> Any:
    effects: list[Effect] = [
        msgspec.structs.replace(e, **changes) if isinstance(e, kind) else e for e in record.effects
    ]
    return msgspec.structs.replace(record, effects=effects)


def _telemetry(record: Any, phase: Phase) -> EmitTelemetry:
    (found,) = [
        e
        for e in record.effects
        if isinstance(e, EmitTelemetry)
        and isinstance(e.record, DeliveryRecord)
        and e.record.phase is phase
    ]
    return found


def test_the_story_holds_every_rule_and_replays() -> None:
    records = story()
    assert check_log(_numbered(records)) == []
    header = eventlog_codec.encode_header(EventLog().header)
    report = replay(header + b"".join(eventlog_codec.encode(r) for r in records))
    assert report.ok


def _tampered() -> dict[str, tuple[str, list[Any]]]:
    """Each tampering of the story, and the one rule it breaks."""
    s = story()
    asked, opened, scan, _, select, tool, surfaced_tool, opened2, _ = s
    start_scan = _edit_effects(opened, StartScan, query_digest="0" * 16)
    after_end = PlanStep(
        plan=FIRST, seq=4, t=3.0, event=Abort(), effects=[ArmInitialDeadline(at=9)]
    )
    fast_record = _telemetry(scan, Phase.FAST)
    terminal = _telemetry(tool, Phase.REFINED)
    leaky = EmitTelemetry(record=msgspec.structs.replace(terminal.record, strategy="deploy text"))
    leaking = msgspec.structs.replace(
        tool, effects=[leaky if e is terminal else e for e in tool.effects]
    )
    late = Deliver(phase=Phase.REFINED, point=DeliveryPoint.INITIAL, prompt="p", paths=(PATHS[8],))
    stray = Deliver(phase=Phase.REFINED, point=DeliveryPoint.TOOL_RESULT, prompt="p", paths=("/x",))
    again = Deliver(
        phase=Phase.REFINED, point=DeliveryPoint.TOOL_RESULT, prompt="p", paths=(PATHS[1],)
    )
    reject = RejectEvent(state="selecting", event="scan_completed", detail="planted")
    assert isinstance(surfaced_tool.change, Surfaced)
    unreceived = msgspec.structs.replace(
        surfaced_tool,
        change=msgspec.structs.replace(surfaced_tool.change, paths=(*PATHS[3:8], PATHS[8])),
    )
    cleared = SessionChange(session="s", change=SurfacedCleared(t=1.5))
    elsewhere = SessionChange(session="other", change=surfaced_tool.change)
    unhanded = SessionChange(
        session="s",
        change=Surfaced(plan=SECOND, t=2.0, point=DeliveryPoint.TOOL_RESULT, paths=(PATHS[8],)),
    )
    crashed = EmitTelemetry(
        record=msgspec.structs.replace(terminal.record, discard_reason=DiscardReason.PROTOCOL_ERROR)
    )
    failing = msgspec.structs.replace(
        tool, effects=[crashed if e is terminal else e for e in tool.effects]
    )
    return {
        "asked another text": (
            "provenance",
            [msgspec.structs.replace(asked, event=UserQuery(query_id="q1", text="x")), *s[1:]],
        ),
        "options digest": (
            "provenance",
            [
                asked,
                msgspec.structs.replace(
                    opened, options=msgspec.structs.replace(opened.options, query_digest="0" * 16)
                ),
                *s[2:],
            ],
        ),
        "recall digest": ("provenance", [asked, start_scan, *s[2:]]),
        "scan digest": (
            "provenance",
            [
                asked,
                opened,
                msgspec.structs.replace(
                    scan, event=msgspec.structs.replace(scan.event, query_digest="0" * 16)
                ),
                *s[3:],
            ],
        ),
        "after the end": ("absorbing", [*s[:7], after_end, *s[7:]]),
        "released twice": ("window", [*s[:4], _effects(select, ReleaseInitialWait()), *s[5:]]),
        "initial after release": ("window", [*s[:4], _effects(select, late), *s[5:]]),
        "three fast": (
            "bounded",
            [*s[:2], _edit_effects(scan, Deliver, paths=(*PATHS[1:3], PATHS[8])), *s[3:]],
        ),
        "empty block": ("bounded", [*s[:5], _effects(tool, attrs_replace(again, ())), *s[6:]]),
        "not given": ("own-documents", [*s[:5], _effects(tool, stray), *s[6:]]),
        "twice": ("no-duplicate", [*s[:5], _effects(tool, again), *s[6:]]),
        "selector view": (
            "selector-view",
            [*s[:2], _edit_effects(scan, CallSelector, ids=("id0",)), *s[3:]],
        ),
        "refused": ("protocol", [*s[:4], _effects(select, reject), *s[5:]]),
        "ended refusing": ("protocol", [*s[:5], failing, *s[6:]]),
        "second fast": ("fast-once", [*s[:2], _effects(scan, fast_record), *s[3:]]),
        "second terminal": ("one-terminal", [*s[:5], _effects(tool, terminal), *s[6:]]),
        "free text": ("privacy", [*s[:5], leaking, *s[6:]]),
        "never ends": ("terminates", s[:-1]),
        "unreceived": (
            "surfaced",
            [
                *s[:6],
                unreceived,
                msgspec.structs.replace(opened2, excluded=tuple(sorted(PATHS[1:9]))),
                *s[8:],
            ],
        ),
        "lost message": ("surfaced", [*s[:6], *s[7:]]),
        "lost reset": ("surfaced", [*s[:7], cleared, *s[7:]]),
        "excludes too much": (
            "surfaced",
            [*s[:7], msgspec.structs.replace(opened2, excluded=(*opened2.excluded, "/x")), *s[8:]],
        ),
        "another session": ("surfaced", [*s[:7], elsewhere, *s[7:]]),
        "nothing handed": ("surfaced", [*s, unhanded]),
    }


def attrs_replace(deliver: Deliver, paths: tuple[str, ...]) -> Deliver:
    """``deliver`` with other paths."""
    return msgspec.structs.replace(deliver, paths=paths)


@pytest.mark.parametrize("case", sorted(_tampered()))
def test_each_tampering_breaks_exactly_its_rule(case: str) -> None:
    rule, records = _tampered()[case]
    violations = check_log(_numbered(records))
    assert Counter(v.rule for v in violations) == {rule: 1}, [str(v) for v in violations]
    (violation,) = violations
    assert isinstance(violation.detail, str)
    assert violation.detail.strip()
    assert str(violation).startswith(f"line {violation.line}: plan ")
    # It points at a record of the plan it names (line numbers start at 2, after the header).
    assert violation.plan in {FIRST, SECOND}
    where = records[violation.line - 2]
    if isinstance(where, SessionChange):
        assert isinstance(where.change, Surfaced)
        named = where.change.plan
    else:
        named = where.plan
    assert named == violation.plan
