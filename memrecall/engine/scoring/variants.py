"""Inflected forms and compound parts: which index terms count for a query word besides
itself (issue 18).

A query word matches inflected forms of itself (``charged``/``charges``,
``магазин``/``магазины``) at a reduced credit, but never a longer unrelated word
(``owner`` is not ``ownership``, ``tea`` is not ``team``). It also matches, at the same
credit, the words it is the first part of, and the first part it is made of, as German
writes compounds as one word (:func:`compound_parts`: *Preis* and *Preisänderungen*,
*Auslastungszahl* and *Auslastung*). Pure functions over strings and a sorted vocabulary;
the ``fielded`` scorer and the store's index both use them.
"""

from __future__ import annotations

import bisect
import unicodedata
from collections.abc import Callable, Container, Sequence

__all__ = ["COMPOUND_PART", "compound_parts", "index_terms", "is_variant"]

_INFLECTIONS = frozenset({"ing", "ings", "ies", "ied", "ers", "ion", "ions"})
"""Longer endings accepted besides any ending of at most two characters."""
_SIBILANTS = ("s", "x", "z", "ch", "sh")

COMPOUND_PART = 5
"""The fewest letters of either part of a compound (:func:`compound_parts`)."""
_DERIVATIONS = ("ier", "ation", "ment", "ness")
"""What follows a word to derive another from it, not a second part (*installieren*,
*deployment*)."""


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


def compound_parts(
    term: str, known: Container[str], vocabulary: Sequence[str], plain: Callable[[str], bool]
) -> set[str]:
    """The index terms a query word is a compound part of, or made of (German writes
    compounds as one word).

    The words of the sorted ``vocabulary`` that ``term`` opens, followed by at least
    :data:`COMPOUND_PART` more letters (*preis* → *preisänderungen*; letters, not the rest of
    an identifier such as ``preis-sync-v2``); and the ``known``
    words of at least six letters that open ``term``, followed by at least
    :data:`COMPOUND_PART` letters (*auslastungszahl* → *auslastung*). Never when what
    follows is a derivation (*install* is not *installieren*), and only between ``plain``
    words (not function or common words: *перед* does not open *передается*). A word of six
    letters or more as the first part keeps a short word of another language from opening a
    long one (French *donne* in *Donnerstag*). The rest need not be a word of the vocabulary:
    *zahl* of *Auslastungszahl* is rarely written alone.
    """
    if len(term) < COMPOUND_PART or not plain(term):
        return set()
    found = set()
    start = bisect.bisect_left(vocabulary, term)
    while start < len(vocabulary) and vocabulary[start].startswith(term):
        word = vocabulary[start]
        rest = word[len(term) :]
        if len(rest) >= COMPOUND_PART and rest.isalpha() and not rest.startswith(_DERIVATIONS):
            found.add(word)
        start += 1
    for cut in range(COMPOUND_PART + 1, len(term) - COMPOUND_PART + 1):
        first, rest = term[:cut], term[cut:]
        if first in known and plain(first) and not rest.startswith(_DERIVATIONS):
            found.add(first)
    return found


def index_terms(
    term: str,
    kind: str,
    known: Container[str],
    vocabulary: Sequence[str],
    variant: float,
    *,
    plain: Callable[[str], bool] = lambda word: True,
) -> list[tuple[str, float]]:
    """The index terms that count for a query term, with their credit.

    The term itself (credit 1) if ``known``; for a word, also its inflected
    forms (:func:`is_variant`) found in the sorted ``vocabulary`` by prefix and
    in ``known`` by the usual endings, and its compound parts (:func:`compound_parts`,
    ``plain`` telling the words that may be parts), at credit ``variant``. The work
    depends on the vocabulary around the term, never on the number of documents.
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
    inflected = {key for key in candidates if is_variant(term, key)}
    inflected.update(compound_parts(term, known, vocabulary, plain) - {term})
    keys.extend((key, variant) for key in sorted(inflected))
    return keys
