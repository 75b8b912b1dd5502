"""A snapshot's documents as a catalog loaded from its file holds them: decoded when read.

A new process that loads a catalog of 10,000 documents would spend about
17 ms decoding them all, though a recall reads only the few hundred it ranks
and lists (the candidates and the fast result). :class:`LoadedDocuments` is
the snapshot's document sequence over documents that may still be encoded;
each is decoded the first time it is read and kept decoded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import msgspec

from memrecall.events.documents import MemoryDocument

__all__ = ["Held", "LoadedDocuments", "decode_document", "encode_document"]

_decoder = msgspec.msgpack.Decoder(MemoryDocument)
_encoder = msgspec.msgpack.Encoder()

Held = MemoryDocument | msgspec.Raw
"""A document, or its encoding as the catalog file keeps it."""


def decode_document(value: Held) -> MemoryDocument:
    """The document ``value`` is or encodes."""
    return _decoder.decode(value) if isinstance(value, msgspec.Raw) else value


def encode_document(value: Held) -> msgspec.Raw:
    """``value`` as the catalog file keeps it (an encoding is kept as it is)."""
    return value if isinstance(value, msgspec.Raw) else msgspec.Raw(_encoder.encode(value))


class LoadedDocuments(Sequence[MemoryDocument]):
    """An immutable sequence of documents, each decoded on first read (see the module doc).

    Equal to any sequence of equal documents (a tuple from a scan included).
    Safe to read from several threads: decoding one twice gives equal documents.
    """

    __slots__ = ("_items",)

    def __init__(self, items: list[Held]) -> None:
        self._items = items

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
        if isinstance(value, msgspec.Raw):
            value = self._items[index] = _decoder.decode(value)
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
