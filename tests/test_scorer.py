"""The reference scorer (reference §3, checklist §10.1 scorer rows).

Every example goes through both implementations (:class:`ReferenceIndex` and
:func:`rank_plain`); a Hypothesis test then checks they agree on random pools.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.reference import (
    MAX_BODY_CHARS,
    TYPE_KEYWORDS,
    DocumentFields,
    ReferenceIndex,
    rank_plain,
    score_plain,
)
from memrecall.engine.scoring.text import EMPTY_BODY_PLACEHOLDER
from memrecall.engine.scoring.tokens import query_tokens
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from tests.factories import filed as doc

_serial = itertools.count()


def select(query: str, documents: Sequence[MemoryDocument], limit: int = 5) -> list[MemoryDocument]:
    """Rank with both implementations, insist they agree, return the documents."""
    fields = [DocumentFields.of(d) for d in documents]
    indexed = ReferenceIndex(fields).rank(query, limit)
    assert indexed == rank_plain(query, fields, limit)
    assert indexed == ReferenceIndex(fields, word_index=True).rank(query, limit)
    return [documents[i] for i in indexed]


def titles(documents: Sequence[MemoryDocument]) -> list[str]:
    return [d.title for d in documents]


# --- basic rows ----------------------------------------------------------------------------------


def test_selects_the_most_relevant_document_first() -> None:
    pool = [
        doc("Deploy checklist", "Steps before a release", kind=MemoryType.PROJECT, mtime=50),
        doc("Latency budget", "The p95 target for checkout", kind=MemoryType.PROJECT, mtime=40),
        doc(
            "Grafana latency dashboard",
            "Reference dashboard for API latency",
            "Open the board and check the p95 panel.",
            mtime=10,
        ),
        doc("Review style", "Keep pull requests small", kind=MemoryType.FEEDBACK, mtime=60),
    ]
    ranked = select("check the dashboard reference for latency", pool)
    assert ranked[0].title == "Grafana latency dashboard"
    assert "Review style" not in titles(ranked)


@pytest.mark.parametrize("query", ["", " ", "   \n\t  ", "\u3000"])
def test_empty_or_whitespace_query_selects_nothing(query: str) -> None:
    pool = [doc("anything", "at all", "body text")]
    assert select(query, pool) == []


def test_empty_pool_selects_nothing() -> None:
    assert select("deploy", []) == []


# --- multilingual corpus -------------------------------------------------------------------------

CORPUS: dict[str, MemoryDocument] = {
    "zh-deploy": doc(
        "部署流程",
        "生产环境部署步骤与回滚方案",
        "先在预发环境验证，然后灰度发布。",
        kind=MemoryType.PROJECT,
        mtime=100,
    ),
    "zh-db": doc("数据库迁移", "数据库迁移前需要先备份", mtime=99),
    "ja-release": doc(
        "リリース手順", "本番環境へのリリースの手順書", kind=MemoryType.PROJECT, mtime=98
    ),
    "ja-server": doc("サーバー監視", "メモリ使用率のアラート設定", mtime=97),
    "ja-hiragana": doc("注意点", "ぜったいに きをつけること", kind=MemoryType.FEEDBACK, mtime=96),
    "ko-deploy": doc("배포 가이드", "쿠버네티스 배포 절차", kind=MemoryType.PROJECT, mtime=95),
    "ko-meeting": doc("회의록", "주간 회의 요약", kind=MemoryType.FEEDBACK, mtime=94),
    "en-dashboard": doc("Latency dashboard", "Grafana board for API latency", mtime=93),
    "en-style": doc("Code review style", "Prefer small pull requests", kind=MemoryType.FEEDBACK),
    "en-editor": doc("Editor setup", "Uses vim keybindings everywhere", kind=MemoryType.USER),
    "mixed": doc("Redis缓存配置", "Redis cache TTL 设置为 300 秒", mtime=90),
    "body-only": doc("Misc notes", "", "The staging password rotates every Tuesday (ZEPHYR)."),
    "nfkc": doc("ＧＰＵ クラスタ", "Ｔｒａｉｎｉｎｇ nodes", mtime=88),
    "ru": doc("Резервное копирование", "Ежедневная копия базы данных", mtime=87),
    "el": doc("Αντίγραφα ασφαλείας", "Καθημερινή διαδικασία", mtime=86),
    "fr": doc("Préférences d'édition", "L'équipe préfère les revues rapides", mtime=85),
}

MULTILINGUAL_CASES: list[tuple[str, str, str | None]] = [
    # (label, query, expected first document or None for no result)
    ("chinese", "如何部署到生产环境", "zh-deploy"),
    ("chinese", "数据库迁移前要备份吗", "zh-db"),
    ("chinese-body", "灰度发布", "zh-deploy"),
    ("japanese-han", "本番環境", "ja-release"),
    ("japanese-katakana", "リリース", "ja-release"),
    ("japanese-prolonged-mark", "サーバー", "ja-server"),
    ("japanese-halfwidth", "ｻｰﾊﾞｰ", "ja-server"),
    ("japanese-hiragana", "きをつけて", "ja-hiragana"),
    ("korean", "배포 절차", "ko-deploy"),
    ("korean", "회의 요약", "ko-meeting"),
    ("english", "check the dashboard reference for latency", "en-dashboard"),
    ("english", "code review style", "en-style"),
    ("english", "vim keybindings", "en-editor"),
    ("mixed", "redis缓存", "mixed"),
    ("mixed", "Redis TTL 设置", "mixed"),
    ("mixed", "deploy 部署", "zh-deploy"),
    ("body-only", "zephyr", "body-only"),
    ("nfkc-query", "ＲＥＤＩＳ", "mixed"),
    ("nfkc-document", "gpu training", "nfkc"),
    ("cyrillic", "резервное копирование", "ru"),
    ("greek", "ΑΣΦΑΛΕΊΑΣ", "el"),
    ("french", "préférences", "fr"),
    ("french-decomposed", "pre\u0301fe\u0301rences", "fr"),
    ("no-result-single-cjk", "部", None),
    ("no-result-single-cjk", "部 署 サ", None),
    ("no-result-single-cjk", "의", None),
    ("no-result-two-letter", "go", None),
    ("no-result-two-letter", "db ok", None),
    ("no-result-english", "weather forecast tomorrow", None),
    ("no-result-english", "quantum entanglement", None),
    ("no-result-korean", "날씨", None),
    ("no-result-japanese", "天気予報", None),
]


@pytest.mark.parametrize(
    ("label", "query", "expected"),
    MULTILINGUAL_CASES,
    ids=[f"{label}:{query}" for label, query, _ in MULTILINGUAL_CASES],
)
def test_multilingual_selection(label: str, query: str, expected: str | None) -> None:
    ranked = select(query, list(CORPUS.values()))
    if expected is None:
        assert ranked == [], label
    else:
        assert ranked, label
        assert ranked[0] is CORPUS[expected], (label, titles(ranked))


# --- single rules ---------------------------------------------------------------------------------


def test_normalizes_document_text_before_matching() -> None:
    fullwidth = doc("ＡＰＩ", mtime=1)
    other = doc("Unrelated", mtime=2)
    assert select("API", [other, fullwidth]) == [fullwidth]
    assert select("ＡＰＩ", [other, fullwidth]) == [fullwidth]


def test_title_and_description_outweigh_body() -> None:
    in_body = doc("Notes", "", "kafka retention is seven days", mtime=30)
    in_title = doc("Kafka", mtime=10)
    in_description = doc("Queues", "kafka topics", mtime=20)
    assert select("kafka", [in_body, in_title, in_description]) == [
        in_title,
        in_description,
        in_body,
    ]


def test_a_single_title_hit_beats_a_body_hit_with_type_boosts() -> None:
    boosted = doc("Notes", "", "kafka consumer lag", kind=MemoryType.REFERENCE, mtime=50)
    titled = doc("Kafka", kind=MemoryType.USER, mtime=1)
    # body +1 and two reference keywords (+2) = 3 < title +4
    assert select("kafka dashboard docs", [boosted, titled]) == [titled, boosted]


def test_type_boosts_apply_only_after_a_lexical_match() -> None:
    project = doc("Theme", kind=MemoryType.PROJECT, mtime=20)
    user = doc("Theme", kind=MemoryType.USER, mtime=10)
    assert select("theme", [project, user]) == [project, user]  # recency
    assert select("theme preference", [project, user]) == [user, project]  # +1 boost
    assert select("preference", [project, user]) == []  # keywords alone surface nothing


def test_type_boost_is_capped_at_two() -> None:
    fields = DocumentFields.of(doc("Kafka", kind=MemoryType.REFERENCE))
    tokens = query_tokens("kafka reference dashboard ticket docs link")
    assert score_plain(tokens, fields) == 4 + 2
    assert score_plain(query_tokens("kafka reference"), fields) == 4 + 1


def test_one_token_collects_every_field() -> None:
    fields = DocumentFields.of(doc("kafka", "kafka", "kafka", kind=MemoryType.USER))
    assert score_plain(["kafka"], fields) == 4 + 3 + 1


def test_matching_is_by_substring() -> None:
    owner = doc("Ownership map", "who owns what")
    assert select("owner", [owner]) == [owner]


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("резервное", "Резервное копирование"),
        ("ασφαλείας", "Αντίγραφα ασφαλείας"),
        ("équipe", "Notes de l'équipe"),
    ],
)
def test_tokenizes_alphabetic_scripts_outside_ascii_and_cjk(query: str, title: str) -> None:
    target = doc(title)
    assert select(query, [doc("Unrelated"), target]) == [target]


def test_a_latin_run_does_not_swallow_following_cjk() -> None:
    latin = doc("abc notes", mtime=5)
    han = doc("漢字表", mtime=5)
    assert select("abc漢字", [latin, han]) == [latin, han]


@pytest.mark.parametrize("query", ["go", "до", "go до"])
def test_runs_shorter_than_three_characters_are_ignored(query: str) -> None:
    pool = [doc("go"), doc("до"), doc("go to the docs", "до свидания")]
    assert select(query, pool) == []


def test_score_ties_break_by_recency_not_type() -> None:
    fb = doc("Cache notes", kind=MemoryType.FEEDBACK, mtime=10)
    pr = doc("Cache notes", kind=MemoryType.PROJECT, mtime=20)
    rf = doc("Cache notes", kind=MemoryType.REFERENCE, mtime=30)
    us = doc("Cache notes", kind=MemoryType.USER, mtime=40)
    ranked = select("cache", [fb, pr, rf, us])
    assert ranked == [us, rf, pr, fb]
    assert MemoryType.USER in {d.type for d in ranked[:2]}


def test_full_ties_keep_input_order() -> None:
    project = doc("Cache notes", scope=Scope.PROJECT, mtime=7)
    user = doc("Cache notes", scope=Scope.USER, mtime=7)
    assert select("cache", [project, user]) == [project, user]
    assert select("cache", [user, project]) == [user, project]


def test_limit_cuts_the_ranking() -> None:
    pool = [doc("Cache notes", mtime=float(i)) for i in range(8)]
    assert select("cache", pool, limit=3) == [pool[7], pool[6], pool[5]]
    assert select("cache", pool) == pool[:2:-1]
    assert select("cache", pool, limit=0) == []


def test_long_mixed_queries_keep_their_edges() -> None:
    han = "".join(chr(0x4E00 + i) for i in range(100))
    words = [f"tok{i:03d}" for i in range(100)]
    query = han + " " + " ".join(words)
    start = doc("start " + han[:2], mtime=3)
    middle = doc("middle " + han[50:52] + " " + words[10], mtime=2)
    end = doc("end " + words[-1], mtime=1)
    assert select(query, [middle, end, start]) == [start, end]


def test_repeated_tail_tokens_are_refreshed() -> None:
    words = [f"tok{i:03d}" for i in range(64)]
    query = " ".join([*words, "tok032", "tok064"])
    kept = doc("tok032 notes", mtime=3)
    evicted = doc("tok033 notes", mtime=2)
    last = doc("tok064 notes", mtime=1)
    assert select(query, [evicted, last, kept]) == [kept, last]


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("x" * 1193 + " needle", True),  # ends exactly at 1,200 units
        ("x" * 1194 + " needle", False),  # cut to "needl"
        ("x" * 1200 + " needle", False),
        ("😀" * 596 + " needle", True),  # 1,199 units
        ("😀" * 597 + " needle", False),  # 1,201 units
        ("  \n" + "x" * 1193 + " needle", True),  # trimmed before the window
    ],
)
def test_body_is_scored_only_inside_the_window(body: str, found: bool) -> None:
    assert MAX_BODY_CHARS == 1200
    document = doc("Notes", "", body)
    assert select("needle", [document]) == ([document] if found else [])


def test_placeholder_body_is_empty() -> None:
    placeholder = doc("Scaffold", "", EMPTY_BODY_PLACEHOLDER, kind=MemoryType.USER)
    padded = doc("Scaffold", "", f"\n {EMPTY_BODY_PLACEHOLDER} \n", kind=MemoryType.USER)
    assert select("entries yet", [placeholder, padded]) == []
    assert DocumentFields.of(placeholder).body == ""


def test_type_keywords_table() -> None:
    keywords = dict(TYPE_KEYWORDS)
    assert keywords == {
        MemoryType.USER: {"user", "preference", "preferences", "background", "role", "terse"},
        MemoryType.FEEDBACK: {"feedback", "rule", "rules", "avoid", "style", "summary"},
        MemoryType.PROJECT: {"project", "goal", "goals", "incident", "deadline", "release"},
        MemoryType.REFERENCE: {"reference", "dashboard", "ticket", "docs", "doc", "link"},
    }


def test_index_scores_and_exclusion() -> None:
    pool = [doc("Cache", mtime=1), doc("Cache", "cache", mtime=2), doc("Other", mtime=3)]
    index = ReferenceIndex.of(pool)
    assert len(index) == 3
    assert index.scores("cache") == {0: 4, 1: 7}
    assert index.scores("cache", exclude={1}) == {0: 4}
    assert index.rank("cache", 5, exclude=[0]) == [1]
    assert index.scores("  ") == {}


@pytest.mark.parametrize("word_index", [False, True])
def test_common_tokens_over_a_large_pool(word_index: bool) -> None:
    pool = [
        doc(f"note {i}", "the cache" if i % 3 else "", f"body {i} the end", mtime=float(i % 7))
        for i in range(100)
    ]
    fields = [DocumentFields.of(d) for d in pool]
    index = ReferenceIndex(fields, word_index=word_index)
    for query in ["the cache", "note the", "end", "body 42", "note"]:
        for exclude in [(), {0, 1, 2, 50}, [99]]:
            assert index.rank(query, 30, exclude=exclude) == rank_plain(
                query, fields, 30, exclude=exclude
            )
    assert len(index.rank("the", 1000)) == 100


def test_word_separators_never_occur_inside_a_token() -> None:
    # The word index splits fields on whitespace and ASCII punctuation; that is
    # exact only if no token can contain such a character.
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace()]
    for separator in [*spaces, *string.punctuation]:
        assert query_tokens(f"abc{separator}def") == ["abc", "def"], hex(ord(separator))
        assert query_tokens(f"漢字{separator}かな") == ["漢字", "かな"], hex(ord(separator))


# --- differential: ReferenceIndex == rank_plain ---------------------------------------------------

PIECES = [
    "deploy",
    "dashboard",
    "user",
    "preference",
    "rule",
    "release",
    "ab",
    "abc",
    "owner",
    "ownership",
    "cache",
    "部署",
    "环境",
    "部",
    "サーバー",
    "リリース",
    "ー",
    "きをつけ",
    "배포",
    "한국어",
    "é",
    "e\u0301",
    "\u0301",
    "ＡＰＩ",
    "api",
    "ｻｰﾊﾞｰ",
    "😀",
    "𠀀𠀁",
    "до",
    "копия",
    "İ",
    " ",
    " ",
    "-",
    "_",
    "\n",
    "\x00",
    "\udc80",  # a lone surrogate (undecodable bytes kept by surrogateescape)
    "a.b/c-d_e",
    EMPTY_BODY_PLACEHOLDER,
]

fragments = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
long_bodies = st.tuples(fragments, st.integers(0, 1300), fragments).map(
    lambda t: t[0] + "x" * t[1] + t[2]
)

documents = st.builds(
    lambda title, description, body, kind, mtime: DocumentFields.of(
        MemoryDocument(
            scope=Scope.PROJECT,
            path="/p.md",
            relative_path="p.md",
            type=kind,
            title=title,
            description=description,
            body=body,
            mtime=mtime,
        )
    ),
    fragments,
    fragments,
    st.one_of(fragments, long_bodies),
    st.sampled_from(MemoryType),
    st.sampled_from([0.0, 1.0, 1.0, 2.5, 1e9, -3.0]),
)


@st.composite
def pools_and_queries(
    draw: st.DrawFn,
) -> tuple[list[DocumentFields], str, int, frozenset[int]]:
    # Repeating a small pool gives many hits per token (the dense-hit path) and full ties.
    pool = draw(st.lists(documents, max_size=12)) * draw(st.sampled_from([1, 1, 2, 5]))
    texts = [f.title + " " + f.description + " " + f.body[:40] for f in pool]
    query = draw(
        st.one_of(
            fragments,
            st.lists(st.sampled_from(PIECES), max_size=70).map(" ".join),
            st.sampled_from(texts) if texts else fragments,
        )
    )
    limit = draw(st.integers(0, len(pool) + 2))
    exclude = draw(st.frozensets(st.integers(0, max(len(pool) - 1, 0)), max_size=3))
    return pool, query, limit, exclude


@given(pools_and_queries(), st.booleans())
def test_index_matches_plain_ranking(
    case: tuple[list[DocumentFields], str, int, frozenset[int]], word_index: bool
) -> None:
    pool, query, limit, exclude = case
    index = ReferenceIndex(pool, word_index=word_index)
    assert index.rank(query, limit, exclude=exclude) == rank_plain(
        query, pool, limit, exclude=exclude
    )
    tokens = query_tokens(query)
    plain_scores = (
        {i: s for i, f in enumerate(pool) if i not in exclude and (s := score_plain(tokens, f)) > 0}
        if tokens
        else {}
    )
    assert index.scores(query, exclude=exclude) == plain_scores
