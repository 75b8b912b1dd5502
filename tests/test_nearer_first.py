"""The passage decides between two close memories (issue 18): where memories carry passage
embeddings and the words rank two that are not versions of one subject close, the one whose
passage is nearer the turn comes first (memrecall.engine.scoring.passages.nearer_first,
Params.passage_ratio and passage_margin); the fast result keeps the words' memories."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import nearer_first, script_of
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.engine.scoring.turn_semantic import SemanticTurns, SemanticWeights
from tests.factories import filler, memory

QUESTION = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-20.0, cutoff=0.9)
"""A reader that reads every turn as a question."""
LEXICAL = TurnModel({}, bias=0.0, cutoff=0.99)

CHECKLIST = "Release checklist"
TAGGING = "Tagging a release"
QUERY = "what goes in the release checklist before a tag?"
"""Its words favour the checklist note (two title words); its meaning, the tagging note."""


def _vectors(text: str) -> Sequence[float]:
    """A stand-in for the model: the turn is nearer the tagging note (0.8) than the
    checklist note (0.6); everything else is far from both."""
    if text.startswith(CHECKLIST):
        return [1.0, 0.0, 0.0]
    if text.startswith(TAGGING):
        return [0.0, 1.0, 0.0]
    if "release" in text:
        return [0.6, 0.8, 0.0]
    return [0.0, 0.0, 1.0]


def _index(
    *, params: Params | None = None, passages: bool = True, semantic: bool = True
) -> FieldedIndex:
    documents = [
        memory(CHECKLIST, "", "Run the release checklist: changelog, version bump, green CI."),
        memory(TAGGING, "", "A release tag is signed; ask Dana before you tag."),
        *filler(20),
    ]
    turns = SemanticTurns(QUESTION, LEXICAL, _vectors) if semantic else LEXICAL
    return FieldedIndex.of(
        documents,
        turns=turns,
        passage=_vectors if passages else None,
        params=params or Params(),
    )


def test_the_words_rank_the_two_close_and_the_checklist_first() -> None:
    """The premise of the tests below, from the words alone."""
    first, second = _index(passages=False).matches(QUERY)[:2]
    assert (first.index, second.index) == (0, 1)
    assert second.score >= Params().passage_ratio * first.score


def test_the_memory_nearer_the_turn_goes_first() -> None:
    index = _index()
    assert index.rank(QUERY, 5)[:2] == [1, 0]
    ranking, fast = index.rank_and_fast(QUERY, 5)
    assert ranking[:2] == [1, 0]
    words_fast = _index(passages=False).rank_and_fast(QUERY, 5)[1]
    assert set(fast) == set(words_fast)  # the fast result holds what the words chose


def test_without_passages_or_the_semantic_reader_the_words_order_stands() -> None:
    assert _index(passages=False).rank(QUERY, 5)[:2] == [0, 1]
    assert _index(semantic=False).rank(QUERY, 5)[:2] == [0, 1]


def test_a_second_far_behind_or_hardly_nearer_stays_second() -> None:
    assert _index(params=Params(passage_ratio=1.01)).rank(QUERY, 5)[:2] == [0, 1]
    assert _index(params=Params(passage_margin=0.2)).rank(QUERY, 5)[:2] == [0, 1]
    assert _index(params=Params(passage_margin=0.19)).rank(QUERY, 5)[:2] == [1, 0]


def test_versions_of_one_subject_are_left_to_the_fresher_facts_rules() -> None:
    # every pair is one subject here: the fresher-facts rules order such pairs, not this one
    assert _index(params=Params(subject=0.0)).rank(QUERY, 5)[:2] == [0, 1]


def test_a_paste_is_ordered_by_its_words() -> None:
    paste = QUERY + " " + " ".join(f"svc{i}.release err{i}" for i in range(80))
    index = _index()
    assert index.query_terms(paste)[2]
    assert index.rank(paste, 5)[:1] == _index(passages=False).rank(paste, 5)[:1]


# --------------------------------------------------------------------------- the rule itself

A, B, C = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
TURN = [0.6, 0.8, 0.0]  # nearer B (0.8) than A (0.6); far from C


def _decide(
    *,
    scores: Sequence[float] = (10.0, 6.0),
    vectors: Sequence[Sequence[float] | None] = (A, B),
    turn: Sequence[float] = TURN,
    scripts: Sequence[str] = ("latin", "latin", "latin", "latin"),
    versions: frozenset[tuple[int, int]] = frozenset(),
    margin: float = 0.015,
) -> int:
    return nearer_first(
        scores,
        vectors,
        lambda: turn,
        scripts=lambda: scripts,
        versions=lambda i, j: (i, j) in versions,
        ratio=0.5,
        margin=margin,
    )


def test_the_rule_asks_close_scores_and_a_nearer_passage() -> None:
    assert _decide() == 1
    assert _decide(scores=(10.0, 5.0)) == 1  # exactly the ratio
    assert _decide(scores=(10.0, 4.99)) == 0
    assert _decide(turn=[0.8, 0.6, 0.0]) == 0  # the first is nearer
    assert _decide(turn=[0.5, 0.51, 0.0]) == 0  # nearer by 0.01 only
    assert _decide(turn=[0.5, 0.52, 0.0]) == 1
    assert _decide(scores=(0.0, 0.0)) == 0
    assert _decide(scores=(10.0,), vectors=(A,)) == 0


def test_a_memory_further_down_must_be_nearer_than_every_one_above_it() -> None:
    turn = [0.6, 0.0, 0.8]  # C nearest, then A, B far
    assert _decide(scores=(10.0, 6.0, 6.0), vectors=(A, B, C), turn=turn) == 2
    # nearer than A but not than B above it: stays
    assert _decide(scores=(10.0, 6.0, 6.0), vectors=(A, B, C), turn=[0.6, 0.8, 0.7]) == 1
    assert _decide(scores=(10.0, 4.0, 6.0), vectors=(A, B, C), turn=turn) == 2  # B not close
    assert _decide(scores=(10.0, 6.0, 4.0), vectors=(A, B, C), turn=turn) == 0  # C not close


def test_of_several_nearer_memories_the_nearest_goes_first() -> None:
    turn = [0.2, 0.6, 0.77]  # B and C both nearer than A; C nearest
    assert _decide(scores=(10.0, 9.0, 8.0), vectors=(A, B, C), turn=turn) == 2
    assert _decide(scores=(10.0, 9.0, 8.0, 7.0, 6.0, 5.0), vectors=(A, A, A, A, A, B)) == 0


def test_without_passages_of_the_turns_length_nothing_moves() -> None:
    assert _decide(vectors=(A, None)) == 0
    assert _decide(vectors=(None, B)) == 0
    assert _decide(turn=[0.6, 0.8]) == 0
    turn = [0.6, 0.0, 0.8]
    assert _decide(scores=(10.0, 6.0, 6.0), vectors=(A, None, C), turn=turn) == 0


def test_versions_are_left_to_the_fresher_facts_rules() -> None:
    assert _decide(versions=frozenset({(0, 1)})) == 0
    turn = [0.6, 0.0, 0.8]
    scores, vectors = (10.0, 6.0, 6.0), (A, B, C)
    assert _decide(scores=scores, vectors=vectors, turn=turn, versions=frozenset({(1, 2)})) == 0
    assert _decide(scores=scores, vectors=vectors, turn=turn, versions=frozenset({(0, 1)})) == 2


def test_the_turn_is_embedded_only_for_close_scores_and_a_failure_keeps_the_words() -> None:
    calls: list[int] = []

    def counted() -> Sequence[float]:
        calls.append(1)
        return TURN

    def broken() -> Sequence[float]:
        raise RuntimeError("the model is gone")

    def decide(scores: tuple[float, float], turn: Callable[[], Sequence[float]]) -> int:
        return nearer_first(
            scores,
            (A, B),
            turn,
            scripts=lambda: ("latin", "latin", "latin"),
            versions=lambda i, j: False,
            ratio=0.5,
            margin=0.0,
        )

    assert decide((10.0, 1.0), counted) == 0
    assert calls == []
    assert decide((10.0, 6.0), counted) == 1
    assert calls == [1]
    assert decide((10.0, 6.0), broken) == 0


def test_across_scripts_a_memory_in_the_turns_own_never_goes_first() -> None:
    assert _decide(scripts=("han", "latin", "han")) == 0  # the model's own-language nearness
    assert _decide(scripts=("latin", "latin", "kana")) == 1  # nearer despite another language
    assert _decide(scripts=("han", "kana", "latin")) == 1
    assert _decide(scripts=("han", "han", "han")) == 1


@pytest.mark.parametrize(
    ("texts", "script"),
    [
        (["Release checklist"], "latin"),
        (["发布清单"], "han"),
        (["リリースの手順", "release"], "kana"),  # any kana: Japanese writes Han words too
        (["本番の手順"], "kana"),
        (["배포 절차"], "hangul"),
        (["ขั้นตอนการปล่อย"], "thai"),
        (["Порядок выпуска"], "cyrillic"),
        (["रिलीज़ की प्रक्रिया"], "devanagari"),
        (["db-02 2026", "Каталог"], "cyrillic"),  # digits and marks are no letters
        (["", "2026 — 15:30"], ""),
    ],
)
def test_the_script_of_a_text_is_that_of_most_of_its_letters(texts: list[str], script: str) -> None:
    assert script_of(texts) == script
