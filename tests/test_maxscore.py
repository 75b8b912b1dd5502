"""The floor's shortcut (MaxScore) changes which documents are scored, never a result.

``FieldedIndex._scored(query, floor=True)`` leaves out documents that cannot reach
the weak floor: query terms whose best possible contributions together stay under
it only add to documents the other terms matched. Everything a caller sees (the
ranked matches with their scores and judgements, the fast result) must equal the
index without the shortcut, bit for bit, and the shortcut must actually skip work
where a word is in every document.

The shortcut runs where a pool is judged on its own scale: pools as large as
``Params.fitted_pool`` or larger (a smaller one is judged on the calibration corpus's scale
and scored whole). These pools are small, so they are judged on their own scale here.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import QueryTerm
from memrecall.engine.scoring.fielded import FieldedIndex, Params
from memrecall.events.documents import MemoryDocument
from tests.factories import memory

from .test_variant_scoring import _pools, _queries

OWN_SCALE = Params(fitted_pool=1)


def _without_shortcut(pool: list[MemoryDocument]) -> FieldedIndex:
    index = FieldedIndex.of(pool, params=OWN_SCALE)

    def nothing_optional(selected: Sequence[QueryTerm], mass: float) -> set[int]:
        return set()

    index._optional = nothing_optional  # type: ignore[method-assign]
    return index


@settings(max_examples=150, deadline=None)
@given(
    pool=_pools(),
    queries=st.lists(_queries, min_size=1, max_size=4),
    limit=st.integers(1, 8),
)
def test_results_equal_the_index_without_the_shortcut(
    pool: list[MemoryDocument], queries: list[str], limit: int
) -> None:
    index = FieldedIndex.of(pool, params=OWN_SCALE)
    plain = _without_shortcut(pool)
    for query in queries * 2:  # the second round is served from the caches
        assert index._ranked(query, (), limit, floor=True) == plain._ranked(
            query, (), limit, floor=True
        )
        assert index.rank_and_fast(query, limit) == plain.rank_and_fast(query, limit)
        assert index.judge(query, limit) == plain.judge(query, limit)
        assert index.fast(query) == plain.fast(query)
        kept, mass, terms, _ = index._scored(query, floor=True)
        full, full_mass, full_terms, _ = plain._scored(query, floor=True)
        assert (mass, terms) == (full_mass, full_terms)
        assert kept.keys() <= full.keys()
        lowest = index._floor(mass) * (1 - 1e-9)
        assert {i: v for i, v in full.items() if v >= lowest} == {
            i: v for i, v in kept.items() if v >= lowest
        }


def test_a_word_in_every_document_only_adds_to_what_the_rare_words_matched() -> None:
    pool = [
        memory(f"Note {i}", "history note", "history of the deployment notes", name=f"d{i}")
        for i in range(40)
    ]
    pool.append(memory("Quokka", "history note", "the quokka runbook history", name="rare"))
    index = FieldedIndex.of(pool, params=OWN_SCALE)
    selected, mass, _ = index.query_terms("quokka history")
    assert index._optional(selected, mass) == {1}  # "history" cannot reach the floor alone
    kept, _, _, _ = index._scored("quokka history", floor=True)
    assert list(kept) == [len(pool) - 1]  # only the document the rare word matched
    full, _, _, _ = _without_shortcut(pool)._scored("quokka history", floor=True)
    assert len(full) == len(pool)
    assert kept[len(pool) - 1] == full[len(pool) - 1]


def test_an_inflected_word_in_every_document_is_looked_up_with_its_credit() -> None:
    # "deploying" is in no document: it counts through its variants, each with a credit,
    # and each document keeps its best credited variant, as the merged postings would.
    pool = [
        memory(
            f"Release {i}",
            "deployed by the team" if i % 2 else "deployment record",
            "deploy notes" if i % 3 else "deployed deployment",
            name=f"d{i}",
        )
        for i in range(60)
    ]
    pool += [memory("Quokka deploy", "quokka deployed", "quokka", name=f"q{i}") for i in range(3)]
    index = FieldedIndex.of(pool, params=OWN_SCALE)
    plain = _without_shortcut(pool)
    query = "quokka deploying"
    selected, mass, _ = index.query_terms(query)
    assert index._optional(selected, mass) == {1}
    assert index._ranked(query, (), 5, floor=True) == plain._ranked(query, (), 5, floor=True)
    assert index._merged.get("deploying") is None  # looked up per document, never merged
    kept, _, _, _ = index._scored(query, floor=True)
    full, _, _, _ = plain._scored(query, floor=True)
    assert sorted(kept) == list(range(60, 63))
    assert {i: full[i] for i in kept} == kept
