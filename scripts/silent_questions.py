"""Could the passages answer what the words leave silent? Measured, not shipped (issue 18).

    uv run python scripts/silent_questions.py

Every blind set is joined to the corpus and each case is ranked once by ``fielded`` with
every memory's passage embedded (``memrecall eval --scorer passages``). For the cases the
ranking leaves with nothing, a candidate rule would answer with the memory whose passage is
nearest the turn when the reader says the turn is a question (probability under a reader
bound) and that passage is near (cosine at least a bound). Printed per pair of bounds: the
questions it would answer, those of them whose nearest memory is relevant, and the small
talk it would answer. Takes a few minutes (every case's turn is embedded).
"""

from __future__ import annotations

import operator
from pathlib import Path

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import nearest
from memrecall.engine.scoring.turn_semantic import SemanticTurns
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import load_corpus
from memrecall.tooling.tables import markdown_table

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
READER = (0.05, 0.2, 0.4, 0.6)
COSINE = (0.82, 0.84, 0.86, 0.88)


def silent_cases() -> list[tuple[bool, bool, float, float]]:
    """``(is a question, nearest memory relevant, reader's probability, nearest cosine)``
    of each case the ranking leaves with nothing."""
    corpus = load_corpus(
        FIXTURES / "recall-eval.json", extra=sorted((FIXTURES / "blind").glob("set-*.json"))
    )
    turns = default_turns()
    if not isinstance(turns, SemanticTurns):
        raise SystemExit("the semantic turn reader is not installed here")
    index = FieldedIndex.of(corpus.documents, turns=turns, passage=passage_embedder(wanted=True))
    vectors = [index.passage(i) for i in range(len(corpus.documents))]
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    out = []
    for case in corpus.cases:
        exclude = [position[e] for e in case.exclude]
        if index.rank(case.query, 5, exclude=exclude):
            continue
        turn = turns.embed(case.query)
        (first,) = nearest(turn, vectors, exclude=exclude, depth=1)
        vector = vectors[first]
        assert vector is not None
        cosine = sum(map(operator.mul, turn, vector))
        relevant = corpus.ids[first] in case.relevant
        out.append((bool(case.relevant), relevant, turns.probability(case.query), cosine))
    return out


def main() -> None:
    """Print the table."""
    with remembering():
        cases = silent_cases()
    questions = sum(1 for question, *_ in cases if question)
    print(f"silent: {len(cases)} cases, {questions} questions, {len(cases) - questions} small talk")
    rows = []
    for reader in READER:
        for cosine in COSINE:
            taken = [c for c in cases if c[2] < reader and c[3] >= cosine]
            answered = [c for c in taken if c[0]]
            rows.append(
                (
                    f"{reader:.2f}",
                    f"{cosine:.2f}",
                    str(len(answered)),
                    str(sum(1 for c in answered if c[1])),
                    str(len(taken) - len(answered)),
                )
            )
    headers = ("reader under", "cosine at least", "questions answered", "nearest relevant")
    print("\n".join(markdown_table((*headers, "small talk answered"), rows, text_columns=0)))


if __name__ == "__main__":
    main()
