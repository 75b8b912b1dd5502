"""Seeded, realistic-looking memory text for store benchmarks and tests.

Words come from a vocabulary of a few thousand words drawn with Zipf-like frequencies
(rank r has weight 1 / r), so a few words are in most memories and most words are rare, as
in real notes. As in real text, the most frequent ranks are English function words (which
queries drop), followed by made-up content words. Everything is derived from the seed: the
same seed gives the same memories and queries on every machine.
"""

from __future__ import annotations

import itertools
import random

import attrs

__all__ = ["MemoryText", "TextGenerator"]

_CATEGORIES = ("preference", "project", "person", "tool", "fact", "schedule", "workflow")
_FUNCTION = (
    "the", "and", "for", "with", "that", "this", "from", "have", "are", "was", "but", "not",
    "when", "which", "about", "into", "there", "their", "they", "what", "would", "should",
    "because", "after", "before", "some", "more", "only", "also", "very",
)  # fmt: skip
_SYLLABLES = (
    "ka", "lo", "mi", "ren", "sa", "to", "vel", "dor", "an", "is", "ter", "pol", "mun", "ari",
    "qu", "est", "ban", "cor", "fi", "gen", "hal", "ix", "jo", "lum", "nor", "ob", "pra", "sil",
)  # fmt: skip


@attrs.frozen
class MemoryText:
    """One generated memory: key, content and category."""

    key: str
    content: str
    category: str


class TextGenerator:
    """Memories and queries from one seeded Zipf vocabulary of ``words`` words."""

    def __init__(self, seed: int = 0, *, words: int = 3000) -> None:
        self._rng = random.Random(seed)
        vocabulary: list[str] = list(_FUNCTION)
        seen: set[str] = set(_FUNCTION)
        while len(vocabulary) < words:
            word = "".join(self._rng.choice(_SYLLABLES) for _ in range(self._rng.randint(1, 4)))
            if len(word) >= 3 and word not in seen:
                seen.add(word)
                vocabulary.append(word)
        self.vocabulary = tuple(vocabulary)
        self._cumulative = list(itertools.accumulate(1.0 / (r + 1) for r in range(words)))
        self._count = 0

    def _words(self, n: int) -> list[str]:
        return self._rng.choices(self.vocabulary, cum_weights=self._cumulative, k=n)

    def memory(self) -> MemoryText:
        """The next memory: a unique 2-4 word key, 8-40 words of content, a category."""
        self._count += 1
        key = "_".join(self._words(self._rng.randint(2, 4))) + f"_{self._count}"
        sentences = []
        for _ in range(self._rng.randint(1, 3)):
            sentences.append(" ".join(self._words(self._rng.randint(8, 14))).capitalize() + ".")
        return MemoryText(key, " ".join(sentences), self._rng.choice(_CATEGORIES))

    def query(self) -> str:
        """A query of 1-4 words from the same distribution."""
        return " ".join(self._words(self._rng.randint(1, 4)))
