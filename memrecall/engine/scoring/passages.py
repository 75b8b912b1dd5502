"""Recall across languages: a memory's passage embedding, and the ranking it joins.

The lexical ranking finds a memory by the words it shares with the turn; a question in one
language about a note in another shares few. Each memory's *passage* (its title,
description and the start of its body) is embedded once, by the same multilingual model
that reads the turn (the host's embedder: this module only stores and compares vectors).
When the lexical ranking answers a turn, the places after its first memory are shared with
the memories nearest the turn's embedding, by reciprocal rank fusion (:func:`fused`), and
when the words rank two memories close, the one nearer the turn comes first
(:func:`nearer_first`). A turn the words leave silent gets one memory only when the reader
is sure it asks something and one passage stands out near it (:func:`clearly_nearest`). Two
passages' :func:`cosine` also tells the fresher-facts rule that an update which says a fact
in new words is about the same subject
(:attr:`~memrecall.engine.scoring.features.Params.subject_cosine`).
"""

from __future__ import annotations

import math
import operator
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import regex

try:
    import numpy
except ImportError:  # numpy comes with the bundled model; elsewhere: one by one
    numpy = None  # type: ignore[assignment]

__all__ = [
    "CLOSE_DEPTH",
    "FIXED",
    "NEAREST_CHARS",
    "PASSAGE_CHARS",
    "QUANTUM",
    "RRF_K",
    "SEMANTIC_DEPTH",
    "PassageEmbedder",
    "PassageMatrix",
    "clearly_nearest",
    "cosine",
    "fused",
    "joined",
    "nearer_first",
    "nearest",
    "nearest_over_thin",
    "pack",
    "passage_text",
    "script_of",
    "thinly_held",
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

NEAREST_CHARS = 200
"""How much of a turn is embedded to find the memories nearest it, when the turn reader has
not embedded it already (embedding costs about a tenth of a millisecond per character on
one core, and the fast result waits for it)."""

QUANTUM = 1e-9
"""Cosines are compared rounded to this step, so that the order of the nearest memories does
not depend on how a processor sums a product (ties go by position)."""


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


def cosine(first: bytes, second: bytes) -> float:
    """The cosine of two packed unit vectors (:func:`pack`), summed exactly (the same on
    every processor); 0.0 when they differ in length or either is empty."""
    a, b = unpack(first), unpack(second)
    if a is None or b is None or len(a) != len(b):
        return 0.0
    return math.fsum(map(operator.mul, a, b))


def _near(turn: Sequence[float], vector: Sequence[float] | None) -> int | None:
    """The dot product of two unit vectors, summed exactly and counted in :data:`QUANTUM`
    steps (the same on every processor); None when ``vector`` is missing or of another
    length."""
    if vector is None or len(vector) != len(turn):
        return None
    return round(math.fsum(map(operator.mul, turn, vector)) / QUANTUM)


def nearest(
    turn: Sequence[float],
    vectors: Sequence[Sequence[float] | None],
    *,
    exclude: Collection[int] = (),
    depth: int = SEMANTIC_DEPTH,
) -> list[int]:
    """The positions of the ``depth`` memories whose passage is nearest ``turn`` (dot
    product, both unit length, compared at :data:`QUANTUM`), nearest first, ties by
    position; memories without a vector of the turn's length, and ``exclude``, take no
    part."""
    size = len(turn)
    scored = [
        (-round(sum(map(operator.mul, turn, vector)) / QUANTUM), i)
        for i, vector in enumerate(vectors)
        if vector is not None and len(vector) == size and i not in exclude
    ]
    scored.sort()
    return [i for _, i in scored[:depth]]


class PassageMatrix:
    """A pool's passage vectors, compared with a turn in one matrix product where numpy is
    installed (it comes with the bundled model), else one by one (:func:`nearest`); both
    give the same positions."""

    def __init__(self, vectors: Sequence[array[float] | None]) -> None:
        self._vectors = vectors
        sizes = {len(v) for v in vectors if v is not None}
        self._any = bool(sizes)
        self.size = max(sizes) if len(sizes) == 1 else 0
        """The vectors' length (0: none, or of several lengths: compared one by one)."""
        self._rows: Any = None
        self._matrix: Any = None
        if numpy is not None and self.size:
            rows = [i for i, v in enumerate(vectors) if v is not None]
            blob = b"".join(vectors[i].tobytes() for i in rows)  # type: ignore[union-attr]
            self._rows = numpy.array(rows, dtype=numpy.int64)
            matrix = numpy.frombuffer(blob, dtype=numpy.float32).reshape(len(rows), self.size)
            self._matrix = matrix.astype(numpy.float64)

    def __bool__(self) -> bool:
        return self._any

    def vector(self, position: int) -> Sequence[float] | None:
        """The passage vector at ``position`` (None where there is none)."""
        return self._vectors[position] if 0 <= position < len(self._vectors) else None

    def nearest(
        self, turn: Sequence[float], *, exclude: Collection[int] = (), depth: int = SEMANTIC_DEPTH
    ) -> list[int]:
        """:func:`nearest` over the pool's vectors."""
        if self._matrix is None:
            return nearest(turn, self._vectors, exclude=exclude, depth=depth)
        if len(turn) != self.size:
            return []
        scores = self._matrix @ numpy.asarray(turn, dtype=numpy.float64)
        keys = numpy.rint(scores / QUANTUM)
        order = numpy.lexsort((self._rows, -keys))
        found: list[int] = []
        for position in self._rows[order].tolist():
            if position not in exclude:
                found.append(position)
                if len(found) == depth:
                    break
        return found


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


def joined(
    ranking: list[int],
    matched: Sequence[int],
    turn: Callable[[], Sequence[float]],
    matrix: PassageMatrix,
    *,
    exclude: Collection[int],
    limit: int,
    yields: Callable[[int, int], bool] | None = None,
    lead: float = 0.0,
) -> list[int]:
    """``ranking`` (the words', updates placed; ``matched`` the words' own order before they
    were) with the places after its first memory shared with the memories whose passage is
    nearest the turn's embedding (:func:`fused`); an update placed next to the first keeps
    its place too. Then, where no update was placed, the memory whose passage is the nearest
    of the pool goes first if it is among them, nearer the turn than the first by at least
    ``lead``, and ``yields(first, nearest)`` says the first may yield to it
    (:func:`nearest_over_thin`). ``turn`` embeds the turn; if it fails (the host's
    embedder), the words' ranking stands."""
    if not ranking or not matrix:
        return ranking
    try:
        vector = turn()
    except Exception:
        return ranking
    fixed = 1 if ranking[:2] == list(matched[:2]) else 2
    near = matrix.nearest(vector, exclude=exclude)
    out = fused(ranking, near, limit, fixed=fixed)
    if yields is None or fixed != 1 or not near:
        return out
    return nearest_over_thin(out, near[0], vector, matrix, lead=lead, yields=yields)


def nearest_over_thin(
    ranking: list[int],
    nearest: int,
    turn: Sequence[float],
    matrix: PassageMatrix,
    *,
    lead: float,
    yields: Callable[[int, int], bool],
) -> list[int]:
    """``ranking`` with ``nearest`` (the memory whose passage is nearest the ``turn`` in the
    whole pool) moved first, where it is in the ranking, its passage is nearer the turn than
    the first memory's by at least ``lead`` (exact dot products, compared at
    :data:`QUANTUM`), and ``yields(first, nearest)``: the caller's say that the first
    memory's hold is thin (the words matched it by one query term only) and that the two
    are not versions of one subject, nor the nearest nearer only by its language.

    One word in common is little evidence: a name, a tool, a day the question mentions in
    passing ("what time do I usually *stop* working?" against a note on stopping deploys).
    When one memory's passage stands out that clearly nearer what the turn means, it is the
    likelier subject. Older and newer versions of a subject are the fresher-facts rules' to
    order, not this."""
    first = ranking[0]
    if nearest == first or nearest not in ranking:
        return ranking
    here, there = _near(turn, matrix.vector(nearest)), _near(turn, matrix.vector(first))
    if here is None or there is None or here - there < round(lead / QUANTUM):
        return ranking
    if not yields(first, nearest):
        return ranking
    return [nearest, *(i for i in ranking if i != nearest)]


def thinly_held(
    words: Callable[[], int],
    versions: Callable[[], bool],
    scripts: Callable[[], tuple[str, str, str]],
) -> bool:
    """The ``yields`` of :func:`nearest_over_thin`, from what a ranker knows of the two
    memories (each asked only as needed): the words matched the first by one word
    (``words``), neither is a version of the other's subject (``versions``), and the nearest
    is not written in the turn's script where the first is not (``scripts``: the turn's, the
    first's and the nearest's, :func:`script_of`), since its nearness may be the
    language's."""
    if words() != 1 or versions():
        return False
    asked, first, nearest = scripts()
    return not (nearest == asked != first)


_SCRIPT_LETTERS = regex.compile(
    r"(?P<kana>[\p{Hiragana}\p{Katakana}])|(?P<han>\p{Han})|(?P<hangul>\p{Hangul})"
    r"|(?P<thai>\p{Thai})|(?P<cyrillic>\p{Cyrillic})|(?P<latin>\p{Latin})"
    r"|(?P<devanagari>\p{Devanagari})|(?P<arabic>\p{Arabic})|(?P<other>\p{L})"
)


def script_of(texts: Iterable[str]) -> str:
    """The writing system most of ``texts``' letters are in (``latin``, ``han``,
    ``hangul``, ``thai``, ``cyrillic``, ...), and ``kana`` for any Japanese kana at all
    (Japanese writes most of its words in Han characters); empty when there is no letter."""
    counts: Counter[str] = Counter()
    for text in texts:
        for found in _SCRIPT_LETTERS.finditer(text):
            counts[found.lastgroup or "other"] += 1
    if counts["kana"]:
        return "kana"
    return max(counts, key=lambda script: (counts[script], script)) if counts else ""


CLOSE_DEPTH = 5
"""How many of the words' first memories may be put first by :func:`nearer_first`."""


def nearer_first(
    scores: Sequence[float],
    vectors: Sequence[Sequence[float] | None],
    turn: Callable[[], Sequence[float]],
    *,
    scripts: Callable[[], Sequence[str]],
    versions: Callable[[int, int], bool],
    ratio: float,
    margin: float,
) -> int:
    """Which of the words' first memories (``scores`` and passage ``vectors`` in the words'
    order, at most :data:`CLOSE_DEPTH` looked at) goes first: the first (0), unless some
    memory after it scores at least ``ratio`` of the first one's, has a passage of the
    turn's length nearer the turn's embedding than every memory ranked above it by more
    than ``margin`` (dot products, compared at :data:`QUANTUM`), and is no version of one
    of them (``versions(i, j)``, positions ``i < j``: the fresher-facts rules order
    those). Of several such, the last is the nearest: each is nearer than all above it.

    The model finds a text nearer a turn in its own language: ``scripts`` gives the turn's
    writing system, then each memory's (:func:`script_of`), and a memory in the turn's own
    never goes before one in another script (its nearness may be the language's, not the
    meaning's). ``turn`` embeds the turn, called only when some score is close; if it fails
    (the host's embedder), the words' order stands."""
    depth = min(len(scores), len(vectors), CLOSE_DEPTH)
    if depth < 2 or scores[0] <= 0.0:
        return 0
    close = [j for j in range(1, depth) if scores[j] >= ratio * scores[0]]
    if not close:
        return 0
    try:
        vector = turn()
    except Exception:
        return 0
    near = [_near(vector, candidate) for candidate in vectors[: close[-1] + 1]]
    lead = round(margin / QUANTUM)
    found: list[str] | None = None
    best = 0
    for j in close:
        here = near[j]
        above = near[:j]
        if here is None or any(n is None or here - n <= lead for n in above):
            continue
        if found is None:
            found = list(scripts())
        asked, written = found[0], found[1:]
        if any(written[i] != written[j] and written[j] == asked for i in range(j)):
            continue
        if any(versions(i, j) for i in range(j)):
            continue
        best = j
    return best


_SAYS_SOMETHING = regex.compile(r"[\p{L}\p{N}]")


def clearly_nearest(
    query: str,
    matrix: PassageMatrix,
    *,
    talk: Callable[[str], float],
    plainly_talk: Callable[[str], bool],
    turn: Callable[[], Sequence[float]],
    exclude: Collection[int],
    cosine: float,
    lead: float,
    below: float,
) -> list[int]:
    """What a turn the words leave silent gets: the one memory whose passage is at least
    ``cosine`` near the turn and nearer than every other memory's by at least ``lead``
    (exact dot products, compared at :data:`QUANTUM`), when the reader's probability that
    the turn is small talk (``talk``) is under ``below``; else the two that stand out
    together (both at least ``cosine`` near, the second nearer than every other memory by
    ``lead``: two records of a series, a note and its update, two neighbouring facts, which
    a question about one of them is near alike), nearest first; else nothing.

    A question asked in other words than its memory's, or in another language, shares no
    word the ranking can judge; the reader can still be sure it asks something, and when
    one memory is clearly the nearest, that one is what it asks about. ``talk`` is called
    first (it embeds the turn), then ``turn`` (the reader's embedding of it). A turn
    ``plainly_talk`` already reads as small talk without an embedding (the lexical turn
    model at its cutoff) is not embedded: most silent turns are small talk, and the
    embedding is what a turn costs here. A turn with no letter or digit gets nothing, and
    so does every turn where the host's embedder fails. Callers leave pastes to their
    words."""
    if not matrix or not _SAYS_SOMETHING.search(query) or plainly_talk(query):
        return []
    try:
        if talk(query) >= below:
            return []
        vector = turn()
    except Exception:  # the host's embedder (a C engine): any failure leaves the silence
        return []
    found = matrix.nearest(vector, exclude=exclude, depth=3)
    near = [_near(vector, matrix.vector(i)) for i in found]
    bound, gap = round(cosine / QUANTUM), round(lead / QUANTUM)
    for count in (1, 2):  # one memory that stands out, else two that stand out together
        inside, outside = near[:count], near[count : count + 1]
        if len(inside) < count or any(n is None or n < bound for n in inside):
            return []
        last = inside[-1]
        if not outside or outside[0] is None or (last is not None and last - outside[0] >= gap):
            return found[:count]
    return []
