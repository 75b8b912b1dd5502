"""The ``reference`` scorer: upstream's deterministic multilingual ranking, exactly.

Per query token (see :mod:`memrecall.engine.scoring.tokens`) a document scores +4 if
the token is a substring of its normalised title, +3 of its description and
+1 of the first 1,200 UTF-16 units of its body. A document with no lexical
hit scores nothing; otherwise it gains one point per query token that is a
keyword of its type, at most two. Ranking: score descending, then mtime
descending, then input order (project before user); never by type.

This scorer is the project's parity baseline and stays selectable for as long
as the project lives. Two implementations exist: :class:`ReferenceIndex`
(per-document fields normalised once, tokens searched across the whole pool
at C speed, or through a per-field word vocabulary with ``word_index=True``)
and :func:`rank_plain` (one document at a time, the obvious reading of the
rules). A Hypothesis test proves them identical.
"""

from __future__ import annotations

import string
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from itertools import accumulate, compress, islice, repeat
from operator import contains

import attrs

from memrecall.engine.scoring.text import body_text, normalize, utf16_prefix
from memrecall.engine.scoring.tokens import query_tokens
from memrecall.events.documents import MemoryDocument, MemoryType

__all__ = [
    "BODY_WEIGHT",
    "DESCRIPTION_WEIGHT",
    "MAX_BODY_CHARS",
    "MAX_TYPE_BOOST",
    "TITLE_WEIGHT",
    "TYPE_KEYWORDS",
    "DocumentFields",
    "ReferenceIndex",
    "rank_plain",
    "score_plain",
    "type_boosts",
]

TITLE_WEIGHT = 4
DESCRIPTION_WEIGHT = 3
BODY_WEIGHT = 1
MAX_TYPE_BOOST = 2
MAX_BODY_CHARS = 1200
"""Body window, in UTF-16 code units, for scoring and for rendering."""

TYPE_KEYWORDS: dict[MemoryType, frozenset[str]] = {
    MemoryType.USER: frozenset(
        {"user", "preference", "preferences", "background", "role", "terse"}
    ),
    MemoryType.FEEDBACK: frozenset({"feedback", "rule", "rules", "avoid", "style", "summary"}),
    MemoryType.PROJECT: frozenset({"project", "goal", "goals", "incident", "deadline", "release"}),
    MemoryType.REFERENCE: frozenset({"reference", "dashboard", "ticket", "docs", "doc", "link"}),
}

_SEPARATOR = "\x00"  # never inside a token, so a match never spans two documents


@attrs.frozen
class DocumentFields:
    """A document as the scorer sees it; computed once per document, not per query."""

    title: str
    description: str
    body: str
    type: MemoryType
    mtime: float

    @classmethod
    def of(cls, document: MemoryDocument) -> DocumentFields:
        """Normalise a document's fields (the body cut to the scoring window first)."""
        window = utf16_prefix(body_text(document.body), MAX_BODY_CHARS)
        return cls(
            title=normalize(document.title),
            description=normalize(document.description),
            body=normalize(window),
            type=document.type,
            mtime=document.mtime,
        )


def type_boosts(tokens: Sequence[str]) -> dict[MemoryType, int]:
    """How many query tokens name each memory type, capped at :data:`MAX_TYPE_BOOST`."""
    return {
        kind: min(sum(1 for t in tokens if t in words), MAX_TYPE_BOOST)
        for kind, words in TYPE_KEYWORDS.items()
    }


def score_plain(tokens: Sequence[str], fields: DocumentFields) -> int:
    """One document's score, read straight off the rules."""
    lexical = 0
    for token in tokens:
        if token in fields.title:
            lexical += TITLE_WEIGHT
        if token in fields.description:
            lexical += DESCRIPTION_WEIGHT
        if token in fields.body:
            lexical += BODY_WEIGHT
    if lexical == 0:
        return 0
    return lexical + min(sum(1 for t in tokens if t in TYPE_KEYWORDS[fields.type]), MAX_TYPE_BOOST)


def rank_plain(
    query: str,
    pool: Sequence[DocumentFields],
    limit: int,
    *,
    exclude: Collection[int] = (),
) -> list[int]:
    """Indices of the best ``limit`` documents, scoring one document at a time."""
    tokens = query_tokens(query)
    if not tokens:
        return []
    scored = []
    for index, fields in enumerate(pool):
        if index in exclude:
            continue
        score = score_plain(tokens, fields)
        if score > 0:
            scored.append((score, fields.mtime, index))
    scored.sort(key=lambda item: (-item[0], -item[1]))
    return [index for _, _, index in scored[:limit]]


_DENSE_HITS = 16
_DENSE_SPACING = 8
"""After ``_DENSE_HITS`` hits, at least one per this many values, test the rest one by one."""


class _Haystack:
    """Strings joined into one for fast substring search: which of them contain a token?

    As a column (one field of every document) it is cheap to build (one join)
    and suits an index that answers one query and is dropped (a fresh scan per
    recall); each query token costs a pass over the whole field text.
    """

    __slots__ = ("starts", "text", "values")

    def __init__(self, values: Sequence[str]) -> None:
        self.values = values
        self.text = _SEPARATOR.join(values) + _SEPARATOR
        self.starts = [0, *accumulate(len(value) + 1 for value in values)]

    def hits(self, token: str) -> list[int]:
        """Indices of the values that contain ``token``, ascending (each once)."""
        find, starts = self.text.find, self.starts
        found: list[int] = []
        position = find(token)
        while position != -1:
            index = bisect_right(starts, position) - 1
            found.append(index)
            if len(found) >= _DENSE_HITS and len(found) * _DENSE_SPACING > index:
                # Hits in more than one value in _DENSE_SPACING: testing each
                # remaining value directly is cheaper than a search call per hit.
                rest = map(contains, islice(self.values, index + 1, None), repeat(token))
                found.extend(compress(range(index + 1, len(self.values)), rest))
                break
            position = find(token, starts[index + 1])
        return found


_PUNCTUATION = string.punctuation.encode("ascii")
_PUNCTUATION_TO_SPACE = bytes.maketrans(_PUNCTUATION, b" " * len(_PUNCTUATION))


class _WordColumn:
    """One field of every document as a vocabulary of distinct words with posting lists.

    A query token never contains whitespace or ASCII punctuation, so a token
    occurs in a field iff it occurs inside one of the words the field splits
    into at those characters (punctuation is blanked in the UTF-8 bytes, where
    no other character produces those bytes). Searching the much smaller
    vocabulary and uniting the posting lists of the words that contain the
    token is therefore exact. Building costs a few times more than a plain
    :class:`_Haystack`; it pays off for an index that answers many queries.
    """

    __slots__ = ("_postings", "_words")

    def __init__(self, values: Sequence[str]) -> None:
        postings: defaultdict[str, list[int]] = defaultdict(list)
        for index, value in enumerate(values):
            blanked = value.encode("utf-8", "surrogatepass").translate(_PUNCTUATION_TO_SPACE)
            for word in set(blanked.decode("utf-8", "surrogatepass").split()):
                postings[word].append(index)
        self._words = _Haystack(list(postings))
        self._postings = list(postings.values())

    def hits(self, token: str) -> Collection[int]:
        """Indices of the documents whose field contains ``token`` (each once)."""
        matched = self._words.hits(token)
        if len(matched) <= 1:
            return self._postings[matched[0]] if matched else ()
        return set().union(*map(self._postings.__getitem__, matched))


class ReferenceIndex:
    """The reference scorer over a fixed pool of documents (input order = pool order).

    ``word_index=False`` (default) is cheapest to build and suits one query per
    index; ``word_index=True`` builds a word vocabulary per field, which costs
    more up front and makes every later query much cheaper on large pools.
    Both give exactly the rankings of :func:`rank_plain`.
    """

    name = "reference"

    def __init__(self, pool: Sequence[DocumentFields], *, word_index: bool = False) -> None:
        self.pool = tuple(pool)
        column = _WordColumn if word_index else _Haystack
        self._columns = (
            (column([f.title for f in self.pool]), TITLE_WEIGHT),
            (column([f.description for f in self.pool]), DESCRIPTION_WEIGHT),
            (column([f.body for f in self.pool]), BODY_WEIGHT),
        )
        # Recency order with input order for ties (a stable sort), and each
        # document's place in it, so ranking sorts plain integers.
        self._by_recency = sorted(range(len(self.pool)), key=lambda i: -self.pool[i].mtime)
        self._recency = [0] * len(self.pool)
        for place, index in enumerate(self._by_recency):
            self._recency[index] = place

    @classmethod
    def of(cls, documents: Sequence[MemoryDocument], *, word_index: bool = False) -> ReferenceIndex:
        """Index documents, normalising each once."""
        return cls([DocumentFields.of(d) for d in documents], word_index=word_index)

    def __len__(self) -> int:
        return len(self.pool)

    def scores(self, query: str, *, exclude: Collection[int] = ()) -> dict[int, int]:
        """Every matching document's score (documents without a lexical hit are absent)."""
        tokens = query_tokens(query)
        if not tokens:
            return {}
        lexical: Counter[int] = Counter()
        for column, weight in self._columns:
            for token in tokens:
                hits = column.hits(token)
                if hits:
                    # Counter.update counts in C; adding the hits `weight` times
                    # is the cheapest weighted add.
                    for _ in range(weight):
                        lexical.update(hits)
        boosts = type_boosts(tokens)
        pool = self.pool
        if exclude and not isinstance(exclude, (set, frozenset)):
            exclude = set(exclude)
        return {
            index: score + boosts[pool[index].type]
            for index, score in lexical.items()
            if index not in exclude
        }

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first."""
        scores = self.scores(query, exclude=exclude)
        if not scores:
            return []
        n, recency, by_recency = len(self.pool), self._recency, self._by_recency
        # Score descending, then recency: one integer key, decoded by its residue.
        keys = sorted(recency[index] - score * n for index, score in scores.items())
        return [by_recency[key % n] for key in keys[:limit]]
