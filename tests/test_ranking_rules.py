"""Issue 18's ranking rules for the ``fielded`` scorer: acronyms, common words, one-word
queries, runs of CJK bigrams and pieces of katakana words, and the held-out small talk."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring import fielded, query_rules
from memrecall.engine.scoring.analysis import (
    COMMON_WEIGHT,
    is_acronym,
    query_candidates,
    term_counts,
    terms,
)
from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement, Thresholds
from memrecall.engine.scoring.katakana import is_katakana_form, katakana_forms, katakana_parts
from memrecall.events.documents import MemoryDocument
from memrecall.tooling.evaluation import evaluate_many, load_corpus
from tests.factories import filler, memory

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"
OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)
"""Every document with any score is at least weak: the rules under test decide alone."""

DAY = 86_400.0


def doc(title: str, body: str = "", *, description: str = "", mtime: float = 0.0) -> MemoryDocument:
    return memory(title, description, body, mtime=mtime)


# --------------------------------------------------------------------------- acronyms


def test_a_two_letter_word_in_capitals_is_an_acronym_and_a_term() -> None:
    assert terms("Argo CD and CI, then a PR") == ["argo", "cd", "and", "ci", "then", "pr"]
    assert terms("CIでflakyなテスト")[:2] == ["ci", "flaky"]
    assert terms("Ünïcode DB") == ["unicode", "db"]


def test_two_letter_function_words_stay_out_even_in_capitals() -> None:
    assert terms("IS IT OK TO GO") == []
    assert terms("cd is ci") == []  # lower case: a function word, or a typo, not a name
    assert not is_acronym("OK")
    assert is_acronym("QA")


@given(st.text(alphabet=st.sampled_from("ABCDcd 漢字İıé-\u200bQA"), max_size=40))
def test_counted_terms_match_the_term_list_with_acronyms(text: str) -> None:
    assert term_counts(text) == dict(Counter(terms(text)))


def test_an_acronym_decides_between_two_memories_that_share_the_rest() -> None:
    pool = [
        doc("Canary releases", "Argo Rollouts promotes the canary; Argo aborts on errors."),
        doc("本番デプロイ", "マージ後に Argo CD が同期します。"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool)
    assert index.rank("Argo CD で rollback するには", 5)[0] == 1


# --------------------------------------------------------------------------- common words


def test_a_question_of_common_words_only_has_no_terms() -> None:
    assert query_candidates("hello again, long time no see") == []
    assert query_candidates("long time, no Kestrel") != []


def test_inflections_of_common_words_and_other_languages_time_words_are_common() -> None:
    weights = {
        qt.term: qt.weight
        for qt in query_candidates("keeps helped making quokkas вечер 방법 에서 方法")
    }
    assert weights == {
        "keeps": COMMON_WEIGHT,
        "helped": COMMON_WEIGHT,
        "making": COMMON_WEIGHT,
        "quokkas": 1.0,
        "вечер": COMMON_WEIGHT,
        "방법": COMMON_WEIGHT,
        "에서": COMMON_WEIGHT,
        "方法": COMMON_WEIGHT,
    }


def test_a_memory_that_only_common_words_match_is_not_a_match() -> None:
    pool = [doc("Night shift handover", "Who takes the night pager."), *filler(20)]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("long night with the quokkas", 5) == []
    assert index.rank("night shift quokkas", 5) == [0]
    # the ranking of every document with evidence still shows it, judged none
    assert [m.index for m in index.matches("long night with the quokkas")] == [0]


# --------------------------------------------------------------------------- one-word queries


def test_one_word_that_several_memories_use_alike_is_not_a_question() -> None:
    pool = [
        doc("Ledger deploy", "How to deploy the ledger service."),
        doc("Search deploy", "How to deploy the search service."),
        doc("Billing deploy", "How to deploy the billing service."),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("deploy", 5) == []
    assert index.rank("deploy?", 5) == []
    assert index.rank("ledger deploy", 5)[0] == 0  # two words: a question


def test_one_word_that_one_memory_owns_is_answered() -> None:
    pool = [
        doc("Feature flags live in Unleash", "Every change ships behind an Unleash toggle."),
        doc("Release notes", "Mention the Unleash toggle name in the notes."),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("what about Unleash?", 5) == [0]  # the notes mention it in passing
    assert index.rank("Unleash", 5) == []  # the word alone asks nothing
    assert set(index.rank("Unleash toggle name", 5)) == {0, 1}  # a question: both may answer


@pytest.mark.parametrize(
    ("turn", "ordinary"),
    [
        ("deploy", True),
        ("deploy?", True),
        ("  сервис. ", True),
        ("déploiement", True),
        ("数据库", True),
        ("デプロイ", True),
        ("ありがとう", True),
        ("배포는?", True),
        ("Unleash", True),  # a capital first letter says nothing
        ("Datenbank", True),
        ("VPN", False),
        ("GitLab", False),
        ("billing-api", False),
        ("ledger_pg", False),
        ("v2", False),
        ("ledger deploy", False),
        ("负载均衡", False),  # four Han characters: may be two words
        ("デプロイはどうやるの", False),  # katakana and hiragana: a phrase
        ("デプロイ手順", False),
        ("ฐานข้อมูล", True),  # Thai: a run as short as one word, no common word in it
        ("เซิร์ฟเวอร์", True),  # eight clusters: a loanword
        ("ใครดูแล", False),  # "who looks after": a question word in it
        ("นโยบายลาพักร้อน", False),  # thirteen clusters: may be a sentence
        ("ຖານຂໍ້ມູນ", False),  # Lao has no spaces and no list of common words
        ("base de données", True),  # two words linked by "de": one compound
        ("Base de datos", True),
        ("banco de dados", True),
        ("base di dati", True),
        ("chaîne d'approvisionnement", True),
        ("logs de Kafka", False),  # the second part is a name
        ("salaire de Julie", False),
        ("API de pagos", False),  # capitals after the first letter: a name
        ("ledger deploy procedure", False),  # three words, none a link
        ("base de données clients", False),
    ],
)
def test_one_ordinary_word_is_told_from_a_name_and_a_phrase(turn: str, ordinary: bool) -> None:
    assert query_rules.one_word(turn) is ordinary


def test_one_ordinary_word_asks_nothing_even_when_one_memory_owns_it() -> None:
    pool = [
        doc("Datenbank-Backups", "Die Datenbank wird nachts gesichert."),
        doc("Database backups", "The database is backed up nightly to S3."),
        doc("数据库备份", "数据库每天凌晨备份。"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    for word, owner in (("database", 1), ("数据库", 2)):
        assert index.rank(word, 5) == []
        assert index.fast(word) == []
        assert index.rank(f"{word} backups?", 5)[0] == owner  # more than a word: a question
    assert index.rank("Datenbank", 5) == []
    assert index.rank("DatenBank", 5) == [0]  # written as a name is written


def test_one_thai_word_asks_nothing_and_a_thai_question_is_answered() -> None:
    pool = [
        doc("สำรองฐานข้อมูล", "ฐานข้อมูลสำรองทุกคืนไปที่ S3 ตอนตีสอง"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("ฐานข้อมูล", 5) == []
    assert index.fast("ฐานข้อมูล") == []
    assert index.rank("ฐานข้อมูลสำรองตอนกี่โมง", 5)[:1] == [0]  # a question: answered


def test_an_older_version_does_not_compete_with_its_update_for_one_word() -> None:
    old = doc("On-call rotation", "Opsgenie pages Ana, Ben, Chen.", mtime=0.0)
    new = doc("On-call rotation", "Opsgenie pages Chen, Dee, Ana.", mtime=200 * DAY)
    index = FieldedIndex.of([old, new, *filler(20)], thresholds=OPEN)
    assert index.rank("what about Opsgenie", 5) == [1, 0]  # the owner and its older version


def test_a_lone_cjk_bigram_is_never_fast_delivered() -> None:
    pool = [
        doc("测试服务器申请", "申请测试服务器要在OA系统填表。"),
        doc("Terraform plan 리뷰", "plan 결과는 두 명이 확인한다."),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    for query, first in (("服务？谢谢", 0), ("확인 좀", 1)):  # one topical bigram, not one word
        assert index.rank(query, 5) == [first]  # still ranked, for the selector
        assert index.fast(query) == []
    assert index.fast("what about Terraform") == [1]  # a whole word is fast as before


# --------------------------------------------------------------------------- CJK runs


def test_a_run_of_overlapping_bigrams_counts_as_fewer_words_than_bigrams() -> None:
    pool = [
        doc(
            "测试服务器申请",
            "在OA系统里填写测试服务器申请表。",
            description="申请测试服务器要在OA系统填表",
        ),
        doc(
            "日志保留策略",
            "日志统一写入 Loki，超过保留期后自动删除。",
            description="应用日志保留十四天",
        ),
        *filler(20),
    ]
    index = FieldedIndex.of(pool)
    # 系统里 is the word 系统 and a postposition; 日志 is what the question is about
    assert index.rank("日志都写到哪个系统里了", 5)[0] == 1


def test_the_run_rule_changes_the_order_only_not_the_judgement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = [doc("日志保留策略", "日志统一写入 Loki"), doc("系统里", "系统里的配置"), *filler(20)]
    index = FieldedIndex.of(pool)
    query = "日志都写到哪个系统里了"
    judged = {m.index: m.judgement for m in index.matches(query)}
    monkeypatch.setattr(fielded, "RUN_CREDIT", 1.0)
    plain = FieldedIndex.of(pool)
    assert {m.index: m.judgement for m in plain.matches(query)} == judged


def test_a_lone_piece_of_a_katakana_word_is_not_a_match() -> None:
    pool = [
        doc("レビューの書き方", "メンションは一人だけにしてください。"),
        doc("ラーメン部", "毎週金曜日にラーメンを食べに行く。"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("おすすめのラーメン屋ある？", 5) == [1]
    assert index.rank("メンションのルール", 5)[0] == 0  # the whole word still matches


def test_a_katakana_word_counts_only_where_most_of_it_is_shared() -> None:
    pool = [
        doc("証明書の更新", "ワイルドカード証明書は自動で更新される。"),
        doc("ロードバランサーの設定", "ロードバランサーのタイムアウトは六十秒。"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    # ルド and ドカ are two of ワールドカップ's six bigrams: another word
    assert index.rank("ワールドカップの試合", 5) == []
    # バランサー holds four of ロードバランサー's seven bigrams: the same word
    assert index.rank("バランサーは？", 5) == [1]
    assert index.rank("ロードバランサーは？", 5) == [1]
    assert index.rank("ワイルドカードの証明書", 5)[0] == 0
    terms_of = {qt.term: qt.words for qt in query_candidates("ワールドカップ、ラーメン")}
    assert terms_of["ルド"] == {"ワールドカップ"}
    assert terms_of["メン"] == {"ラーメン"}


def test_katakana_forms_are_the_word_its_spellings_and_the_ends_of_a_compound() -> None:
    assert katakana_parts("トークン") == {"トークン"}  # トーク + ン is not a compound
    assert katakana_parts("サーバー") == {"サーバー", "サーバ"}
    compound = katakana_parts("アクセストークン")
    assert {"アクセス", "トークン", "アクセストークン"} <= compound
    assert "トーク" not in compound  # inside, not at an end
    assert all(len(f) >= 3 and not f.startswith("ー") for f in compound)
    # half-width katakana is the same word; a run of two characters is no word form
    assert katakana_forms("ﾄｰｸﾝとペン") == {"トークン": 1}
    assert is_katakana_form("トークン")
    assert not is_katakana_form("トー")  # a bigram
    assert not is_katakana_form("token")


def test_a_katakana_word_inside_a_longer_other_word_is_not_a_match() -> None:
    pool = [
        doc("パッケージの置き場所", "認証は個人アクセストークンで行う。"),
        doc("サーバー一覧", "全環境のサーバーの担当者をまとめた表。"),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    # every bigram of トーク (talk) is in トークン (token): another word
    assert index.rank("トークの履歴", 5) == []
    # a word at either end of a compound is the word
    assert index.rank("トークンの期限", 5) == [0]
    assert index.rank("アクセスの権限", 5) == [0]
    # one long-vowel mark apart: one word
    assert index.rank("サーバはどこ", 5) == [1]
    assert index.rank("サーバーはどこ", 5) == [1]


@given(st.text(alphabet=st.sampled_from("トークンサーバアクセスー・の期限 ﾄｰｸ"), max_size=30))
def test_whole_katakana_words_are_never_query_terms_nor_field_length(text: str) -> None:
    # the fragment rule alone looks them up: no score, no length normalisation counts them
    assert not any(is_katakana_form(qt.term) for qt in query_candidates(text))
    features = DocumentFeatures.of(doc(text, text))
    assert features.lengths[0] == sum(term_counts(text).values())
    assert set(katakana_forms(text)) <= set(features.counts[0])


# --------------------------------------------------------------------------- the corpus


def test_held_out_small_talk_stays_at_its_measured_silence() -> None:
    """``small-talk-heldout`` was written before any issue-18 rule of this change and not
    tuned on (docs/evaluation.md): measured 63.4% silent before, 82.9% after."""
    corpus = load_corpus(FIXTURE)
    report = evaluate_many(corpus, ["fielded", "bm25"])
    held = report["fielded"].slices["small-talk-heldout"]
    assert held.no_result_recall is not None
    assert held.no_result_recall >= 0.82
    assert held.no_result_precision == 1.0
    ids = {c.id for c in corpus.cases if c.slice == "small-talk-heldout"}
    assert not any(r.fast for r in report["fielded"].results if r.id in ids)
    baseline = report["bm25"].slices["small-talk-heldout"].no_result_recall
    assert baseline is not None
    assert held.no_result_recall > baseline
    for name in ("chinese", "mixed"):
        ours, theirs = report["fielded"].slices[name].top1, report["bm25"].slices[name].top1
        assert ours is not None
        assert theirs is not None
        assert ours > theirs, name


def test_the_second_held_out_small_talk_stays_at_its_measured_silence() -> None:
    """``small-talk-heldout-2`` was written after the issue-18 rules and before reading why
    any small talk fails, and is never tuned on (docs/evaluation.md): 32 of 40 silent
    (80.0%; bm25 60.0%), every silence right, one turn fast-delivered (a Japanese sports
    question and the TLS certificate memory)."""
    corpus = load_corpus(FIXTURE)
    report = evaluate_many(corpus, ["fielded", "bm25"])
    held = report["fielded"].slices["small-talk-heldout-2"]
    assert held.cases == 40
    assert held.no_result_recall is not None
    assert held.no_result_recall >= 0.80
    assert held.no_result_precision == 1.0
    ids = {c.id for c in corpus.cases if c.slice == "small-talk-heldout-2"}
    assert all(int(i[len("talk-g") :]) % 2 == 1 for i in ids)  # held out of calibrate
    assert sum(1 for r in report["fielded"].results if r.id in ids and r.fast) <= 1
    baseline = report["bm25"].slices["small-talk-heldout-2"].no_result_recall
    assert baseline is not None
    assert held.no_result_recall > baseline


@pytest.mark.parametrize(
    ("suffix", "silent", "recall", "top1"),
    [
        # measured once, blind (docs/evaluation.md): 41 of 48 silent; the answerable
        # questions all found, 28 of 30 first
        ("3", 41, 1.0, 28 / 30),
        # 42 of 48 silent; 23 of 30 questions found (most misses ask across languages),
        # 22 first
        ("4", 42, 23 / 30, 22 / 30),
    ],
)
def test_the_blind_held_out_sets_stay_at_their_measured_figures(
    suffix: str, silent: int, recall: float, top1: float
) -> None:
    """``small-talk-heldout-N`` and ``answerable-heldout-N`` (N = 3, 4) were written by
    someone who saw only the memories, and measured once before being read."""
    corpus = load_corpus(FIXTURE)
    report = evaluate_many(corpus, ["fielded", "bm25"])
    talk = report["fielded"].slices[f"small-talk-heldout-{suffix}"]
    asked = report["fielded"].slices[f"answerable-heldout-{suffix}"]
    ids = {c.id for c in corpus.cases if c.slice.endswith(f"heldout-{suffix}")}
    assert all(int(i.rsplit("-", 1)[1][1:]) % 2 == 1 for i in ids)  # held out of calibrate
    assert talk.cases == 48
    assert talk.no_result_recall is not None
    assert talk.no_result_recall >= silent / 48 - 1e-9
    assert talk.no_result_precision == 1.0
    chat = {c.id for c in corpus.cases if c.slice == f"small-talk-heldout-{suffix}"}
    assert not any(r.fast for r in report["fielded"].results if r.id in chat)
    assert asked.recall_at_5 is not None
    assert asked.recall_at_5 >= recall - 1e-9
    assert asked.top1 is not None
    assert asked.top1 >= top1 - 1e-9
    theirs = report["bm25"].slices[f"small-talk-heldout-{suffix}"].no_result_recall
    assert theirs is not None
    assert talk.no_result_recall > theirs


def test_a_query_its_best_memory_barely_covers_is_not_answered() -> None:
    pool = [
        doc("Planning meeting notes", "We put the quarter's goals in a table by team."),
        doc("Excel exports for finance", "Finance opens the CSV exports in Excel."),
        *filler(20),
    ]
    query = "how do I make a pivot table with slicers and a timeline?"
    floorless = FieldedIndex.of(pool, thresholds=OPEN)
    assert floorless.rank(query, 5) == [0]  # *table* alone
    best = floorless.matches(query)[0].coverage
    index = FieldedIndex.of(pool, thresholds=attrs.evolve(OPEN, answer_coverage=best * 1.01))
    assert index.rank(query, 5) == []
    assert all(m.judgement is Judgement.NONE for m in index.matches(query))
    # a floor just under the best coverage answers; and a paste is never held to it
    under = FieldedIndex.of(pool, thresholds=attrs.evolve(OPEN, answer_coverage=best * 0.99))
    assert under.rank(query, 5) == [0]
    words = [
        f"{a}{b}" for a in ("alpha", "bravo", "delta", "gamma", "omega") for b in "klmnpqrstvwxyz"
    ]
    paste = "\n".join(f"pivot table {' '.join(words[n::10])}" for n in range(10))
    assert index.query_terms(paste)[2]  # cut to its most specific terms: a paste
    assert index.rank(paste, 5) == [0]


def test_short_thai_turns_written_apart_from_the_rule() -> None:
    """Held out (tests/fixtures/thai-short-turns.json, written before the rule was run on
    them): no terse Thai question reads as one word; of the keywords typed alone, 30 of 40
    do, as measured (the rest are longer than one word may be, or hold a common word:
    *เงินเดือน*, salary, holds *เดือน*, month)."""
    turns = json.loads((FIXTURE.parent / "thai-short-turns.json").read_text(encoding="utf-8"))
    assert [q for q in turns["questions"] if query_rules.one_word(q)] == []
    assert sum(query_rules.one_word(w) for w in turns["single_words"]) >= 30
