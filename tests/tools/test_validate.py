"""memory_remember's six checks (in order, first failure only) and its two gates."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.tools.contract.records import StoreStamp
from memrecall.tools.contract.validate import (
    Refusal,
    ValidRemember,
    check_gates,
    validate_remember,
)

from .helpers import record

GOOD: dict[str, Any] = {
    "kind": "lesson",
    "title": "  Restart adb when devices list is empty ",
    "body": "adb kill-server then adb start-server",
    "tags": [" ADB ", "android"],
    "source": "session:abc",
    "scope": None,
}
BAD: dict[str, Any] = {
    "kind": "note",
    "title": "short",
    "body": "   ",
    "tags": [],
    "source": "http://x",
    "scope": "project:a\nb",
}
ORDER = ("kind", "title", "body", "tags", "source", "scope")


def refusal(**changes: Any) -> Refusal:
    result = validate_remember(**{**GOOD, **changes})
    assert isinstance(result, Refusal)
    return result


def test_a_good_write_is_normalised() -> None:
    result = validate_remember(**GOOD)
    assert isinstance(result, ValidRemember)
    assert result.title == "Restart adb when devices list is empty"
    assert result.tags == ("adb", "android")
    assert result.scope == "global"


@given(st.sets(st.sampled_from(ORDER), min_size=1))
def test_the_first_failing_field_in_order_is_reported(broken: set[str]) -> None:
    args = {**GOOD, **{f: BAD[f] for f in broken}}
    result = validate_remember(**args)
    assert isinstance(result, Refusal)
    first = next(f for f in ORDER if f in broken)
    assert result.field == first
    assert result.code == f"invalid-{first}"
    assert result.message


@pytest.mark.parametrize("kind", ["fact", "lesson", "preference", "pointer"])
def test_every_kind_is_accepted(kind: str) -> None:
    assert isinstance(validate_remember(**{**GOOD, "kind": kind}), ValidRemember)


@pytest.mark.parametrize("kind", ["Fact", "note", "", None, 3])
def test_other_kinds_are_refused(kind: object) -> None:
    assert refusal(kind=kind).code == "invalid-kind"


@pytest.mark.parametrize(("length", "ok"), [(7, False), (8, True), (120, True), (121, False)])
def test_title_length_is_counted_after_trimming(length: int, ok: bool) -> None:
    title = "  " + "t" * length + "\t "
    result = validate_remember(**{**GOOD, "title": title})
    assert isinstance(result, ValidRemember) is ok


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\u2029"])
def test_title_line_breaks_are_refused(brk: str) -> None:
    result = refusal(title=f"first half{brk}second half")
    assert result.code == "invalid-title"
    assert "one line" in result.message


@pytest.mark.parametrize("body", ["", " \n ", None])
def test_body_must_not_be_empty(body: object) -> None:
    assert refusal(body=body).code == "invalid-body"


@pytest.mark.parametrize(
    "tags",
    [[], [f"t{i}" for i in range(13)], ["x" * 33], ["  "], ["a", " A"], "adb", ["a,b"], [3]],
)
def test_bad_tags_are_refused(tags: object) -> None:
    assert refusal(tags=tags).code == "invalid-tags"


def test_tag_bounds_are_inclusive() -> None:
    result = validate_remember(**{**GOOD, "tags": ["y" * 32, *(f"t{i}" for i in range(11))]})
    assert isinstance(result, ValidRemember)
    assert len(result.tags) == 12


@pytest.mark.parametrize("source", ["session:1", "file:src/a.py", "url:https://x.org/a"])
def test_sources_of_the_three_forms_are_accepted(source: str) -> None:
    assert isinstance(validate_remember(**{**GOOD, "source": source}), ValidRemember)


@pytest.mark.parametrize("source", ["", "session:", "url:http://x", "chat", "file:a\nb", None])
def test_other_sources_are_refused(source: object) -> None:
    assert refusal(source=source).code == "invalid-source"


def test_scope_is_neutralised_and_bounded() -> None:
    result = validate_remember(**{**GOOD, "scope": " project:{{x}} "})
    assert isinstance(result, ValidRemember)
    assert result.scope == "project:{x}"
    name = "n" * (64 - len("project:"))
    assert isinstance(validate_remember(**{**GOOD, "scope": f"project:{name}"}), ValidRemember)
    assert refusal(scope=f"project:{name}x").code == "invalid-scope"


@pytest.mark.parametrize("scope", ["", "project:", "team:x", "project:a\u2028b", 5])
def test_bad_scopes_are_refused(scope: object) -> None:
    assert refusal(scope=scope).code == "invalid-scope"


# --------------------------------------------------------------------------- gates

SEEN = StoreStamp(size=10, mtime_ms=1.0, revision=3)


def test_a_record_over_a_tenth_of_the_cap_is_refused() -> None:
    rec = record("m1", body="x" * 500)
    size = len(rec.body) + 200  # any size works: the gate compares the size it is given
    assert check_gates(rec, max_bytes=size * 10, seen=SEEN, current=SEEN, size=size) is None
    result = check_gates(rec, max_bytes=size * 10 - 10, seen=SEEN, current=SEEN, size=size)
    assert result is not None
    assert result.code == "record-too-large"
    assert result.record_bytes == size
    assert result.limit_bytes == size - 1


def test_the_default_size_is_the_serialised_record() -> None:
    small, large = record("m1", body="x"), record("m1", body="x" * 2000)
    assert check_gates(small, max_bytes=2000, seen=SEEN, current=SEEN) is None
    refused = check_gates(large, max_bytes=2000, seen=SEEN, current=SEEN)
    assert refused is not None
    assert refused.code == "record-too-large"


@pytest.mark.parametrize(
    "current",
    [
        StoreStamp(size=11, mtime_ms=1.0, revision=3),
        StoreStamp(size=10, mtime_ms=2.0, revision=3),
        StoreStamp(size=10, mtime_ms=1.0, revision=4),
    ],
)
def test_a_store_changed_since_loading_is_refused_with_both_sides(current: StoreStamp) -> None:
    result = check_gates(record("m1"), max_bytes=10**6, seen=SEEN, current=current)
    assert result is not None
    assert result.code == "store-changed-externally"
    assert (result.seen, result.current) == (SEEN, current)
    assert f"size={current.size}" in result.message
    assert f"size={SEEN.size}" in result.message
