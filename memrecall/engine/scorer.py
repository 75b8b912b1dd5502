"""The ``reference`` scorer: upstream's deterministic multilingual ranking, exactly.

Per query token (see :mod:`memrecall.engine.tokens`) a document scores +4 if
the token is a substring of its normalised title, +3 of its description and
+1 of the first 1,200 UTF-16 units of its body. A document with no lexical
hit scores nothing; otherwise it gains one point per query token that is a
keyword of its type, at most two. Ranking: score descending, then mtime
descending, then input order (project before user); never by type.

This scorer is the project's parity baseline and stays selectable for as long
as the project lives. Two implementations exist: :class:`ReferenceIndex`
(per-document fields normalised once, tokens searched across the whole pool
at C speed) and :func:`rank_plain` (one document at a time, the obvious
reading of the rules). A Hypothesis test proves them identical.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Sequence

import attrs

from memrecall.events.documents import MemoryDocument, MemoryType

from .text import body_text, normalize, utf16_prefix
from .tokens import query_tokens

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


def _type_boosts(tokens: Sequence[str]) -> dict[MemoryType, int]:
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


class _Column:
    """One field of every document, joined into one string for fast substring search."""

    __slots__ = ("starts", "text", "weight")

    def __init__(self, values: Sequence[str], weight: int) -> None:
        self.weight = weight
        self.text = _SEPARATOR.join(values) + _SEPARATOR
        starts = []
        offset = 0
        for value in values:
            starts.append(offset)
            offset += len(value) + 1
        starts.append(offset)
        self.starts = starts

    def add_hits(self, token: str, scores: dict[int, int]) -> None:
        find, starts, weight = self.text.find, self.starts, self.weight
        position = find(token)
        while position != -1:
            index = bisect_right(starts, position) - 1
            scores[index] = scores.get(index, 0) + weight
            position = find(token, starts[index + 1])


class ReferenceIndex:
    """The reference scorer over a fixed pool of documents (input order = pool order)."""

    name = "reference"

    def __init__(self, pool: Sequence[DocumentFields]) -> None:
        self.pool = tuple(pool)
        self._columns = (
            _Column([f.title for f in self.pool], TITLE_WEIGHT),
            _Column([f.description for f in self.pool], DESCRIPTION_WEIGHT),
            _Column([f.body for f in self.pool], BODY_WEIGHT),
        )

    @classmethod
    def of(cls, documents: Sequence[MemoryDocument]) -> ReferenceIndex:
        """Index documents, normalising each once."""
        return cls([DocumentFields.of(d) for d in documents])

    def __len__(self) -> int:
        return len(self.pool)

    def scores(self, query: str, *, exclude: Collection[int] = ()) -> dict[int, int]:
        """Every matching document's score (documents without a lexical hit are absent)."""
        tokens = query_tokens(query)
        if not tokens:
            return {}
        lexical: dict[int, int] = {}
        for token in tokens:
            for column in self._columns:
                column.add_hits(token, lexical)
        boosts = _type_boosts(tokens)
        pool = self.pool
        return {
            index: score + boosts[pool[index].type]
            for index, score in lexical.items()
            if index not in exclude
        }

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first."""
        scores = self.scores(query, exclude=exclude)
        pool = self.pool
        ranked = sorted(scores, key=lambda i: (-scores[i], -pool[i].mtime, i))
        return ranked[:limit]
