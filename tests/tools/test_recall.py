"""memory_recall: ten columns, no bodies, hard row cap, absolute rel, recomputable match."""

from __future__ import annotations

import math
import re

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.tools.contract.constants import RECALL_COLUMNS, ScoreConfig
from memrecall.tools.contract.recall import recall
from memrecall.tools.contract.records import MemoryRecord
from memrecall.tools.contract.scoring import GateBranch

from .helpers import WORDS, record, records, texts, view

COLUMNS = "id | kind | title | tags | graph | via | rel | cov | match | score"


def recompute(text: str) -> list[tuple[str, str]]:
    """(printed match, match recomputed from the printed rel and header only) per row."""
    header, *rows = text.split("\n")
    strong = float(re.search(r"strong≥([0-9.]+)", header).group(1))  # type: ignore[union-attr]
    weak = float(re.search(r"weak≥([0-9.]+)", header).group(1))  # type: ignore[union-attr]
    gate = re.search(r"gate qTok=(\d+)([<≥])(\d+):", header)
    assert gate is not None
    qtok, below = int(gate.group(1)), gate.group(2) == "<"
    margin_found = re.search(r"rel[<≥]([0-9.]+)×strong", header)
    out = []
    for row in rows:
        cells = row.split(" | ")
        rel = float(cells[-4])
        base = "strong" if rel >= strong else "weak" if rel >= weak else "none"
        if qtok == 0:
            expected = "none"
        elif below and base == "strong":
            assert margin_found is not None
            expected = "weak" if rel < float(margin_found.group(1)) * strong else "strong"
        else:
            expected = base
        out.append((cells[-2], expected))
    return out


ADB = record("adb", "adb devices list is empty", "restart the adb server", ("android", "adb"))
EMU = record("emu", "Android emulator snapshot", "snapshots break", ("android", "emulator"))
VIRT = record("virt", "虚拟屏不能用的排查步骤", "重装驱动", ("虚拟屏", "driver"))
CI = record("ci", "Pipeline cache key rules", "ci cache uses the lock hash", ("ci", "cache"))
BASE = (ADB, EMU, VIRT, CI)


def test_rows_have_exactly_the_ten_columns_in_order() -> None:
    assert " | ".join(RECALL_COLUMNS) == COLUMNS
    result = recall(view(*BASE), "adb android")
    assert result.rows
    assert "cols " + COLUMNS.replace(" | ", "|") in result.header
    for line, row in zip(result.text.split("\n")[1:], result.rows, strict=True):
        cells = line.split(" | ")
        assert len(cells) == 10
        assert cells[0] == row.id
        assert cells[-2] == row.match
        assert list(msgspec.structs.asdict(row))[:10] == list(RECALL_COLUMNS)


def test_bodies_are_never_printed() -> None:
    secret = record("s", "a title about adb", "BODYMARKER adb adb adb", ("adb",))
    result = recall(view(secret), "adb BODYMARKER")
    assert [row.id for row in result.rows] == ["s"]
    assert "bodymarker" not in result.text.lower().replace(result.header.lower(), "")
    assert "body" not in msgspec.structs.asdict(result.rows[0])


@settings(max_examples=60)
@given(records(), texts, st.one_of(st.none(), st.integers(-5, 80)))
def test_the_limit_is_a_hard_row_cap(
    recs: tuple[MemoryRecord, ...], query: str, limit: int | None
) -> None:
    result = recall(view(*recs), query, limit=limit)
    cap = 5 if limit is None else max(1, min(50, limit))
    assert result.limit == cap
    assert len(result.rows) == min(cap, result.candidates)
    assert len(result.text.split("\n")) == 1 + len(result.rows)


@settings(max_examples=60)
@given(records(min_size=1), texts, st.integers(1, 50), st.integers(1, 50))
def test_rel_is_absolute_not_normalised_per_answer(
    recs: tuple[MemoryRecord, ...], query: str, a: int, b: int
) -> None:
    first, second = recall(view(*recs), query, limit=a), recall(view(*recs), query, limit=b)
    rel_a = {row.id: row.rel_raw for row in first.rows}
    for row in second.rows:
        if row.id in rel_a:
            assert row.rel_raw == rel_a[row.id]
        assert 0 <= row.rel_raw < 1
        assert row.via == ("direct" if row.rel_raw > 0 else row.via)
        assert 0 <= row.graph <= 0.018
        assert 0 <= row.score <= 1


@settings(max_examples=80)
@given(
    records(),
    st.one_of(texts, st.text(max_size=30)),
    st.integers(0, 4),
    st.sampled_from([0.0, 1.0, 2.0, 5.0]),
    st.sampled_from([(0.0382, 0.1507), (0.01, 0.02), (0.2, 0.5)]),
)
def test_match_is_recomputable_from_the_printed_text_alone(
    recs: tuple[MemoryRecord, ...],
    query: str,
    minimum: int,
    margin: float,
    thresholds: tuple[float, float],
) -> None:
    cfg = ScoreConfig(
        content_token_min=minimum,
        gate_margin=margin,
        weak_threshold=thresholds[0],
        strong_threshold=thresholds[1],
    )
    result = recall(view(*recs), query, limit=50, config=cfg)
    for printed_match, expected in recompute(result.text):
        assert printed_match == expected


def test_the_gate_caps_a_short_query_near_the_line_and_says_so() -> None:
    # one content token; rel between strong and 2 x strong with these thresholds
    probe = recall(view(*BASE), "adb")
    rel = probe.rows[0].rel
    cfg = ScoreConfig(weak_threshold=rel / 4, strong_threshold=rel / 1.5)
    result = recall(view(*BASE), "adb", config=cfg)
    assert result.content_tokens == 1
    assert result.rows[0].match == "weak"
    assert result.gate_branch is GateBranch.CAPPED
    assert "capped" in result.header
    # margin 0 never caps
    never = recall(view(*BASE), "adb", config=msgspec.structs.replace(cfg, gate_margin=0.0))
    assert never.rows[0].match == "strong"
    assert never.gate_branch is GateBranch.EXEMPT
    assert "capped" not in never.header
    # far above the margin: the exception lets strong through
    far = ScoreConfig(weak_threshold=rel / 8, strong_threshold=rel / 3)
    exempt = recall(view(*BASE), "adb", config=far)
    assert exempt.rows[0].match == "strong"
    assert exempt.gate_branch is GateBranch.EXEMPT
    assert "capped" not in exempt.header


def test_enough_content_tokens_leave_the_gate_inactive() -> None:
    result = recall(view(*BASE), "虚拟屏")
    assert result.content_tokens == 5
    assert result.gate_branch is GateBranch.INACTIVE
    assert "capped" not in result.header
    assert result.rows[0].id == "virt"


def test_a_query_with_no_content_token_judges_none_and_skips_triage() -> None:
    result = recall(view(*BASE), "zzzz qqqq")
    assert result.content_tokens == 0
    assert result.rows == ()
    assert result.triage.explained_ratio is None
    assert result.triage.k_used == result.triage.k_base
    assert not result.triage.expanded
    assert result.low_confidence


def test_graph_reaches_records_through_shared_tags_only_as_a_capped_bonus() -> None:
    result = recall(view(*BASE), "adb devices", limit=10)
    by_id = {row.id: row for row in result.rows}
    emu = by_id["emu"]
    assert emu.rel == 0
    assert emu.via == "tag:android"
    assert 0 < emu.graph <= 0.018
    assert emu.match == "none"
    assert by_id["adb"].via == "direct"
    assert "ci" not in by_id  # nothing links it


def test_scope_filter_keeps_that_scope_and_global() -> None:
    recs = (
        record("g", "adb global tip here", tags=("adb",)),
        record("a", "adb project a tip", tags=("adb",), scope="project:a"),
        record("b", "adb project b tip", tags=("adb",), scope="project:b"),
    )
    assert {r.id for r in recall(view(*recs), "adb tip", scope="project:a").rows} == {"g", "a"}
    assert {r.id for r in recall(view(*recs), "adb tip").rows} == {"g", "a", "b"}
    filtered = recall(view(*recs), "adb tip", scope="project:a\n{{x}}")
    assert filtered.scope == "project:a {x}"
    assert filtered.scope_records == 1
    assert filtered.total == 3


def test_diversity_applies_only_above_five_candidates() -> None:
    same = tuple(record(f"m{i}", f"adb note number {i}", tags=("adb", "x")) for i in range(6))
    six = recall(view(*same), "adb note")
    five = recall(view(*same[:5]), "adb note")
    assert six.diversity_applied
    assert not five.diversity_applied
    assert all(math.isclose(r.final, r.rel_raw + r.graph) for r in five.rows)
    assert "β on" in six.header
    assert "β off" in five.header
    # the second pick shares all tags with the first: its factor is 1 - 0.3
    second = six.rows[1]
    assert math.isclose(second.final, (second.rel_raw + second.graph) * 0.7)


def test_the_drift_note_appears_past_either_limit() -> None:
    def note(total: int, **cfg: float) -> bool:
        recs = tuple(record(f"m{i}") for i in range(total))
        result = recall(view(*recs), "adb", config=ScoreConfig(**cfg))  # type: ignore[arg-type]
        assert result.calibration_drift == total - result.calibration_records
        assert ("recalibrate(" in result.header) is result.calibration_drift_exceeded
        return result.calibration_drift_exceeded

    assert not note(204)
    assert not note(244)  # 40/204 = 0.196
    assert note(245)  # 41/204 > 0.2
    assert note(163)
    assert not note(10, calibration_records=10, calibration_drift_rel=1.0, calibration_drift_abs=0)
    assert note(11, calibration_records=10, calibration_drift_rel=1.0, calibration_drift_abs=0)


def test_low_confidence_is_reported_not_enforced() -> None:
    recs = (record("m", "adb crash notes here", tags=("zzz",)),)
    result = recall(view(*recs), "adb")
    assert result.low_confidence
    assert [r.id for r in result.rows] == ["m"]


@pytest.mark.parametrize("word", ["ok", "做", "b", "ci"])
def test_one_short_word_is_one_content_token(word: str) -> None:
    words = (*WORDS, "做")
    recs = tuple(
        record(f"m{i}", f"title with {w} inside", tags=("t",)) for i, w in enumerate(words)
    )
    assert recall(view(*recs), word).content_tokens == 1


def test_widening_the_internal_budget_never_adds_rows() -> None:
    # the top two candidates carry no query tag, so the triage widens kBase=2 to kUsed=4
    recs = (
        record("t1", "adb adb adb notes one", tags=("x",)),
        record("t2", "adb adb adb notes two", tags=("y",)),
        record("t3", "notes three", "long filler " * 30, ("adb",)),
        record("t4", "notes four", "adb once", ("z",)),
    )
    result = recall(view(*recs), "adb", limit=2)
    assert result.triage.expanded
    assert (result.triage.k_base, result.triage.k_used) == (2, 4)
    assert result.candidates == 4
    assert len(result.rows) == 2
    assert not result.diversity_applied
