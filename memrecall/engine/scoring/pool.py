"""The ``fielded`` scorer's pool-wide data, kept current one document at a time.

:class:`FieldedPool` is what a catalog changes file by file; a
:class:`~memrecall.engine.scoring.fielded.FieldedIndex` made over it
(:meth:`~memrecall.engine.scoring.fielded.FieldedIndex.over`) is an immutable
view of one moment, kept valid by copy on write.
"""

from __future__ import annotations

import bisect
import collections
from collections.abc import Iterable

import attrs
import msgspec

from memrecall.engine.scoring.features import FIELDS, DocumentFeatures, Params
from memrecall.engine.scoring.pool_image import PoolImage, PoolReader, features_in, write_image

__all__ = ["TERM_CACHE", "FieldedPool", "PoolStatistics", "TermValues", "rows_of"]

Postings = dict[str, dict[int, int]]
"""One field's postings: term -> {key: count}."""


def rows_of(
    postings: tuple[Postings, ...], base: PoolReader | None, term: str
) -> tuple[dict[int, int] | None, ...]:
    """``term``'s postings in each field: from ``postings``, else (a pool loaded from an
    image) decoded from ``base`` and kept in ``postings`` for the next query.

    An empty row is a term the pool no longer has in that field. Keeping a decoded
    row is not a change: the pool copies a field's dict before changing it, and
    copies a row before changing it once a view may have read it.
    """
    rows = tuple(field.get(term) for field in postings)
    if base is None or None not in rows:
        return rows
    found: list[dict[int, int] | None] = []
    for i, (field, row) in enumerate(zip(postings, rows, strict=True)):
        stored = base.row(i, term) if row is None else row
        if row is None and stored is not None:
            field[term] = stored
        found.append(stored)
    return tuple(found)


@attrs.frozen
class PoolStatistics:
    """What a pool contributes to every score: document frequencies, average field
    lengths (over documents with the field) and the sorted vocabulary."""

    documents: int
    frequencies: dict[str, int]
    averages: tuple[float, ...]
    vocabulary: tuple[str, ...]


def _average(total: int, filled: int) -> float:
    return max(1.0, total / filled) if filled else 1.0


@attrs.frozen
class TermValues:
    """One term's documents (pool keys) and values, and everything they were computed from.

    ``rows`` are the term's postings per field: a row a view has read is never
    changed again (the pool copies it first), so the same row objects (and
    equal averages of their fields, and an equal idf) mean equal values. Views
    share these through their pool: after an edit, a term the edit did not
    touch keeps its values, and only its documents' positions are mapped again.
    """

    rows: tuple[dict[int, int] | None, ...]
    averages: tuple[float | None, ...]
    idf: float
    keys: tuple[int, ...]
    values: tuple[float, ...]


TERM_CACHE = 20_000
"""At most this many terms' values are kept per pool for later views."""


class FieldedPool:
    """The ``fielded`` scorer's pool-wide data, maintained document by document.

    Holds each document's features under a key of the caller's choosing (a small
    non-negative int: a catalog's slot), per field the term -> {key: count}
    postings and each key's field length, the document frequencies, the sorted
    vocabulary, the field length totals (and how many documents have each
    length), what ``supersedes`` links name and the links. :meth:`add` and :meth:`remove`
    cost what the document holds, never a pass over the pool; :meth:`view`
    publishes an immutable :class:`FieldedIndex` over the pool in a given
    order. Containers a view reads are copied before the next change (copy on
    write; a term's postings only when that term changes), so a view stays
    valid while the pool moves on (links and length totals are read only
    while a view is made). Not thread-safe itself: the owner serialises
    changes and :meth:`view`; views may be used from any thread.
    """

    def __init__(self, *, params: Params | None = None) -> None:
        self.params = params or Params()
        self._features: dict[int, DocumentFeatures | msgspec.Raw] = {}
        """Each key's features; still encoded (``Raw``) for a loaded key until first read."""
        self._base: PoolReader | None = None
        """The image this pool was loaded from (:meth:`from_image`): rows not in
        ``_postings`` are read from it."""
        self._mtimes: list[float] = []
        """Each key's document mtime (read only when a view is made)."""
        self._df: dict[str, int] = {}
        self._postings: tuple[dict[str, dict[int, int]], ...] = tuple({} for _ in FIELDS)
        self._lengths0: list[int] = []
        self._lengths1: list[int] = []
        self._lengths2: list[int] = []
        self._lengths3: list[int] = []
        self._vocabulary: list[str] = []
        self._length_sum = [0] * len(FIELDS)
        self._length_counts: list[dict[int, int]] = [{} for _ in FIELDS]
        self._handles: tuple[dict[str, set[int]], dict[str, set[int]]] = ({}, {})
        """Keys by normalised relative path, and by normalised name."""
        self._handles_ready = True
        """False for a loaded pool until a link needs the handles (:meth:`_ready_handles`)."""
        self._links: dict[int, str] = {}
        """Keys whose document has a ``supersedes`` link, and its target."""
        self._published = False
        self._owned: set[tuple[int, str]] = set()
        """(field, term) postings created or copied since the last view."""
        self._all_owned = True
        """No view has read any posting yet (after construction or :meth:`extend`)."""
        self._copied: set[str] = set()
        """Containers (attribute names) copied since the last view."""
        self._copied_fields: set[int] = set()
        """Fields whose term -> postings dict was copied since the last view."""
        self._term_cache: dict[str, TermValues] = {}
        """The last values computed for each term, by any view (see :class:`TermValues`)."""

    def __len__(self) -> int:
        return len(self._features)

    def __contains__(self, key: object) -> bool:
        return key in self._features

    def get(self, key: int) -> DocumentFeatures | None:
        """The features stored under ``key``, if any."""
        return features_in(self._features, key) if key in self._features else None

    @classmethod
    def from_image(cls, image: PoolImage, *, params: Params | None = None) -> FieldedPool:
        """A pool equal to the one :meth:`image` was taken of, loaded without a pass over
        its postings: a term's postings and a document's features are decoded when first
        needed. Raises ``ValueError`` when the image's parts do not fit together."""
        base = PoolReader.of(image)
        pool = cls(params=params)
        pool._base = base
        pool._vocabulary = list(base.terms)
        pool._df = base.frequencies()
        pool._features = dict(zip(base.slots(), image.features, strict=True))
        pool._lengths0, pool._lengths1, pool._lengths2, pool._lengths3 = (
            base.checked_lengths(i) for i in range(len(FIELDS))
        )
        pool._mtimes = base.mtimes()
        for i, tally in enumerate(image.tallies):
            pool._length_counts[i] = dict(tally)
            pool._length_sum[i] = sum(length * n for length, n in tally.items())
        pool._links = dict(image.links)
        pool._handles_ready = False
        return pool

    def image(self) -> PoolImage:
        """The pool as a cache file stores it (see :mod:`memrecall.engine.scoring.pool_image`)."""
        base = self._base
        position = {} if base is None else {term: i for i, term in enumerate(base.terms)}

        def run_of(field: int, term: str) -> tuple[Iterable[int], Iterable[int]] | None:
            row = self._postings[field].get(term)
            if row is not None:
                return list(row), list(row.values())
            if base is None or term not in position:
                return None
            return base.run(field, term)

        return write_image(
            terms=list(self._vocabulary),
            frequencies=self._df,
            run_of=run_of,
            features=self._features,
            lengths=self._all_lengths(),
            mtimes=self._mtimes,
            links=self._links,
            handles=self._handles_of_keys(),
            tallies=self._length_counts,
        )

    def _handles_of_keys(self) -> dict[int, tuple[str, str]]:
        """Key -> what a link can name its document by (stored ones from the image)."""
        stored = {} if self._base is None else self._base.handles()
        return {
            key: stored[key] if isinstance(value, msgspec.Raw) else value.handles
            for key, value in self._features.items()
        }

    def _ready_handles(self) -> None:
        """Build the handle maps of a loaded pool (the first time a link needs them)."""
        if self._handles_ready:
            return
        self._handles_ready = True
        for key, pair in self._handles_of_keys().items():
            for handles, handle in zip(self._handles, pair, strict=True):
                if handle:
                    handles.setdefault(handle, set()).add(key)

    def _all_lengths(self) -> tuple[list[int], list[int], list[int], list[int]]:
        return (self._lengths0, self._lengths1, self._lengths2, self._lengths3)

    def _unshare(self) -> None:
        """After a view: every container it reads is copied before its first change."""
        if self._published:
            self._published = False
            self._owned = set()
            self._all_owned = False
            self._copied = set()
            self._copied_fields = set()

    def _own(self, name: str) -> None:
        """Copy the container ``name`` (an attribute) if the last view still reads it."""
        if name not in self._copied:
            self._copied.add(name)
            value = getattr(self, name)
            setattr(self, name, type(value)(value))

    def _postings_of(self, field: int) -> dict[str, dict[int, int]]:
        if field not in self._copied_fields:
            self._copied_fields.add(field)
            postings = list(self._postings)
            postings[field] = dict(postings[field])
            self._postings = tuple(postings)
        return self._postings[field]

    def _row(self, field: int, term: str) -> dict[int, int]:
        """The postings of ``term`` in ``field``, owned by the pool (copied once if shared)."""
        postings = self._postings_of(field)
        row = postings.get(term)
        if row is None:
            stored = None if self._base is None else self._base.row(field, term)
            row = postings[term] = {} if stored is None else stored
            self._owned.add((field, term))
        elif not self._all_owned and (field, term) not in self._owned:
            row = postings[term] = dict(row)
            self._owned.add((field, term))
        return row

    def _set_length(self, field: int, key: int, old: int, new: int) -> None:
        if old == new:
            return
        self._own(f"_lengths{field}")
        lengths: list[int] = getattr(self, f"_lengths{field}")
        if key >= len(lengths):
            lengths.extend([0] * (key + 1 - len(lengths)))
        lengths[key] = new
        tally = self._length_counts[field]
        if old:
            self._length_sum[field] -= old
            if tally[old] == 1:
                del tally[old]
            else:
                tally[old] -= 1
        if new:
            self._length_sum[field] += new
            tally[new] = tally.get(new, 0) + 1

    def _count_terms(self, gone: Iterable[str], new: Iterable[str]) -> None:
        """Document frequencies: one document less for ``gone``, one more for ``new``."""
        df = self._df
        for term in gone:
            self._own("_df")
            df = self._df
            if df[term] == 1:
                del df[term]
                self._own("_vocabulary")
                del self._vocabulary[bisect.bisect_left(self._vocabulary, term)]
            else:
                df[term] -= 1
        for term in new:
            self._own("_df")
            df = self._df
            seen = df.get(term)
            if seen is None:
                df[term] = 1
                self._own("_vocabulary")
                bisect.insort(self._vocabulary, term)
            else:
                df[term] = seen + 1

    def add(self, key: int, features: DocumentFeatures) -> None:
        """Index ``features`` under ``key``, replacing what was there.

        A replacement changes only what differs between the two versions: the
        terms whose counts changed, the field lengths that changed.
        """
        if key < 0:
            raise ValueError("pool keys are non-negative ints")
        self._unshare()
        old = self.get(key)
        self._own("_features")
        self._features[key] = features
        self._set_mtime(key, features.mtime)
        empty: dict[str, int] = {}
        for i in range(len(FIELDS)):
            self._set_length(i, key, 0 if old is None else old.lengths[i], features.lengths[i])
            before = empty if old is None else old.counts[i]
            after = features.counts[i]
            for term, count in after.items():
                if before.get(term) != count:
                    self._row(i, term)[key] = count
            for term in before:
                if term not in after:
                    self._unpost(i, term, key)
        if old is None:
            self._count_terms((), set().union(*features.counts))
        else:
            was, now = set().union(*old.counts), set().union(*features.counts)
            self._count_terms(was - now, now - was)
        if old is not None:
            self._leave(key, old)
        self._join(key, features)

    def extend(self, items: Iterable[tuple[int, DocumentFeatures]]) -> None:
        """Index many documents under new keys at once (a cold start, a loaded cache).

        The same result as :meth:`add` for each, built in tight loops. Only on
        a pool that no view has read yet, with keys it does not hold.
        """
        if self._published or not self._all_owned or self._base is not None:
            raise ValueError("extend() only before the pool is first viewed, and not loaded")
        features = self._features
        df = self._df
        postings = self._postings
        all_lengths = (self._lengths0, self._lengths1, self._lengths2, self._lengths3)
        tallies = self._length_counts
        sums = self._length_sum
        terms: list[str] = []
        for key, feature in items:
            if key < 0 or key in features:
                raise ValueError(f"extend() needs new non-negative keys, not {key!r}")
            features[key] = feature
            self._set_mtime(key, feature.mtime)
            for i, counts in enumerate(feature.counts):
                length = feature.lengths[i]
                lengths = all_lengths[i]
                if key >= len(lengths):
                    lengths.extend([0] * (key + 1 - len(lengths)))
                lengths[key] = length
                if length:
                    sums[i] += length
                    tallies[i][length] = tallies[i].get(length, 0) + 1
                rows = postings[i]
                for term, count in counts.items():
                    row = rows.get(term)
                    if row is None:
                        rows[term] = {key: count}
                    else:
                        row[key] = count
            terms.extend(set().union(*feature.counts))
            self._join(key, feature)
        counted = collections.Counter(terms)
        new = [term for term in counted if term not in df]
        for term, n in counted.items():
            df[term] = df.get(term, 0) + n
        if new:
            self._vocabulary.extend(new)
            self._vocabulary.sort()

    def _unpost(self, field: int, term: str, key: int) -> None:
        row = self._row(field, term)
        del row[key]
        if not row and self._base is None:
            # (a loaded pool keeps the empty row: the term left, whatever the image says)
            del self._postings_of(field)[term]
            self._owned.discard((field, term))

    def _set_mtime(self, key: int, mtime: float) -> None:
        mtimes = self._mtimes
        if key >= len(mtimes):
            mtimes.extend([0.0] * (key + 1 - len(mtimes)))
        mtimes[key] = mtime

    def _join(self, key: int, features: DocumentFeatures) -> None:
        """Record what a ``supersedes`` link can name this document by, and its own link."""
        if features.supersedes:
            self._links[key] = features.supersedes
        if not self._handles_ready:
            return
        for handles, handle in zip(self._handles, features.handles, strict=True):
            if handle:
                handles.setdefault(handle, set()).add(key)

    def _leave(self, key: int, features: DocumentFeatures) -> None:
        for handles, handle in zip(self._handles, features.handles, strict=True):
            members = handles.get(handle)
            if members is not None:
                members.discard(key)
                if not members:
                    del handles[handle]
        self._links.pop(key, None)

    def _successors(self) -> dict[int, set[int]]:
        """Superseded key -> the keys of the documents whose links name it.

        A link names every document with that relative path, else the one
        document with that name (a name several others share names nothing);
        a link naming nothing, or two documents naming each other, supersedes
        nothing.
        """
        if not self._links:
            return {}
        self._ready_handles()
        by_path, by_name = self._handles
        edges: set[tuple[int, int]] = set()
        for key, target in self._links.items():
            named = by_path.get(target, set()) - {key}
            if not named:
                named = by_name.get(target, set()) - {key}
                if len(named) != 1:
                    continue
            edges.update((old, key) for old in named)
        found: dict[int, set[int]] = {}
        for old, new in edges:
            if (new, old) not in edges:
                found.setdefault(old, set()).add(new)
        return found

    def set_passage(self, key: int, passage: bytes) -> bool:
        """Give the document under ``key`` its passage embedding (packed; see
        :mod:`~memrecall.engine.scoring.passages`), embedded after it was analysed. Its
        words are untouched. False when no document is under ``key``."""
        features = self.get(key)
        if features is None:
            return False
        self._unshare()
        self._own("_features")
        self._features[key] = msgspec.structs.replace(features, passage=passage)
        return True

    def remove(self, key: int) -> None:
        """Drop the document under ``key`` (no-op when absent); unused terms leave."""
        features = self.get(key)
        if features is None:
            return
        self._unshare()
        self._own("_features")
        del self._features[key]
        for i, counts in enumerate(features.counts):
            self._set_length(i, key, features.lengths[i], 0)
            for term in counts:
                self._unpost(i, term, key)
        self._count_terms(set().union(*features.counts), ())
        self._leave(key, features)

    def _averages(self) -> tuple[float, ...]:
        return tuple(
            _average(total, sum(tally.values()))
            for total, tally in zip(self._length_sum, self._length_counts, strict=True)
        )

    def statistics(self) -> PoolStatistics:
        """The pool statistics now (a copy; for tests and diagnostics)."""
        return PoolStatistics(
            documents=len(self._features),
            frequencies=dict(self._df),
            averages=self._averages(),
            vocabulary=tuple(self._vocabulary),
        )

    def publish(self) -> None:
        """Mark the pool's containers as read by a view (:meth:`FieldedIndex.over`): each
        is copied before its next change."""
        self._published = True
