"""The JSON Lines writer thread: any file error is kept, and a dead writer never blocks."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from memrecall.telemetry.sinks import GuardedSink, JsonlSink

from .test_sinks import GATE_LIMIT_S, GatedFile, records_for_test


class BrokenFile(GatedFile):
    """A file whose write fails with something other than an OSError."""

    def write(self, data: bytes) -> int:
        raise RuntimeError("driver bug")


def test_a_non_os_write_error_is_kept_and_flush_and_close_return(tmp_path: Path) -> None:
    record = records_for_test()[0]
    sink = JsonlSink(tmp_path / "telemetry.jsonl")
    sink.flush()  # the writer thread has opened the file
    sink._writer.file = BrokenFile(sink._writer.file)  # type: ignore[arg-type,assignment]
    guarded = GuardedSink(sink)
    guarded.emit(record)
    guarded.flush()  # returns; the writer recorded the error instead of dying
    assert guarded.failure == "RuntimeError"
    assert isinstance(sink._writer.error, RuntimeError)
    assert sink._writer.thread.is_alive()
    sink.close()
    assert not sink._writer.thread.is_alive()


def test_the_file_is_opened_and_its_header_written_by_the_writer_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    openers: list[str] = []
    real_open = Path.open

    def recording_open(self: Path, *args: Any, **kwargs: Any) -> Any:
        openers.append(threading.current_thread().name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", recording_open)
    path = tmp_path / "telemetry.jsonl"
    sink = JsonlSink(path)
    sink.flush()
    assert openers == ["memrecall-jsonl"]  # never the caller's thread (the event loop's)
    assert path.read_bytes().count(b"\n") == 1  # the header line
    sink.close()


def test_a_file_that_cannot_be_opened_is_raised_by_emit_not_by_the_constructor(
    tmp_path: Path,
) -> None:
    sink = JsonlSink(tmp_path / "missing-directory" / "telemetry.jsonl")  # does not raise
    with pytest.raises(FileNotFoundError):
        sink.flush()
    with pytest.raises(FileNotFoundError):
        sink.emit(records_for_test()[0])
    sink.close()


class Die(BaseException):
    """Kills the writer thread (not an Exception, so the writer cannot keep it)."""


class DyingFile(GatedFile):
    """The first write waits for ``gate``, then kills the thread that writes."""

    def write(self, data: bytes) -> int:
        self.entered.set()
        assert self.gate.wait(GATE_LIMIT_S), "the gate was never opened"
        raise Die


class SignallingCondition(threading.Condition):
    """A condition that says when someone starts waiting on it."""

    def __init__(self, lock: Any, waiting: threading.Event) -> None:
        super().__init__(lock)
        self.waiting = waiting

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


def test_flush_and_close_return_when_the_writer_dies_under_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deaths: list[type[BaseException] | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: deaths.append(args.exc_type))
    record = records_for_test()[0]
    sink = JsonlSink(tmp_path / "telemetry.jsonl", capacity=1)
    sink.flush()  # the writer thread has opened the file
    writer = sink._writer
    assert writer.file is not None
    dying = DyingFile(writer.file)
    writer.file = dying  # type: ignore[assignment]
    sink.emit(record)
    assert dying.entered.wait(GATE_LIMIT_S)  # the writer holds the first line
    sink.emit(record)  # the queue is full now
    blocked = threading.Event()
    writer.queue.not_full = SignallingCondition(writer.queue.mutex, blocked)
    flusher = threading.Thread(target=sink.flush, daemon=True)
    flusher.start()
    assert blocked.wait(GATE_LIMIT_S)  # flush() waits for room in the queue
    dying.gate.set()  # the writer dies
    writer.thread.join(GATE_LIMIT_S)
    assert deaths == [Die]
    flusher.join(GATE_LIMIT_S)
    assert not flusher.is_alive(), "flush() blocked on a dead writer"
    closer = threading.Thread(target=sink.close, daemon=True)
    closer.start()
    closer.join(GATE_LIMIT_S)
    assert not closer.is_alive(), "close() blocked on a dead writer"
