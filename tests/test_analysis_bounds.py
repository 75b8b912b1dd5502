"""One huge memory costs a bounded amount of analysis and cannot push the others out of the window.

Work is counted in characters handed to the analyser, not timed.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring import features as ranking
from memrecall.engine.scoring.analysis import term_counts
from memrecall.engine.scoring.fielded import (
    MAX_ANALYSED_CHARS,
    MAX_ANALYSED_HEADING_CHARS,
    DocumentFeatures,
)
from memrecall.events.documents import MemoryDocument, MemoryType
from memrecall.sources.source import StaticSource, prepare_recall
from tests.factories import memory

PER_DOCUMENT = MAX_ANALYSED_CHARS + 2 * MAX_ANALYSED_HEADING_CHARS


def _doc(name: str, title: str, description: str, body: str) -> MemoryDocument:
    return memory(title, description, body, name=name, kind=MemoryType.REFERENCE)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Lengths of every text the ``fielded`` analyser is given while the test runs."""
    lengths: list[int] = []
    real = term_counts

    def counting(text: str) -> dict[str, int]:
        lengths.append(len(text))
        return real(text)

    monkeypatch.setattr(ranking, "term_counts", counting)
    return lengths


def test_every_field_of_a_huge_document_is_analysed_only_up_to_its_bound(
    analysed: list[int],
) -> None:
    size = 10 * PER_DOCUMENT
    huge = _doc("log", "t" * size, "d " * size, "wörd Ärger " * size)
    features = DocumentFeatures.of(huge)
    assert sum(analysed) <= PER_DOCUMENT
    assert sum(features.lengths) > 0


@given(
    st.integers(min_value=2, max_value=60), st.sampled_from(["ascii log line ", "Ärger überall "])
)
def test_one_huge_memory_leaves_the_fast_result_of_a_small_matching_one(
    factor: int, filler: str
) -> None:
    lengths: list[int] = []
    real = term_counts

    def counting(text: str) -> dict[str, int]:
        lengths.append(len(text))
        return real(text)

    small = _doc(
        "deploy",
        "Staging deploy",
        "How to deploy the staging cluster with kubectl",
        "Run kubectl apply on the staging cluster.",
    )
    lunch = _doc("lunch", "Lunch", "Favourite lunch place", "The noodle bar.")
    huge = _doc(
        "log", "Pasted log", "a pasted log", filler * (factor * PER_DOCUMENT // len(filler))
    )
    setattr(ranking, "term_counts", counting)  # noqa: B010 (restored below, per example)
    try:
        candidates = prepare_recall(
            StaticSource((huge, small, lunch)), "how do I deploy staging with kubectl"
        )
    finally:
        setattr(ranking, "term_counts", real)  # noqa: B010
    assert [d.path for d in candidates.fast] == [small.path]
    assert sum(lengths) <= 3 * PER_DOCUMENT
