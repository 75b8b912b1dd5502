"""The corpus's held-out slices (issue 18): measured, never tuned on, and kept out of the
floors that were set on the rest of the corpus."""

from __future__ import annotations

import attrs

from memrecall.tooling.evaluation import Case, Corpus

HELD_OUT_TALK = (
    "small-talk-heldout",
    "small-talk-heldout-2",
    "small-talk-heldout-3",
    "small-talk-heldout-4",
)
"""Small talk written for issue 18 and not tuned on (the last two written blind)."""

HELD_OUT_ANSWERABLE = ("answerable-heldout-3", "answerable-heldout-4")
"""Questions about the memories written blind for issue 18 (several across languages)."""

HELD_OUT = HELD_OUT_TALK + HELD_OUT_ANSWERABLE


def held_out(case: Case) -> bool:
    """Whether ``case`` belongs to a held-out slice."""
    return case.slice in HELD_OUT


def without_held_out(corpus: Corpus) -> Corpus:
    """``corpus`` without its held-out cases (the corpus the older floors were set on)."""
    return attrs.evolve(corpus, cases=tuple(c for c in corpus.cases if not held_out(c)))
