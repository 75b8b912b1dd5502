"""Tokens for the recall contract: what BM25, ``qTok`` and tag coverage count.

The seed fixes two facts by example: a one- or two-letter word is a token
(``b``, ``ok``, ``ci`` each count as one content token) and a CJK run gives its
single characters *and* its adjacent bigrams (``虚拟屏`` is five tokens: three
characters, two bigrams). Everything else is the project's multilingual
analysis (:mod:`memrecall.engine.scoring.analysis`): NFKC + lower case, invisible
joiners dropped, diacritics folded, Thai/Lao/Khmer/Myanmar as grapheme-cluster
terms, and a query bounded to 64 distinct tokens, 32 from each end
(:func:`memrecall.engine.scoring.tokens.bounded_tokens`). No stopword list: the
content-token gate, not a word list, handles chatty one-word queries.
"""

from __future__ import annotations

from collections import Counter

import regex

from memrecall.engine.scoring.analysis import clean, fold, sea_terms
from memrecall.engine.scoring.text import normalize
from memrecall.engine.scoring.tokens import bounded_tokens

__all__ = ["query_token_list", "text_tokens", "token_counts"]

_CJK = r"\p{Script=Han}\p{Script=Hiragana}\p{scx=Katakana}\p{Script=Hangul}"
_SEA = r"\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}"
_RUN = regex.compile(
    rf"(?P<cjk>[[\p{{L}}\p{{M}}]&&[{_CJK}]]+)"
    rf"|(?P<sea>[{_SEA}][[{_SEA}]||[\p{{M}}--[{_CJK}]]]*)"
    rf"|(?P<word>[[\p{{L}}\p{{N}}]--[{_CJK}{_SEA}]][[\p{{L}}\p{{M}}\p{{N}}]--[{_CJK}{_SEA}]]*)",
    regex.V1,
)


def text_tokens(text: str) -> list[str]:
    """Every token of a text, in order, with repeats."""
    out: list[str] = []
    for match in _RUN.finditer(clean(normalize(text))):
        run = match.group()
        kind = match.lastgroup
        if kind == "word":
            out.append(fold(run))
        elif kind == "cjk":
            out.extend(run)
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            out.extend(sea_terms(run) or [run])
    return out


def token_counts(text: str) -> Counter[str]:
    """The tokens of a text, counted."""
    return Counter(text_tokens(text))


def query_token_list(query: str) -> list[str]:
    """The distinct tokens of a query, bounded to 64 (32 from each end)."""
    return bounded_tokens(text_tokens(query))
