"""The blind-set script's ``--compare`` (scripts/blind_sets_table.py): which cases it names as
changed between two dumps of what was selected, and what it counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import pytest

from memrecall.tooling.evaluation import CaseResult, Metrics, Report


@pytest.fixture(scope="module")
def table(import_script: Callable[[str], ModuleType]) -> ModuleType:
    return import_script("blind_sets_table")


TALK: dict[str, Any] = {"relevant": [], "top": None}
_METRICS = Metrics(0, None, None, None, None, None)
_REPORT = Report("c", 0, "fielded", 0.0, _METRICS, _METRICS, {}, 0.0, 0.0, ())
QUESTION: dict[str, Any] = {"relevant": ["new", "old"], "top": "new"}


@pytest.mark.parametrize(
    ("case", "was", "now", "expected"),
    [
        (TALK, ["a"], [], ["small talk silenced"]),
        (TALK, [], ["a"], ["small talk answered again"]),
        (TALK, ["a"], ["b", "c"], []),
        (QUESTION, ["old", "new"], ["new", "old"], ["question gained top-1"]),
        (QUESTION, ["new"], ["x", "new"], ["question lost top-1"]),
        (QUESTION, ["new"], ["new", "old"], ["question gained in top five"]),
        (
            QUESTION,
            ["new", "old"],
            ["a", "b", "c", "d", "e", "new"],
            ["question lost in top five", "question lost top-1"],
        ),
        (QUESTION, ["a", "new"], ["b", "new"], []),
        ({"relevant": ["m"], "top": None}, ["m"], ["x", "m"], []),
    ],
)
def test_a_case_is_named_for_each_way_its_outcome_moved(
    table: ModuleType, case: dict[str, Any], was: list[str], now: list[str], expected: list[str]
) -> None:
    assert table._changes(case, was, now) == expected


def test_the_comparison_names_changed_cases_of_each_set_and_counts_them(
    table: ModuleType, tmp_path: Path
) -> None:
    cases = json.loads((table.BLIND / "set-25.json").read_text("utf-8"))["cases"]
    talk = next(c for c in cases if not c["relevant"])
    question = next(c for c in cases if c["top"])
    before = {"set-25.json": {talk["id"]: ["x"], question["id"]: [question["top"]]}}
    after = {"set-25.json": {talk["id"]: [], question["id"]: [question["top"]]}}
    lines = table.compare(before, after)
    assert lines == [
        f"set-25.json: {talk['id']} small talk silenced",
        "set-25.json: small talk silenced 1",
    ]
    assert table.compare(before, before) == ["set-25.json: no change"]
    dump = tmp_path / "a.json"
    dump.write_text(json.dumps(before), "utf-8")
    table.main(["--compare", str(dump), str(dump)])


def test_the_writers_languages_count_silent_talk_and_silent_questions_apart(
    table: ModuleType,
) -> None:
    own = [
        {"id": "talk-1", "relevant": [], "lang": "pt"},
        {"id": "talk-3", "relevant": [], "lang": "pt"},
        {"id": "ans-1", "relevant": ["m"], "lang": "pt"},
        {"id": "ans-3", "relevant": ["m"], "lang": "pt"},
        {"id": "talk-5", "relevant": [], "lang": "ru"},
        {"id": "talk-7", "relevant": []},
    ]
    dumped = {"s": {"talk-1": [], "talk-3": ["m"], "ans-1": [], "ans-3": ["m"], "talk-5": ["x"]}}
    assert table._by_writers_language({"s": own}, dumped) == [
        "| s | pt | 2 | 50.0 | 1 / 2 | 50.0 |",
        "| s | ru | 1 | 0.0 | 0 / 0 | n/a |",
    ]


def test_the_fast_totals_count_a_sets_own_cases_only(table: ModuleType) -> None:
    own = [
        {"id": "ans-1", "relevant": ["m", "n"]},
        {"id": "ans-2", "relevant": ["m"]},
        {"id": "ans-3", "relevant": ["m"]},
        {"id": "talk-1", "relevant": []},
    ]
    results = (
        CaseResult("ans-1", ("m", "x"), ("m", "x")),  # two delivered, one relevant: a hit
        CaseResult("ans-2", ("x",), ("x",)),  # one delivered, wrong: no hit
        CaseResult("ans-3", (), ()),  # nothing delivered
        CaseResult("talk-1", ("y",), ("y",)),  # small talk: delivered, never relevant
        CaseResult("corpus-case", ("m",), ("m",)),  # the corpus's own: not counted
    )
    report = attrs.evolve(_REPORT, results=results)
    assert table._fast_totals(report, own) == (4, 1, 3, 1)
