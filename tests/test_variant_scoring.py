"""Vocabulary-level variant scoring gives exactly the scores of the per-document loop it replaced.

The oracle below is the former ``FieldedIndex._score``: for every query term it
walked the postings of each matching index term (the term itself and its
inflected forms) one document at a time, keeping each document's best credited
value. The index now merges those postings once per pool and term in C-level
passes; scores, ranking, judgements and the fast result must not change by a bit.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import query_terms
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.events.documents import MemoryDocument
from tests.factories import memory

# Stems with inflections (variants of each other), near misses that are not variants,
# and words every document may share, so merged postings overlap and ties happen.
_WORDS = [
    "deploy", "deploys", "deployed", "deploying", "deployment", "deployments",
    "charge", "charged", "charges", "charging", "history", "histories", "historic",
    "owner", "owners", "ownership", "box", "boxes", "colony", "colour", "tea", "team",
    "магазин", "магазины", "gelöscht", "geloscht", "note", "notes", "staging",
]  # fmt: skip


def _oracle(index: FieldedIndex, query: str) -> tuple[dict[int, float], float]:
    """The per-document scoring loop the index used before (kept as the reference)."""
    scores: dict[int, float] = {}
    mass = 0.0
    idf_max = index._idf_max
    postings = index._term_postings
    for qt in query_terms(query):
        idf = index._idf(qt.term)
        mass += qt.weight * (idf_max if idf is None else idf)
        keys = index._keys(qt.term, qt.kind)
        if not keys:
            continue
        weight = qt.weight
        if len(keys) == 1 and keys[0][1] == 1.0:
            docs, values = postings(keys[0][0])
            for doc, value in zip(docs, values, strict=True):
                scores[doc] = scores.get(doc, 0.0) + weight * value
            continue
        best: dict[int, float] = {}
        for key, credit in keys:
            docs, values = postings(key)
            for doc, value in zip(docs, values, strict=True):
                credited = value * credit
                if credited > best.get(doc, 0.0):
                    best[doc] = credited
        for doc, value in best.items():
            scores[doc] = scores.get(doc, 0.0) + weight * value
    return scores, min(mass, index.params.saturation * idf_max)


def _doc(i: int, title: str, description: str, body: str, mtime: int) -> MemoryDocument:
    return memory(title, description, body, name=f"d{i}", mtime=float(mtime))


@st.composite
def _pools(draw: st.DrawFn) -> list[MemoryDocument]:
    words = st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join)
    size = draw(st.integers(1, 30))
    return [
        _doc(i, draw(words), draw(words), draw(words), draw(st.integers(0, 3))) for i in range(size)
    ]


_queries = st.lists(
    st.one_of(st.sampled_from(_WORDS), st.from_regex(r"[a-zа-я]{3,11}", fullmatch=True)),
    min_size=1,
    max_size=6,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(pool=_pools(), queries=st.lists(_queries, min_size=1, max_size=4))
def test_scores_equal_the_per_document_oracle(
    pool: list[MemoryDocument], queries: list[str]
) -> None:
    index = FieldedIndex.of(pool)
    for query in queries * 2:  # the second round is served from the index's caches
        assert index._score(query) == _oracle(index, query)


@settings(max_examples=60, deadline=None)
@given(pool=_pools(), query=_queries)
def test_rank_judgement_and_fast_result_follow_the_oracle_scores(
    pool: list[MemoryDocument], query: str
) -> None:
    index = FieldedIndex.of(pool)
    expected, _ = _oracle(index, query)
    matches = index.matches(query)
    assert {m.index: m.score for m in matches} == {i: v for i, v in expected.items() if v > 0}
    ranked = index.rank(query, 5)
    assert ranked == [m.index for m in index._ranked(query, (), 5, floor=True)]
