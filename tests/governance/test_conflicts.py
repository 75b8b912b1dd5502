"""Deterministic conflict classification (seed 002 §9.3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.governance import (
    ConflictClass,
    SaveAction,
    classify,
    content_fingerprint,
    normalise_content,
    plan_save,
)

WORDS = st.lists(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzÄÖÜßéΣ茶", min_size=1, max_size=6),
    min_size=1,
    max_size=6,
)
SPACES = st.sampled_from([" ", "  ", "\t", "\n", " \u00a0 ", "\u3000"])


def respaced(words: list[str], gaps: list[str]) -> str:
    out = words[0]
    for word, gap in zip(words[1:], gaps, strict=False):
        out += gap + word
    return out + (gaps[-1] if gaps else "")


@given(st.text())
def test_normalisation_is_idempotent(text: str) -> None:
    once = normalise_content(text)
    assert normalise_content(once) == once


@given(st.text())
def test_same_is_reflexive(text: str) -> None:
    assert classify(text, text) is ConflictClass.SAME


@given(
    WORDS,
    st.lists(SPACES, min_size=6, max_size=6),
    st.booleans(),
    st.sampled_from(["", ".", "!", " 。"]),
)
def test_whitespace_case_and_trailing_punctuation_do_not_change_the_class(
    words: list[str], gaps: list[str], upper: bool, tail: str
) -> None:
    plain = " ".join(words)
    variant = respaced([w.upper() if upper else w for w in words], gaps) + tail
    assert classify(plain, variant) is ConflictClass.SAME
    other = "prefers tea"
    assert classify(plain, other) is classify(variant, other)
    assert classify(other, plain) is classify(other, variant)


@given(WORDS, WORDS)
def test_adding_detail_is_compatible(old: list[str], extra: list[str]) -> None:
    before = " ".join(old)
    after = before + ", " + " ".join(extra)
    assert classify(before, after) in (ConflictClass.COMPATIBLE, ConflictClass.SAME)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Prefers tea.", "prefers   TEA", ConflictClass.SAME),
        ("prefers tea", "prefers tea with milk", ConflictClass.COMPATIBLE),
        ("prefers tea", "prefers coffee", ConflictClass.CONFLICTING),
        ("prefers tea with milk", "prefers tea", ConflictClass.CONFLICTING),
        ("likes tea", "dislikes tea", ConflictClass.CONFLICTING),  # word boundary, not substring
        ("“quoted”", '"quoted"', ConflictClass.SAME),
        ("ｆｕｌｌｗｉｄｔｈ", "fullwidth", ConflictClass.SAME),
    ],
)
def test_examples(old: str, new: str, expected: ConflictClass) -> None:
    assert classify(old, new) is expected


@pytest.mark.parametrize(
    ("existing", "new", "user", "replace", "action"),
    [
        (None, "x", True, False, SaveAction.CREATE),
        (None, "x", False, False, SaveAction.PROPOSE_CREATE),
        ("prefers tea", "Prefers tea.", True, False, SaveAction.REFRESH),
        ("prefers tea", "Prefers tea.", False, False, SaveAction.NOTHING),
        ("prefers tea", "Prefers tea.", True, True, SaveAction.REFRESH),
        ("prefers tea", "prefers tea with milk", True, False, SaveAction.PROPOSE_UPDATE),
        ("prefers tea", "prefers coffee", True, False, SaveAction.PROPOSE_REPLACE),
        ("prefers tea", "prefers coffee", True, True, SaveAction.UPDATE),
        ("prefers tea", "prefers coffee", False, True, SaveAction.PROPOSE_REPLACE),
        ("prefers tea", "prefers tea with milk", False, False, SaveAction.PROPOSE_UPDATE),
    ],
)
def test_plan_save(
    existing: str | None, new: str, user: bool, replace: bool, action: SaveAction
) -> None:
    assert plan_save(existing, new, user_origin=user, explicit_replace=replace) is action


@given(st.text(), st.text(), st.booleans())
def test_model_text_never_changes_an_active_memory_directly(
    old: str, new: str, replace: bool
) -> None:
    action = plan_save(old, new, user_origin=False, explicit_replace=replace)
    assert action in (SaveAction.NOTHING, SaveAction.PROPOSE_UPDATE, SaveAction.PROPOSE_REPLACE)


def test_fingerprints_follow_normalisation_and_differ_across_users_scopes_and_keys() -> None:
    base = content_fingerprint("u1", "global", "drink", "Prefers tea.")
    assert base == content_fingerprint("u1", "global", "Drink", "prefers  TEA")
    assert base != content_fingerprint("u2", "global", "drink", "prefers tea")
    assert base != content_fingerprint("u1", "workspace:learning", "drink", "prefers tea")
    assert base != content_fingerprint("u1", "global", "food", "prefers tea")
    assert base != content_fingerprint("u1", "global", "drink", "prefers coffee")
    assert "tea" not in base
