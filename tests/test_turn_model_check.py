"""The turn models' check (scripts/train_turn_model.py --check): the labelled turns by their
fingerprint, exactly; the semantic reader by what it reads, within a tolerance that a refit
on another processor stays inside (docs/decisions.md, "The turn models' check")."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from importlib import resources
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from memrecall.engine.scoring.turn_model import sigmoid
from memrecall.engine.scoring.turn_semantic import SemanticWeights


@pytest.fixture(scope="module")
def trainer(import_script: Callable[[str], ModuleType]) -> ModuleType:
    return import_script("train_turn_model")


def _shipped(name: str) -> dict[str, Any]:
    text = resources.files("memrecall.engine.scoring").joinpath(name).read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


ROWS = [("hello there", 1, "en"), ("who is on call?", 0, "en"), ("今日は暑いね", 1, "ja")]


def test_the_fingerprint_follows_every_text_label_language_and_the_order(
    trainer: ModuleType,
) -> None:
    base = trainer.fingerprint(ROWS)
    assert trainer.fingerprint(list(ROWS)) == base
    changed = [
        [("hello there!", 1, "en"), *ROWS[1:]],
        [("hello there", 0, "en"), *ROWS[1:]],
        [("hello there", 1, "de"), *ROWS[1:]],
        [ROWS[1], ROWS[0], ROWS[2]],
        ROWS[:2],
        [("hello", 1, "en"), ("there", 1, "en"), *ROWS[1:]],
    ]
    assert len({trainer.fingerprint(rows) for rows in changed} | {base}) == len(changed) + 1


@pytest.mark.parametrize("name", ["turn_model.json", "turn_semantic.json"])
def test_both_shipped_files_were_fitted_on_the_labelled_turns_as_they_are(
    trainer: ModuleType, name: str
) -> None:
    assert _shipped(name)["provenance"]["turns_sha256"] == trainer.fingerprint(trainer._load())


@pytest.fixture(scope="module")
def inputs() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(400, 384))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    # log-odds that put the shipped reader's probabilities all over (0, 1), as on real turns
    shipped = _shipped("turn_semantic.json")
    aimed = rng.normal(0.0, 3.0, size=400)
    reached = vectors @ np.array(shipped["weights"]) + shipped["bias"]
    return vectors, (aimed - reached) / shipped["lexical"]


def _moved(weights: dict[str, Any], by: float, seed: int = 0) -> dict[str, Any]:
    moved = copy.deepcopy(weights)
    rng = np.random.default_rng(seed)
    moved["weights"] = [w + rng.normal(0.0, by) for w in weights["weights"]]
    return moved


def test_a_refit_that_moved_in_the_last_digits_is_current(
    trainer: ModuleType, inputs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    shipped = _shipped("turn_semantic.json")
    assert trainer._same_semantic(shipped, copy.deepcopy(shipped), inputs)
    assert "is 0.00000" in capsys.readouterr().out
    assert trainer._same_semantic(shipped, _moved(shipped, 1e-4), inputs)
    one_step = copy.deepcopy(shipped)
    one_step["cutoff"] = round(shipped["cutoff"] - 0.01, 2)
    assert trainer._same_semantic(shipped, one_step, inputs)


def test_weights_that_read_differently_are_not_current(trainer: ModuleType, inputs: Any) -> None:
    shipped = _shipped("turn_semantic.json")
    assert not trainer._same_semantic(shipped, _moved(shipped, 0.05), inputs)
    lexical = copy.deepcopy(shipped)
    lexical["lexical"] = shipped["lexical"] + 0.5
    assert not trainer._same_semantic(shipped, lexical, inputs)
    for key in ("cutoff", "plain"):
        far = copy.deepcopy(shipped)
        far[key] = round(shipped[key] - 0.02, 2)
        assert not trainer._same_semantic(shipped, far, inputs), key


def test_weights_fitted_on_other_turns_are_not_current(trainer: ModuleType, inputs: Any) -> None:
    shipped = _shipped("turn_semantic.json")
    other = copy.deepcopy(shipped)
    other["provenance"]["turns_sha256"] = trainer.fingerprint(ROWS)
    assert not trainer._same_semantic(shipped, other, inputs)
    lexical = _shipped("turn_model.json")
    relabelled = copy.deepcopy(lexical)
    relabelled["provenance"]["turns_sha256"] = trainer.fingerprint(ROWS)
    assert trainer._same(lexical, copy.deepcopy(lexical))
    assert not trainer._same(lexical, relabelled)


def test_the_check_reads_either_shape_as_the_runtime_does(trainer: ModuleType) -> None:
    semantic_turns = sys.modules["semantic_turns"]  # imported by the training script
    rng = np.random.default_rng(5)
    vectors, odds = rng.normal(size=(20, 4)), rng.normal(0.0, 3.0, size=20)
    shapes = [
        {"weights": [0.5, -1.0, 2.0, 0.1], "lexical": 0.7, "bias": -0.3},
        {
            "weights": [],
            "lexical": 0.0,
            "bias": 0.2,
            "hidden": rng.normal(size=(3, 6)).tolist(),
            "output": [1.5, -2.0, 0.5],
        },
    ]
    for fields in shapes:
        weights = SemanticWeights(**fields, cutoff=0.9)
        runtime = [
            sigmoid(weights.score(list(v), float(o))) for v, o in zip(vectors, odds, strict=True)
        ]
        checked = semantic_turns.probabilities(fields, vectors, odds)
        assert np.allclose(checked, runtime, rtol=0.0, atol=1e-12)
