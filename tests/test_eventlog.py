"""Event logs: recording, byte-exact replay, and reporting of corrupted or tampered logs."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
import trio
from trio.testing import MockClock

from memrecall.actors import SimulatedSelector
from memrecall.cli import main
from memrecall.events import LogDecodeError
from memrecall.simulation.eventlog import EventLog, PlanStep, eventlog_codec, replay
from memrecall.simulation.safety import check_log
from memrecall.sources.source import StaticSource
from memrecall.testing import open_test_engine

from .lifecycle_kit import DEPLOY_C, POOL, WALL, choose


async def _scenario(log: EventLog) -> None:
    selector = SimulatedSelector(latency=0.6, choose=choose(DEPLOY_C, POOL[0]))
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        selector=selector,
        observer=log,
        wall_clock=lambda: WALL,
        scan_in_thread=False,
        scan_delay=0.02,
    ) as engine:
        session = await engine.open_session()
        await session.user_query("deploy")
        await session.turn_end(tools_requested=True)
        await trio.sleep(1.0)
        await session.tool_result()
        await session.turn_end(tools_requested=False)
        await session.user_query("approval")  # no fast result; selector settles late
        await trio.sleep(0.05)
        await session.abort()
        await session.user_query("rota")
        await session.reset()
        await session.user_query("deploy rota")


def record_scenario() -> bytes:
    log = EventLog(options={"scenario": "lifecycle"})
    trio.run(_scenario, log, clock=MockClock(autojump_threshold=0))
    return log.getvalue()


def test_a_recorded_run_replays_byte_for_byte() -> None:
    data = record_scenario()
    report = replay(data)
    assert report.ok, report.divergence
    assert report.plans == 4
    _, numbered = eventlog_codec.decode_numbered(data)
    assert check_log(numbered) == []
    kinds = {r.event.__struct_config__.tag for _, r in numbered if isinstance(r, PlanStep)}
    assert {"scan_completed", "initial_deadline", "selector_succeeded", "tool_result"} <= kinds


def test_a_tampered_effect_is_reported_at_its_record() -> None:
    lines = record_scenario().split(b"\n")
    target = next(
        i for i, line in enumerate(lines) if b'"phase":"refined","point":"tool_result"' in line
    )
    lines[target] = lines[target].replace(b'"docs_selected":1', b'"docs_selected":2', 1)
    report = replay(b"\n".join(lines))
    assert report.divergence is not None
    assert report.divergence.line == target + 1
    assert '"docs_selected":2' in report.divergence.recorded
    assert '"docs_selected":1' in report.divergence.replayed


def test_a_corrupted_line_is_reported_with_its_number() -> None:
    lines = record_scenario().split(b"\n")
    lines[5] = lines[5][:40]
    with pytest.raises(LogDecodeError) as caught:
        replay(b"\n".join(lines))
    assert caught.value.line == 6


def test_a_step_for_an_unknown_plan_is_an_error() -> None:
    lines = record_scenario().split(b"\n")
    opened = next(i for i, line in enumerate(lines) if b'"kind":"opened"' in line)
    del lines[opened]
    with pytest.raises(LogDecodeError, match="never opened"):
        replay(b"\n".join(lines))


def test_replay_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(record_scenario())
    assert main(["replay", str(good)]) == 0
    assert "byte for byte" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    original = good.read_bytes()
    assert b'"discard_reason":"abort"' in original
    bad.write_bytes(original.replace(b'"discard_reason":"abort"', b'"discard_reason":"reset"', 1))
    assert main(["replay", str(bad)]) == 1
    assert "DIVERGED: line" in capsys.readouterr().out
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2


def test_the_log_header_names_the_content_and_options() -> None:
    header, _ = eventlog_codec.decode_all(record_scenario())
    assert header.content == "eventlog"
    assert header.options == {"scenario": "lifecycle"}
    assert msgspec.json.decode(eventlog_codec.encode_header(header))["schema"] == "memrecall.jsonl"
