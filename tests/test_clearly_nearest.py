"""A turn the words leave silent gets the memory whose passage clearly stands out near it (or
the two that stand out together), when the reader is sure it asks something (issue 18):
memrecall.engine.scoring.passages.clearly_nearest, Params.clear_near, clear_lead and
clear_talk. Never into the fast result, never for a paste, never where the words answer."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Sequence

from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import QUANTUM, PassageMatrix, clearly_nearest
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.engine.scoring.turn_semantic import SemanticTurns, SemanticWeights
from tests.factories import filler, memory

QUESTION = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-20.0, cutoff=0.9)
"""A reader that reads every turn as a question (probability of small talk about 0)."""
TALK = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=20.0, cutoff=0.9)
"""A reader that reads every turn as small talk."""
UNSURE = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-1.5, cutoff=0.9)
"""A reader that gives every turn a probability of small talk of 0.18: not sure enough."""
SURE_ENOUGH = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-1.85, cutoff=0.9)
"""Every turn at 0.136 (the Hindi questions of set 36 and 38 read at 0.138 and 0.147): under
``Params.clear_talk`` since the finer grid (0.1 before)."""
LEXICAL = TurnModel({}, bias=0.0, cutoff=0.99)
"""The lexical model reads every turn at 0.5: never plainly small talk."""
PLAIN = TurnModel({}, bias=0.0, cutoff=0.4)
"""A lexical model that reads every turn as small talk on its own."""

MANAGER = "Reporting line"
STANDUP = "Daily standup"
ASKED = "who's my boss again?"
"""Shares no word with any memory: the words leave it silent."""
BOTH = "what about both of them?"
BOTH_MINE = "tell me about both of them"
ALL = "what about all of them?"
ALL_MINE = "what about all of my notes?"
"""As near every memory as :data:`ALL`, in the first person: a question about the asker."""
FAR = "anything at all?"
FAR_MINE = "anything at all for me?"


def _vectors(text: str) -> Sequence[float]:
    """A stand-in for the model: each note and the turns about it point their own way."""
    if text.startswith(MANAGER):
        return [1.0, 0.0, 0.0]
    if text.startswith(STANDUP):
        return [0.0, 1.0, 0.0]
    if text.startswith(ASKED):  # the question, and a paste that starts with it
        return [0.9, 0.1, 0.0]  # 0.9 near the reporting line, 0.1 the standup
    if text in (BOTH, BOTH_MINE):
        return [0.85, 0.84, 0.0]  # near both, by 0.01 apart, far from the rest
    if text in (ALL, ALL_MINE):
        return [0.85, 0.84, 0.83]  # near both, and the rest under them by 0.01 only
    if text in (FAR, FAR_MINE):
        return [0.7, 0.1, 0.0]  # nearest the reporting line, but under 0.80
    return [0.0, 0.0, 1.0]


def _index(
    *,
    weights: SemanticWeights = QUESTION,
    lexical: TurnModel = LEXICAL,
    embed: Callable[[str], Sequence[float]] = _vectors,
    passages: bool = True,
    semantic: bool = True,
    params: Params | None = None,
) -> FieldedIndex:
    documents = [
        memory(MANAGER, "", "Reports to the CTO, Ines Duarte, since March."),
        memory(STANDUP, "", "The standup is at 9:30 in the small room."),
        *filler(20),
    ]
    turns = SemanticTurns(weights, lexical, embed) if semantic else lexical
    return FieldedIndex.of(
        documents,
        turns=turns,
        passage=_vectors if passages else None,
        params=params or Params(),
    )


def test_the_words_leave_the_turns_silent() -> None:
    """The premise of the tests below, from the words alone."""
    words = _index(passages=False)
    for turn in (ASKED, BOTH, BOTH_MINE, ALL, ALL_MINE, FAR, FAR_MINE):
        assert words.rank(turn, 5) == []


def test_a_silent_question_gets_the_memory_that_stands_out_never_fast() -> None:
    index = _index()
    assert index.rank(ASKED, 5) == [0]
    assert index.rank_and_fast(ASKED, 5) == ([0], [])


def test_where_the_words_answer_the_rule_takes_no_part() -> None:
    asked = "when is the daily standup?"
    assert _index().rank(asked, 5)[:1] == _index(passages=False).rank(asked, 5)[:1] == [1]


def test_small_talk_or_a_reader_not_sure_enough_gets_nothing() -> None:
    assert _index(weights=TALK).rank(ASKED, 5) == []
    assert _index(weights=UNSURE).rank(ASKED, 5) == []
    assert _index(weights=UNSURE, params=Params(clear_talk=0.19)).rank(ASKED, 5) == [0]
    assert _index(weights=SURE_ENOUGH).rank(ASKED, 5) == [0]
    assert _index(weights=SURE_ENOUGH, params=Params(clear_talk=0.1)).rank(ASKED, 5) == []


def test_a_turn_the_lexical_model_reads_as_small_talk_is_not_embedded() -> None:
    turns: list[str] = []

    def counted(text: str) -> Sequence[float]:
        turns.append(text)
        return _vectors(text)

    assert _index(lexical=PLAIN, embed=counted).rank(ASKED, 5) == []
    assert turns == []
    assert _index(embed=counted).rank(ASKED, 5) == [0]
    assert turns == [ASKED]  # embedded once, for the reader and the passages alike


def test_two_memories_near_alike_stand_out_together_and_none_near_enough_give_nothing() -> None:
    assert _index().rank(BOTH, 5) == [0, 1]  # two records, a note and its update: both
    assert _index().rank_and_fast(BOTH, 5) == ([0, 1], [])
    assert _index().rank(BOTH, 1) == [0]  # within the limit, nearest first
    assert _index().rank(ALL, 5) == []  # the rest as near: neither stands out
    assert _index().rank(FAR, 5) == []
    assert _index(params=Params(clear_lead=0.009)).rank(BOTH, 5) == [0]
    assert _index(params=Params(clear_near=0.845)).rank(BOTH, 5) == []  # the second too far
    assert _index(params=Params(clear_near=0.7)).rank(FAR, 5) == [0]


def test_a_silent_question_in_the_first_person_gets_its_nearest_memory_without_a_lead() -> None:
    # "what about all of my notes?" is as near every memory as "what about all of them?",
    # but asks about the person the memories describe: the nearest one answers it
    assert _index().rank(ALL, 5) == []
    assert _index().rank(ALL_MINE, 5) == [0]
    assert _index().rank_and_fast(ALL_MINE, 5) == ([0], [])  # never fast
    assert _index().rank(ALL_MINE, 5, exclude={0}) == [1]
    assert _index().rank(FAR_MINE, 5) == []  # under the cosine bar, as for any turn
    assert _index(params=Params(clear_near=0.7)).rank(FAR_MINE, 5) == [0]
    assert _index(weights=UNSURE).rank(ALL_MINE, 5) == []  # the reader must be as sure
    assert _index(lexical=PLAIN).rank(ALL_MINE, 5) == []
    # two that stand out together are both given, as for a turn in the third person
    assert _index().rank(BOTH_MINE, 5) == _index().rank(BOTH, 5) == [0, 1]


def test_an_excluded_memory_is_never_given() -> None:
    # without the reporting line, the standup is nearest but far under the bar
    assert _index().rank(ASKED, 5, exclude={0}) == []
    assert _index(params=Params(clear_near=0.05)).rank(ASKED, 5, exclude={0}) == [1]


def test_without_passages_or_the_semantic_reader_silence_stays() -> None:
    assert _index(passages=False).rank(ASKED, 5) == []
    assert _index(semantic=False).rank(ASKED, 5) == []
    assert _index().rank(ASKED, 0) == []


def test_a_paste_or_a_turn_with_no_word_stays_silent() -> None:
    paste = ASKED + " " + " ".join(f"zq{i}.boss xk{i}" for i in range(80))
    index = _index()
    assert index.query_terms(paste)[2]
    assert index.rank(paste, 5) == []  # its embedding stands out as the question's does
    assert index.rank("?!? …", 5) == []


def test_a_failing_embedder_leaves_the_silence() -> None:
    def broken(text: str) -> Sequence[float]:
        if text == ASKED:
            raise RuntimeError("the model is gone")
        return _vectors(text)

    assert _index(embed=broken).rank(ASKED, 5) == []


# --------------------------------------------------------------------------- the rule itself

A, B, C = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]


def _found(
    turn: Sequence[float],
    vectors: Sequence[Sequence[float] | None] = (A, B, C),
    *,
    talk: float = 0.0,
    exclude: frozenset[int] = frozenset(),
    query: str = "a question",
) -> list[int]:
    matrix = PassageMatrix([None if v is None else array("f", v) for v in vectors])
    return clearly_nearest(
        query,
        matrix,
        talk=lambda text: talk,
        plainly_talk=lambda text: False,
        turn=lambda: turn,
        exclude=exclude,
        cosine=0.8,
        lead=0.02,
        below=0.1,
    )


def test_the_rule_asks_a_near_passage_ahead_of_the_next_by_the_lead() -> None:
    assert _found([0.9, 0.1, 0.0]) == [0]
    assert _found([0.0, 0.1, 0.8]) == [2]  # exactly the bar
    assert _found([0.0, 0.1, 0.79]) == []
    assert _found([0.85, 0.83, 0.0]) == [0]  # ahead by exactly the lead
    assert _found([0.85, 0.84, 0.0]) == [0, 1]  # the two stand out together
    assert _found([0.85, 0.84, 0.82]) == [0, 1]  # ahead of the third by exactly the lead
    assert _found([0.85, 0.84, 0.83]) == []
    assert _found([0.81, 0.795, 0.0]) == []  # the second under the bar
    assert _found([0.84, 0.85, 0.0]) == [1, 0]  # nearest first
    assert _found([0.9, 0.1, 0.0], talk=0.1) == []
    assert _found([0.9, 0.1, 0.0], talk=0.099) == [0]


def test_the_rule_skips_the_excluded_and_the_missing() -> None:
    assert _found([0.9, 0.85, 0.0], exclude=frozenset({1})) == [0]
    assert _found([0.9, 0.85, 0.0], exclude=frozenset({0})) == [1]
    assert _found([0.9, 0.85, 0.0], vectors=(A, None, C)) == [0]
    assert _found([0.9, 0.85, 0.0], vectors=(None, None, None)) == []
    assert _found([0.9, 0.1], vectors=(A, B, C)) == []  # a turn of another length
    assert _found([0.9, 0.1, 0.0], vectors=(A,)) == [0]  # one memory: nothing to be ahead of
    assert _found([0.9, 0.1, 0.0], query="🙂 …") == []


def _versions(old_body: str) -> FieldedIndex:
    """A note the turn is clearly nearest, and a note on its subject written 200 days later
    whose passage points elsewhere."""

    def embed(text: str) -> Sequence[float]:
        if text.startswith(ASKED) or "CTO" in text:
            return [1.0, 0.0, 0.0]
        return [0.0, 0.0, 1.0]

    documents = [
        memory(MANAGER, "", old_body, name="old"),
        memory(MANAGER, "", "Reports to the COO, Bruno Reis; one-to-one on Mondays.", name="new"),
        *filler(20),
    ]
    documents[1] = memory(
        MANAGER, "", documents[1].body, name="new", mtime=documents[0].mtime + 200 * 86_400
    )
    turns = SemanticTurns(QUESTION, LEXICAL, embed)
    return FieldedIndex.of(documents, turns=turns, passage=embed)


def test_a_silent_question_gets_the_update_of_its_nearest_memory_by_the_words_rules() -> None:
    # The words' rules place an update beside the memory the passages give a silent turn:
    # before a standing fact (time_rules.stands_in), after a record of an occasion.
    standing = _versions("Reports to the CTO, Ines Duarte.")
    assert standing.same_subject(0, 1)
    assert standing.matches(ASKED) == []
    assert standing.rank(ASKED, 5) == [1, 0]
    assert standing.rank_and_fast(ASKED, 5) == ([1, 0], [])
    record = _versions("1:1 on 3 Feb: reports to the CTO, Ines Duarte.")
    assert record.same_subject(0, 1)
    assert record.rank(ASKED, 5) == [0, 1]
    assert record.rank(ASKED, 1) == [0]


@given(
    st.lists(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3), min_size=1, max_size=6),
    st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3),
)
def test_without_a_lead_the_rule_gives_the_nearest_memory_at_the_bar(
    vectors: list[list[float]], turn: list[float]
) -> None:
    # what a turn in the first person gets (silent_turns.answer_silent): the single nearest
    # passage, when it is at least the cosine bar, else nothing
    matrix = PassageMatrix([array("f", v) for v in vectors])
    got = clearly_nearest(
        "my question",
        matrix,
        talk=lambda text: 0.0,
        plainly_talk=lambda text: False,
        turn=lambda: turn,
        exclude=(),
        cosine=0.8,
        lead=0.0,
        below=0.1,
    )
    stored = [list(array("f", v)) for v in vectors]
    near = [round(math.fsum(a * b for a, b in zip(turn, v, strict=True)) / QUANTUM) for v in stored]
    best = max(near)
    if best < round(0.8 / QUANTUM):
        assert got == []
    else:
        assert len(got) == 1
        assert near[got[0]] == best
