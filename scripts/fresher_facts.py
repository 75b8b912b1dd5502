"""Why a newer note does not come first: each recency question of the blind sets, by the
condition of the fresher-facts rule that fails (issue 18).

    uv run python scripts/fresher_facts.py [--sets set-30.json ...]

Each set is joined to the corpus as ``tests/test_blind_sets.py`` joins it and ranked by
``fielded`` as ``memrecall eval`` ranks (the passages embedded). For every question of the
set's own recency slice whose first memory is not the current note (``top``), the first
reason in this order: nothing recalled; another memory first (neither note of the pair); the
newer note not among the first :attr:`Params.subject_window`; the two written less than
:attr:`Params.subject_gap` days apart; not one subject (words under :attr:`Params.doubt`, one
title with words under :attr:`Params.subject`, or passages' cosine under
:attr:`Params.subject_cosine`); else one subject, and the question's words or scores keep the
older note first (the agreement or the ratio of
:func:`~memrecall.engine.scoring.time_rules.move_newer_up`). Prints the counts per set, then
each question with its pair's figures. Takes a few minutes (every turn and passage is
embedded).
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from pathlib import Path

from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.time_rules import DAY
from memrecall.sources.turn_reader import remembering
from memrecall.tooling.evaluation import SCORERS, Case, Corpus, load_corpus
from tests.test_blind_sets import JOINED

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
SETS = (
    "set-5.json",
    "set-6.json",
    "set-7.json",
    "set-8.json",
    "set-14.json",
    "set-29.json",
    "set-30.json",
)


def reason(index: FieldedIndex, corpus: Corpus, case: Case) -> tuple[str, str]:
    """Why ``case``'s current note is not first (``ok`` when it is): the reason, and the
    pair's figures where it got that far."""
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    params = index.params
    ranked = index.rank(case.query, params.subject_window)
    assert case.top is not None
    newer = position[case.top]
    if ranked[:1] == [newer]:
        return "ok", ""
    if not ranked:
        return "nothing recalled", ""
    first = ranked[0]
    if corpus.ids[first] not in case.relevant:
        return "another memory first", ""
    if newer not in ranked:
        return "the newer note not among the first", ""
    written = [corpus.documents[i].mtime for i in (first, newer)]
    if abs(written[0] - written[1]) < params.subject_gap * DAY:
        return "written less than subject_gap apart", ""
    shared = index.similarity(first, newer)
    a, b = index.passage(first), index.passage(newer)
    cosine = math.fsum(x * y for x, y in zip(a, b, strict=True)) if a and b else math.nan
    figures = f"words {shared:.3f}, cosine {cosine:.3f}"
    if index.same_subject(first, newer):
        return "one subject; the question's words keep the older first", figures
    if shared < params.doubt:
        return "not one subject: words under doubt", figures
    first_title, newer_title = (
        DocumentFeatures.of(corpus.documents[i]).handles[1] for i in (first, newer)
    )
    if first_title == newer_title:
        return "not one subject: one title", figures
    return "not one subject: cosine under subject_cosine", figures


def main(argv: list[str] | None = None) -> None:
    """Print the counts per set, then the questions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), metavar="FILE")
    args = parser.parse_args(argv)
    details: list[str] = []
    with remembering():
        for name in args.sets:
            corpus = load_corpus(
                FIXTURES / "recall-eval.json",
                extra=[FIXTURES / "blind" / f for f in JOINED.get(name, [name])],
            )
            own = {c["id"] for c in json.loads((FIXTURES / "blind" / name).read_text())["cases"]}
            index = SCORERS["fielded"](corpus.documents)
            assert isinstance(index, FieldedIndex)
            counts: Counter[str] = Counter()
            for case in corpus.cases:
                if case.id not in own or not case.slice.startswith("recency"):
                    continue
                why, figures = reason(index, corpus, case)
                counts[why] += 1
                if why != "ok":
                    details.append(
                        f"{name} {case.id}: {why}" + (f" ({figures})" if figures else "")
                    )
            print(f"{name}: " + "; ".join(f"{why} {n}" for why, n in counts.most_common()))
    print()
    print("\n".join(details))


if __name__ == "__main__":
    main()
