"""The recall header: one line, at most 448 UTF-16 units, whatever goes into it."""

from __future__ import annotations

import json
import sys

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.text import utf16_len
from memrecall.tools.contract.constants import HEADER_MAX_CHARS, ScoreConfig
from memrecall.tools.contract.recall import RecallResult, Triage, recall
from memrecall.tools.contract.render import (
    CUT_MARK,
    escape_echo,
    format_header_constant,
    render_header,
)
from memrecall.tools.contract.scoring import GateBranch

from .helpers import record, view

BIG = sys.float_info.max
TINY = 1.2345678901234567e-300
HOSTILE = 'a"b\\c|d\n\r\t\x00\x1b\u2028\u2029\x85\u200e\ufeff😀𝕏 ' * 40


def worst_result(query: str, scope: str) -> RecallResult:
    """Every echoed number at its widest, every optional segment present, the longest branch."""
    cfg = ScoreConfig(
        scale_a=-BIG,
        scale_b=BIG,
        weak_threshold=TINY,
        strong_threshold=BIG,
        graph_bonus_cap=TINY,
        content_token_min=65,
        gate_margin=BIG,
        calibration_records=10**30,
        calibration_date="2026-10-09",
    )
    base = recall(view(record("m", "adb title here", tags=("adb",))), "adb", config=cfg)
    triage = Triage(
        k_base=50,
        k_used=100,
        expanded=True,
        novelty=0.999,
        explained_ratio=0.001,
        residual_ratio=0.999,
        basis_size=50,
        layers=(),
    )
    return msgspec.structs.replace(
        base,
        query=query,
        scope=scope,
        total=10**30 + 7,
        scope_records=10**29 + 3,
        graph_reached=10**28 + 1,
        gate_branch=GateBranch.CAPPED,
        content_tokens=64,
        diversity_applied=True,
        low_confidence=True,
        calibration_drift_exceeded=True,
        triage=triage,
        limit=50,
    )


def echo_of(header: str) -> str:
    """The query as echoed (JSON string content), without the cut mark."""
    start = header.index(';query="') + len(";query=")
    tail = header[start:]
    if tail.endswith(CUT_MARK):
        tail = tail[: -len(CUT_MARK)]
    decoded = json.loads(tail)
    assert isinstance(decoded, str)
    return decoded


def test_constants_are_echoed_at_a_fixed_width() -> None:
    for value in (BIG, -BIG, TINY, 0.1 + 0.2, 10**30, -(10**30), 0.0199, 2.0, 204):
        shown = format_header_constant(value)
        assert len(shown) <= 9
        assert shown.startswith("≈") != (len(repr(value)) <= 9 or shown == str(value))
    assert format_header_constant(0.0199) == "0.0199"
    assert format_header_constant(2.0) == "2"


def test_the_worst_case_header_fits() -> None:
    scope = "project:" + "😀" * 56
    result = worst_result(HOSTILE, scope)
    header = render_header(result)
    assert utf16_len(header) <= HEADER_MAX_CHARS
    assert len(header.splitlines()) == 1
    assert header.endswith(CUT_MARK)
    assert HOSTILE.startswith(echo_of(header))
    assert "recalibrate(" in header
    assert "capped" in header
    assert "cols id|kind|title|tags|graph|via|rel|cov|match|score" in header


def test_a_short_query_is_echoed_whole() -> None:
    result = recall(view(record("m", "adb title here", tags=("adb",))), 'adb "x"|y')
    assert echo_of(result.header) == 'adb "x"|y'
    assert not result.header.endswith(CUT_MARK)
    assert result.query == 'adb "x"|y'


@settings(max_examples=150)
@given(st.text(max_size=700), st.text(max_size=80), st.booleans())
def test_any_query_gives_one_bounded_line(query: str, scope: str, worst: bool) -> None:
    if worst:
        header = render_header(worst_result(query, scope))
    else:
        header = recall(view(record("m", "adb title here")), query, scope=scope).header
    assert utf16_len(header) <= HEADER_MAX_CHARS
    assert len(header.splitlines()) == 1
    echoed = echo_of(header)
    assert query.startswith(echoed)
    assert header.endswith(CUT_MARK) == (echoed != query)


@given(st.text())
def test_escaping_is_one_line_and_reversible(text: str) -> None:
    escaped = escape_echo(text)
    assert len(escaped.splitlines()) <= 1
    assert json.loads(f'"{escaped}"') == text
