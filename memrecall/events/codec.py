"""JSON Lines codec with a schema header.

A file is one header line followed by one record per line. Records are
dict-encoded (never array-like, so adding an optional field does not break old
files) with a deterministic key order, so equal records give equal bytes. The
decoder names the line number of the first bad line.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

import msgspec

__all__ = ["SCHEMA", "JsonlCodec", "LogDecodeError", "LogHeader"]

SCHEMA = "memrecall.jsonl"
"""The ``schema`` value every header carries."""

SCHEMA_VERSION = 1

T = TypeVar("T")


class LogHeader(msgspec.Struct, frozen=True, kw_only=True):
    """First line of every file: what wrote it and with which options."""

    schema: str = SCHEMA
    version: int = SCHEMA_VERSION
    content: str
    engine_version: str
    options: dict[str, Any] = msgspec.field(default_factory=dict)
    seed: int | None = None


class LogDecodeError(ValueError):
    """A line could not be decoded; ``line`` is 1-based (the header is line 1)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class JsonlCodec(Generic[T]):
    """Encode and decode records of one type (usually a tagged union) as JSON Lines."""

    def __init__(self, record_type: Any, content: str) -> None:
        self.content = content
        self._record_type = record_type
        self._encoder = msgspec.json.Encoder(order="deterministic")
        self._decoder: msgspec.json.Decoder[T] = msgspec.json.Decoder(record_type)
        self._header_decoder = msgspec.json.Decoder(LogHeader)

    def encode_header(self, header: LogHeader) -> bytes:
        """One header line, newline included."""
        return self._encoder.encode(header) + b"\n"

    def encode(self, record: T) -> bytes:
        """One record line, newline included."""
        return self._encoder.encode(record) + b"\n"

    def encode_all(self, header: LogHeader, records: Iterable[T]) -> bytes:
        """A whole file."""
        return self.encode_header(header) + b"".join(self.encode(r) for r in records)

    def decode_header(self, line: bytes) -> LogHeader:
        """Decode and check line 1."""
        try:
            header = self._header_decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise LogDecodeError(1, f"not a memrecall header: {exc}") from None
        if header.schema != SCHEMA:
            raise LogDecodeError(1, f"unknown schema {header.schema!r}")
        if header.version != SCHEMA_VERSION:
            raise LogDecodeError(
                1, f"schema version {header.version} (this build reads {SCHEMA_VERSION})"
            )
        if header.content != self.content:
            raise LogDecodeError(1, f"holds {header.content!r}, expected {self.content!r}")
        return header

    def iter_records(self, lines: Iterable[bytes], *, first_line: int = 2) -> Iterator[T]:
        """Decode record lines; blank lines are skipped, a bad one raises with its number."""
        for _, record in self.iter_numbered(lines, first_line=first_line):
            yield record

    def iter_numbered(
        self, lines: Iterable[bytes], *, first_line: int = 2
    ) -> Iterator[tuple[int, T]]:
        """Like :meth:`iter_records`, with each record's 1-based line number."""
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            try:
                yield number, self._decoder.decode(line)
            except msgspec.DecodeError as exc:
                raise LogDecodeError(number, str(exc)) from None

    def decode_numbered(self, data: bytes) -> tuple[LogHeader, list[tuple[int, T]]]:
        """Decode a whole file, keeping each record's line number."""
        lines = data.split(b"\n")
        if not lines or not lines[0].strip():
            raise LogDecodeError(1, "empty file: no header line")
        header = self.decode_header(lines[0])
        return header, list(self.iter_numbered(lines[1:]))

    def decode_all(self, data: bytes) -> tuple[LogHeader, list[T]]:
        """Decode a whole file."""
        lines = data.split(b"\n")
        if not lines or not lines[0].strip():
            raise LogDecodeError(1, "empty file: no header line")
        header = self.decode_header(lines[0])
        return header, list(self.iter_records(lines[1:]))
