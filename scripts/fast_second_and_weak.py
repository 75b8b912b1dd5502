"""Three rules measured and not shipped (issue 18, docs/evaluation.md, 6 December 2026, a
third session), counted over the blind sets as their tests join them.

    uv run python scripts/fast_second_and_weak.py

* **The fast result's second document**, by why it is there: the newer version of the first
  (``Match.newer``), a memory on the first one's subject (``same_subject``), or another strong
  memory scoring at least ``Params.second`` of the first (split at 0.9 of its score); for
  each, how many are relevant to the question (questions only).
* **A weak first memory under a passage cosine bar**: of the turns whose ranking holds no
  strong memory, those whose first memory's passage is under 0.80 near the turn: small talk
  that would be silenced, and questions with a relevant memory in their five that would lose
  it (sets 5 to 33).
* **Names only**: of the turns whose first memory is weak and holds a name of the turn the pool
  knows, those where no ranked memory holds any other topical term of the turn (sets 5 to 33).

Takes about a minute with the embeddings kept (``MEMRECALL_KEEP_EMBEDDINGS``).
"""

from __future__ import annotations

import operator
from collections import Counter
from pathlib import Path

from memrecall.engine.scoring.analysis import analyze, query_words
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement
from memrecall.engine.scoring.turn_words import names
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import Corpus
from tests.test_blind_sets import _own_cases

BLIND = Path(__file__).parent.parent / "tests" / "fixtures" / "blind"
BAR = 0.80
HELD_OUT = 34
"""Sets before this one are those no choice of the session was made on."""


def _sets() -> list[str]:
    return sorted((p.name for p in BLIND.glob("set-*.json")), key=lambda n: int(n[4:-5]))


def _counts(corpus: Corpus, held_out: bool, out: Counter[str]) -> None:
    turns = default_turns()
    index = FieldedIndex.of(corpus.documents, turns=turns, passage=passage_embedder(wanted=True))
    for case in corpus.cases:
        ranked, fast = index.rank_and_fast(case.query, 5)
        question = bool(case.relevant)
        if question and len(fast) > 1:
            first, second = fast[0], fast[1]
            matched = {m.index: m for m in index.matches(case.query, limit=10)}
            if first in matched and matched[first].newer == second:
                why = "update of the first"
            elif index.same_subject(first, second):
                why = "on the first one's subject"
            elif first in matched and second in matched:
                ratio = matched[second].score / matched[first].score
                why = f"another strong memory, {'at least' if ratio >= 0.9 else 'under'} 0.9 of it"
            else:
                why = "another strong memory"
            relevant = "relevant" if corpus.ids[second] in case.relevant else "not"
            out[f"second: {why}: {relevant}"] += 1
        if not ranked or not held_out:
            continue
        judged = dict(index.judge(case.query, 5))
        if any(j is Judgement.STRONG for j in judged.values()) or not judged:
            continue
        relevant_in_five = any(corpus.ids[i] in case.relevant for i in ranked)
        kind = "question losing a relevant memory" if relevant_in_five else None
        kind = "small talk silenced" if not question else kind
        turn = turns.embed(case.query)
        vector = index.passage(ranked[0])
        if vector is not None and sum(map(operator.mul, turn, vector)) < BAR and kind:
            out[f"weak first under {BAR}: {kind}"] += 1
        if judged.get(ranked[0]) is not Judgement.WEAK:
            continue
        terms, _, pasted = index.query_terms(case.query)
        if pasted:
            continue
        named = {
            term
            for name in names(case.query, query_words(case.query))
            for kind_, term in analyze(name)
            if kind_ == "word"
        }

        def holds(term: str, kind_: str, i: int) -> bool:
            return i in index._credited(term, kind_)[0]

        first = ranked[0]
        if not any(qt.term in named and holds(qt.term, qt.kind, first) for qt in terms):
            continue
        others = [qt for qt in terms if not qt.common and qt.term not in named]
        unexplained = not any(holds(qt.term, qt.kind, i) for qt in others for i in ranked)
        if kind and others and unexplained:
            out[f"names only: {kind}"] += 1


def main() -> None:
    """Print the counts."""
    out: Counter[str] = Counter()
    with remembering():
        for name in _sets():
            _counts(_own_cases(name), int(name[4:-5]) < HELD_OUT, out)
    for key in sorted(out):
        print(f"{key}: {out[key]}")


if __name__ == "__main__":
    main()
