"""Common Thai words weigh as common words in a query (memrecall.engine.scoring.thai_words)."""

from __future__ import annotations

import unicodedata

import regex
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import query_candidates, sea_terms
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.thai_words import _LONGEST, THAI_COMMON, common_trigrams
from tests.factories import memory

CLUSTER = regex.compile(r"\X")


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _weights(query: str) -> dict[str, tuple[float, bool]]:
    return {qt.term: (qt.weight, qt.common) for qt in query_candidates(query) if qt.kind == "sea"}


def test_the_pieces_of_common_words_are_common_and_the_topic_is_not() -> None:
    # "how do I resize many image files at once on a Mac": many, at once, how are common
    weights = _weights("จะ resize รูปหลายไฟล์พร้อมกันบน Mac ทำยังไง")
    for word in ("หลาย", "พร้อมกัน"):
        pieces = sea_terms(_nfkc(word))
        assert pieces
        assert all(weights[p][1] and weights[p][0] < 1.0 for p in pieces if p in weights)
    assert weights[_nfkc("ไฟล์")] == (1.0, False)


def test_a_trigram_that_also_stands_among_other_words_keeps_its_weight() -> None:
    # หลาย (many) alone is common; in หลายสาขา and again as a word of its own here
    # its pieces are common, but the run หลา also opens หลาน (grandchild) in the other line
    gram = _nfkc("หลา")
    assert _weights("หลายไฟล์")[gram][1]
    assert not _weights("หลายไฟล์\nหลานชาย")[gram][1]


def test_every_common_word_is_found_by_the_longest_match() -> None:
    sizes = [len(CLUSTER.findall(word)) for word in THAI_COMMON]
    assert max(sizes) <= _LONGEST
    for word in THAI_COMMON:  # each word alone is marked whole (a one-cluster word is no term)
        clusters = CLUSTER.findall(word)
        if len(clusters) >= 3:
            assert common_trigrams([clusters]) == {
                "".join(clusters[i : i + 3]) for i in range(len(clusters) - 2)
            }


def test_a_run_of_two_clusters_that_is_a_common_word_is_common() -> None:
    assert common_trigrams([CLUSTER.findall(_nfkc("ได้"))]) == {_nfkc("ได้")}
    assert common_trigrams([CLUSTER.findall(_nfkc("ไฟล์"))[:2]]) == frozenset()


THAI = st.text(
    alphabet=st.characters(min_codepoint=0x0E01, max_codepoint=0x0E5B), min_size=0, max_size=30
)


@given(st.lists(THAI, max_size=4))
def test_only_trigrams_of_the_runs_are_ever_common(runs: list[str]) -> None:
    split = [CLUSTER.findall(_nfkc(run)) for run in runs]
    found = common_trigrams(split)
    every = {"".join(c[i : i + 3]) for c in split for i in range(len(c) - 2)}
    every |= {"".join(c) for c in split if len(c) == 2}
    assert found <= every
    words = [w for w in THAI_COMMON if len(CLUSTER.findall(w)) >= 2]
    if not any(w in _nfkc(run) for w in words for run in runs):
        assert found == frozenset()


def test_a_how_to_sharing_only_common_thai_words_gets_no_memory() -> None:
    # the memory: "the branches send their sales report together every Monday"
    pool = [
        memory("รายงานยอดขาย", "หลายสาขาส่งรายงานยอดขายพร้อมกันทุกวันจันทร์", name="sales"),
        memory("Release dashboard", "Grafana board of the release train", name="release"),
    ]
    index = FieldedIndex.of(pool)
    assert index.rank("จะ resize รูปหลายไฟล์พร้อมกันบน Mac ทำยังไง", 5) == []
    # "which day do the sales reports go out?" still finds it
    assert index.rank("รายงานยอดขายส่งวันไหน", 5) == [0]
