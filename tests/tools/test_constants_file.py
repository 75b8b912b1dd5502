"""The constants file: what memrecall calibrate --contract writes and memrecall mcp loads."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.tools.constants_file import (
    ConstantsFileError,
    dump_constants,
    load_constants,
    parse_constants,
)
from memrecall.tools.contract import ScoreConfig


@given(
    weak=st.floats(0, 1),
    gap=st.floats(0, 1),
    minimum=st.integers(0, 10),
    margin=st.floats(0, 10),
)
def test_a_dumped_file_loads_back_to_the_same_constants(
    weak: float, gap: float, minimum: int, margin: float
) -> None:
    score = {
        "weakThreshold": weak,
        "strongThreshold": weak + gap,
        "contentTokenMin": minimum,
        "gateMargin": margin,
        "calibrationRecords": 7,
        "calibrationDate": "2026-12-01",
    }
    loaded = parse_constants(dump_constants(score, {"note": "anything"}))
    expected = msgspec.convert(score, ScoreConfig)
    assert loaded == expected
    assert loaded.scale_a == ScoreConfig().scale_a  # absent keys keep their defaults


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"{", "invalid JSON"),
        (b"[]", "not a constants file"),
        (b'{"fit": {}}', "score"),
        (b'{"score": {}, "extra": 1}', "extra"),
        (b'{"score": {"strongTreshold": 0.2}}', "strongTreshold"),
        (b'{"score": {"gateMargin": "2"}}', "gateMargin"),
        (b'{"score": {"gateMargin": -1}}', "gateMargin"),
        (b'{"score": {"weakThreshold": 0.5, "strongThreshold": 0.1}}', "weakThreshold"),
    ],
)
def test_a_bad_file_is_refused_with_the_reason(data: bytes, needle: str) -> None:
    with pytest.raises(ConstantsFileError, match=needle):
        parse_constants(data)


def test_dump_refuses_what_would_not_load_back() -> None:
    with pytest.raises(ConstantsFileError, match="scaleB"):
        dump_constants({"scaleA": 0.5, "scaleB": 0.1})


def test_load_names_an_unreadable_or_oversized_file(tmp_path: Path) -> None:
    with pytest.raises(ConstantsFileError, match="cannot read"):
        load_constants(tmp_path / "absent.json")
    big = tmp_path / "big.json"
    big.write_bytes(b'{"score": {}, "fit": {"pad": "' + b"x" * 1_000_001 + b'"}}')
    with pytest.raises(ConstantsFileError, match="larger than"):
        load_constants(big)
    good = tmp_path / "good.json"
    good.write_bytes(dump_constants({"strongThreshold": 0.25}))
    assert load_constants(good).strong_threshold == 0.25
