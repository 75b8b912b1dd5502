"""Score the ``match`` judgement against a labelled corpus (the eval-corpus contract).

Every (case, document) pair of a corpus gets a gold class and a predicted one:

* gold: ``strong`` for the case's ``top`` document (or, without a ``top``, every
  relevant document); ``weak`` for the other relevant documents; ``none`` for
  the rest of the pool;
* predicted: the ``match`` that recall judges for that document (computed for
  every document in the pool, not only the printed rows).

Documents become records: ``user`` -> preference, ``feedback`` -> lesson,
``project`` -> fact, ``reference`` -> pointer; body = description + body; one
tag, the document type. Each case's ``exclude`` is removed from its pool.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from memrecall.tooling.evaluation import Corpus, load_corpus
from memrecall.tools.contract.constants import ScoreConfig
from memrecall.tools.contract.recall import RecallIndex
from memrecall.tools.contract.records import MemoryRecord
from memrecall.tools.contract.scoring import Match, judge_match, printed
from memrecall.tools.contract.tokenize import query_token_list

__all__ = [
    "ClassScore",
    "MatchReport",
    "corpus_records",
    "format_report",
    "score_match",
    "score_match_file",
]

_KIND_OF_TYPE = {
    "user": "preference",
    "feedback": "lesson",
    "project": "fact",
    "reference": "pointer",
}


class ClassScore(msgspec.Struct, frozen=True, kw_only=True):
    """Precision and recall of one class (``None`` when nothing was predicted / labelled)."""

    precision: float | None
    recall: float | None
    gold: int
    predicted: int
    correct: int


class MatchReport(msgspec.Struct, frozen=True, kw_only=True):
    """Per-class scores over every (case, document) pair, and the confusion counts."""

    corpus: str
    pairs: int
    classes: dict[str, ClassScore]
    confusion: dict[str, dict[str, int]]
    """``confusion[gold][predicted]``."""


def corpus_records(corpus: Corpus) -> list[MemoryRecord]:
    """The corpus documents as records, in pool order."""
    return [
        MemoryRecord(
            id=doc_id,
            kind=_KIND_OF_TYPE[doc.type.value],
            title=doc.title,
            body=f"{doc.description}\n{doc.body}",
            tags=(doc.type.value,),
            source=f"file:{doc.relative_path}",
            created_at=doc.mtime,
            updated_at=doc.mtime,
        )
        for doc_id, doc in zip(corpus.ids, corpus.documents, strict=True)
    ]


def score_match(corpus: Corpus, config: ScoreConfig | None = None) -> MatchReport:
    """Precision and recall of strong/weak/none over the corpus (see the module docstring)."""
    cfg = config or ScoreConfig()
    records = corpus_records(corpus)
    shared = RecallIndex(records, cfg)
    labels = [m.value for m in Match]
    confusion = {g: dict.fromkeys(labels, 0) for g in labels}
    pairs = 0
    for case in corpus.cases:
        if case.exclude:
            excluded = set(case.exclude)
            index = RecallIndex([r for r in records if r.id not in excluded], cfg)
        else:
            index = shared
        rel, content = index.relevance(query_token_list(case.query))
        relevant = set(case.relevant)
        for record, value in zip(index.records, rel, strict=True):
            if record.id in relevant:
                gold = Match.STRONG if case.top in (None, record.id) else Match.WEAK
            else:
                gold = Match.NONE
            predicted = judge_match(printed(value), content, cfg)
            confusion[gold.value][predicted.value] += 1
            pairs += 1
    classes = {}
    for label in labels:
        correct = confusion[label][label]
        gold_n = sum(confusion[label].values())
        predicted_n = sum(confusion[g][label] for g in labels)
        classes[label] = ClassScore(
            precision=correct / predicted_n if predicted_n else None,
            recall=correct / gold_n if gold_n else None,
            gold=gold_n,
            predicted=predicted_n,
            correct=correct,
        )
    return MatchReport(corpus=corpus.name, pairs=pairs, classes=classes, confusion=confusion)


def score_match_file(path: str | Path, config: ScoreConfig | None = None) -> MatchReport:
    """:func:`score_match` on a corpus file (raises ``CorpusError`` for a bad file)."""
    return score_match(load_corpus(path), config)


def format_report(report: MatchReport) -> str:
    """A readable table of the per-class scores."""

    def pct(value: float | None) -> str:
        return "   n/a" if value is None else f"{value:6.1%}"

    lines = [f"corpus {report.corpus}: {report.pairs} (case, document) pairs"]
    lines.append("class   precision  recall   gold  predicted")
    for label, score in report.classes.items():
        lines.append(
            f"{label:<7} {pct(score.precision):>9}  {pct(score.recall):>6} {score.gold:>6}"
            f" {score.predicted:>10}"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - manual use until `memrecall eval` wires it
    import sys

    print(format_report(score_match_file(sys.argv[1])))
