"""The semantic turn reader's weights (memrecall/engine/scoring/turn_semantic.json).

Used by ``scripts/train_turn_model.py``: a logistic model over each labelled turn's
multilingual-e5-small embedding and the lexical model's log-odds for it (held out, so the
weights learn what the lexical model gets wrong), fitted by Newton's method with L2 on the
standardised embedding (deterministic: no sampling), cross-validated in five folds for
the cutoff, and written with the standardisation folded into the weights.

With ``network=True`` (``train_turn_model.py --network``), a network of one hidden layer
(:data:`HIDDEN` tanh units) over the same inputs instead, fitted by full-batch Adam from a
seeded start with weight decay and a learning rate that falls to zero along a cosine (no
sampling, no shuffling; noise of 1e-5 on every embedding moves no held-out probability by
more than about 0.007, where a constant rate moved some by 0.3), the standardisation
folded into its first layer. It separates better in cross-validation but is not shipped:
docs/decisions.md, "A network reader, measured".
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
HIDDEN = 32
"""The network's tanh units."""
DECAY = 1e-2
"""The network's weight decay (on both layers' weights, not the biases)."""
EPOCHS = 300
RATE = 0.01
"""Adam's learning rate at the first step; it falls to zero along a cosine by the last."""
ODDS_SCALE = 5.0
"""The lexical log-odds enter the network divided by this (they span about ±14, the
standardised embedding's values about ±3)."""
SEED = 18
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


def _network(
    x: Array,
    y: Array,
    *,
    hidden: int = HIDDEN,
    decay: float = DECAY,
    epochs: int = EPOCHS,
    cosine: bool = True,
) -> list[Array]:
    """The network's parameters (first layer, its biases, output weights, output bias),
    fitted by full-batch Adam from a seeded start (``cosine``: the rate falls from
    :data:`RATE` to zero along a cosine; otherwise it stays at :data:`RATE`)."""
    rng = np.random.default_rng(SEED)
    params = [
        rng.normal(0.0, 1.0 / np.sqrt(x.shape[1]), (x.shape[1], hidden)),
        np.zeros(hidden),
        rng.normal(0.0, 1.0 / np.sqrt(hidden), hidden),
        np.zeros(1),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, epochs + 1):
        w1, b1, w2, b2 = params
        h = np.tanh(x @ w1 + b1)
        error = (1.0 / (1.0 + np.exp(-(h @ w2 + b2[0]))) - y) / len(y)
        back = np.outer(error, w2) * (1 - h * h)
        grads = [
            x.T @ back + decay * w1,
            back.sum(0),
            h.T @ error + decay * w2,
            error.sum(keepdims=True),
        ]
        rate = RATE * (0.5 * (1 + np.cos(np.pi * step / epochs)) if cosine else 1.0)
        for i, g in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * g
            second[i] = 0.999 * second[i] + 0.001 * g * g
            mean, var = first[i] / (1 - 0.9**step), second[i] / (1 - 0.999**step)
            params[i] = params[i] - rate * mean / (np.sqrt(var) + 1e-8)
    return params


def _predict(params: list[Array], x: Array) -> Array:
    w1, b1, w2, b2 = params
    result: Array = 1.0 / (1.0 + np.exp(-(np.tanh(x @ w1 + b1) @ w2 + b2[0])))
    return result


def probabilities(fields: dict[str, Any], vectors: Array, odds: Array) -> Array:
    """The reader's probability of small talk for each row of ``vectors`` (embeddings) and
    ``odds`` (the lexical model's log-odds), by the weights file's ``fields`` (either
    shape of :class:`~memrecall.engine.scoring.turn_semantic.SemanticWeights`)."""
    if fields.get("hidden"):
        rows = np.array(fields["hidden"], dtype=np.float64)
        d = rows.shape[1] - 2
        units = np.tanh(vectors @ rows[:, :d].T + np.outer(odds, rows[:, d]) + rows[:, d + 1])
        z = units @ np.array(fields["output"], dtype=np.float64) + float(fields["bias"])
    else:
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
    *,
    network: bool = False,
) -> dict[str, Any]:
    """The weights file's fields (``held``: each turn's held-out lexical probability;
    ``spared``: the cutoff rule over held-out workplace questions' probabilities at a rate
    of false talk; ``rates``: the rates of the cutoff and of the ``plain`` one; ``network``:
    the one-hidden-layer reader instead of the logistic one)."""
    y = np.array(labels, dtype=np.float64)
    mean = vectors.mean(axis=0)
    scale = vectors.std(axis=0) + 1e-6
    odds = np.array([logit(p) for p in held])
    if network:
        x = np.hstack([(vectors - mean) / scale, odds[:, None] / ODDS_SCALE])
        fields = _folded_network(_network(x, y), mean, scale)
        predictor: Callable[[Array, Array], Callable[[Array], Array]] = _network_predictor
    else:
        x = np.hstack([(vectors - mean) / scale, odds[:, None], np.ones((len(y), 1))])
        fields = _folded_linear(_newton(x, y), mean, scale)
        predictor = _linear_predictor
    return fields | _cross_validated(x, y, predictor, spared, rates)


def _linear_predictor(x: Array, y: Array) -> Callable[[Array], Array]:
    w = _newton(x, y)
    return lambda q: np.asarray(1.0 / (1.0 + np.exp(-(q @ w))))


def _network_predictor(x: Array, y: Array) -> Callable[[Array], Array]:
    params = _network(x, y)
    return lambda q: _predict(params, q)


def held_out(
    x: Array, y: Array, predictor: Callable[[Array, Array], Callable[[Array], Array]]
) -> Array:
    """Each row's probability by ``predictor`` fitted on the other four folds (by position:
    row ``i`` is in fold ``i % 5``)."""
    folds = np.arange(len(y)) % 5
    out = np.zeros(len(y))
    for fold in range(5):
        train = folds != fold
        out[~train] = predictor(x[train], y[train])(x[~train])
    return out


def _cross_validated(
    x: Array,
    y: Array,
    predictor: Callable[[Array, Array], Callable[[Array], Array]],
    spared: Callable[[list[float], float], float],
    rates: tuple[float, float],
) -> dict[str, Any]:
    """The cutoffs from five folds (by position) and the held-out talk read at the first."""
    out_of_fold = held_out(x, y, predictor)
    questions = [float(p) for p in out_of_fold[y == 0]]
    question_cutoff = spared(questions, rates[0])
    recall = float(np.mean(out_of_fold[y == 1] >= question_cutoff))
    print(
        f"semantic five-fold: {100 * recall:.1f}% of small talk at the cutoff "
        f"{question_cutoff} (at most 1% of workplace questions)"
    )
    return {
        "question_cutoff": question_cutoff,
        "plain_question_cutoff": spared(questions, rates[1]),
        "held_out_talk_recall": round(recall, 4),
    }


def _folded_linear(w: Array, mean: Array, scale: Array) -> dict[str, Any]:
    """The logistic weights on the raw embedding (the standardisation folded in)."""
    d = len(mean)
    bias = float(w[d + 1] - np.sum(w[:d] * mean / scale))
    return {
        "weights": [round(float(x), DECIMALS) for x in w[:d] / scale],
        "lexical": round(float(w[d]), DECIMALS),
        "bias": round(bias, DECIMALS),
    }


def _folded_network(params: list[Array], mean: Array, scale: Array) -> dict[str, Any]:
    """The network's rows on the raw embedding and the raw log-odds."""
    w1, b1, w2, b2 = params
    d = len(mean)
    # unit j reads Σᵢ w1[i, j]·(eᵢ − meanᵢ)/scaleᵢ + w1[d, j]·odds/ODDS_SCALE + b1[j]
    first = w1[:d] / scale[:, None]
    shifts = b1 - mean @ first
    hidden = [
        [
            *(round(float(v), DECIMALS) for v in first[:, j]),
            round(float(w1[d, j] / ODDS_SCALE), DECIMALS),
            round(float(shifts[j]), DECIMALS),
        ]
        for j in range(w1.shape[1])
    ]
    return {
        "weights": [],
        "lexical": 0.0,
        "bias": round(float(b2[0]), DECIMALS),
        "hidden": hidden,
        "output": [round(float(v), DECIMALS) for v in w2],
    }
