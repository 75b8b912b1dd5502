"""The script that readies new labelled turns for the turn reader (scripts/turns_dedup.py):
what it drops as too close to an evaluation query or to a labelled turn, and what it keeps."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def dedup(import_script: Callable[[str], ModuleType]) -> ModuleType:
    return import_script("turns_dedup")


def _first_line(path: Path) -> str:
    text: str = json.loads(path.read_text("utf-8").splitlines()[0])["text"]
    return text


def test_turns_near_the_evaluation_or_the_training_are_dropped(
    dedup: ModuleType,
    import_script: Callable[[str], ModuleType],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = import_script("blind_dedup")
    asked = json.loads((FIXTURES / "recall-eval.json").read_text("utf-8"))["cases"][0]["query"]
    trained = _first_line(sorted((FIXTURES / "turns").glob("*.jsonl"))[0])
    # a prefix holding about half of an evaluation query's bigrams: over the evaluation's bound,
    # under the turns' (so only the evaluation's drops it)
    folded = text.folded(asked)
    whole = text.bigrams(folded)
    half = next(
        folded[:n]
        for n in range(2, len(folded))
        if 0.45 <= len(text.bigrams(folded[:n])) / len(whole) <= 0.55
    )
    assert not dedup.Seen([asked]).close(half)
    rows = [
        {"text": half, "label": "talk", "lang": "en"},
        {"text": trained.upper(), "label": "memory", "lang": "en"},
        {"text": "naming ideas for my pet tortoise Zebulon", "label": "talk", "lang": "en"},
        {"text": "naming ideas for my pet tortoise Zebulon?", "label": "talk", "lang": "en"},
        {"text": "who approves prod deploys for billing-relay", "label": "memory", "lang": "en"},
        {"text": "an unlabelled turn of its own", "label": "other", "lang": "en"},
    ]
    source = tmp_path / "new.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    out = tmp_path / "x.jsonl"
    dedup.main([str(source), "--out", str(out)])
    kept = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert kept == [rows[2], rows[4]]
    printed = capsys.readouterr().out.splitlines()
    assert "en talk: 1 kept, 2 dropped" in printed
    assert "en memory: 1 kept, 1 dropped" in printed


def test_the_evaluation_bound_is_looser_than_the_turns_bound(dedup: ModuleType) -> None:
    seen = dedup.Seen(["abcdefghij"], close=dedup.NEAR_EVALUATION)
    assert seen.close("abcdefgXYZ")  # 6 of 12 bigrams shared: 0.5
    assert not dedup.Seen(["abcdefghij"]).close("abcdefgXYZ")
