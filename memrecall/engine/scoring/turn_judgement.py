"""What a turn's reading does to the judgements of the memories ranked for it (issue 18).

The thresholds (:mod:`~memrecall.engine.scoring.judgement`) judge each document on its
own figures. Whether the *turn* is small talk, a greeting or a question then changes some
of those judgements. Both rankers (:class:`~memrecall.engine.scoring.fielded.FieldedIndex`
and the store's ranker) apply the same chain, here, in this order:

1. **Plain small talk.** On a turn the reader calls plain talk
   (:attr:`~memrecall.engine.scoring.turn_model.Reading.PLAIN_TALK`), a strong memory that
   explains under ``talk_share`` of the turn is judged weak, unless some memory ranked for
   the turn is strong and explains at least that share (the turn is then about that one).
2. **Strong only.** When the query rules ask for strong matches only (thanks, a greeting,
   an unknown name: :func:`~memrecall.engine.scoring.query_rules.strong_only`), a weak
   memory is dropped unless the rule let it through.
3. **Small talk.** On a turn read as talk (plain or not), a weak memory is dropped.
   On a turn the reader only leans to call talk
   (:attr:`~memrecall.engine.scoring.turn_model.Reading.LEANING`), a weak memory is dropped
   when the memories ranked for the turn hold little of it: none is strong, and none
   explains ``low_share`` of it (:func:`holds_little`).
4. **Older versions.** A strong memory that is an older version of another (or the
   unclear first document of a paste) is judged weak, so never fast-delivered.

The turn is read at most once, and only when a rule needs it: a turn with no memory to
hold back costs no reading.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from typing import TypeVar

from memrecall.engine.scoring.judgement import Judgement
from memrecall.engine.scoring.turn_model import Reading

__all__ = ["explains_turn", "holds_little", "in_turn"]

K = TypeVar("K", bound=Hashable)


def explains_turn(judged: Sequence[tuple[float, Judgement]], talk_share: float) -> bool:
    """Whether some memory, given as ``(coverage, judgement by the thresholds)``, is strong
    and explains at least ``talk_share`` of the turn: then the turn is about it, and no
    plain small talk."""
    return any(j is Judgement.STRONG and c >= talk_share for c, j in judged)


def holds_little(judged: Sequence[tuple[float, Judgement]], low_share: float) -> bool:
    """Whether the memories, given as ``(coverage, judgement by the thresholds)``, hold
    little of the turn: none is strong, and none judged at all explains ``low_share`` of
    it."""
    return all(
        j is not Judgement.STRONG and (j is Judgement.NONE or c < low_share) for c, j in judged
    )


def in_turn(
    judged: Sequence[tuple[K, float, Judgement]],
    *,
    read: Callable[[], Reading],
    talk_share: float,
    explained: bool,
    little: bool,
    let_through: Collection[K] | None,
    older: Collection[K],
) -> list[Judgement]:
    """The judgement of each ``(key, coverage, judgement by the thresholds)`` in this turn.

    ``read`` reads the turn (called at most once); ``explained`` is :func:`explains_turn`
    over every memory ranked for the turn (not only these), and ``little``
    :func:`holds_little` over them; ``let_through`` is what the
    strong-only rule lets through when it applies (``None`` when it does not); ``older``
    holds the keys never judged strong. The rules are the module's, in its order.
    """
    reading: Reading | None = None

    def current() -> Reading:
        nonlocal reading
        if reading is None:
            reading = read()
        return reading

    out = []
    for key, coverage, by_thresholds in judged:
        judgement = by_thresholds
        if (
            judgement is Judgement.STRONG
            and coverage < talk_share
            and not explained
            and current() is Reading.PLAIN_TALK
        ):
            judgement = Judgement.WEAK  # one word shared with plain small talk
        if judgement is Judgement.WEAK and let_through is not None and key not in let_through:
            judgement = Judgement.NONE  # thanks, a greeting, an unknown name: strong only
        if judgement is Judgement.WEAK and current() >= Reading.TALK:
            judgement = Judgement.NONE  # small talk: only a strong match answers it
        if judgement is Judgement.WEAK and little and current() is Reading.LEANING:
            judgement = Judgement.NONE  # probably small talk, and nothing explains it
        if judgement is Judgement.STRONG and key in older:
            judgement = Judgement.WEAK  # an older version (or an unclear paste) never is fast
        out.append(judgement)
    return out
