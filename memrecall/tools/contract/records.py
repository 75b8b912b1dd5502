"""The record snapshot the contract works on (storage independent).

A :class:`MemoryRecord` carries the seed-003 fields; a :class:`StoreView` is
what a store hands the contract for one call: the records, the byte cap and a
:class:`StoreStamp` saying which version of the store the snapshot is.
"""

from __future__ import annotations

import msgspec

__all__ = ["GLOBAL_SCOPE", "MemoryRecord", "StoreStamp", "StoreView", "record_bytes"]

GLOBAL_SCOPE = "global"
"""The scope of a record written without one."""


class MemoryRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One memory as the tools see it. Times are unix seconds (inputs, never read from a clock)."""

    id: str
    kind: str
    title: str
    body: str
    tags: tuple[str, ...]
    source: str
    scope: str = GLOBAL_SCOPE
    hits: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0


class StoreStamp(msgspec.Struct, frozen=True, kw_only=True):
    """Which version of the store a snapshot is: size in bytes and modification time in ms.

    ``revision`` is the store's own change counter where it has one (``-1`` when not).
    Two stamps are the same store state exactly when all three fields are equal.
    """

    size: int
    mtime_ms: float
    revision: int = -1


class StoreView(msgspec.Struct, frozen=True, kw_only=True):
    """A snapshot of the store for one tool call."""

    records: tuple[MemoryRecord, ...]
    max_bytes: int
    stamp: StoreStamp

    @property
    def bytes_used(self) -> int:
        """Serialised size of every record (see :func:`record_bytes`)."""
        return sum(record_bytes(record) for record in self.records)


def record_bytes(record: MemoryRecord) -> int:
    """The serialised size of a record: its compact JSON encoding, in UTF-8 bytes.

    This is the unit of the byte cap, of the ``record-too-large`` gate and of
    eviction; a store that measures differently passes its own sizes to prune.
    """
    return len(msgspec.json.encode(record))
