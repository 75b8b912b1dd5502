"""Fit the small-talk turn model (memrecall/engine/scoring/turn_model.json).

    uv run python scripts/train_turn_model.py [--check]

Reads the labelled turns in ``tests/fixtures/turns/*.jsonl`` (``{"text", "label": "talk" |
"memory", "lang"}``), reports five-fold cross-validated accuracy per language, fits a
logistic model on all of them (stochastic gradient descent with L2, in a seeded order,
so the result is the same on every run), then picks the cutoff as the corpus thresholds are
picked: the lowest probability from which holding back weak memories costs no fitted case
of ``tests/fixtures/recall-eval.json`` (even ids) any Recall@5. Writes the model with its
provenance; ``--check`` only says whether the shipped file is what this run gives.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.turn_model import MODEL_FILE, TurnModel, features
from memrecall.tooling.evaluation import LIMIT, load_corpus

ROOT = Path(__file__).parent.parent
TURNS = ROOT / "tests" / "fixtures" / "turns"
CORPUS = ROOT / "tests" / "fixtures" / "recall-eval.json"
OUT = ROOT / "memrecall" / "engine" / "scoring" / MODEL_FILE
EPOCHS = 20
RATE = 1.0
L2 = 1e-6
DECIMALS = 3
PRUNE = 0.01
"""Weights smaller than this are left out of the shipped file."""


def _load() -> list[tuple[str, int, str]]:
    rows = []
    for path in sorted(TURNS.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append((row["text"], int(row["label"] == "talk"), row.get("lang", "?")))
    return rows


def _fit(rows: list[tuple[dict[int, float], int]]) -> tuple[dict[int, float], float]:
    """Stochastic gradient descent on the log loss with L2, in a seeded order (the same
    weights on every run)."""
    weights: dict[int, float] = defaultdict(float)
    bias = 0.0
    order = list(range(len(rows)))
    shuffle = random.Random(18)
    for epoch in range(EPOCHS):
        shuffle.shuffle(order)
        rate = RATE / (1.0 + epoch / 4)
        for i in order:
            x, y = rows[i]
            z = bias + sum(weights[k] * v for k, v in x.items())
            p = 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))
            err = p - y
            bias -= rate * err
            for k, v in x.items():
                weights[k] -= rate * (err * v + L2 * weights[k])
    return dict(weights), bias


def _model(rows: list[tuple[str, int, str]], cutoff: float = 0.5) -> TurnModel:
    weights, bias = _fit([(features(t), y) for t, y, _ in rows])
    kept = {k: round(w, DECIMALS) for k, w in weights.items() if abs(w) >= PRUNE}
    return TurnModel(kept, round(bias, DECIMALS), cutoff)


def _cross_validate(rows: list[tuple[str, int, str]]) -> None:
    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for fold in range(5):
        train = [r for i, r in enumerate(rows) if i % 5 != fold]
        model = _model(train)
        for i, (text, label, lang) in enumerate(rows):
            if i % 5 == fold:
                right[lang][0] += int(model.is_talk(text) == bool(label))
                right[lang][1] += 1
    total = sum(r for r, _ in right.values()), sum(n for _, n in right.values())
    print(f"five-fold accuracy: {100 * total[0] / total[1]:.1f}% of {total[1]} turns")
    for lang in sorted(right):
        r, n = right[lang]
        print(f"  {lang}: {100 * r / n:.1f}% of {n}")


def _cutoff(model: TurnModel) -> float:
    """The lowest cutoff that costs no fitted corpus case any Recall@5."""
    corpus = load_corpus(CORPUS)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    fitted = [c for c in corpus.cases if c.relevant and int(c.id[-1]) % 2 == 0]

    def recall(cutoff: float) -> list[float]:
        index = FieldedIndex.of(
            corpus.documents, turns=TurnModel(model.weights, model.bias, cutoff)
        )
        out = []
        for case in fitted:
            exclude = {position[d] for d in case.exclude}
            got = {corpus.ids[i] for i in index.rank(case.query, LIMIT, exclude=exclude)}
            out.append(len(got & set(case.relevant)) / len(case.relevant))
        return out

    baseline = recall(2.0)
    best = 2.0
    for step in range(99, 49, -1):
        cutoff = step / 100
        if recall(cutoff) != baseline:
            break
        best = cutoff
    return best


def _same(shipped: dict[str, Any], fitted: dict[str, Any]) -> bool:
    """The same model up to the last rounded digit (``math.exp`` may differ in its last
    bit between C libraries)."""
    a = dict(zip(shipped["keys"], shipped["values"], strict=True))
    b = dict(zip(fitted["keys"], fitted["values"], strict=True))
    tolerance = 2 * 10**-DECIMALS
    return shipped["cutoff"] == fitted["cutoff"] and all(
        abs(a.get(k, 0.0) - b.get(k, 0.0)) <= tolerance for k in set(a) | set(b)
    )


def main(argv: list[str] | None = None) -> int:
    """Fit, calibrate and write (or check) the model."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="only compare with the shipped file (no CV)"
    )
    args = parser.parse_args(argv)
    rows = _load()
    if not args.check:
        _cross_validate(rows)
    model = _model(rows)
    cutoff = _cutoff(model)
    print(f"cutoff: {cutoff}")
    data: dict[str, Any] = {
        "bias": model.bias,
        "cutoff": cutoff,
        "keys": sorted(model.weights),
        "values": [model.weights[k] for k in sorted(model.weights)],
        "provenance": {
            "command": "uv run python scripts/train_turn_model.py",
            "turns": len(rows),
            "languages": sorted({lang for _, _, lang in rows}),
            "date": datetime.date.today().isoformat(),
            "note": "turns written for the model (tests/fixtures/turns), none from an "
            "evaluation set; cutoff: the lowest that costs no fitted corpus case (even id) "
            "any Recall@5",
        },
    }
    if args.check:
        same = _same(json.loads(OUT.read_text("utf-8")), data)
        print("shipped model is current" if same else "shipped model differs")
        return 0 if same else 1
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(model.weights)} weights")
    return 0


if __name__ == "__main__":
    sys.exit(main())
