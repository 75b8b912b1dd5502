"""Telemetry sinks: where selection and delivery records go.

A sink is anything with a synchronous ``emit(record)``. Emitting is synchronous
on purpose: a cancelled plan must still be able to record its terminal event
while it is being torn down.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any, Protocol

import attrs

from memrecall import __version__
from memrecall.events.codec import JsonlCodec, LogHeader
from memrecall.events.telemetry import TelemetryRecord

__all__ = ["JsonlSink", "MemorySink", "TelemetrySink", "telemetry_codec"]


class TelemetrySink(Protocol):
    """Receives telemetry records."""

    def emit(self, record: TelemetryRecord) -> None:
        """Take one record. Must not block for long and must not raise."""
        ...


telemetry_codec: JsonlCodec[Any] = JsonlCodec(TelemetryRecord, content="telemetry")
"""The codec of telemetry files (a header line, then one record per line)."""


@attrs.define
class MemorySink:
    """Keeps records in a list (tests, the demo, embedding runtimes that forward them)."""

    records: list[TelemetryRecord] = attrs.field(factory=list)

    def emit(self, record: TelemetryRecord) -> None:
        """Append the record."""
        self.records.append(record)


class JsonlSink:
    """Appends records to a JSON Lines file with a telemetry header."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._file: IO[bytes] = self.path.open("ab")
        if new:
            header = LogHeader(content="telemetry", engine_version=__version__)
            self._file.write(telemetry_codec.encode_header(header))
            self._file.flush()

    def emit(self, record: TelemetryRecord) -> None:
        """Write one line and flush it."""
        self._file.write(telemetry_codec.encode(record))
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()
