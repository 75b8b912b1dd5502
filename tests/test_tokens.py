"""Query tokenisation and the UTF-16 text helpers (reference §3.1, §3.2, §3.6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import fold, terms
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.text import (
    EMPTY_BODY_PLACEHOLDER,
    body_text,
    normalize,
    utf16_len,
    utf16_prefix,
)
from memrecall.engine.scoring.tokens import (
    MAX_QUERY_TOKENS,
    bounded_tokens,
    query_tokens,
    raw_tokens,
)
from tests.factories import filed

# --- normalize ---------------------------------------------------------------------------------


def test_normalize_folds_width_and_case() -> None:
    assert normalize("ＡＰＩ Gateway") == "api gateway"
    assert normalize("ｻｰﾊﾞｰ") == "サーバー"  # halfwidth Katakana becomes fullwidth
    assert normalize("Cafe\u0301") == "café"  # NFKC composes
    assert normalize("ＭＥＭＯＲＹ") == "memory"


def test_normalize_uses_full_unicode_lowercasing() -> None:
    assert normalize("ΣΟΦΊΑ") == "σοφία"
    assert normalize("ΟΔΟΣ") == "οδο\u03c2"  # final sigma, as in JavaScript
    assert normalize("ПРИВЕТ") == "привет"
    assert normalize("İ") == "i\u0307"  # full mapping, like JavaScript's toLowerCase


# --- body_text ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [EMPTY_BODY_PLACEHOLDER, f"  {EMPTY_BODY_PLACEHOLDER}\n", "", "   \n\t"],
)
def test_body_text_treats_placeholder_and_blank_as_empty(body: str) -> None:
    assert body_text(body) == ""


def test_body_text_trims_but_keeps_other_text() -> None:
    assert body_text("  hello\nworld \n") == "hello\nworld"
    assert body_text(f"{EMPTY_BODY_PLACEHOLDER} more") == f"{EMPTY_BODY_PLACEHOLDER} more"


# --- raw tokens ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("check the dashboard", ["check", "the", "dashboard"]),
        ("go to db", []),  # runs shorter than three characters vanish
        ("до свидания", ["свидания"]),
        ("snake_case-and.dots", ["snake", "case", "and", "dots"]),
        ("v2 abc123 12", ["abc123"]),
        ("部署流程", ["部署", "署流", "流程"]),
        ("部", []),  # a lone CJK character yields nothing
        ("部 署", []),
        ("サーバー", ["サー", "ーバ", "バー"]),  # ー stays inside the Katakana run
        ("ｻｰﾊﾞｰ", ["サー", "ーバ", "バー"]),
        ("きをつけて", ["きを", "をつ", "つけ", "けて"]),
        ("배포 절차", ["배포", "절차"]),
        ("abc漢字", ["abc", "漢字"]),  # a Latin run does not swallow the CJK after it
        ("漢字abc", ["漢字", "abc"]),
        ("ＡＰＩ", ["api"]),
        ("préférences", ["préférences"]),
        ("pre\u0301fe\u0301rences", ["préférences"]),
        ("καλημέρα", ["καλημέρα"]),
        ("สวัสดีครับ", ["สวัสดีครับ"]),  # Thai: one long token
        ("\u0301ab", []),  # a run must start with a letter or a number
        ("a\u0301bc", ["ábc"]),
        ("𠀀𠀁𠀂", ["𠀀𠀁", "𠀁𠀂"]),  # astral Han: code-point bigrams
        ("😀😀😀", []),
    ],
)
def test_raw_tokens(query: str, expected: list[str]) -> None:
    assert list(raw_tokens(normalize(query))) == expected


def test_query_tokens_normalises_and_deduplicates() -> None:
    assert query_tokens("API api ＡＰＩ Api") == ["api"]
    assert query_tokens("   \n\t ") == []
    assert query_tokens("") == []


# --- bounded_tokens ------------------------------------------------------------------------------


def numbered(n: int) -> list[str]:
    return [f"tok{i:03d}" for i in range(n)]


def test_bounded_tokens_keeps_everything_under_the_bound() -> None:
    tokens = numbered(MAX_QUERY_TOKENS)
    assert bounded_tokens(tokens) == tokens


def test_bounded_tokens_keeps_both_edges_of_a_long_query() -> None:
    tokens = numbered(200)
    assert bounded_tokens(tokens) == tokens[:32] + tokens[-32:]


def test_bounded_tokens_refreshes_a_repeated_tail_token() -> None:
    # 64 tokens (#0..#63), then #32 again and a new #64: #32 moves to the newest
    # end of the tail, so the next eviction takes #33.
    tokens = [*numbered(64), "tok032", "tok064"]
    kept = bounded_tokens(tokens)
    assert len(kept) == 64
    assert "tok032" in kept
    assert "tok033" not in kept
    assert "tok064" in kept
    assert kept == numbered(32) + [f"tok{i:03d}" for i in range(34, 64)] + ["tok032", "tok064"]


def test_bounded_tokens_ignores_repeats_of_head_tokens() -> None:
    tokens = [*numbered(64), "tok000", "tok031"]
    assert bounded_tokens(tokens) == numbered(64)


def test_query_tokens_of_100_han_and_100_ascii_keep_the_edges() -> None:
    han = "".join(chr(0x4E00 + i) for i in range(100))
    words = numbered(100)
    tokens = query_tokens(han + " " + " ".join(words))
    bigrams = [han[i : i + 2] for i in range(99)]
    assert tokens == bigrams[:32] + words[-32:]


def reference_bounded(tokens: list[str], limit: int) -> list[str]:
    """The rule of §3.2.5 with plain lists."""
    head: list[str] = []
    tail: list[str] = []
    half = limit // 2
    for token in tokens:
        if token in head:
            continue
        if token in tail:
            tail.remove(token)
            tail.append(token)
        elif len(head) < half:
            head.append(token)
        else:
            tail.append(token)
            if len(tail) > half:
                tail.pop(0)
    return head + tail


@given(
    st.lists(st.sampled_from([f"t{i}" for i in range(40)]), max_size=120),
    st.sampled_from([2, 4, 8, 64]),
)
def test_bounded_tokens_matches_the_list_reading(tokens: list[str], limit: int) -> None:
    kept = bounded_tokens(tokens, limit)
    assert kept == reference_bounded(tokens, limit)
    assert len(kept) <= limit
    assert len(set(kept)) == len(kept)


# --- UTF-16 helpers ------------------------------------------------------------------------------


def js_prefix(text: str, units: int) -> str:
    """JavaScript's ``slice(0, units)`` with a dangling high surrogate removed."""
    data = text.encode("utf-16-le")[: 2 * max(units, 0)]
    if len(data) >= 2 and 0xD800 <= int.from_bytes(data[-2:], "little") <= 0xDBFF:
        data = data[:-2]
    return data.decode("utf-16-le")


def test_utf16_len_counts_astral_characters_twice() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("漢字") == 2
    assert utf16_len("😀") == 2
    assert utf16_len("a😀b𠀀") == 6


def test_utf16_prefix_drops_a_straddling_pair() -> None:
    text = "a" * 511 + "😀" + "x"
    assert utf16_prefix(text, 512) == "a" * 511
    assert utf16_prefix(text, 513) == "a" * 511 + "😀"
    assert utf16_prefix(text, 0) == ""
    assert utf16_prefix(text, -3) == ""
    assert utf16_prefix("😀", 1) == ""


utf16_texts = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["😀", "𠀀", "a", "漢", "\u0301"]),
    ),
    max_size=60,
)


@given(utf16_texts)
def test_utf16_len_is_javascript_length(text: str) -> None:
    assert utf16_len(text) == len(text.encode("utf-16-le")) // 2


@given(utf16_texts, st.integers(min_value=-2, max_value=130))
def test_utf16_prefix_properties(text: str, units: int) -> None:
    prefix = utf16_prefix(text, units)
    # a prefix in code points: never splits a surrogate pair
    assert text.startswith(prefix)
    prefix.encode("utf-8")  # no lone surrogate
    # within budget
    assert utf16_len(prefix) <= max(units, 0)
    # maximal: the next character would not fit
    if prefix != text:
        assert utf16_len(text[: len(prefix) + 1]) > units
    # and equal to JavaScript's cut
    assert prefix == js_prefix(text, units)


# --- folding (the fielded scorer's analysis) ---------------------------------------------------

_LETTERS = "abcdefghilnorstuwäöüéàçñøłđıẞSTRAE\u0301"
_GERMAN_ISH = _LETTERS + " -"


@given(st.text(alphabet=_GERMAN_ISH, max_size=12), st.text(alphabet=_GERMAN_ISH, max_size=12))
def test_sharp_s_folds_to_ss_in_every_word(head: str, tail: str) -> None:
    # German writes ß or ss for one sound; whatever surrounds it, both spellings fold alike.
    assert fold(f"{head}ß{tail}") == fold(f"{head}ss{tail}")


@given(st.text(alphabet=_LETTERS, max_size=12), st.text(alphabet=_LETTERS, max_size=12))
def test_sharp_s_and_ss_give_the_same_terms(head: str, tail: str) -> None:
    # Inside a word of three letters or more (a two-letter word with ß, like "aß", is
    # shorter than the three letters of "ass" and is dropped as too short).
    assert terms(f"fu{head}ß{tail}") == terms(f"fu{head}ss{tail}")
    assert terms(f"FU{head}ẞ{tail}") == terms(f"FU{head}SS{tail}")


@pytest.mark.parametrize(
    ("title", "query"),
    [
        ("Straßenbahn Fahrplan", "strassenbahn heute"),
        ("Strassenbahn Fahrplan", "Straßenbahn heute"),
    ],
)
def test_either_spelling_of_sharp_s_finds_the_other(title: str, query: str) -> None:
    index = FieldedIndex.of([filed(title), filed("Bus timetable")])
    assert index.rank(query, 5) == [0]
