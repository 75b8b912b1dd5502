from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.events import Effect, JsonlCodec, LogDecodeError, LogHeader, PlanEvent

from .strategies import effects, plan_events

Item = PlanEvent | Effect
codec: JsonlCodec[Any] = JsonlCodec(Item, content="test-items")
HEADER = LogHeader(content="test-items", engine_version="0", options={"a": 1}, seed=7)


@given(st.lists(st.one_of(plan_events, effects), max_size=8))
def test_round_trip_is_exact(items: list[Any]) -> None:
    data = codec.encode_all(HEADER, items)
    header, decoded = codec.decode_all(data)
    assert header == HEADER
    assert decoded == items
    assert codec.encode_all(header, decoded) == data


@given(st.lists(plan_events, min_size=1, max_size=6), st.data())
def test_a_corrupted_line_is_reported_with_its_number(
    items: list[Any], data: st.DataObject
) -> None:
    lines = codec.encode_all(HEADER, items).split(b"\n")
    bad = data.draw(st.integers(min_value=1, max_value=len(items)))
    lines[bad] = lines[bad][: len(lines[bad]) // 2] + b"\x00garbage"
    with pytest.raises(LogDecodeError) as caught:
        codec.decode_all(b"\n".join(lines))
    assert caught.value.line == bad + 1


def test_unknown_kind_is_a_decode_error() -> None:
    data = codec.encode_header(HEADER) + b'{"kind":"teleport"}\n'
    with pytest.raises(LogDecodeError, match="line 2"):
        codec.decode_all(data)


@pytest.mark.parametrize(
    ("first", "message"),
    [
        (b"", "no header"),
        (b'{"schema":"other","content":"test-items","engine_version":"0"}', "unknown schema"),
        (
            b'{"schema":"memrecall.jsonl","version":99,"content":"test-items","engine_version":"0"}',
            "version 99",
        ),
        (b'{"schema":"memrecall.jsonl","content":"telemetry","engine_version":"0"}', "holds"),
        (b"[1,2]", "not a memrecall header"),
    ],
)
def test_bad_headers(first: bytes, message: str) -> None:
    with pytest.raises(LogDecodeError, match=message) as caught:
        codec.decode_all(first + b"\n")
    assert caught.value.line == 1


def test_key_order_is_deterministic() -> None:
    header = LogHeader(content="test-items", engine_version="0", options={"b": 1, "a": 2})
    assert codec.encode_header(header).index(b'"a"') < codec.encode_header(header).index(b'"b"')
