"""Telemetry sinks (issue 10): a failing sink is skipped; JSON Lines are written off the loop."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import IO

import pytest
import trio
import trio.testing

from memrecall.events import TelemetryRecord
from memrecall.sources.source import StaticSource
from memrecall.telemetry.sinks import GuardedSink, JsonlSink, MemorySink, telemetry_codec
from memrecall.testing import open_test_engine

from .lifecycle_kit import POOL, WALL, terminals


class FailingSink:
    """A sink whose backend is down."""

    name = "collector"

    def __init__(self) -> None:
        self.calls = 0

    def emit(self, record: TelemetryRecord) -> None:
        self.calls += 1
        raise ValueError("sink down")


async def test_a_failing_sink_is_logged_once_and_skipped(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memrecall.sinks")
    broken = FailingSink()
    kept = MemorySink()
    async with open_test_engine(
        StaticSource(POOL, scorer="reference"),
        sinks=[broken, kept],
        wall_clock=lambda: WALL,
        scan_in_thread=False,
    ) as engine:
        session = await engine.open_session()
        for query in ("deploy", "rota", "rollback"):
            await session.user_query(query)
        assert engine.statistics().failed_sinks == ("collector",)
    assert broken.calls == 1  # skipped after the first failure
    assert len(terminals(kept.records)) == 3  # the other sink got everything
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "collector" in warnings[0]


def records_for_test() -> list[TelemetryRecord]:
    """A few real records, from a run of the engine."""
    sink = MemorySink()

    async def main() -> None:
        async with open_test_engine(
            StaticSource(POOL, scorer="reference"),
            sinks=[sink],
            wall_clock=lambda: WALL,
            scan_in_thread=False,
        ) as engine:
            session = await engine.open_session()
            for query in ("deploy", "rota"):
                await session.user_query(query)

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return sink.records


def read_records(path: Path) -> list[TelemetryRecord]:
    lines = path.read_bytes().splitlines(keepends=True)
    telemetry_codec.decode_header(lines[0])
    return list(telemetry_codec.iter_records(lines[1:]))


GATE_LIMIT_S = 30.0
"""A structural bound: a write never waits this long unless the test itself is broken."""


class GatedFile:
    """Wraps a file: each write waits for ``gate`` and notes which thread wrote."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.writers: set[int] = set()

    def write(self, data: bytes) -> int:
        self.writers.add(threading.get_ident())
        self.entered.set()
        assert self.gate.wait(GATE_LIMIT_S), "the gate was never opened"
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.file.close()

    @property
    def closed(self) -> bool:
        return self.file.closed


def test_jsonl_sink_writes_in_its_own_thread_and_close_writes_everything(tmp_path: Path) -> None:
    records = records_for_test()
    path = tmp_path / "telemetry.jsonl"
    sink = JsonlSink(path)
    sink.flush()  # the writer thread has opened the file
    assert sink._writer.file is not None
    gated = GatedFile(sink._writer.file)
    sink._writer.file = gated  # type: ignore[assignment]
    try:
        for record in records:
            sink.emit(record)  # returns although the writer is blocked on the gate
        assert read_records(path) == []
    finally:
        gated.gate.set()
        sink.close()
    assert gated.writers
    assert threading.get_ident() not in gated.writers
    assert read_records(path) == records
    with pytest.raises(ValueError, match="closed"):
        sink.emit(records[0])
    reopened = JsonlSink(path)  # appends after the existing header
    reopened.emit(records[0])
    reopened.close()
    assert read_records(path) == [*records, records[0]]


def test_a_full_queue_drops_counts_and_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memrecall.sinks")
    record = records_for_test()[0]
    path = tmp_path / "telemetry.jsonl"
    sink = JsonlSink(path, capacity=3)
    sink.flush()  # the writer thread has opened the file
    assert sink._writer.file is not None
    gated = GatedFile(sink._writer.file)
    sink._writer.file = gated  # type: ignore[assignment]
    emitted = 20
    try:
        sink.emit(record)
        # The writer holds the first line before the queue fills: otherwise it could take
        # one more line mid-way, and dropping would start twice.
        assert gated.entered.wait(GATE_LIMIT_S)
        for _ in range(emitted - 1):
            sink.emit(record)  # never blocks, even with the writer stuck
        assert sink.dropped >= emitted - 3 - 1  # the queue, plus the one the writer holds
    finally:
        gated.gate.set()
        sink.close()
    assert len(read_records(path)) == emitted - sink.dropped  # nothing lost uncounted
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2  # dropping started; the total at close
    assert str(sink.dropped) in messages[1]


def test_a_write_error_disables_the_sink_through_the_guard(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="memrecall.sinks")
    record = records_for_test()[0]

    class FullDisk(GatedFile):
        def write(self, data: bytes) -> int:
            raise OSError(28, "No space left on device")

    sink = JsonlSink(tmp_path / "telemetry.jsonl")
    sink.flush()  # the writer thread has opened the file
    assert sink._writer.file is not None
    sink._writer.file = FullDisk(sink._writer.file)  # type: ignore[assignment]
    guarded = GuardedSink(sink)
    guarded.emit(record)
    guarded.flush()  # the writer has hit the error by now
    assert guarded.failure == "OSError"
    guarded.emit(record)
    sink.close()
    assert [r.levelno for r in caplog.records] == [logging.WARNING]


class FlushingSink(MemorySink):
    """Notes how many records had been emitted at each flush."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes: list[int] = []

    def flush(self) -> None:
        self.flushes.append(len(self.records))


async def test_the_engine_flushes_sinks_after_the_last_record(tmp_path: Path) -> None:
    path = tmp_path / "telemetry.jsonl"
    counting = FlushingSink()
    with JsonlSink(path) as jsonl:
        async with open_test_engine(
            StaticSource(POOL, scorer="reference"),
            sinks=[counting, jsonl],
            wall_clock=lambda: WALL,
            scan_in_thread=False,
        ) as engine:
            session = await engine.open_session()
            await session.user_query("deploy")
            await session.user_query("rota")  # left pending: ends with shutdown at exit
        # Not closed yet: every record, the shutdown's terminal one included, is on disk.
        assert counting.flushes == [len(counting.records)]
        assert read_records(path) == counting.records
    assert len(terminals(counting.records)) == 2
