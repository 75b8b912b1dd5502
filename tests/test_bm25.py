"""The ``bm25`` baseline: Okapi BM25 over the reference scorer's tokens."""

from __future__ import annotations

import math

import pytest

from memrecall.engine.scoring.bm25 import BM25Index
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.events.documents import MemoryDocument
from memrecall.tooling.evaluation import SCORERS, evaluate, parse_corpus
from tests.factories import memory


def doc(title: str, body: str = "", *, description: str = "", mtime: float = 0.0) -> MemoryDocument:
    return memory(title, description, body, mtime=mtime)


# The textbook constants (Robertson and Zaragoza), written here, not imported from the code.
K1 = 1.2
B = 0.75


def okapi(tf: int, df: int, count: int, length: int, average: float) -> float:
    idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
    return idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))


def test_scores_follow_the_okapi_formula() -> None:
    pool = [doc("alpha beta"), doc("alpha gamma", "gamma")]
    index = BM25Index(pool)
    average = (2 + 3) / 2
    assert index.scores("gamma") == {1: pytest.approx(okapi(2, 1, 2, 3, average))}
    both = index.scores("alpha gamma")
    assert both[0] == pytest.approx(okapi(1, 2, 2, 2, average))
    assert both[1] == pytest.approx(okapi(1, 2, 2, 3, average) + okapi(2, 1, 2, 3, average))


def test_tokens_match_whole_never_inside_a_longer_word() -> None:
    index = BM25Index([doc("Service ownership map"), doc("Code owner approval")])
    assert index.rank("owner", 5) == [1]
    assert index.rank("ownership", 5) == [0]
    assert index.rank("own", 5) == []  # the reference scorer would match both


def test_reads_title_description_and_the_body_window_only() -> None:
    far = "x " * 700 + "kestrel"  # past the 1,200-unit window
    index = BM25Index([doc("a", description="kestrel notes"), doc("b", far)])
    assert index.rank("kestrel", 5) == [0]


def test_ties_go_to_the_newer_document_then_input_order() -> None:
    pool = [
        doc("deploy notes", mtime=1),
        doc("deploy notes", mtime=5),
        doc("deploy notes", mtime=5),
    ]
    assert BM25Index(pool).rank("deploy", 5) == [1, 2, 0]


def test_exclude_limit_and_empty_queries() -> None:
    pool = [doc(f"cache note {i}") for i in range(4)]
    index = BM25Index.of(pool)
    assert len(index.rank("cache", 2)) == 2
    assert 0 not in index.rank("cache", 5, exclude={0})
    assert index.rank("", 5) == []
    assert index.rank("ok", 5) == []  # no token of three letters


def test_registered_for_the_evaluation() -> None:
    assert SCORERS["bm25"] == BM25Index.of
    corpus = parse_corpus(
        {
            "name": "tiny",
            "documents": [
                {
                    "id": "d",
                    "type": "project",
                    "title": "Release deadline",
                    "description": "",
                    "body": "",
                },
                {"id": "g", "type": "reference", "title": "Grafana", "description": "", "body": ""},
            ],
            "cases": [{"id": "c", "query": "release deadline", "relevant": ["d"], "slice": "s"}],
        }
    )
    report = evaluate(corpus, "bm25")
    assert report.results[0].selected == ("d",)
    assert report.overall.fast_precision == 1.0


def test_repeating_a_term_saturates_at_k1_plus_one() -> None:
    # Every document is ten tokens long (so length normalisation is neutral): the term's score
    # grows with its count tf as (k1 + 1) tf / (tf + k1), from idf at tf = 1 towards (k1 + 1) idf.
    pool = [
        doc(" ".join(["alpha"] * tf + [f"filler{chr(97 + tf)}"] * (10 - tf))) for tf in range(1, 10)
    ]
    scores = BM25Index(pool).scores("alpha")
    ratios = [scores[tf - 1] / scores[0] for tf in range(1, 10)]
    assert ratios == pytest.approx([(K1 + 1) * tf / (tf + K1) for tf in range(1, 10)])
    assert ratios == sorted(ratios)
    assert ratios[-1] < K1 + 1


def test_a_longer_document_with_the_same_count_scores_lower() -> None:
    short, long = doc("alpha beta"), doc("alpha beta gamma delta epsilon zeta")
    scores = BM25Index([short, long]).scores("alpha")
    average = (2 + 6) / 2
    assert scores[1] < scores[0]
    assert scores[0] / scores[1] == pytest.approx(
        (1 + K1 * (1 - B + B * 6 / average)) / (1 + K1 * (1 - B + B * 2 / average))
    )


def test_the_fielded_scorer_saturates_repeated_title_words_with_k1() -> None:
    # BM25F: title occurrences weigh 3 (Params), then saturate as tf / (k1 + tf), k1 = 1.2.
    # Equal title lengths, so length normalisation is neutral; idf cancels in the ratio.
    pool = [doc("deploy deploy"), doc("deploy rota"), doc("rota quota"), doc("pager billing")]
    scores = {m.index: m.score for m in FieldedIndex.of(pool).matches("deploy")}
    title = 3.0
    twice, once = 2 * title, title
    assert scores[0] / scores[1] == pytest.approx((twice / (K1 + twice)) / (once / (K1 + once)))
