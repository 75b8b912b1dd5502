"""Scoring recall's match judgement against a labelled corpus."""

from __future__ import annotations

from pathlib import Path

import attrs

from memrecall.tooling.evaluation import load_corpus, parse_corpus
from memrecall.tooling.matcheval import corpus_records, score_match, score_match_file
from memrecall.tools.contract.recall import recall
from memrecall.tools.contract.records import StoreStamp, StoreView

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recall-eval.json"


def doc(i: str, title: str) -> dict[str, object]:
    return {"id": i, "type": "project", "title": title, "description": "", "body": ""}


def test_per_class_precision_and_recall_on_a_small_corpus() -> None:
    corpus = parse_corpus(
        {
            "name": "tiny",
            "documents": [
                doc("a", "adb server restart steps"),
                doc("b", "postgres ledger migration"),
                doc("c", "flaky test quarantine rules"),
            ],
            "cases": [
                {
                    "id": "1",
                    "query": "adb server restart steps",
                    "relevant": ["a"],
                    "top": "a",
                    "slice": "english",
                },
                {"id": "2", "query": "kubernetes helm", "relevant": [], "slice": "no-result"},
            ],
        }
    )
    report = score_match(corpus)
    assert report.pairs == 6
    # case 1 names a exactly: strong; nothing else shares a word; case 2 matches nothing
    strong, none = report.classes["strong"], report.classes["none"]
    assert (strong.gold, strong.predicted, strong.correct) == (1, 1, 1)
    assert (strong.precision, strong.recall) == (1.0, 1.0)
    assert (none.gold, none.correct) == (5, 5)
    assert report.classes["weak"].recall is None


def test_the_project_corpus_is_scored_consistently_with_recall() -> None:
    report = score_match_file(FIXTURE)
    corpus = load_corpus(FIXTURE)
    assert report.pairs == sum(
        len(corpus.documents) - len(set(case.exclude)) for case in corpus.cases
    )
    for score in report.classes.values():
        for value in (score.precision, score.recall):
            assert value is None or 0 <= value <= 1
    # the predictions are recall's own judgements: spot-check the first case's printed rows
    records = tuple(corpus_records(corpus))
    case = next(c for c in corpus.cases if not c.exclude)
    result = recall(
        StoreView(records=records, max_bytes=10**9, stamp=StoreStamp(size=0, mtime_ms=0)),
        case.query,
        limit=50,
    )
    predicted_strong = sum(1 for row in result.rows if row.match == "strong")
    assert predicted_strong <= report.classes["strong"].predicted
    assert report.classes["strong"].gold >= 1


def test_the_confusion_counts_match_what_recall_prints() -> None:
    corpus = load_corpus(FIXTURE)
    records = corpus_records(corpus)
    stamp = StoreStamp(size=0, mtime_ms=0)
    kept = []
    counts: dict[tuple[str, str], int] = {}
    for case in corpus.cases[
        ::3
    ]:  # every third case: a sample of each slice, in a third of the time
        pool = tuple(r for r in records if r.id not in set(case.exclude))
        result = recall(StoreView(records=pool, max_bytes=10**9, stamp=stamp), case.query, limit=50)
        if result.candidates > 50:
            continue
        kept.append(case)
        printed = {row.id: str(row.match) for row in result.rows}
        for r in pool:
            gold = (
                "none"
                if r.id not in case.relevant
                else "strong"
                if case.top in (None, r.id)
                else "weak"
            )
            key = (gold, printed.get(r.id, "none"))
            counts[key] = counts.get(key, 0) + 1
    assert len(kept) >= 20  # enough cases whose every candidate fits in 50 rows
    report = score_match(attrs.evolve(corpus, cases=tuple(kept)))
    for gold, row in report.confusion.items():
        for predicted, n in row.items():
            assert n == counts.get((gold, predicted), 0)
