"""Recall across languages: a memory's passage embedding, and the ranking it joins.

The lexical ranking finds a memory by the words it shares with the turn; a question in one
language about a note in another shares few. Each memory's *passage* (its title,
description and the start of its body) is embedded once, when it is analysed, by the same
multilingual model that reads the turn (the host's embedder: this module only stores and
compares vectors). When the lexical ranking answers a turn, the places after its first
memory are shared with the memories nearest the turn's embedding, by reciprocal rank
fusion (:func:`fused`). The first memory, what is silent, and the fast result stay the
lexical ranking's: the embedding reorders and completes an answer, it never makes one.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Collection, Sequence

__all__ = [
    "FIXED",
    "PASSAGE_CHARS",
    "RRF_K",
    "SEMANTIC_DEPTH",
    "PassageEmbedder",
    "fused",
    "nearest",
    "pack",
    "passage_text",
    "unpack",
]

PassageEmbedder = Callable[[str], Sequence[float]]
"""A memory's ``passage:`` embedding (unit length) of its :func:`passage_text`."""

PASSAGE_CHARS = 1_000
"""Only the start of a memory is embedded (the model reads about 512 tokens)."""

FIXED = 1
"""The lexical ranking's first memories that keep their place."""

RRF_K = 5.0
"""Reciprocal rank fusion's constant: a memory at rank ``r`` of a list scores
``1 / (RRF_K + r)`` (small: both lists are short, and their heads matter most)."""

SEMANTIC_DEPTH = 20
"""How many of the memories nearest the turn compete for the places after the first."""


def passage_text(title: str, description: str, body: str) -> str:
    """What is embedded of a memory: title, description, then the body, cut at
    :data:`PASSAGE_CHARS`."""
    return f"{title}. {description}\n{body}"[:PASSAGE_CHARS]


def pack(vector: Sequence[float]) -> bytes:
    """A vector as stored with a memory's features (32-bit floats)."""
    return array("f", vector).tobytes()


def unpack(data: bytes) -> array[float] | None:
    """A stored vector; None when the memory has none (analysed without an embedder)."""
    if not data:
        return None
    vector = array("f")
    vector.frombytes(data)
    return vector


def nearest(
    turn: Sequence[float],
    vectors: Sequence[array[float] | None],
    *,
    exclude: Collection[int] = (),
    depth: int = SEMANTIC_DEPTH,
) -> list[int]:
    """The positions of the ``depth`` memories whose passage is nearest ``turn`` (dot
    product, both unit length), nearest first, ties by position; memories without a vector
    of the turn's length, and ``exclude``, take no part."""
    size = len(turn)
    scored = [
        (-sum(map(operator.mul, turn, vector)), i)
        for i, vector in enumerate(vectors)
        if vector is not None and len(vector) == size and i not in exclude
    ]
    scored.sort()
    return [i for _, i in scored[:depth]]


def fused(
    lexical: Sequence[int], semantic: Sequence[int], limit: int, *, fixed: int = FIXED
) -> list[int]:
    """``lexical``'s first ``fixed`` memories, then the rest of both lists by reciprocal
    rank fusion (ties: the lexical list's order, then the nearest first), ``limit`` in all.
    An empty ``lexical`` stays empty: the embedding completes an answer, it does not make
    one."""
    if not lexical:
        return []
    head = list(lexical[:fixed])
    scores: dict[int, float] = {}
    for rank, i in enumerate(lexical[fixed:]):
        scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank)
    for rank, i in enumerate(j for j in semantic if j not in head):
        scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank)
    first_seen = {i: n for n, i in enumerate([*lexical, *semantic])}
    rest = sorted(scores, key=lambda i: (-scores[i], first_seen[i]))
    return (head + rest)[:limit]
