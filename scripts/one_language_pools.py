"""Blind sets 34 to 38 with each language alone in its pool (issue 18).

    uv run python scripts/one_language_pools.py [--sets 34 35 ...] [--fitted-pool N]
        [--scorer NAME] [--turns]

Sets 34 to 38 give every writer's language sixteen memories of its own, with its questions and
small talk written in it. ``tests/test_blind_sets.py`` joins each set to the corpus, as a
pool of some 250 memories in many languages; the issue's held-out pools are one person's
tree in one language. Here each language's memories are a pool of their own (sixteen
documents) and only that language's turns are asked. Printed per language, then pooled: the
small talk left silent, the questions left silent, no-result precision (the share of silent
turns that were small talk), and the questions whose first memory is their ``top`` and those
with a relevant memory in their five. ``--fitted-pool`` sets ``Params.fitted_pool`` (the
scale coverage and evidence are judged on; 1 judges each pool on its own scale), ``--scorer``
one of ``memrecall eval``'s (``fielded`` by default), and ``--turns`` lists the small talk
that gets a memory and the questions left silent. Last, the languages that meet the issue's
target for small talk (:func:`meets_target`).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

from memrecall.engine.scoring.fielded import FieldedIndex, Params
from memrecall.sources.turn_reader import background_passage_embedder, default_turns
from memrecall.tooling import evaluation
from memrecall.tooling.evaluation import evaluate
from tests.test_one_language_pools import pools

SETS = (34, 35, 36, 37, 38)
TARGET_SILENT = 0.9
TARGET_PRECISION = 0.95
"""Issue 18's target for small talk, per language: the share of it left silent, and the share
of silent turns that were small talk."""


def meets_target(row: list[int]) -> bool:
    """Whether one language's counts (:func:`main`'s row) meet :data:`TARGET_SILENT` and
    :data:`TARGET_PRECISION`; a language with no small talk or no silent turn does not."""
    talk, quiet, _questions, unanswered = row[:4]
    if not talk or not quiet:
        return False
    return quiet >= TARGET_SILENT * talk and quiet >= TARGET_PRECISION * (quiet + unanswered)


def _percent(part: int, whole: int) -> str:
    return "n/a" if not whole else f"{100 * part / whole:.1f}"


def main(argv: list[str] | None = None) -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, nargs="+", default=list(SETS))
    parser.add_argument("--fitted-pool", type=int, default=None)
    parser.add_argument("--scorer", default="fielded")
    parser.add_argument("--turns", action="store_true")
    args = parser.parse_args(argv)
    scorer = args.scorer
    if args.fitted_pool is not None:
        params = Params(fitted_pool=args.fitted_pool)
        scorer = f"fielded, fitted_pool={args.fitted_pool}"
        evaluation.SCORERS[scorer] = lambda documents: FieldedIndex.of(
            documents, turns=default_turns(), passage=background_passage_embedder(), params=params
        )
    # per language: talk, talk silent, questions, questions silent, top-1, any relevant in 5
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    listed = []
    for name, lang, corpus in pools(tuple(args.sets)):
        report = evaluate(corpus, scorer)
        cases = {c.id: c for c in corpus.cases}
        row = totals[lang]
        for result in report.results:
            case = cases[result.id]
            if not case.relevant:
                row[0] += 1
                row[1] += not result.selected
                if result.selected:
                    listed.append(f"{name} {lang} small talk answered: {case.query!r}")
                continue
            row[2] += 1
            row[3] += not result.selected
            row[4] += bool(result.selected) and result.selected[0] == case.top
            row[5] += bool(set(result.selected) & set(case.relevant))
            if not result.selected:
                listed.append(f"{name} {lang} question left silent: {case.query!r}")
    names = ", ".join(f"set-{n}" for n in args.sets)
    print(f"scorer: {scorer}; each language of {names} alone in its pool\n")
    print(
        "| language | small talk | silent | questions | silent | no-result precision | top-1"
        " | relevant in 5 |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|")
    every = [0] * 6
    for lang, row in sorted(totals.items()):
        every = [a + b for a, b in zip(every, row, strict=True)]
        print(_row(lang, row))
    print(_row("all", every))
    meeting = [lang for lang, row in sorted(totals.items()) if meets_target(row)]
    print(
        f"\nthe issue's target (small talk at least {TARGET_SILENT:.0%} silent at no-result"
        f" precision at least {TARGET_PRECISION:.0%}): {len(meeting)} languages"
        f" ({', '.join(meeting) or 'none'})"
    )
    if args.turns:
        print("\n" + "\n".join(listed))


def _row(label: str, row: list[int]) -> str:
    talk, quiet, questions, unanswered, top, found = row
    return (
        f"| {label} | {talk} | {_percent(quiet, talk)} | {questions} | {unanswered} | "
        f"{_percent(quiet, quiet + unanswered)} | {_percent(top, questions)} | "
        f"{_percent(found, questions)} |"
    )


if __name__ == "__main__":
    main()
