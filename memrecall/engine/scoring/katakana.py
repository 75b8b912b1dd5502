"""Katakana words as whole words: which documents have a query's loanword (issue 18).

Japanese writes a loanword in katakana without spaces, and the index cuts it into
bigrams like any CJK run. A query's katakana word is then matched by any document
that has those bigrams, even inside a longer, other word: ``トーク`` (talk) is every
bigram of ``トークン`` (token), as ``tea`` is every letter of ``team``. So a document
also records each katakana word it has as a whole (:func:`katakana_forms`), and the
fragment rule (:func:`~memrecall.engine.scoring.query_rules.common_only`) counts a
query's katakana word for a document only when the document has the word itself, or a
compound of which it is the first or last part (``トークン`` in ``アクセストークン``).

The forms of a word (:func:`katakana_parts`) are the word, the word without a final
long-vowel mark (``サーバー`` and ``サーバ`` are one spelling apart), and its first
and last parts of three characters or more that leave at least two: a katakana word
is at least two characters long, so a one-character remainder (``ン`` of ``トークン``)
makes another word, not a compound. These terms are of kind :data:`KANA` and are
looked up only by the fragment rule: no query term is ever one, so they add nothing
to any score.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

import regex

__all__ = ["KANA", "is_katakana_form", "katakana_forms", "katakana_parts"]

KANA = "kana"
"""The kind of a whole katakana word term (:func:`katakana_forms`)."""

LONG_VOWEL = "ー"

_RUN = regex.compile(r"[\p{Script=Katakana}ー]{3,}", regex.V1)

MAX_WORD = 24
"""Only the first this many characters of a katakana run are read as one word."""

_LEAST = 3
"""The shortest form: a query's katakana word has at least three characters
(:attr:`~memrecall.engine.scoring.analysis.QueryTerm.words`)."""

_REST = 2
"""The least a compound's other part has: the shortest katakana word."""


def katakana_parts(word: str) -> frozenset[str]:
    """The forms under which a katakana word is recorded and looked up: the word, the
    word without its final long-vowel marks, and its first and last parts of at least
    three characters that leave at least two (none starting with a long-vowel mark)."""
    word = word[:MAX_WORD]
    forms = {word}
    bare = word.rstrip(LONG_VOWEL)
    if len(bare) >= _LEAST:
        forms.add(bare)
    for cut in range(_LEAST, len(word) - _REST + 1):
        forms.add(word[:cut])
        forms.add(word[:cut].rstrip(LONG_VOWEL))
    for cut in range(_REST, len(word) - _LEAST + 1):
        forms.add(word[cut:])
    return frozenset(f for f in forms if len(f) >= _LEAST and not f.startswith(LONG_VOWEL))


def katakana_forms(text: str) -> dict[str, int]:
    """The whole-word katakana terms of a text (NFKC, so half-width katakana counts),
    counted: each :func:`katakana_parts` of each run of three or more katakana
    characters once per run."""
    counts: Counter[str] = Counter()
    for run in _RUN.findall(unicodedata.normalize("NFKC", text)):
        counts.update(katakana_parts(run))
    return dict(counts)


def is_katakana_form(term: str) -> bool:
    """Whether an index term is a whole katakana word (no other term is three or more
    katakana characters: a CJK term is a bigram)."""
    return _RUN.fullmatch(term) is not None
