"""Drop a new blind set's turns that are too close to text the project already holds (issue 18).

    uv run python scripts/blind_dedup.py NEW.json [MORE.json ...] --out set-N.json

A blind set must be new to everything the rankers and the turn reader were built on. A turn is
dropped when, once folded (NFKC, lower case, spaces collapsed), it equals or is close by
character bigrams (Jaccard at least 0.6) to a labelled training or candidate turn
(``tests/fixtures/turns*/``), a query of the evaluation corpus, a case of an existing blind
set, or an earlier turn of the new set. The kept cases are written to ``--out`` in their
order, with the counts printed per slice; each case's number n becomes 2n - 1 (``talk-33a-007``
becomes ``talk-33a-013``), as the blind sets' ids are odd: ``memrecall calibrate`` fits on
even ids only. A new file is a list of cases, or an object with
``documents`` (memories of the set's own, kept as they are) and ``cases``.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
CLOSE = 0.6


def folded(text: str) -> str:
    """The text compared: NFKC, lower case, runs of spaces as one."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def bigrams(text: str) -> frozenset[str]:
    """The text's character bigrams (its one character for a text of one)."""
    return frozenset(text[i : i + 2] for i in range(max(1, len(text) - 1)))


def labelled_turns(out: Path | None = None) -> Iterator[str]:
    """The text of every labelled turn: training and candidate turns (not ``out``'s)."""
    for path in sorted(FIXTURES.glob("turns*/**/*.jsonl")):
        if out is None or path.resolve() != out.resolve():
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)["text"]


def evaluation_queries(out: Path | None = None) -> Iterator[str]:
    """Every query of the evaluation corpus and of the blind sets (not ``out``'s)."""
    for path in [FIXTURES / "recall-eval.json", *sorted((FIXTURES / "blind").glob("set-*.json"))]:
        if out is None or path.resolve() != out.resolve():
            yield from (case["query"] for case in json.loads(path.read_text("utf-8"))["cases"])


def known_texts(out: Path) -> Iterator[str]:
    """Every turn the project holds: training and candidate turns, corpus and blind queries."""
    yield from labelled_turns()
    yield from evaluation_queries(out)


class Seen:
    """Texts seen so far, indexed by bigram so that a close one is found without a full scan."""

    def __init__(self, texts: Iterable[str], *, close: float = CLOSE) -> None:
        self._bound = close
        """The Jaccard index from which two texts are close."""
        self._exact: set[str] = set()
        self._grams: list[frozenset[str]] = []
        self._by_gram: defaultdict[str, list[int]] = defaultdict(list)
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """Remember one text."""
        text = folded(text)
        self._exact.add(text)
        grams = bigrams(text)
        for gram in grams:
            self._by_gram[gram].append(len(self._grams))
        self._grams.append(grams)

    def close(self, text: str) -> bool:
        """Whether ``text`` equals a seen text once folded, or is close to one by bigrams."""
        text = folded(text)
        if text in self._exact:
            return True
        grams = bigrams(text)
        shared: Counter[int] = Counter()
        for gram in grams:
            shared.update(self._by_gram.get(gram, ()))
        bound = self._bound
        return any(n / (len(grams) + len(self._grams[i]) - n) >= bound for i, n in shared.items())


def main(argv: list[str] | None = None) -> None:
    """Write the kept cases and print what was dropped."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("new", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    seen = Seen(known_texts(args.out))
    kept, documents, dropped = [], [], Counter[str]()
    for path in args.new:
        new = json.loads(path.read_text("utf-8"))
        if isinstance(new, dict):  # a set with memories of its own
            documents.extend(new["documents"])
            new = new["cases"]
        for case in new:
            if seen.close(case["query"]):
                dropped[case["slice"]] += 1
                continue
            seen.add(case["query"])
            prefix, number = case["id"].rsplit("-", 1)
            kept.append({**case, "id": f"{prefix}-{2 * int(number) - 1:03d}"})
    args.out.write_text(
        json.dumps({"documents": documents, "cases": kept}, ensure_ascii=False, indent=1) + "\n",
        "utf-8",
    )
    counts = Counter(case["slice"] for case in kept)
    for name in sorted(counts.keys() | dropped.keys()):
        print(f"{name}: {counts[name]} kept, {dropped[name]} dropped")


if __name__ == "__main__":
    main()
