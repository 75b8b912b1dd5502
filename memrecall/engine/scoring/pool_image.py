"""A :class:`~memrecall.engine.scoring.pool.FieldedPool` as a cache file keeps it, read on demand.

Loading a pool by adding every document again costs a pass over every
posting (about 60 ms at 10,000 documents), and decoding every document's
features another 45 ms: together more than the whole wait before a model's
first request. A :class:`PoolImage` stores the pool the way it is searched
instead, so a new process loads it in a few milliseconds and reads only what
its queries touch:

* the sorted vocabulary and each term's document frequency (the only parts
  turned into Python containers at load, since every query needs them);
* per field, every term's postings as one run of keys and one of counts in
  two flat arrays, with the runs' offsets in a third, so a term's postings are
  found by bisecting the vocabulary and decoded only when a query needs them
  (:meth:`PoolReader.row`);
* every document's features, still encoded (decoded when a change or the
  same-subject rule needs them: :func:`features_in`);
* the field lengths and mtimes per key, the ``supersedes`` links, and the
  names links can match (decoded only when there are links).

Arrays are machine-native unsigned 32-bit ints (``float64`` for mtimes): the
file is a cache on the machine that wrote it. :meth:`PoolReader.of` checks
that the parts fit together and raises :class:`ValueError` when they do not.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import cast

import msgspec

from memrecall.engine.scoring.features import FIELDS, DocumentFeatures

__all__ = ["PoolImage", "PoolReader", "encode_features", "features_in", "write_image"]

_features_decoder = msgspec.msgpack.Decoder(DocumentFeatures)
_handles_decoder = msgspec.msgpack.Decoder(list[tuple[str, str]])
_encoder = msgspec.msgpack.Encoder()


class PoolImage(msgspec.Struct, array_like=True):
    """A pool, stored as it is searched (see the module doc). Arrays are ``array('I')``
    bytes unless named otherwise; per-field parts are in :data:`FIELDS` order."""

    terms: list[str]
    """The vocabulary, sorted."""
    frequencies: bytes
    """Each term's document frequency, in ``terms`` order."""
    starts: list[bytes]
    """Per field, ``len(terms) + 1`` offsets: term ``i``'s postings are
    ``starts[i]`` up to ``starts[i + 1]``."""
    keys: list[bytes]
    """Per field, the postings' document keys, term after term."""
    counts: list[bytes]
    """Per field, the postings' counts, aligned with ``keys``."""
    slots: bytes
    """The keys of the pool's documents, ascending."""
    features: list[msgspec.Raw]
    """Each document's encoded :class:`DocumentFeatures`, aligned with ``slots``."""
    lengths: list[bytes]
    """Per field, each key's field length (0 for keys without a document)."""
    mtimes: bytes
    """Each key's document mtime (``array('d')``; 0.0 for keys without a document)."""
    links: list[tuple[int, str]]
    """``(key, target)`` of every document with a ``supersedes`` link."""
    handles: msgspec.Raw
    """The encoded ``(path handle, name handle)`` of each document, aligned with ``slots``."""
    tallies: list[dict[int, int]]
    """Per field, how many documents have each (non-zero) length of it."""


def encode_features(features: DocumentFeatures) -> msgspec.Raw:
    """One document's features as :attr:`PoolImage.features` keeps them."""
    return msgspec.Raw(_encoder.encode(features))


def features_in(store: dict[int, DocumentFeatures | msgspec.Raw], key: int) -> DocumentFeatures:
    """The features under ``key`` in a pool's store, decoded (and kept decoded) if need be.

    Replacing a still-encoded value by its decoding is not a change: any view
    sharing ``store`` sees equal features either way.
    """
    value = store[key]
    if isinstance(value, msgspec.Raw):
        value = store[key] = _features_decoder.decode(value)
    return value


def _uints(data: bytes) -> memoryview:
    if len(data) % 4:
        raise ValueError("an array of 32-bit ints has a length that is not a multiple of 4")
    return memoryview(data).cast("I")


class PoolReader:
    """Read access to a loaded :class:`PoolImage`: a term's postings, decoded on demand.

    Immutable once made, so every pool and view of one load can share it
    from any thread.
    """

    __slots__ = ("_counts", "_keys", "_starts", "image", "terms")

    def __init__(self, image: PoolImage) -> None:
        self.image = image
        self.terms = image.terms
        self._starts = tuple(map(_uints, image.starts))
        self._keys = tuple(map(_uints, image.keys))
        self._counts = tuple(map(_uints, image.counts))

    @classmethod
    def of(cls, image: PoolImage) -> PoolReader:
        """Check that ``image``'s parts fit together (``ValueError`` if not) and read it."""
        fields = len(FIELDS)
        if (
            not (len(image.starts) == len(image.keys) == len(image.counts) == len(image.lengths))
            or len(image.starts) != fields
        ):
            raise ValueError("a pool image needs every part for every field")
        reader = cls(image)
        size = len(image.terms)
        if len(_uints(image.frequencies)) != size:
            raise ValueError("a pool image has a frequency per term")
        for starts, keys, counts in zip(reader._starts, reader._keys, reader._counts, strict=True):
            if len(starts) != size + 1 or len(keys) != len(counts) or starts[-1] != len(keys):
                raise ValueError("a pool image's postings do not add up")
        documents = len(_uints(image.slots))
        if len(image.features) != documents:
            raise ValueError("a pool image has features for every document")
        capacity = len(image.mtimes) // 8
        if any(len(_uints(lengths)) != capacity for lengths in image.lengths) or (
            documents and max(_uints(image.slots)) >= capacity
        ):
            raise ValueError("a pool image has lengths and mtimes for every key")
        if image.terms != sorted(image.terms):
            raise ValueError("a pool image's vocabulary is not sorted")
        if len(image.tallies) != fields:
            raise ValueError("a pool image has length tallies for every field")
        return reader

    def checked_lengths(self, field: int) -> list[int]:
        """:meth:`lengths`, checked against the field's stored tally (``ValueError``)."""
        lengths = self.lengths(field)
        filled = len(lengths) - lengths.count(0)
        if sum(self.image.tallies[field].values()) != filled:
            raise ValueError("a pool image's length tallies do not match its lengths")
        return lengths

    def _find(self, term: str) -> int:
        terms = self.terms
        i = bisect.bisect_left(terms, term)
        return i if i < len(terms) and terms[i] == term else -1

    def row(self, field: int, term: str) -> dict[int, int] | None:
        """``term``'s postings in ``field`` (key -> count) as stored, or ``None``."""
        i = self._find(term)
        if i < 0:
            return None
        starts = self._starts[field]
        begin, end = starts[i], starts[i + 1]
        if begin == end:
            return None
        return dict(zip(self._keys[field][begin:end], self._counts[field][begin:end], strict=True))

    def run(self, field: int, term: str) -> tuple[memoryview, memoryview] | None:
        """``term``'s stored keys and counts in ``field`` (undecoded), or ``None``."""
        i = self._find(term)
        if i < 0:
            return None
        begin, end = self._starts[field][i], self._starts[field][i + 1]
        return self._keys[field][begin:end], self._counts[field][begin:end]

    def frequencies(self) -> dict[str, int]:
        """Term -> document frequency."""
        return dict(zip(self.terms, _uints(self.image.frequencies), strict=True))

    def slots(self) -> list[int]:
        """The stored documents' keys."""
        return _uints(self.image.slots).tolist()

    def lengths(self, field: int) -> list[int]:
        """Each key's length of ``field``."""
        return _uints(self.image.lengths[field]).tolist()

    def mtimes(self) -> list[float]:
        """Each key's mtime."""
        return cast("list[float]", memoryview(self.image.mtimes).cast("d").tolist())

    def handles(self) -> dict[int, tuple[str, str]]:
        """Key -> ``(path handle, name handle)`` of every stored document."""
        decoded = _handles_decoder.decode(self.image.handles)
        if len(decoded) != len(self.image.features):
            raise ValueError("a pool image has handles for every document")
        return dict(zip(self.slots(), decoded, strict=True))


def write_image(
    *,
    terms: list[str],
    frequencies: Mapping[str, int],
    run_of: Callable[[int, str], tuple[Iterable[int], Iterable[int]] | None],
    features: Mapping[int, DocumentFeatures | msgspec.Raw],
    lengths: tuple[list[int], ...],
    mtimes: list[float],
    links: Mapping[int, str],
    handles: Mapping[int, tuple[str, str]],
    tallies: Sequence[Mapping[int, int]],
) -> PoolImage:
    """Assemble an image. ``run_of(field, term)`` gives a term's postings in a field as
    ``(keys, counts)``, or ``None`` (or empty runs) when it has none there."""
    starts, keys, counts = [], [], []
    for field in range(len(FIELDS)):
        field_starts, field_keys, field_counts = array("I"), array("I"), array("I")
        for term in terms:
            field_starts.append(len(field_keys))
            run = run_of(field, term)
            if run is not None:
                field_keys.extend(run[0])
                field_counts.extend(run[1])
        field_starts.append(len(field_keys))
        starts.append(field_starts.tobytes())
        keys.append(field_keys.tobytes())
        counts.append(field_counts.tobytes())
    slots = sorted(features)
    capacity = max(len(mtimes), *(len(x) for x in lengths), (slots[-1] + 1) if slots else 0)
    return PoolImage(
        terms=terms,
        frequencies=array("I", (frequencies[t] for t in terms)).tobytes(),
        starts=starts,
        keys=keys,
        counts=counts,
        slots=array("I", slots).tobytes(),
        features=[
            value if isinstance(value, msgspec.Raw) else encode_features(value)
            for value in map(features.__getitem__, slots)
        ],
        lengths=[array("I", _padded(x, capacity)).tobytes() for x in lengths],
        mtimes=array("d", _padded(mtimes, capacity)).tobytes(),
        links=sorted(links.items()),
        handles=msgspec.Raw(_encoder.encode([handles[slot] for slot in slots])),
        tallies=[dict(tally) for tally in tallies],
    )


def _padded(values: list[int] | list[float], size: int) -> list[int] | list[float]:
    return values + [0] * (size - len(values)) if len(values) < size else values
