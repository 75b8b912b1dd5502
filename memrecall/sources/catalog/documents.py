"""The documents of a catalog loaded from its file: read from the file, by slot, when used.

The file stores each document (msgspec-encoded, with its CRC-32) after the
checksummed payload, in slot order (:class:`DocumentIndex` says where). A new
process reads and verifies the payload only: at 10,000 documents of about
1 KB that leaves 11 MB of bodies unread, unchecksummed and undecoded, though
a recall reads only the few hundred it ranks and lists (the candidates, the
fast result, the fallback). :class:`StoredDocuments` reads one document
with one ``pread`` and checks it; :class:`LoadedDocuments` is a snapshot's
document sequence over documents that may still be in the file, each read
the first time it is used and kept.

A record that no longer verifies (the file was changed in place, or the disk
failed) is never used: the document is read from its topic file in the tree
instead, as a scan would, and the problem is logged once.
"""

from __future__ import annotations

import logging
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import overload

import msgspec

from memrecall.events.documents import MemoryDocument, Scope
from memrecall.sources.cachefile import CorruptRecord, Records
from memrecall.sources.catalog.cached import CachedFile
from memrecall.sources.scanner import TopicFile, read_topic_file

__all__ = [
    "DocumentIndex",
    "Held",
    "LoadedDocuments",
    "StoredDocuments",
    "TruncatedDocuments",
    "encode_document",
    "read_from_tree",
    "topic_of",
    "write_records",
]

log = logging.getLogger("memrecall.catalog")

_decoder = msgspec.msgpack.Decoder(MemoryDocument)
_encoder = msgspec.msgpack.Encoder()

Held = MemoryDocument | int
"""A document, or the slot under which the loaded file stores it."""

Reread = Callable[[int], MemoryDocument]
"""Reads the document of a slot from its topic file (the fallback for a bad record)."""


class DocumentIndex(msgspec.Struct, array_like=True):
    """Where each slot's document is in the records after the payload: ``array`` bytes
    of offsets (``Q``), lengths (``I``, 0 for a free slot) and CRC-32s (``I``)."""

    offsets: bytes
    lengths: bytes
    digests: bytes


def topic_of(entry: CachedFile, scope: Scope) -> TopicFile:
    """The topic file an entry stands for (``scope``: its root's)."""
    return TopicFile(entry.root_index, scope, entry.path, entry.relative_path)


def read_from_tree(entry: CachedFile, scope: Scope) -> MemoryDocument:
    """An entry's document read from its topic file, in place of a stored copy that did not
    verify; raises :class:`CorruptRecord` when the file gives no document either."""
    document, _ = read_topic_file(topic_of(entry, scope))
    if document is None:
        raise CorruptRecord(f"{entry.path}: stored copy is bad and the file cannot be read")
    return document


def encode_document(document: MemoryDocument) -> bytes:
    """A document as the file stores it."""
    return _encoder.encode(document)


def write_records(encoded: Sequence[bytes | None]) -> tuple[DocumentIndex, list[bytes]]:
    """The index and records of documents given encoded by slot (``None``: free slot)."""
    offsets, lengths, digests = array("Q"), array("I"), array("I")
    records: list[bytes] = []
    at = 0
    for data in encoded:
        offsets.append(at)
        if data is None:
            lengths.append(0)
            digests.append(0)
            continue
        lengths.append(len(data))
        digests.append(zlib.crc32(data))
        records.append(data)
        at += len(data)
    return DocumentIndex(offsets.tobytes(), lengths.tobytes(), digests.tobytes()), records


class TruncatedDocuments(ValueError):
    """The file ends before the documents its index lists."""


class StoredDocuments:
    """The documents a loaded catalog file holds, by slot; immutable, shared by threads."""

    __slots__ = ("_digests", "_lengths", "_offsets", "_records", "failed")

    def __init__(self, records: Records, index: DocumentIndex) -> None:
        self._records = records
        try:
            self._offsets = memoryview(index.offsets).cast("Q")
            self._lengths = memoryview(index.lengths).cast("I")
            self._digests = memoryview(index.digests).cast("I")
        except TypeError as exc:
            raise ValueError("the document index is not whole") from exc
        if not len(self._offsets) == len(self._lengths) == len(self._digests):
            raise ValueError("the document index's columns differ in length")
        total = sum(self._lengths)
        if total > records.size:
            raise TruncatedDocuments(f"{records.size} bytes of documents, the index says {total}")
        if total != records.size:
            raise ValueError("the documents after the payload do not add up")
        self.failed = False
        """True once a record did not verify (the file should not be copied from)."""

    def __len__(self) -> int:
        return len(self._lengths)

    def has(self, slot: int) -> bool:
        """True when the file stores a document under ``slot``."""
        return self._lengths[slot] > 0

    def count(self) -> int:
        """How many slots hold a document (a slot listed without one reads as damaged)."""
        return len(self._lengths) - self._lengths.tolist().count(0)

    def record(self, slot: int) -> bytes:
        """The encoded document under ``slot``, verified; raises :class:`CorruptRecord`."""
        try:
            return self._records.read(self._offsets[slot], self._lengths[slot], self._digests[slot])
        except (CorruptRecord, OSError) as exc:
            self.failed = True
            raise CorruptRecord(str(exc)) from exc

    def document(self, slot: int) -> MemoryDocument:
        """The document under ``slot``; raises :class:`CorruptRecord` if it cannot be read."""
        data = self.record(slot)
        try:
            return _decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.failed = True
            raise CorruptRecord(str(exc)) from exc

    def read_or_reread(self, slot: int, reread: Reread) -> MemoryDocument:
        """:meth:`document`, or the topic file read again when the record is bad."""
        try:
            return self.document(slot)
        except CorruptRecord as exc:
            log.warning(
                "catalog: a stored document no longer verifies (%s); read from the tree", exc
            )
            return reread(slot)


class LoadedDocuments(Sequence[MemoryDocument]):
    """An immutable sequence of documents, each read from the catalog file on first use.

    ``items`` holds documents, or slots of ``stored``. Equal to any sequence of
    equal documents (a tuple from a scan included). Safe to read from several
    threads: reading one twice gives equal documents.
    """

    __slots__ = ("_items", "_reread", "_stored")

    def __init__(
        self, items: list[Held], stored: StoredDocuments | None = None, reread: Reread | None = None
    ) -> None:
        self._items = items
        self._stored = stored
        self._reread = reread

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> MemoryDocument: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[MemoryDocument, ...]: ...

    def __getitem__(self, index: int | slice) -> MemoryDocument | tuple[MemoryDocument, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self._items))))
        value = self._items[index]
        if isinstance(value, int):
            assert self._stored is not None
            assert self._reread is not None
            value = self._items[index] = self._stored.read_or_reread(value, self._reread)
        return value

    def __iter__(self) -> Iterator[MemoryDocument]:
        for i in range(len(self._items)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"LoadedDocuments({len(self._items)} documents)"
