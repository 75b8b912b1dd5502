"""The semantic turn reader's weights (memrecall/engine/scoring/turn_semantic.json).

Used by ``scripts/train_turn_model.py``: a logistic model over each labelled turn's
multilingual-e5-small embedding and the lexical model's log-odds for it (held out, so the
weights learn what the lexical model gets wrong), fitted by Newton's method with L2 on the
standardised embedding (deterministic: no sampling), cross-validated in five folds for
the cutoff, and written with the standardisation folded into the weights.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memrecall.engine.scoring.turn_semantic import Embedder, logit

L2 = 100.0
"""On the standardised embedding's weights (not the log-odds', not the bias)."""
NEWTON_STEPS = 25
DECIMALS = 6

Array = npt.NDArray[np.float64]


def _newton(a: Array, y: Array) -> Array:
    penalty = np.r_[np.full(a.shape[1] - 2, L2), 0.0, 0.0]
    w = np.zeros(a.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        gradient = a.T @ (p - y) + penalty * w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        w -= np.linalg.solve(hessian, gradient)
    return w


def probabilities(fields: dict[str, Any], vectors: Array, odds: Array) -> Array:
    """The reader's probability of small talk for each row of ``vectors`` (embeddings) and
    ``odds`` (the lexical model's log-odds), by the weights file's ``fields``."""
    weights = np.array(fields["weights"], dtype=np.float64)
    z = vectors @ weights + float(fields["lexical"]) * odds + float(fields["bias"])
    result: Array = 1.0 / (1.0 + np.exp(-z))
    return result


def embed_all(texts: Sequence[str], embed: Embedder) -> Array:
    """The embeddings of ``texts``, one row each."""
    return np.array([list(embed(t)) for t in texts], dtype=np.float64)


def fit(
    vectors: Array,
    held: Sequence[float],
    labels: Sequence[int],
    spared: Callable[[list[float], float], float],
    rates: tuple[float, float],
) -> dict[str, Any]:
    """The weights file's fields (``held``: each turn's held-out lexical probability;
    ``spared``: the cutoff rule over held-out workplace questions' probabilities at a rate
    of false talk; ``rates``: the rates of the cutoff and of the ``plain`` one)."""
    y = np.array(labels, dtype=np.float64)
    mean = vectors.mean(axis=0)
    scale = vectors.std(axis=0) + 1e-6
    odds = np.array([logit(p) for p in held])
    a = np.hstack([(vectors - mean) / scale, odds[:, None], np.ones((len(y), 1))])
    folds = np.arange(len(y)) % 5
    out_of_fold = np.zeros(len(y))
    for fold in range(5):
        train = folds != fold
        w = _newton(a[train], y[train])
        out_of_fold[~train] = 1.0 / (1.0 + np.exp(-(a[~train] @ w)))
    questions = [float(p) for p, label in zip(out_of_fold, labels, strict=True) if not label]
    question_cutoff = spared(questions, rates[0])
    plain_cutoff = spared(questions, rates[1])
    talk = [float(p) for p, label in zip(out_of_fold, labels, strict=True) if label]
    recall = sum(p >= question_cutoff for p in talk) / len(talk)
    print(
        f"semantic five-fold: {100 * recall:.1f}% of small talk at the cutoff "
        f"{question_cutoff} (at most 1% of workplace questions)"
    )
    w = _newton(a, y)
    d = vectors.shape[1]
    weights = w[:d] / scale
    bias = float(w[d + 1] - np.sum(w[:d] * mean / scale))
    return {
        "weights": [round(float(x), DECIMALS) for x in weights],
        "lexical": round(float(w[d]), DECIMALS),
        "bias": round(bias, DECIMALS),
        "question_cutoff": question_cutoff,
        "plain_question_cutoff": plain_cutoff,
        "held_out_talk_recall": round(recall, 4),
    }
