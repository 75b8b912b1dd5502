"""Telemetry sinks: where selection and delivery records go.

A sink is anything with a synchronous ``emit(record)``. Emitting is synchronous
on purpose: a cancelled plan must still be able to record its terminal event
while it is being torn down. So ``emit`` must be quick: :class:`JsonlSink`
only queues the encoded line and a worker thread writes it.

The engine wraps every sink it is given in a :class:`GuardedSink`: a sink that
raises is logged once (a WARNING naming it) and skipped from then on, so a
broken sink never takes the engine or the other sinks down.

Correlation: a runtime may pass an opaque value per turn
(``session.user_query(..., correlation=obj)``). A sink that wants to know which
turn a record belongs to implements ``emit_correlated(record, correlation)``
(:class:`CorrelatedSink`); it is then called instead of ``emit`` and gets the
value (``None`` when the turn passed none). A sink with ``emit`` only is called
as before. The value travels beside the record: it is never stored in the
record, the telemetry file or the event log. Sinks are also called inside the
context (:mod:`contextvars`) of the ``user_query`` call that started the plan,
so a ``ContextVar`` the runtime set around that call reads the same in the sink.
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from pathlib import Path
from typing import IO, Any, Final, Protocol

import attrs

from memrecall import __version__
from memrecall.events.codec import JsonlCodec, LogHeader
from memrecall.events.telemetry import TelemetryRecord

__all__ = [
    "DEFAULT_QUEUE_RECORDS",
    "CorrelatedSink",
    "GuardedSink",
    "JsonlSink",
    "MemorySink",
    "TelemetrySink",
    "sink_name",
    "telemetry_codec",
]

log = logging.getLogger("memrecall.sinks")


class TelemetrySink(Protocol):
    """Receives telemetry records."""

    def emit(self, record: TelemetryRecord) -> None:
        """Take one record. Must not block for long; a raise disables the sink."""
        ...


class CorrelatedSink(Protocol):
    """A sink that is told which turn each record belongs to (see the module docstring)."""

    def emit_correlated(self, record: TelemetryRecord, correlation: object) -> None:
        """Take one record and the turn's correlation value (``None`` if the turn gave none)."""
        ...


telemetry_codec: JsonlCodec[Any] = JsonlCodec(TelemetryRecord, content="telemetry")
"""The codec of telemetry files (a header line, then one record per line)."""


def sink_name(sink: object) -> str:
    """How logs name a sink: its ``name`` attribute if it is a str, else its class."""
    name = getattr(sink, "name", None)
    return name if isinstance(name, str) and name else type(sink).__qualname__


@attrs.define
class MemorySink:
    """Keeps records in a list (tests, the demo, embedding runtimes that forward them)."""

    records: list[TelemetryRecord] = attrs.field(factory=list)

    def emit(self, record: TelemetryRecord) -> None:
        """Append the record."""
        self.records.append(record)


class GuardedSink:
    """Wraps a sink: the first exception it raises is logged once and the sink is skipped after.

    The exception is not re-raised, so the plan that emitted goes on (and its
    terminal record still reaches the other sinks). ``failure`` names the
    exception type once the sink has failed.
    """

    def __init__(self, sink: TelemetrySink | CorrelatedSink) -> None:
        self.sink = sink
        self.name = sink_name(sink)
        self.failure: str | None = None

    def emit(self, record: TelemetryRecord) -> None:
        """Pass the record on (with no correlation value), unless the sink has failed before."""
        self.emit_correlated(record, None)

    def emit_correlated(self, record: TelemetryRecord, correlation: object) -> None:
        """Pass the record on: to ``emit_correlated`` if the sink has one, else to ``emit``."""
        if self.failure is not None:
            return
        try:
            correlated = getattr(self.sink, "emit_correlated", None)
            if callable(correlated):
                correlated(record, correlation)
            else:
                self.sink.emit(record)  # type: ignore[union-attr]
        except Exception as exc:
            self.failure = type(exc).__name__
            log.warning(
                "telemetry sink %s failed (%s); it is skipped from now on", self.name, self.failure
            )
            log.debug("telemetry sink %s failure", self.name, exc_info=exc)

    def bind(self, correlation: object) -> TelemetrySink:
        """A sink for one turn: its ``emit(record)`` passes ``correlation`` along."""
        return _TurnSink(self, correlation)

    def flush(self) -> None:
        """Flush the wrapped sink if it can be flushed and has not failed."""
        flush = getattr(self.sink, "flush", None)
        if self.failure is None and callable(flush):
            try:
                flush()
            except Exception as exc:
                self.failure = type(exc).__name__
                log.warning("telemetry sink %s failed to flush (%s)", self.name, self.failure)


@attrs.frozen
class _TurnSink:
    """One turn's view of a guarded sink: the turn's correlation value goes with each record."""

    guarded: GuardedSink
    correlation: object

    def emit(self, record: TelemetryRecord) -> None:
        self.guarded.emit_correlated(record, self.correlation)


DEFAULT_QUEUE_RECORDS: Final = 10_000
"""Records a :class:`JsonlSink` holds while its writer thread catches up (a few MB at most)."""

_STOP: Final = object()


_WAIT_S: Final = 0.1
"""How long a flush or stop waits at a time before checking that the writer thread still runs."""


class _Writer:
    """The worker thread of a :class:`JsonlSink`: writes queued lines, flushes when idle.

    Holds no reference to the sink, so an abandoned sink can be finalized
    (which stops the thread after writing everything queued). Any exception
    from the file is caught and kept as :attr:`error` (later lines are then
    dropped); waits on the thread give up once it is no longer alive, so a
    writer that died anyway can never block :meth:`flush` or :meth:`stop`.
    """

    def __init__(self, path: Path, capacity: int) -> None:
        self.path = path
        self.file: IO[bytes] | None = None
        self.queue: queue.Queue[object] = queue.Queue(capacity)
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._run, name="memrecall-jsonl", daemon=True)
        self.thread.start()

    def _open(self) -> None:
        """Open the file for appending; a new or empty file starts with the telemetry header."""
        try:
            self.file = self.path.open("ab")
            if self.file.tell() == 0:
                header = LogHeader(content="telemetry", engine_version=__version__)
                self.file.write(telemetry_codec.encode_header(header))
                self.file.flush()
        except Exception as exc:
            self.error = exc

    def _run(self) -> None:
        self._open()
        while True:
            item = self.queue.get()
            if item is _STOP:
                return
            if isinstance(item, threading.Event):  # a flush marker
                self._flush()
                item.set()
                continue
            assert isinstance(item, bytes)
            if self.error is None and self.file is not None:
                try:
                    self.file.write(item)
                except Exception as exc:
                    self.error = exc
            if self.queue.empty():
                self._flush()

    def _flush(self) -> None:
        if self.error is None and self.file is not None:
            try:
                self.file.flush()
            except Exception as exc:
                self.error = exc

    def _put(self, item: object) -> bool:
        """Queue ``item`` for the thread; False if the thread is gone (or went while waiting)."""
        while self.thread.is_alive():
            try:
                self.queue.put(item, timeout=_WAIT_S)
            except queue.Full:
                continue
            return True
        return False

    def flush(self) -> None:
        """Block until everything queued before this call is written and flushed.

        Returns early if the writer thread is not (or no longer) running.
        """
        done = threading.Event()
        if not self._put(done):
            return
        while not done.wait(_WAIT_S):
            if not self.thread.is_alive():
                return

    def stop(self) -> None:
        """Write what is queued, stop the thread and close the file (idempotent)."""
        if self._put(_STOP):
            self.thread.join()
        if self.file is not None and not self.file.closed:
            try:
                self.file.close()
            except Exception as exc:
                self.error = self.error or exc


class JsonlSink:
    """Appends records to a JSON Lines file with a telemetry header, off the event loop.

    The constructor touches no file: the worker thread opens ``path`` for
    appending (writing the telemetry header first when the file is new or
    empty); a file that cannot be opened is reported like a write error.
    ``emit`` encodes the record and queues the line; the thread writes it
    and flushes whenever the queue runs empty. The queue holds at most
    ``capacity`` records: if the disk falls that far behind, further records
    are **dropped and counted** (``dropped``), with one WARNING when dropping
    starts and the total logged at ``close()``; ``emit`` never blocks the event
    loop. ``flush()`` waits until everything emitted so far is on disk (the
    engine calls it, in a worker thread, when it closes); ``close()`` flushes,
    stops the thread and closes the file. A write error is raised by the next
    ``emit`` (the engine then logs it once and skips the sink).
    """

    def __init__(self, path: str | Path, *, capacity: int = DEFAULT_QUEUE_RECORDS) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be an int >= 1, got {capacity!r}")
        self.path = Path(path)
        self.dropped = 0
        self._dropping = False
        self._closed = False
        self._writer = _Writer(self.path, capacity)
        self._finalizer = weakref.finalize(self, self._writer.stop)

    def emit(self, record: TelemetryRecord) -> None:
        """Queue one line for the writer thread (never blocks)."""
        if self._closed:
            raise ValueError("emit() on a closed JsonlSink")
        if self._writer.error is not None:
            raise self._writer.error
        line = telemetry_codec.encode(record)
        try:
            self._writer.queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1
            if not self._dropping:
                self._dropping = True
                log.warning(
                    "telemetry file writer is %d records behind; dropping records until it "
                    "catches up (counted in JsonlSink.dropped)",
                    self._writer.queue.maxsize,
                )
            return
        self._dropping = False

    def flush(self) -> None:
        """Block until every record emitted so far is written and flushed (call off the loop)."""
        self._writer.flush()
        if self._writer.error is not None:
            raise self._writer.error

    def close(self) -> None:
        """Flush, stop the writer thread and close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._finalizer()
        if self.dropped:
            log.warning("telemetry file writer dropped %d records in all", self.dropped)

    def __enter__(self) -> JsonlSink:
        """Use as a context manager: closes on exit."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the sink."""
        self.close()
