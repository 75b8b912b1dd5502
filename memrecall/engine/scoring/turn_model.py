"""How likely a turn is small talk: a small linear model over the turn's own text (issue 18).

The lexical rules of :mod:`~memrecall.engine.scoring.turn_words` know phrases; this model
knows the *kind* of turn: greetings and feelings, private life, general knowledge, how-tos
about consumer apps, generic programming questions, against questions about a workplace,
its projects, tools and rules, and the user's own stated preferences. It reads only the
turn, never the memories, so it cannot tell which memories a question is about; the ranking
uses it to hold back memories judged *weak* on a turn it is confident is small talk
(:meth:`TurnModel.is_talk`: at least the model's calibrated cutoff). Memories judged strong
still answer: a turn that names a memory's own rare words is about it, however it sounds.
Only on *plain* small talk (:attr:`Reading.PLAIN_TALK`, a second, higher cutoff) is a strong
memory held back too, when it explains under
:attr:`~memrecall.engine.scoring.features.Params.talk_share` of the turn and no memory explains
more.

Features are hashed (CRC-32, so the same on every machine and Python): each word of a
space-separated script, with its character trigrams and four-grams inside ``<`` and ``>``;
each character and pair of characters of a script written without spaces (Chinese,
Japanese, Korean, Thai, Lao, Khmer, Burmese); each pair of adjacent tokens; and the turn's
length class.
The weights are fitted by ``scripts/train_turn_model.py`` on
``tests/fixtures/turns/*.jsonl`` (turns written for the purpose, none from the evaluation
sets) and ship in ``turn_model.json`` beside this module with their provenance. A turn
that names work (:func:`~memrecall.engine.scoring.turn_words.says_work`: the office, a
colleague) is never read as small talk.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
import unicodedata
import zlib
from collections.abc import Collection, Iterator, Mapping
from importlib import resources
from typing import Any, Protocol

import msgspec
import regex

from memrecall.engine.scoring.turn_words import says_work

__all__ = [
    "BUCKETS",
    "MODEL_FILE",
    "NEVER",
    "Reading",
    "TurnModel",
    "default_model",
    "features",
    "read_turn",
    "reading_of",
    "sigmoid",
]

MODEL_FILE = "turn_model.json"
BUCKETS = 1 << 18
"""Hash buckets: features share a weight only when their CRC-32 agree modulo this."""

_TOKENS = regex.compile(r"[\p{L}\p{M}\p{N}_]+", regex.V1)
_UNSPACED = regex.compile(
    r"[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}"
    r"\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]",
    regex.V1,
)
_MAX_CHARS = 2000
"""Only the start of a turn is read: a paste is not small talk (the rules skip pastes)."""


def _bucket(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8")) % BUCKETS


def _grams(token: str) -> Iterator[str]:
    if _UNSPACED.search(token):
        for i, ch in enumerate(token):
            yield "c:" + ch
            if i + 1 < len(token):
                yield "b:" + token[i : i + 2]
        return
    yield "w:" + token
    padded = f"<{token}>"
    for i in range(len(padded) - 2):
        yield "t:" + padded[i : i + 3]
    for i in range(len(padded) - 3):
        yield "q:" + padded[i : i + 4]


def features(text: str) -> dict[int, float]:
    """The turn's hashed features and their values (counts scaled to unit length)."""
    folded = unicodedata.normalize("NFKC", text[:_MAX_CHARS]).casefold()
    counts: dict[int, float] = {}
    tokens = _TOKENS.findall(folded)
    for token in tokens:
        for gram in _grams(token):
            key = _bucket(gram)
            counts[key] = counts.get(key, 0.0) + 1.0
    for first, second in itertools.pairwise(tokens):
        key = _bucket(f"p:{first} {second}")
        counts[key] = counts.get(key, 0.0) + 1.0
    size = "len:" + ("1" if len(tokens) <= 1 else "2" if len(tokens) <= 3 else "n")
    counts[_bucket(size)] = counts.get(_bucket(size), 0.0) + 1.0
    norm = math.sqrt(sum(v * v for v in counts.values()))
    return {k: v / norm for k, v in counts.items()}


def sigmoid(z: float) -> float:
    """The logistic function, without overflow for large ``|z|``."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


class Reading(enum.IntEnum):
    """What a turn reader makes of a turn, in order of confidence that it is small talk."""

    QUESTION = 0
    """Not confidently small talk: every judgement stands."""
    LEANING = 1
    """Probably small talk, under the reader's cutoff (at least a reader's ``lean`` cutoff:
    the semantic reader's weights' ``lean``, calibrated from
    :data:`~memrecall.engine.scoring.turn_semantic.LEAN` up; the lexical model has none):
    weak memories are held back when none ranked for the turn is strong and none explains
    :attr:`~memrecall.engine.scoring.features.Params.low_share` of it."""
    TALK = 2
    """Small talk (at least the reader's cutoff): weak memories are held back."""
    PLAIN_TALK = 3
    """Small talk beyond doubt (at least the reader's ``plain`` cutoff, which reads half as
    many workplace questions as talk): a strong memory must also explain a share of the
    turn (:attr:`~memrecall.engine.scoring.features.Params.talk_share`), not one word of it."""


NEVER = 2.0
"""A cutoff no probability reaches (a model file without a ``plain`` cutoff)."""


def reading_of(p: float, cutoff: float, plain: float, lean: float = NEVER) -> Reading:
    """The reading of probability ``p`` under the cutoffs (``lean`` under ``cutoff``, or
    :data:`NEVER`)."""
    if p >= max(cutoff, plain):
        return Reading.PLAIN_TALK
    if p >= cutoff:
        return Reading.TALK
    return Reading.LEANING if p >= lean else Reading.QUESTION


class TurnModel:
    """A logistic model: ``P(small talk) = 1 / (1 + exp(-(bias + Σ weight × value)))``."""

    __slots__ = ("bias", "cutoff", "plain", "weights")

    def __init__(
        self, weights: Mapping[int, float], bias: float, cutoff: float, plain: float = NEVER
    ) -> None:
        self.weights = dict(weights)
        self.bias = bias
        self.cutoff = cutoff
        """The probability from which the ranking holds weak memories back."""
        self.plain = plain
        """The probability from which a turn is plain small talk (:attr:`Reading.PLAIN_TALK`)."""

    def probability(self, text: str) -> float:
        """How likely ``text`` is small talk, 0 to 1 (nothing of the turn is kept)."""
        get = self.weights.get
        return sigmoid(self.bias + sum(get(k, 0.0) * v for k, v in features(text).items()))

    def is_talk(self, text: str) -> bool:
        """Whether the model is confident ``text`` is small talk (at least :attr:`cutoff`)."""
        return self.probability(text) >= self.cutoff

    def read(self, text: str) -> Reading:
        """What the model makes of ``text`` (:class:`Reading`)."""
        return reading_of(self.probability(text), self.cutoff, self.plain)

    @classmethod
    def decode(cls, raw: bytes) -> TurnModel:
        """Read a model file written by ``scripts/train_turn_model.py`` (JSON: ``bias``,
        ``cutoff``, and the ``keys`` and ``values`` of the weights); ``ValueError`` when it
        is not one."""
        try:
            data = msgspec.json.decode(raw, type=_ModelFile)
        except msgspec.DecodeError as error:
            raise ValueError(f"turn model: {error}") from None
        if len(data.keys) != len(data.values):
            raise ValueError("turn model: as many keys as values are needed")
        weights = dict(zip(data.keys, data.values, strict=True))
        return cls(weights, data.bias, data.cutoff, NEVER if data.plain is None else data.plain)


class _Reader(Protocol):
    def read(self, text: str) -> Reading: ...


class _ModelFile(msgspec.Struct, frozen=True):
    bias: float
    cutoff: float
    keys: list[int]
    values: list[float]
    provenance: dict[str, Any] | None = None
    plain: float | None = None


@functools.cache
def default_model() -> TurnModel:
    """The shipped model (:data:`MODEL_FILE` in this package), read once per process."""
    raw = resources.files("memrecall.engine.scoring").joinpath(MODEL_FILE).read_bytes()
    return TurnModel.decode(raw)


def read_turn(model: _Reader, query: str, words: Collection[str]) -> Reading:
    """What the ranking makes of ``query`` (not a paste; ``words`` are its terms,
    :func:`~memrecall.engine.scoring.analysis.query_words`): ``model``'s reading, or a
    question when it names work (:func:`~memrecall.engine.scoring.turn_words.says_work`:
    "wie druckt man hier im Büro?" is a question about the office however it sounds).
    From :attr:`Reading.TALK` on, weak memories are held back."""
    return Reading.QUESTION if says_work(words) else model.read(query)
