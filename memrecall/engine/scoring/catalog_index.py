"""The catalog's ranker: the reference scorer over a word index, maintained incrementally.

:class:`~memrecall.engine.scoring.reference.ReferenceIndex` answers "is this token a
substring of that field?" by searching one string holding every document's
field, so each query token costs a pass over the whole pool's text. Here each
normalised field is cut at whitespace into *words*, and every distinct word
keeps a posting list (the catalog slots of the documents holding it). A query
token that contains no whitespace can only occur inside one word, so its
documents are the union of the postings of the vocabulary words containing it;
the vocabulary (every distinct word once, joined) is much smaller than the
text. A token with whitespace (the tokenizer never makes one) falls back to
checking every document. Scores, ties and exclusions are exactly the reference
scorer's; a Hypothesis test compares the two on random pools.

:class:`IndexBuilder` is owned by the catalog and changed one batch at a time;
:meth:`IndexBuilder.freeze` hands out immutable columns (copy on write), so a
published :class:`CatalogIndex` never changes under a recall that is using it.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from itertools import filterfalse, islice
from typing import Self, TypeAlias

from memrecall.engine.render import MAX_PROMPT_DOCS
from memrecall.engine.scoring.candidates import RecallCandidates, prepare_candidates
from memrecall.engine.scoring.reference import (
    BODY_WEIGHT,
    DESCRIPTION_WEIGHT,
    TITLE_WEIGHT,
    DocumentFields,
    type_boosts,
)
from memrecall.engine.scoring.tokens import query_tokens
from memrecall.events.documents import MemoryDocument, MemoryType

__all__ = [
    "COLUMNS",
    "CatalogIndex",
    "Column",
    "FieldTexts",
    "IndexBuilder",
    "Slots",
    "field_texts",
    "words_of",
]

COLUMNS = (("title", TITLE_WEIGHT), ("description", DESCRIPTION_WEIGHT), ("body", BODY_WEIGHT))
"""The scored fields and their weights, in the reference scorer's order."""

_SEPARATOR = "\x00"
_MTIME = operator.attrgetter("mtime")


FieldTexts = tuple[str, str, str]
"""The scorer's normalised title, description and body window (:class:`DocumentFields`)."""

Slots: TypeAlias = "array[int] | memoryview"
"""A posting list: catalog slots, as an array or (once loaded from a file) a view of one."""


def words_of(text: str) -> set[str]:
    """The distinct whitespace-separated words of a normalised field."""
    return set(text.split())


def field_texts(fields: DocumentFields) -> FieldTexts:
    """The three scored texts of a document's fields, in :data:`COLUMNS` order."""
    return (fields.title, fields.description, fields.body)


class Column:
    """One field's postings, frozen: word -> slots, and the vocabulary joined for search."""

    __slots__ = ("column", "postings", "starts", "text", "weight", "words")

    words: list[str]
    text: str
    starts: list[int]

    def __init__(
        self, column: int, postings: dict[str, Slots], previous: Column | None = None
    ) -> None:
        self.column = column
        self.weight = COLUMNS[column][1]
        self.postings = postings
        if previous is not None and previous.postings.keys() == postings.keys():
            self.words, self.text, self.starts = previous.words, previous.text, previous.starts
            return
        self.words = list(postings)
        self.text = _SEPARATOR.join(self.words) + _SEPARATOR
        self.starts = [0, *itertools.accumulate(len(w) + 1 for w in self.words)]

    def hits(self, token: str) -> list[Slots]:
        """The postings of every vocabulary word containing ``token`` (no whitespace in it)."""
        find, starts, words, postings = self.text.find, self.starts, self.words, self.postings
        found = []
        position = find(token)
        while position != -1:
            index = bisect_right(starts, position) - 1
            found.append(postings[words[index]])
            position = find(token, starts[index + 1])
        return found


class IndexBuilder:
    """Mutable postings for the three scored fields; see :meth:`apply` and :meth:`freeze`."""

    def __init__(self) -> None:
        self._postings: list[dict[str, Slots]] = [{}, {}, {}]
        self._shared = [False, False, False]
        self._frozen: list[Column | None] = [None, None, None]

    @classmethod
    def from_postings(cls, postings: Sequence[dict[str, Slots]]) -> IndexBuilder:
        """Adopt postings loaded from a catalog file (three columns)."""
        builder = cls()
        builder._postings = [dict(column) for column in postings]
        return builder

    def postings(self) -> list[dict[str, Slots]]:
        """The current postings (read-only view, for persistence)."""
        return self._postings

    def apply(self, changes: dict[int, tuple[FieldTexts | None, FieldTexts | None]]) -> None:
        """Apply a batch: slot -> (fields the index holds for it, fields it should hold).

        Only words that appear or disappear touch a posting list, so an edit that
        keeps a document's slot leaves the postings of its unchanged words alone.
        """
        for column in range(3):
            drop: defaultdict[str, set[int]] = defaultdict(set)
            grow: defaultdict[str, list[int]] = defaultdict(list)
            for slot, (before, after) in changes.items():
                new = words_of(after[column]) if after is not None else set()
                if before is None:
                    for word in new:
                        grow[word].append(slot)
                    continue
                old = words_of(before[column])
                if old == new:
                    continue
                for word in old - new:
                    drop[word].add(slot)
                for word in new - old:
                    grow[word].append(slot)
            if not drop and not grow:
                continue
            postings = self._postings[column]
            if self._shared[column]:
                postings = dict(postings)
                self._postings[column] = postings
                self._shared[column] = False
            for word in drop.keys() | grow.keys():
                gone = drop.get(word)
                previous = postings.get(word)
                if previous is None:
                    fresh = array("I")
                elif gone:
                    fresh = array("I", filterfalse(gone.__contains__, previous))
                else:
                    fresh = array("I", previous)  # a copy: the old one may be published
                fresh.extend(grow.get(word, ()))
                if fresh:  # an array now, even if the old list was a view of a loaded file
                    postings[word] = fresh
                elif previous is not None:
                    del postings[word]

    def freeze(self) -> tuple[Column, Column, Column]:
        """Immutable columns for a published index; later changes copy before writing."""
        columns = []
        for column in range(3):
            previous = self._frozen[column]
            if previous is not None and previous.postings is self._postings[column]:
                frozen = previous
            else:
                frozen = Column(column, self._postings[column], previous)
            self._frozen[column] = frozen
            self._shared[column] = True
            columns.append(frozen)
        return (columns[0], columns[1], columns[2])


class CatalogIndex:
    """The reference ranking over one catalog generation (a :class:`Ranker`).

    ``documents`` is the pool in recall order; ``slots[i]`` is the catalog slot
    of ``documents[i]``; ``fields`` maps a slot to its scorer fields. Besides
    :meth:`rank` it prepares a recall's candidates without a pass over the
    whole pool (:meth:`prepare_candidates`), with the same result as
    :func:`memrecall.engine.scoring.candidates.prepare_candidates`.
    """

    name = "reference"
    large_hits = 64
    """Hit sets above this size are scored by set algebra instead of one document at a time."""

    def __init__(
        self,
        documents: Sequence[MemoryDocument],
        slots: Sequence[int],
        fields: Sequence[FieldTexts | None],
        columns: tuple[Column, Column, Column],
        *,
        by_type: dict[MemoryType, set[int]] | None = None,
        by_path: dict[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.documents = documents
        self._n = n = len(documents)
        self._slots = slots = list(slots)
        self._fields = fields
        self._columns = columns
        self._pool_of = dict(zip(slots, range(n), strict=True))
        # Ties of the reference ranking: mtime descending, then pool order. A reversed
        # sort in Python keeps equal keys in their original order, so this is exactly it.
        mtimes = list(map(_MTIME, documents))
        self._recent_pool = sorted(range(n), key=mtimes.__getitem__, reverse=True)
        self._rank_slots = list(map(slots.__getitem__, self._recent_pool))
        self._rank_pos = dict(zip(self._rank_slots, range(n), strict=True))
        if by_type is None:
            by_type = {kind: set() for kind in MemoryType}
            for slot, document in zip(slots, documents, strict=True):
                by_type[document.type].add(slot)
        self._by_type = by_type
        if by_path is None:
            grouped: dict[str, list[int]] = {}
            for slot, document in zip(slots, documents, strict=True):
                grouped.setdefault(document.path, []).append(slot)
            by_path = {path: tuple(group) for path, group in grouped.items()}
        self._by_path = by_path

    @classmethod
    def of(cls, documents: Sequence[MemoryDocument]) -> Self:
        """Index a fixed list of documents (slot ``i`` = document ``i``)."""
        fields = [field_texts(DocumentFields.of(d)) for d in documents]
        builder = IndexBuilder()
        builder.apply({slot: (None, f) for slot, f in enumerate(fields)})
        return cls(tuple(documents), range(len(documents)), fields, builder.freeze())

    def __len__(self) -> int:
        return self._n

    def _token_hits(self, token: str, column: Column) -> set[int]:
        if token.split() == [token]:
            found = column.hits(token)
            if not found:
                return set()
            hits: set[int] = set(found[0])
            hits.update(*found[1:])
            return hits
        # A token with whitespace in it: check every document (never produced by the tokenizer).
        which = column.column
        return {
            slot
            for slot in self._slots
            if (fields := self._fields[slot]) is not None and token in fields[which]
        }

    def scores(self, query: str, *, exclude: Collection[int] = ()) -> dict[int, int]:
        """Every matching document's score by pool index (one document at a time; for tests)."""
        levels = self._levels(query, exclude)
        out: dict[int, int] = {}
        for score, (single, groups) in levels.items():
            for slot in itertools.chain(single, *groups):
                out[self._pool_of[slot]] = score
        return out

    def _levels(
        self, query: str, exclude: Collection[int]
    ) -> dict[int, tuple[list[int], list[set[int]]]]:
        """Score -> (single slots, groups of slots) for every matching, non-excluded document."""
        tokens = query_tokens(query)
        if not tokens:
            return {}
        hits = [
            (column.weight, found)
            for token in tokens
            for column in self._columns
            if (found := self._token_hits(token, column))
        ]
        if not hits:
            return {}
        excluded = {self._slots[i] for i in exclude if 0 <= i < self._n} if exclude else set()
        threshold = self.large_hits
        large = [(w, s) for w, s in hits if len(s) > threshold]
        single: dict[int, int] = {}
        for weight, found in hits:
            if len(found) <= threshold:
                for slot in found:
                    single[slot] = single.get(slot, 0) + weight
        for slot in single:
            for weight, found in large:
                if slot in found:
                    single[slot] += weight
        groups: list[tuple[int, set[int]]] = []
        if len(large) == 1:
            # The common case (one frequent word): its hit set is ours, no copy needed.
            weight, rest = large[0]
            rest.difference_update(single)
            rest.difference_update(excluded)
            groups = [(weight, rest)] if rest else []
        elif large:
            rest = set().union(*(s for _, s in large))
            rest.difference_update(single)
            rest.difference_update(excluded)
            parts = [(0, rest)] if rest else []
            for weight, found in large:
                refined = []
                for score, part in parts:
                    inside = part & found
                    if inside:
                        refined.append((score + weight, inside))
                        if len(inside) < len(part):
                            refined.append((score, part - found))
                    else:
                        refined.append((score, part))
                parts = refined
            groups = parts
        for slot in excluded:
            single.pop(slot, None)
        boosts = type_boosts(tokens)
        levels: dict[int, tuple[list[int], list[set[int]]]] = {}
        if len(set(boosts.values())) == 1:
            boost = next(iter(boosts.values()))
            for slot, score in single.items():
                levels.setdefault(score + boost, ([], []))[0].append(slot)
            for score, part in groups:
                levels.setdefault(score + boost, ([], []))[1].append(part)
            return levels
        documents, pool_of = self.documents, self._pool_of
        for slot, score in single.items():
            kind = documents[pool_of[slot]].type
            levels.setdefault(score + boosts[kind], ([], []))[0].append(slot)
        for score, part in groups:
            for kind, members in self._by_type.items():
                inside = part & members
                if inside:
                    levels.setdefault(score + boosts[kind], ([], []))[1].append(inside)
        return levels

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first (as the reference scorer)."""
        levels = self._levels(query, exclude)
        if not levels:
            return []
        if limit < 0:  # a slice from the end: rank everything, then cut like a list would
            everything = self.rank(query, self._n, exclude=exclude)
            return everything[:limit]
        rank_pos, pool_of = self._rank_pos, self._pool_of
        chosen: list[int] = []
        for score in sorted(levels, reverse=True):
            need = limit - len(chosen)
            if need <= 0:
                break
            single, groups = levels[score]
            size = len(single) + sum(len(g) for g in groups)
            if size * 4 <= self._n or size <= need:
                members = list(itertools.chain(single, *groups))
                members.sort(key=rank_pos.__getitem__)
                chosen.extend(members[:need])
            else:
                member = (
                    groups[0] if not single and len(groups) == 1 else set(single).union(*groups)
                )
                chosen.extend(islice(filter(member.__contains__, self._rank_slots), need))
        return [pool_of[slot] for slot in chosen]

    def prepare_candidates(
        self,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        excluded_paths: Collection[str] = frozenset(),
        limit: int = MAX_PROMPT_DOCS,
    ) -> RecallCandidates:
        """The generic candidate pass, with this index's ranking and pool lookups."""
        return prepare_candidates(
            query,
            self.documents,
            self,
            recent_tools=recent_tools,
            excluded_paths=excluded_paths,
            limit=limit,
            order=self,
        )

    @property
    def by_recency(self) -> Sequence[int]:
        """Pool indices, mtime descending, input order for ties."""
        return self._recent_pool

    def indices_of(self, path: str) -> Iterable[int]:
        """Pool indices of the documents at ``path``."""
        return (self._pool_of[slot] for slot in self._by_path.get(path, ()))
