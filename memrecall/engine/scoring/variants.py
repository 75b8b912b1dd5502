"""Inflected forms: which index terms count for a query word besides itself (issue 18).

A query word matches inflected forms of itself (``charged``/``charges``,
``магазин``/``магазины``) at a reduced credit, but never a longer unrelated word
(``owner`` is not ``ownership``, ``tea`` is not ``team``). Pure functions over
strings and a sorted vocabulary; the ``fielded`` scorer and the store's index both
use them.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Container, Sequence

__all__ = ["index_terms", "is_variant"]

_INFLECTIONS = frozenset({"ing", "ings", "ies", "ied", "ers", "ion", "ions"})
"""Longer endings accepted besides any ending of at most two characters."""
_SIBILANTS = ("s", "x", "z", "ch", "sh")


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _is_mark(text: str, at: int) -> bool:
    return at < len(text) and unicodedata.category(text[at])[0] == "M"


def is_variant(query: str, term: str) -> bool:
    """True when ``term`` is an inflected form of ``query`` (or the reverse), not the same word.

    Both must share a prefix of at least four characters (five when both go
    on) that does not end inside a grapheme cluster, and what follows it in
    each must be at most two characters or a common longer ending (``ing``,
    ``ies``, ``ion``, ...); or one is the other plus ``s`` (``es`` after a
    sibilant).
    """
    if query == term:
        return False
    shorter, longer = (query, term) if len(query) <= len(term) else (term, query)
    if longer == shorter + "s" or (longer == shorter + "es" and shorter.endswith(_SIBILANTS)):
        return True
    common = _common_prefix(query, term)
    if common < 4 or _is_mark(query, common) or _is_mark(term, common):
        return False
    rest = (query[common:], term[common:])
    if rest[0] and rest[1] and common < 5:
        return False  # two different endings on a short stem: colony/colour, passt/passes
    return all(len(r) <= 2 or r in _INFLECTIONS for r in rest)


def index_terms(
    term: str,
    kind: str,
    known: Container[str],
    vocabulary: Sequence[str],
    variant: float,
) -> list[tuple[str, float]]:
    """The index terms that count for a query term, with their credit.

    The term itself (credit 1) if ``known``; for a word, also its inflected
    forms (:func:`is_variant`) found in the sorted ``vocabulary`` by prefix and
    in ``known`` by the usual endings (credit ``variant``). The work depends on
    the vocabulary around the term, never on the number of documents.
    """
    keys: list[tuple[str, float]] = []
    if term in known:
        keys.append((term, 1.0))
    if kind != "word":
        return keys
    candidates = set()
    stem = term[: max(4, len(term) - 4)]
    if len(stem) >= 4:
        start = bisect.bisect_left(vocabulary, stem)
        while start < len(vocabulary) and vocabulary[start].startswith(stem):
            candidates.add(vocabulary[start])
            start += 1
    for shorter in (term[:-1], term[:-2]):
        if shorter in known:
            candidates.add(shorter)
    for longer in (term + "s", term + "es"):
        if longer in known:
            candidates.add(longer)
    keys.extend((key, variant) for key in sorted(candidates) if is_variant(term, key))
    return keys
