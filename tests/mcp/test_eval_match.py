"""`memrecall eval --match` prints the match judgement's per-class scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrecall.cli import main

CORPUS = str(Path(__file__).resolve().parents[1] / "fixtures" / "recall-eval.json")


def test_eval_match_prints_three_classes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--corpus", CORPUS, "--match"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["class", "precision", "recall", "gold", "predicted"]
    assert [line.split()[0] for line in out[2:]] == ["none", "weak", "strong"]


def test_eval_without_match_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--corpus", CORPUS]) == 0
    assert "precision  recall" not in capsys.readouterr().out
