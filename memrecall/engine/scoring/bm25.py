"""The ``bm25`` baseline: Okapi BM25 over the reference scorer's tokens (evaluation only).

A document is one bag of tokens: its title, description and body window (the
same 1,200 UTF-16 units the reference scorer reads), tokenised exactly like a
query (:func:`memrecall.engine.scoring.tokens.raw_tokens`: whole runs of three or more
letters, CJK bigrams). Tokens match whole, never as substrings. Per query token
(de-duplicated and bounded as for the reference scorer) a document earns

    idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × length / average length))

with ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))``, ``k1 = 1.2``, ``b = 0.75``.
Documents without a shared token are left out. Ranking: score descending, then
mtime descending, then input order.

It is the textbook baseline the ``fielded`` default must beat: no fields, no
stopwords, no inflection, no judgement (every document with a shared token is
returned, and the fast result is simply its top two).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Sequence

from memrecall.engine.scoring.reference import MAX_BODY_CHARS
from memrecall.engine.scoring.text import body_text, normalize, utf16_prefix
from memrecall.engine.scoring.tokens import query_tokens, raw_tokens
from memrecall.events.documents import MemoryDocument

__all__ = ["K1", "B", "BM25Index"]

K1 = 1.2
B = 0.75


class BM25Index:
    """Okapi BM25 over a fixed pool (input order = pool order)."""

    name = "bm25"

    def __init__(self, documents: Sequence[MemoryDocument]) -> None:
        self.documents = tuple(documents)
        self._mtimes = [d.mtime for d in self.documents]
        bags = []
        for d in self.documents:
            window = utf16_prefix(body_text(d.body), MAX_BODY_CHARS)
            text = normalize(f"{d.title}\n{d.description}\n{window}")
            bags.append(Counter(raw_tokens(text)))
        count = len(bags)
        lengths = [sum(bag.values()) for bag in bags]
        average = max(1.0, sum(lengths) / max(1, count))
        postings: dict[str, list[tuple[int, int]]] = {}
        for index, bag in enumerate(bags):
            for token, tf in bag.items():
                postings.setdefault(token, []).append((index, tf))
        self._norms = [K1 * (1 - B + B * length / average) for length in lengths]
        self._postings = postings
        self._idf = {
            token: math.log(1 + (count - len(rows) + 0.5) / (len(rows) + 0.5))
            for token, rows in postings.items()
        }

    @classmethod
    def of(cls, documents: Sequence[MemoryDocument]) -> BM25Index:
        """Index documents (the scorer registry's factory)."""
        return cls(documents)

    def scores(self, query: str, *, exclude: Collection[int] = ()) -> dict[int, float]:
        """Every document sharing a token with the query, with its BM25 score."""
        scores: dict[int, float] = {}
        norms = self._norms
        for token in query_tokens(query):
            rows = self._postings.get(token)
            if rows is None:
                continue
            idf = self._idf[token]
            for index, tf in rows:
                scores[index] = scores.get(index, 0.0) + idf * tf * (K1 + 1) / (tf + norms[index])
        for index in exclude:
            scores.pop(index, None)
        return scores

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first."""
        scores = self.scores(query, exclude=exclude)
        mtimes = self._mtimes
        return sorted(scores, key=lambda i: (-scores[i], -mtimes[i], i))[:limit]
