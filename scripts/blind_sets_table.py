"""The blind sets of issue 18 (tests/fixtures/blind/), measured as the tests measure them.

    uv run python scripts/blind_sets_table.py

Prints, for ``fielded``, each blind slice's Recall@5, top-1, small-talk silence, fast
precision and fast outdated (each set joined to the corpus as ``tests/test_blind_sets.py``
joins it), then the small talk of every set pooled: every blind set joined at once, the
share of off-topic turns that get nothing, and the share of silent turns that were right
to be silent (no-result precision over all the sets' cases).
"""

from __future__ import annotations

import json
from pathlib import Path

from memrecall.tooling.evaluation import evaluate, load_corpus
from tests.test_blind_sets import JOINED

FIXTURES = Path(__file__).parent.parent / "tests" / "fixtures"
BLIND = FIXTURES / "blind"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _sets() -> list[str]:
    return sorted((p.name for p in BLIND.glob("set-*.json")), key=lambda n: int(n[4:-5]))


def main() -> None:
    """Print the tables."""
    print("| slice | Recall@5 | top-1 | small talk silent | fast precision | fast outdated |")
    print("|---|--:|--:|--:|--:|--:|")
    for name in _sets():
        corpus = load_corpus(
            FIXTURES / "recall-eval.json", extra=[BLIND / f for f in JOINED.get(name, [name])]
        )
        own = {case["slice"] for case in json.loads((BLIND / name).read_text("utf-8"))["cases"]}
        report = evaluate(corpus, "fielded")
        for slice_name in sorted(own):
            m = report.slices[slice_name]
            cells = (m.recall_at_5, m.top1, m.no_result_recall, m.fast_precision, m.fast_outdated)
            print(f"| {slice_name} | " + " | ".join(_percent(c) for c in cells) + " |")
    everything = load_corpus(FIXTURES / "recall-eval.json", extra=[BLIND / n for n in _sets()])
    report = evaluate(everything, "fielded")
    blind = {
        case["id"]: bool(case["relevant"])
        for name in _sets()
        for case in json.loads((BLIND / name).read_text("utf-8"))["cases"]
    }
    silent = {r.id for r in report.results if r.id in blind and not r.selected}
    talk = [i for i, answerable in blind.items() if not answerable]
    right = sum(1 for i in talk if i in silent)
    wrong = sum(1 for i, answerable in blind.items() if answerable and i in silent)
    print()
    print(
        f"pooled, every blind set joined: small talk silent {right} of {len(talk)} "
        f"({_percent(right / len(talk))}%); questions silent {wrong} of "
        f"{len(blind) - len(talk)}; no-result precision {_percent(right / (right + wrong))}%"
    )


if __name__ == "__main__":
    main()
