"""The script that readies a new blind set (scripts/blind_dedup.py): which turns it drops as
too close to what the project holds, how it numbers what it keeps, and what it carries over."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


@pytest.fixture(scope="module")
def dedup(import_script: Callable[[str], ModuleType]) -> ModuleType:
    return import_script("blind_dedup")


def _case(number: int, query: str, *, talk: bool = True) -> dict[str, Any]:
    kind = "talk" if talk else "ans"
    return {
        "id": f"{kind}-99x-{number:03d}",
        "query": query,
        "relevant": [] if talk else ["m99x-en-01"],
        "top": None if talk else "m99x-en-01",
        "slice": "small-talk-heldout-99" if talk else "answerable-heldout-99",
        "lang": "en",
    }


def test_close_turns_are_dropped_and_kept_ones_numbered_odd(
    dedup: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = json.loads(
        (Path(__file__).parent / "fixtures" / "recall-eval.json").read_text("utf-8")
    )
    held = corpus["cases"][0]["query"]
    memory = {"id": "m99x-en-01", "title": "Lunch", "description": "", "body": "Soup on Fridays."}
    new = {
        "documents": [memory],
        "cases": [
            _case(1, f"  {held.upper()}  "),  # the same once folded
            _case(2, "what would you cook for a rainy sunday with friends"),
            _case(3, "what would you cook for a rainy sunday with friend"),  # close to 2
            _case(4, "when is soup day at the office canteen?", talk=False),
        ],
    }
    source = tmp_path / "new.json"
    source.write_text(json.dumps(new), "utf-8")
    out = tmp_path / "set-99.json"
    dedup.main([str(source), "--out", str(out)])
    written = json.loads(out.read_text("utf-8"))
    assert written["documents"] == [memory]
    assert [c["id"] for c in written["cases"]] == ["talk-99x-003", "ans-99x-007"]
    assert [c["query"] for c in written["cases"]] == [
        new["cases"][1]["query"],
        new["cases"][3]["query"],
    ]
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "answerable-heldout-99: 1 kept, 0 dropped",
        "small-talk-heldout-99: 1 kept, 2 dropped",
    ]


def test_closeness_is_the_bigram_jaccard_index(dedup: ModuleType) -> None:
    seen = dedup.Seen(["abcdef"])
    assert seen.close("ABCDEF")
    assert seen.close("abcdefg")  # 5 of 6 bigrams shared
    assert not seen.close("abcxyz")  # 2 of 8
    assert not seen.close("zzzz")
