"""What a candidate rule would do, measured: give nothing to a turn the reader leans to call
small talk when no memory ranked for it is strong and the best explains little of it.

    uv run python scripts/low_share_rule.py

Every blind set is joined to the corpus (as the pooled lines of ``blind_sets_table.py``);
each case is ranked once with the shipped ``fielded`` scorer and reader
(``FieldedIndex.matches``, the first five not judged none). For each (coverage bound,
reader bound) the rule would leave a case with nothing when the reader's probability is at
least the reader bound, no kept memory is strong and the best kept coverage is under the
coverage bound. Printed per pair, for the blind sets' cases and for the corpus's own: the
small-talk turns it would silence, the Recall@5 it would cost (summed over questions), the
top-1 it would cost, and the questions it would leave with nothing. Measured for issue 18
(docs/evaluation.md, blind set 26). One pair ships, in the reader's lean towards small talk
(coverage under :attr:`~memrecall.engine.scoring.features.Params.low_share`, reader from
:data:`~memrecall.engine.scoring.turn_semantic.LEAN`): the table is measured over what the
shipped ranking keeps, so it shows what each pair would silence beyond that one.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement
from memrecall.sources.turn_reader import default_turns
from memrecall.tooling.evaluation import load_corpus

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
COVERAGE = (0.12, 0.14, 0.16, 0.18, 0.20)
READER = (0.5, 0.7, 0.81, 0.85, 0.9)


@attrs.frozen
class Ranked:
    """One case as ranked: its labels, the reader's probability, and what was kept."""

    blind: bool
    relevant: frozenset[str]
    top: str | None
    probability: float
    kept: tuple[tuple[str, bool, float], ...]
    """(document id, judged strong, coverage), best first."""


def ranked() -> list[Ranked]:
    """Every case of the corpus and the blind sets, ranked once."""
    blind = sorted((FIXTURES / "blind").glob("set-*.json"))
    corpus = load_corpus(FIXTURES / "recall-eval.json", extra=blind)
    from_blind = {case["id"] for path in blind for case in json.loads(path.read_text())["cases"]}
    turns = default_turns()
    index = FieldedIndex.of(corpus.documents, turns=turns)
    out = []
    for case in corpus.cases:
        kept = tuple(
            (corpus.ids[m.index], m.judgement is Judgement.STRONG, m.coverage)
            for m in index.matches(case.query, limit=5)
            if m.judgement is not Judgement.NONE
        )
        probability = turns.probability(case.query) if kept else 0.0
        out.append(
            Ranked(case.id in from_blind, frozenset(case.relevant), case.top, probability, kept)
        )
    return out


def silenced(case: Ranked, coverage: float, reader: float) -> bool:
    """Whether the rule would leave ``case`` with nothing (it has something now)."""
    return (
        bool(case.kept)
        and case.probability >= reader
        and not any(strong for _, strong, _ in case.kept)
        and max(c for _, _, c in case.kept) < coverage
    )


def costs(cases: list[Ranked], coverage: float, reader: float) -> tuple[int, float, int, int]:
    """Small talk silenced, Recall@5 lost (summed), top-1 lost, questions left with nothing."""
    talk, recall, top1, questions = 0, 0.0, 0, 0
    for case in cases:
        if not silenced(case, coverage, reader):
            continue
        if not case.relevant:
            talk += 1
            continue
        questions += 1
        found = case.relevant & {doc for doc, _, _ in case.kept}
        recall += len(found) / len(case.relevant)
        top1 += case.top is not None and case.kept[0][0] == case.top
    return talk, recall, top1, questions


def main() -> None:
    """Print the table."""
    cases = ranked()
    print(
        "| coverage under | reader at least | part | talk silenced | Recall@5 lost "
        "| top-1 lost | questions left with nothing |"
    )
    print("|--:|--:|---|--:|--:|--:|--:|")
    for coverage in COVERAGE:
        for reader in READER:
            for part, blind in (("blind sets", True), ("corpus", False)):
                talk, recall, top1, questions = costs(
                    [c for c in cases if c.blind is blind], coverage, reader
                )
                print(
                    f"| {coverage:.2f} | {reader:.2f} | {part} | {talk} | {recall:.1f} "
                    f"| {top1} | {questions} |"
                )


if __name__ == "__main__":
    main()
