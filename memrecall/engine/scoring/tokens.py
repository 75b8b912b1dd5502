"""Query tokenisation for the reference scorer.

Tokens are, after :func:`~memrecall.engine.scoring.text.normalize`:

* every maximal run of at least three non-CJK letters, marks or digits (the
  first a letter or digit), kept whole; CJK is excluded per character, so
  ``abc漢字`` gives ``abc`` and a separate CJK run;
* every adjacent code-point bigram of a CJK run (Han, Hiragana, Hangul, and
  Katakana by script *extension*, so ``ー`` stays inside Japanese runs). A
  single CJK character gives nothing.

The list is de-duplicated and bounded to 64 tokens keeping 32 from each end
of the query (:func:`bounded_tokens`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import regex

from memrecall.engine.scoring.text import normalize

__all__ = ["MAX_QUERY_TOKENS", "bounded_tokens", "query_tokens", "raw_tokens"]

MAX_QUERY_TOKENS = 64
"""At most this many tokens; half from the head of the query, half from the tail."""

_CJK = r"\p{Script=Han}\p{Script=Hiragana}\p{scx=Katakana}\p{Script=Hangul}"
_RUN = regex.compile(
    rf"(?P<cjk>[{_CJK}]+)|(?P<word>(?:(?![{_CJK}])[\p{{L}}\p{{N}}])"
    rf"(?:(?![{_CJK}])[\p{{L}}\p{{M}}\p{{N}}]){{2,}})"
)


def raw_tokens(normalized: str) -> Iterator[str]:
    """Every token of an already normalised text, in order, with repeats."""
    for match in _RUN.finditer(normalized):
        run = match.group("cjk")
        if run is None:
            yield match.group("word")
        else:
            for i in range(len(run) - 1):
                yield run[i : i + 2]


def bounded_tokens(tokens: Iterable[str], limit: int = MAX_QUERY_TOKENS) -> list[str]:
    """De-duplicate, keeping ``limit // 2`` tokens from each end.

    The head keeps the first distinct tokens. Later tokens go to the tail; a
    token already in the tail moves to its newest end, and the tail drops its
    oldest entry when full.
    """
    half = limit // 2
    head: dict[str, None] = {}
    tail: dict[str, None] = {}
    for token in tokens:
        if token in head:
            continue
        if token in tail:
            del tail[token]
            tail[token] = None
        elif len(head) < half:
            head[token] = None
        else:
            tail[token] = None
            if len(tail) > half:
                del tail[next(iter(tail))]
    return [*head, *tail]


def query_tokens(query: str) -> list[str]:
    """The scorer's tokens for a query."""
    return bounded_tokens(raw_tokens(normalize(query)))
