"""Baselines for the evaluation only: the frozen pre-change scorer and a random floor.

``frozen`` is upstream's scorer before the multilingual rewrite, kept so every
report shows before/after. In words: lower-case the query (no NFKC), split on
anything that is not ``a-z0-9``, keep pieces of three or more characters; one
haystack per document (type, title, description, whole body); +2 per token
found in it, +1 per token that is a keyword of the document's type, and +1
for any non-empty body, match or not (which is why it returned filler).
Ranking: score descending, then type name ascending.

``random`` is query-blind: a fixed pseudo-random order per query, the floor
any real scorer must clear.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Collection, Sequence

from memrecall.engine.scoring.reference import TYPE_KEYWORDS
from memrecall.engine.scoring.text import body_text
from memrecall.events.documents import MemoryDocument

__all__ = ["FrozenIndex", "RandomIndex"]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


class FrozenIndex:
    """The pre-change scorer (evaluation baseline only)."""

    name = "frozen"

    def __init__(self, documents: Sequence[MemoryDocument]) -> None:
        self.documents = tuple(documents)
        self._haystacks = [
            " ".join((d.type.value, d.title, d.description, body_text(d.body))).lower()
            for d in self.documents
        ]

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents under the old rules."""
        tokens = list(dict.fromkeys(t for t in _NON_ALNUM.split(query.lower()) if len(t) >= 3))
        if not tokens:
            return []
        scored = []
        for index, document in enumerate(self.documents):
            if index in exclude:
                continue
            haystack = self._haystacks[index]
            keywords = TYPE_KEYWORDS[document.type]
            score = sum(2 for t in tokens if t in haystack)
            score += sum(1 for t in tokens if t in keywords)
            score += 1 if body_text(document.body) else 0
            if score > 0:
                scored.append((score, document.type.value, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [index for _, _, index in scored[:limit]]


class RandomIndex:
    """A query-blind floor: a pseudo-random pick seeded by the query text."""

    name = "random"

    def __init__(self, documents: Sequence[MemoryDocument]) -> None:
        self.documents = tuple(documents)

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """``limit`` documents chosen without looking at their content."""
        seed = int.from_bytes(hashlib.sha256(query.encode("utf-8")).digest()[:8], "big")
        order = [i for i in range(len(self.documents)) if i not in exclude]
        random.Random(seed).shuffle(order)
        return order[:limit]
