"""Recall across languages (memrecall.engine.scoring.passages): the fusion of the lexical
ranking with the memories nearest the turn's embedding, and where the fielded index uses it.
Issue 18: questions about a note written in another language share few of its words."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import query_candidates, words_among
from memrecall.engine.scoring.features import DocumentFeatures, Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import (
    NEAREST_CHARS,
    PassageEmbedder,
    PassageMatrix,
    fused,
    nearest,
    nearest_over_thin,
    pack,
    passage_text,
    unpack,
)
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.engine.scoring.turn_semantic import OnceEmbedded, SemanticTurns, SemanticWeights
from memrecall.events.documents import MemoryDocument
from memrecall.sources.catalog import source as source_module
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import prepare_recall
from memrecall.sources.turn_reader import (
    ENVIRONMENT,
    PASSAGES,
    background_passage_embedder,
    default_turns,
    e5_embedder,
)
from tests.factories import filler, memory

# --------------------------------------------------------------------------- the parts


def test_a_vector_survives_packing_and_no_vector_is_none() -> None:
    vector = unpack(pack([0.5, -0.25, 1.0]))
    assert vector is not None
    assert list(vector) == [0.5, -0.25, 1.0]
    assert unpack(b"") is None


def test_nearest_orders_by_dot_product_skipping_what_cannot_compare() -> None:
    vectors = [unpack(pack(v)) for v in ([0.0, 1.0], [1.0, 0.0], [0.6, 0.8], [0.6, 0.8])]
    vectors += [None, unpack(pack([1.0, 0.0, 0.0]))]  # no vector; another length
    assert nearest([1.0, 0.0], vectors) == [1, 2, 3, 0]  # ties by position
    assert nearest([1.0, 0.0], vectors, exclude={1}) == [2, 3, 0]
    assert nearest([1.0, 0.0], vectors, depth=2) == [1, 2]


_COMPONENT = st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0])
"""Few values, so that equal cosines (ties) are common."""


@given(
    st.lists(st.one_of(st.none(), st.lists(_COMPONENT, min_size=3, max_size=3)), max_size=30),
    st.lists(_COMPONENT, min_size=3, max_size=3),
    st.sets(st.integers(0, 30), max_size=5),
    st.integers(1, 25),
)
def test_the_matrix_finds_the_positions_one_by_one_finds(
    vectors: list[list[float] | None],
    turn: list[float],
    exclude: set[int],
    depth: int,
) -> None:
    packed = [None if v is None else unpack(pack(v)) for v in vectors]
    expected = nearest(turn, packed, exclude=exclude, depth=depth)
    matrix = PassageMatrix(packed)
    assert matrix.nearest(turn, exclude=exclude, depth=depth) == expected
    assert bool(matrix) == any(v is not None for v in vectors)
    if any(v is not None for v in vectors):
        assert matrix.nearest([1.0, 0.0], exclude=exclude, depth=depth) == []  # other length


def test_the_first_lexical_memory_stays_first_and_the_nearest_join_after_it() -> None:
    assert fused([7, 3], [9, 7, 3], 5) == [7, 3, 9]  # 3 is in both lists: ahead of 9
    assert fused([7, 3, 4], [9], 2) == [7, 3]
    assert fused([7], [9, 8], 5) == [7, 9, 8]
    assert fused([7, 3, 4], [4], 5) == [7, 4, 3]  # 4 is first of the rest in the nearest list


def test_an_update_placed_beside_the_first_can_keep_its_place() -> None:
    assert fused([7, 3, 4], [4, 9], 5, fixed=2) == [7, 3, 4, 9]


def test_nothing_lexical_stays_nothing() -> None:
    assert fused([], [1, 2, 3], 5) == []


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=8),
    st.lists(st.integers(0, 30), unique=True, max_size=20),
    st.integers(1, 8),
    st.integers(1, 2),
)
def test_fusion_keeps_the_head_repeats_nothing_and_fills_the_limit(
    lexical: list[int], semantic: list[int], limit: int, fixed: int
) -> None:
    out = fused(lexical, semantic, limit, fixed=fixed)
    assert len(out) == len(set(out))
    assert set(out) <= set(lexical) | set(semantic)
    if not lexical:
        assert out == []
        return
    head = min(fixed, limit, len(lexical))
    assert out[:head] == lexical[:head]
    assert len(out) == min(limit, len(set(lexical) | set(semantic)))


def _unit(x: float) -> list[float]:
    return [x, math.sqrt(1.0 - x * x)]


def test_the_pools_nearest_goes_first_over_a_thin_hold_by_the_lead_only() -> None:
    # the turn is [1, 0]: memory 2's passage is nearer it than memory 0's by 0.05
    matrix = PassageMatrix([unpack(pack(_unit(x))) for x in (0.80, 0.70, 0.85)])
    turn = [1.0, 0.0]

    def move(ranking: list[int], lead: float, yields: bool = True) -> list[int]:
        return nearest_over_thin(
            ranking, 2, turn, matrix, lead=lead, yields=lambda first, near: yields
        )

    assert move([0, 1, 2], 0.03) == [2, 0, 1]
    assert move([0, 1, 2], 0.06) == [0, 1, 2]  # not nearer by the lead
    assert move([0, 1, 2], 0.03, yields=False) == [0, 1, 2]  # the caller's say
    assert move([0, 1], 0.03) == [0, 1]  # not among the ranked: nothing is added
    assert move([2, 0, 1], 0.03) == [2, 0, 1]  # already first
    empty = PassageMatrix([unpack(pack(_unit(0.80))), None, None])
    assert nearest_over_thin([0, 2], 2, turn, empty, lead=0.0, yields=lambda a, b: True) == [0, 2]


def test_the_overlapping_bigrams_of_one_cjk_word_count_as_one_word() -> None:
    terms = {qt.term: qt for qt in query_candidates("派单服务挂了 deploy")}
    assert {"派单", "单服", "服务", "deploy"} <= terms.keys()
    assert words_among(terms[t] for t in ("派单", "单服", "服务")) == 1
    assert words_among(terms[t] for t in ("派单", "服务")) == 2  # a bigram between is missing
    assert words_among(terms[t] for t in ("服务", "deploy")) == 2
    assert words_among([]) == 0


def _stop_vectors(text: str) -> Sequence[float]:
    """The turn, a note it shares one word with, and the note it means, for the test below."""
    if "stop working" in text:
        return [1.0, 0.0, 0.0]
    if "log off" in text:
        return [0.96, 0.28, 0.0]
    if "Stop all deploys" in text:
        return [0.9, -math.sqrt(1 - 0.81), 0.0]
    return [0.0, 0.0, 1.0]


def test_a_first_memory_held_by_one_word_yields_to_the_clearly_nearest_passage() -> None:
    documents = [
        memory("Deploy cutoff", "Stop all deploys after 15:00 on Fridays", "No exceptions."),
        memory("End of my day", "I log off at 18:00 sharp", "Messages after that wait."),
        *filler(20),
    ]
    turns = SemanticTurns(QUESTION, LEXICAL, _stop_vectors)
    index = FieldedIndex.of(documents, turns=turns, passage=_stop_vectors)
    words = FieldedIndex.of(documents, turns=LEXICAL)
    query = "what time do I usually stop working?"
    assert words.rank(query, 5)[:1] == [0]
    assert index.terms_matching(query, 0) == 1  # "stop"
    assert index.rank(query, 5)[:2] == [1, 0]
    assert index.rank_and_fast(query, 5)[0][:2] == [1, 0]
    # two words in common: the words' first keeps its place
    assert index.rank("what time do I stop deploys working?", 5)[:1] == [0]
    # by less than the lead, the words' order stands
    lead = Params(thin_lead=0.07)
    near = FieldedIndex.of(documents, turns=turns, passage=_stop_vectors, params=lead)
    assert near.rank(query, 5)[:2] == [0, 1]


def test_the_passage_is_title_description_and_the_start_of_the_body() -> None:
    text = passage_text("Freeze", "No deploys", "x" * 5000)
    assert text.startswith("Freeze. No deploys\nxxx")
    assert len(text) == 1000


# --------------------------------------------------------------------------- in the index

QUESTION = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-20.0, cutoff=0.9)
"""A reader that reads every turn as a question (probability about 2e-9)."""

LEXICAL = TurnModel({}, bias=0.0, cutoff=0.99)

FREEZE = "Release freeze in November"
TARIFA = "Tarifa de reembolso"
"""A Spanish note on refunds: it shares no word with the English question below."""


def _vectors(text: str) -> Sequence[float]:
    if FREEZE in text or "freeze" in text:
        return [1.0, 0.0, 0.0]
    if TARIFA in text or "refund" in text:
        return [0.0, 1.0, 0.0]
    return [0.0, 0.0, 1.0]


def _documents() -> list[MemoryDocument]:
    return [
        memory(FREEZE, "No production deploys from 20 Nov", "Hotfixes need approval."),
        memory(TARIFA, "Los reembolsos se aprueban en dos días", "Pago devuelto."),
        *filler(20),
    ]


def _index(*, semantic: bool = True, passages: bool = True) -> FieldedIndex:
    turns = SemanticTurns(QUESTION, LEXICAL, _vectors) if semantic else LEXICAL
    return FieldedIndex.of(_documents(), turns=turns, passage=_vectors if passages else None)


def test_a_memory_in_another_language_joins_an_answer_by_its_embedding() -> None:
    query = "during the release freeze, how long does a refund take?"
    assert _index().rank(query, 5)[:2] == [0, 1]
    index = _index()
    ranking, fast = index.rank_and_fast(query, 5)
    assert ranking[:2] == [0, 1]
    assert 1 not in fast  # the fast result is the words' alone
    assert 1 not in index.fast(query)


def test_without_the_semantic_reader_or_passages_the_words_rank_alone() -> None:
    query = "during the release freeze, how long does a refund take?"
    assert 1 not in _index(semantic=False).rank(query, 5)
    assert 1 not in _index(passages=False).rank(query, 5)


def test_a_turn_the_words_leave_silent_gets_at_most_the_memory_that_stands_out() -> None:
    # the words share nothing with the Spanish refund note; its passage stands out near the
    # turn (tests/test_clearly_nearest.py has the rule's bounds), never into the fast result
    silent = "how long does a refund take?"
    assert _index(passages=False).rank(silent, 5) == []
    assert _index().rank_and_fast(silent, 5) == ([1], [])
    assert _index().rank("is it sunny today?", 5) == []  # near no memory: silence stays


def test_a_failing_passage_embedder_leaves_the_memory_without_a_vector() -> None:
    def broken(text: str) -> Sequence[float]:
        raise RuntimeError("the model is gone")

    assert DocumentFeatures.of(_documents()[0], passage=broken).passage == b""
    assert unpack(DocumentFeatures.of(_documents()[0], passage=_vectors).passage) is not None


def test_a_failing_turn_embedding_leaves_the_words_ranking() -> None:
    def broken(text: str) -> Sequence[float]:
        raise RuntimeError("the model is gone")  # the reader falls back to the lexical model

    index = FieldedIndex.of(
        _documents(), turns=SemanticTurns(QUESTION, LEXICAL, broken), passage=_vectors
    )
    lexical = _index(passages=False).rank("release freeze approval", 5)
    assert index.rank("release freeze approval", 5) == lexical


def test_a_turn_is_embedded_once_per_ranking_and_a_paste_not_at_all() -> None:
    calls: list[str] = []

    def counted(text: str) -> Sequence[float]:
        calls.append(text)
        return _vectors(text)

    index = FieldedIndex.of(
        _documents(), turns=SemanticTurns(QUESTION, LEXICAL, counted), passage=_vectors
    )
    query = "during the release freeze, how long does a refund take?"
    ranking, _ = index.rank_and_fast(query, 5)
    assert ranking[:2] == [0, 1]
    assert calls == [query]  # read and ranked with one embedding
    weak = "refund freeze " + "x" * 400
    index.rank(weak, 5)
    assert calls[1:] == [weak]  # the reader's embedding, used again
    strong = "freeze " + "Hotfixes need approval. " * 12
    index.rank(strong, 5)
    assert calls[2:] == [strong[:NEAREST_CHARS]]  # a strong answer is not read: its start
    calls.clear()
    paste = " ".join(f"svc{i}.freeze err{i}" for i in range(80))  # a paste: many terms
    assert index.query_terms(paste)[2]
    index.rank(paste, 5)
    assert calls == []  # pastes are ranked by their words


def _pair_index(titles: tuple[str, str], vectors: dict[str, list[float]]) -> FieldedIndex:
    """Two notes with the given titles, embedded as ``vectors`` says (by title); words never
    enough on their own (``subject`` 0.99), any overlap enough to ask (``doubt`` 0)."""
    documents = [memory(titles[0], "", "first"), memory(titles[1], "", "second")]

    def embed(text: str) -> Sequence[float]:
        return vectors[text.split(".", maxsplit=1)[0]]

    params = Params(subject=0.99, doubt=0.0, subject_cosine=0.9)
    return FieldedIndex.of(documents, params=params, passage=embed)


def test_near_passages_under_different_titles_are_one_subject() -> None:
    near = {"Parking": [1.0, 0.0], "Garage spaces": [0.95, 0.3122]}  # cosine 0.95
    assert _pair_index(("Parking", "Garage spaces"), near).same_subject(0, 1)
    far = {"Parking": [1.0, 0.0], "Garage spaces": [0.8, 0.6]}  # cosine 0.8
    assert not _pair_index(("Parking", "Garage spaces"), far).same_subject(0, 1)


def test_two_notes_under_one_title_are_not_one_subject_by_their_passages() -> None:
    index = _pair_index(("Meeting notes", "Meeting notes"), {"Meeting notes": [1.0, 0.0]})
    assert not index.same_subject(0, 1)


def test_without_passages_the_words_alone_say_one_subject() -> None:
    documents = [memory("Parking", "", "first"), memory("Garage spaces", "", "second")]
    index = FieldedIndex.of(documents, params=Params(subject=0.99, doubt=0.0))
    assert not index.same_subject(0, 1)


def test_one_call_embedder_keeps_the_first_turn_only() -> None:
    calls: list[str] = []

    def counted(text: str) -> Sequence[float]:
        calls.append(text)
        return [float(len(text))]

    once = OnceEmbedded(counted)
    assert once("a") == once("a") == [1.0]
    assert once("bb") == [2.0]
    assert calls == ["a", "bb"]
    assert (once.text, once.vector) == ("a", [1.0])


# --------------------------------------------------------------------------- in the runtime

ENGLISH_QUESTION = "During the release freeze, how many days does a customer refund take?"


def _tree(root: Path) -> None:
    notes = {
        "freeze.md": ("Release freeze", "No deploys in late November", "Hotfixes need approval."),
        "reembolsos.md": (
            "Plazo de reembolsos",
            "Los reembolsos a clientes tardan cinco días hábiles",
            "El equipo de pagos devuelve el dinero en cinco días hábiles.",
        ),
        **{
            f"filler-{i}.md": (f"{topic} note {i}", "", f"About the {topic} of team {i}.")
            for i, topic in enumerate(["grafana", "vault", "kafka", "budget", "oncall"] * 4)
        },
    }
    for name, (title, description, body) in notes.items():
        text = f"---\nname: {title}\ndescription: {description}\ntype: project\n---\n\n{body}\n"
        (root / name).write_text(text, encoding="utf-8")


def _held(embedder: PassageEmbedder, held: threading.Event) -> PassageEmbedder:
    def embed(text: str) -> Sequence[float]:
        held.wait()
        return embedder(text)

    return embed


def _candidates(
    tree: Path, monkeypatch: pytest.MonkeyPatch, passages: str | None, *, settle: bool = True
) -> tuple[list[str], list[str]]:
    monkeypatch.setenv(ENVIRONMENT, "auto")
    if passages is None:
        monkeypatch.delenv(PASSAGES, raising=False)
    else:
        monkeypatch.setenv(PASSAGES, passages)
    default_turns.cache_clear()
    held = threading.Event()
    if not settle:  # the passages wait until the recall has been prepared
        embedder = background_passage_embedder()
        assert embedder is not None
        monkeypatch.setattr(
            source_module, "background_passage_embedder", lambda: _held(embedder, held)
        )
    try:
        catalog = CatalogSource(
            MemoryTree.of(project=str(tree)), watch=False, scorer="fielded", cache_path=None
        )
        try:
            catalog.snapshot()
            if settle:
                assert catalog.settle(120)
            found = prepare_recall(catalog, ENGLISH_QUESTION)
        finally:
            held.set()
            catalog.close()
    finally:
        default_turns.cache_clear()
    return [d.title for d in found.fallback], [d.title for d in found.fast]


@pytest.mark.skipif(e5_embedder() is None, reason="the bundled model does not load here")
def test_the_runtime_finds_a_note_in_another_language_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    words, words_fast = _candidates(tmp_path, monkeypatch, "off")
    both, both_fast = _candidates(tmp_path, monkeypatch, None)  # the default
    assert words[0] == both[0] == "Release freeze"
    assert "Plazo de reembolsos" not in words
    assert "Plazo de reembolsos" in both
    assert words_fast == both_fast


@pytest.mark.skipif(e5_embedder() is None, reason="the bundled model does not load here")
def test_the_first_snapshot_ranks_by_the_words_until_the_passages_are_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    words, _ = _candidates(tmp_path, monkeypatch, "off")
    at_once, _ = _candidates(tmp_path, monkeypatch, "on", settle=False)
    settled, _ = _candidates(tmp_path, monkeypatch, "on")
    assert at_once == words
    assert settled != words
