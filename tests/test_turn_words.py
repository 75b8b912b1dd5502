"""What kind of turn a query is (issue 18, silence on small talk): thanks and greetings are
answered only by a strong match, a question about one's home or family only by memories that
speak of it, and a question naming something no memory knows only by a strong match."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import query_words
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement, Thresholds
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.engine.scoring.turn_words import (
    elsewhere,
    names,
    private_phrases,
    says_social,
    strong_only,
)
from tests.factories import filler, memory

SPLIT = Thresholds(0.0, 0.0, 0.5, 0.0)
"""Any match is at least weak, and strong from half the query's weight up: coverage alone
decides, so a test can say which documents are strong."""

NO_TALK = TurnModel({}, bias=-50.0, cutoff=0.5)
"""A turn model that calls no turn small talk: these tests are about the phrase rules alone
(tests/test_turn_model.py has the model's)."""


@pytest.mark.parametrize(
    "query",
    [
        "thanks a lot, that fixed it",
        "Danke dir, das hat echt geholfen!",
        "Vielen Dank für deine Hilfe gestern",
        "Merci beaucoup, bonne soirée",
        "Valeu demais pela ajuda!",
        "Спасибо, всё заработало",
        "صباح الخير",
        "Chào bạn, chúc bạn một ngày tốt lành!",
        "你好呀，终于到周五了",
        "ありがとうございます！",
        "감사합니다 좋은 하루 보내세요!",
        "Guten Morgen! Was für ein grauer Montag heute.",
        "สวัสดีครับ ขอบคุณมากนะ",
        "bin gleich wieder da",
        "Hasta luego, nos vemos el lunes",
        "Gute Nacht, bis später!",
        "Bonne soirée à tous",
        "Buona serata!",
        "До свидания, хороших выходных",
        "好的，明天见",
        "お先に失礼します",
        "बहुत-बहुत धन्यवाद, काम बन गया",
        "नमस्ते! आज मौसम अच्छा है",
        "Dzięki, to wszystko na dziś",
        "Teşekkürler, iyi akşamlar!",
        "Terima kasih banyak",
        "แล้วเจอกันพรุ่งนี้นะ",
    ],
)
def test_thanks_and_greetings_are_social_in_many_languages(query: str) -> None:
    assert says_social(query_words(query))


@pytest.mark.parametrize(
    "query",
    [
        "the ledger canary looks bad, how do I abort it?",  # "bad" alone is no apology
        "where do the mobile crash reports go?",
        "Wann fährt der Shuttle morgens ab?",  # "Morgen" without "guten"
        "设置里的通知怎么关？",
        "明日のデプロイ時間は？",
        # goodbyes in words questions use too are left out
        "where can I see if ingestion is falling behind?",
        "Is Friday afternoon a good slot to put a pairing session on the calendar?",
        "Можно отложить до встречи с клиентом?",
        "¿Puedo dejarlo hasta mañana?",
        "Reicht es bis morgen früh?",
        "Tu peux le finir pour demain ?",
    ],
)
def test_ordinary_questions_are_not_social(query: str) -> None:
    assert not says_social(query_words(query))


@pytest.mark.parametrize(
    ("query", "private"),
    [
        ("家里路由器的WiFi密码忘了，怎么重置？", True),
        ("Mi hijo quiere aprender Python, ¿qué versión le instalo?", True),
        ("Come si toglie il calcare dalla macchina del caffè di casa mia?", True),
        ("My sister asked me to review her wedding speech", True),
        ("Mein Drucker zu Hause druckt nur noch Streifen", True),
        ("우리 아들 생일 선물 추천해줘", True),
        ("วันนี้อากาศเป็นยังไงบ้าง", True),
        ("어버이날 부모님 선물 뭐가 좋을까요", True),
        ("Mi madre cumple 70 años el sábado, ¿qué le puedo regalar?", True),
        ("友達と英語の勉強会をやりたいんだけど、いい教材ある？", True),
        ("제주도 가는데 맛집 추천해줘", True),
        ("最近肩こりがひどいです", True),
        ("me voy a Sevilla con mi pareja en mayo", True),
        ("เชียงใหม่มีร้านกาแฟเงียบๆ แถวนิมมานฯ ให้นั่งทำงานไหม", True),  # a café
        ("อยากไปญี่ปุ่นช่วงใบไม้เปลี่ยนสี ควรไปเดือนไหนดี", True),  # autumn leaves
        ("दिवाली पर टीम को क्या गिफ़्ट दूँ?", True),  # a gift
        ("पूजा का जन्मदिन कब है?", True),  # a birthday
        ("Ideen für ein Geschenk zum Abschied von Jonas?", True),
        ("引っ越し先のマンション、オートロックがスマホアプリで開くタイプ", True),
        ("趣味のブログをNetlifyにデプロイしたら画像が出ない", True),
        ("아이 어린이집 적응 기간은 보통 얼마나 걸려요?", True),
        ("副業の申請は会社のどこに出せばいい？", False),  # the company: a question about work
        ("自宅から社内VPNに繋ぐには？", False),
        ("パスワードを忘れたのでポート番号を教えて", False),  # not a passport's bigrams
        # a trip over the holidays is also leave, a work matter
        ("ตอนฉันไปเที่ยวสงกรานต์ ใครตัดสินใจเรื่องงานแทน", False),
        # a friend who could join the team: a question about work
        ("my friends want to apply, does the team pay a referral bonus?", False),
        # home or family beside the office, the job or the team: a question about work
        ("how do I reach the office network from home?", False),
        ("Wie komm ich von zu Hause ins Büro-VPN?", False),
        ("Comment je me connecte au VPN du bureau depuis chez moi ?", False),
        ("Who do I report a personal data breach to?", False),  # "personal" is not private
        ("¿Cuáles son los límites de subida?", False),  # Spanish "son" is "they are"
        # words of private life that also mean something at work
        ("Any tips for kinder code review comments?", False),
        ("how do I connect to the Brother printer on floor 2?", False),
        ("what's the on-call phone number?", False),
        ("where is the home page of the status site?", False),
        ("彼女が担当しているデプロイは？", False),
        ("is there a handy script for rotating the keys?", False),
    ],
)
def test_private_life_phrases(query: str, private: bool) -> None:
    assert bool(private_phrases(query_words(query))) is private


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("how do I make a pivot table in Excel?", ["Excel"]),
        # German capitalises its nouns: "für" (folded "fur") says the question is German
        ("Löschfrist für Kundendaten?", []),
        ("how to write a LEFT JOIN in SQL", ["LEFT", "JOIN", "SQL"]),
        ("Pythonのリスト内包表記とは", ["Python"]),
        ("怎么在iPhone上截长图？", ["iPhone"]),
        ("Deploys freeze on Friday. Is Terraform still used?", ["Terraform"]),
        ("where is the default namespace 是什么", []),  # lower case: words, not names
        ("Wann fährt der Firmen-Shuttle vom Bahnhof ab?", []),  # German nouns
        ("what was the Zoom link?", ["Zoom"]),  # English "was" is no German marker
    ],
)
def test_names_are_capitalised_words_inside_a_sentence(query: str, named: list[str]) -> None:
    assert names(query, query_words(query)) == named


def test_a_question_in_a_clause_of_its_own_is_read_for_itself() -> None:
    pool = _pool()
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    # family in one clause, the question about the office VPN in another: answered
    assert index.rank("my kid is sick today — how do I connect to the acme profile?", 1) == [2]
    # thanks, then a question a memory answers only weakly: that memory still counts
    assert index.judge("thanks! one more thing: the action items?", 5)
    # thanks and the weak word in one clause: nothing
    assert index.judge("thanks, the action items look right", 5) == []


def test_names_a_memory_knows_keep_the_question_open() -> None:
    words = query_words("Where is the Sentry URL? And the Grafana one?")
    known = {"sentry", "grafana"}
    # two of three names known: the question is about what the memories know, and a weak
    # memory answers it only by one of them
    assert strong_only(
        "Where is the Sentry URL? And the Grafana one?", words, lambda t, k: t in known
    ) == frozenset({("word", "sentry"), ("word", "grafana")})
    # acronyms name no thing: a question with only those is open to any memory
    asked = "Can I merge PRs when CI is red?"
    assert strong_only(asked, query_words(asked), lambda t, k: True) is None
    assert (
        strong_only(
            "Where is the Zoom URL?", query_words("Where is the Zoom URL?"), lambda t, k: t in known
        )
        == frozenset()
    )
    # weekdays and months are written with a capital and name nothing
    assert names("can I park on Thursday in March?", query_words("park Thursday March")) == []


def _pool() -> list:  # type: ignore[type-arg]
    return [
        memory("Guest Wi-Fi password", "", "The guest Wi-Fi password changes daily."),
        memory("Meeting notes", "", "The table of action items from the payments sync."),
        memory("Office VPN", "", "Connect to the office VPN with the acme profile."),
        memory("Home office", "", "Working from home on Fridays: the home router is a Fritzbox."),
        *filler(20),
    ]


def test_a_question_about_home_is_answered_only_by_memories_that_speak_of_it() -> None:
    index = FieldedIndex.of(_pool(), thresholds=SPLIT, turns=NO_TALK)
    assert index.rank("how do I reset the Wi-Fi password?", 5)[0] == 0
    # asked about the home Wi-Fi: the guest Wi-Fi memory answers something else
    asked = index.rank("how do I reset my home Wi-Fi password?", 5)
    assert 0 not in asked
    assert asked == [3]
    # from home to the office: a question about work, answered as before
    assert index.rank("how do I reach the office VPN from home?", 5)[0] == 2


def test_thanks_get_only_a_strong_match() -> None:
    index = FieldedIndex.of(_pool(), thresholds=SPLIT, turns=NO_TALK)
    assert index.judge("the action items look right", 5)  # weak matches without thanks
    assert index.judge("thanks, the action items look right", 5) == []
    assert index.rank("thanks! what is the guest Wi-Fi password?", 5)[0] == 0


def test_a_question_naming_what_no_memory_knows_gets_only_a_strong_match() -> None:
    pool = _pool()
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    assert index.judge("how do I make a pivot table?", 5)  # "table": a weak match
    assert index.judge("how do I make a pivot table in Excel?", 5) == []
    # once a memory says Excel, the name is known, and the question is answered
    known = FieldedIndex.of(
        [*pool, memory("Budget sheet", "", "The budget lives in Excel, one table per team.")],
        thresholds=SPLIT,
        turns=NO_TALK,
    )
    assert known.rank("how do I make a pivot table in Excel?", 1) == [len(pool)]


def test_a_question_naming_what_memories_know_is_answered_by_those_that_hold_it() -> None:
    pool = [
        memory("Stand-up", "", "The daily stand-up is a Zoom call at 9:30."),
        memory("Design system", "", "Buttons use the brand background colour."),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    assert index.rank("how do I change the background colour of a button?", 5)[0] == 1
    # the question is about Zoom: the memory that only says "background" answers something else
    assert index.rank("how do I add a background blur in Zoom?", 5) == [0]
    # an acronym is no name: the memory about merging answers without saying CI
    merging = FieldedIndex.of(
        [
            memory("Merging", "", "Merge a pull request after one approving review."),
            memory("Builds", "", "CI builds every push on the shared runners."),
            *filler(20),
        ],
        thresholds=SPLIT,
        turns=NO_TALK,
    )
    assert merging.rank("can I merge the pull request while CI runs?", 5)[0] == 0


def test_an_update_of_a_memory_that_holds_the_name_answers_with_it() -> None:
    day = 86_400.0
    pool = [
        memory(
            "Staff parking",
            "",
            "Staff park under Building B; the yearly parking permit is at the front desk.",
            mtime=0.0,
        ),
        memory(
            "Staff parking",
            "",
            "Staff parking moved to the Riverside garage; book a spot in the Parkly app.",
            mtime=200 * day,
        ),
        memory("Canteen", "", "The canteen by the parking entrance opens at noon.", mtime=0.0),
        *filler(20),
    ]
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    asked = index.rank("where do I get the parking permit for Building B?", 5)
    # the newer note never says Building: it may update the one that does, so it answers
    assert set(asked[:2]) == {0, 1}
    # one written as early that only says parking is no answer to a question about Building B
    assert 2 not in asked


VOCABULARY = ["home", "office", "wifi", "password", "table", "router", "budget", "Excel"]
QUERY_WORDS = [*VOCABULARY, "thanks", "Zebra", "how", "my", "kids", "zu", "Hause"]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    contents=st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5), min_size=1, max_size=6
    ),
    asked=st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=6),
)
def test_the_turn_rules_hold_for_any_pool_and_query(
    contents: list[list[str]], asked: list[str]
) -> None:
    pool = [memory(f"m{i}", "", " ".join(words)) for i, words in enumerate(contents)]
    pool += filler(10)
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    query = "Well, " + " ".join(asked)  # one clause: the rules read the query as a whole
    words = query_words(query)
    judged = index.judge(query, 10)
    known = {term for doc in contents for word in doc for term in query_words(word)}
    limited = strong_only(query, words, lambda term, kind: term in known)
    if limited is not None:
        # only strong memories, or weak ones that hold a term that lets them through
        for i, j in judged:
            held = query_words(" ".join(contents[i])) if i < len(contents) else frozenset()
            assert j is Judgement.STRONG or any(term in held for _, term in limited)
    phrases = private_phrases(words)
    if phrases:
        terms = [query_words(" ".join(doc)) for doc in contents]
        holders = {
            (kind, term): {i for i, held in enumerate(terms) if term in held}
            for phrase in phrases
            for kind, term in phrase
        }
        assert not elsewhere([i for i, _ in judged], query, words, lambda t, k: holders[(k, t)])
        for i, _ in judged:
            assert any(all(i in holders[pair] for pair in phrase) for phrase in phrases)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(
    contents=st.lists(
        st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5), min_size=1, max_size=6
    ),
    remark=st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=3),
    asked=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3),
)
def test_a_memory_answers_a_private_remark_only_by_the_question_beside_it(
    contents: list[list[str]], remark: list[str], asked: list[str]
) -> None:
    pool = [memory(f"m{i}", "", " ".join(words)) for i, words in enumerate(contents)]
    pool += filler(10)
    index = FieldedIndex.of(pool, thresholds=SPLIT, turns=NO_TALK)
    # a remark about one's kids, then a question in a clause of its own
    query = f"my kids {' '.join(remark)} — {' '.join(asked)}?"
    phrases = private_phrases(query_words(query))
    if not phrases:
        return  # the question names work: no memory is held back
    question = query_words(" ".join(asked))
    free = question if not private_phrases(question) else frozenset()
    for i, _ in index.judge(query, 10):
        held = query_words(f"{pool[i].title} {pool[i].body}")
        assert any(all(t in held for _, t in p) for p in phrases) or held & free


def test_the_turn_rules_read_a_huge_query_only_as_far_as_its_analysis_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memrecall.engine.scoring import analysis, turn_words

    read: list[int] = []
    real = analysis.query_candidates

    def counting(text: str) -> list:  # type: ignore[type-arg]
        read.append(len(text))
        return real(text)

    monkeypatch.setattr(turn_words, "query_candidates", counting)
    huge = "my kids. password. " * 10_000  # one clause in two is private: many clauses
    assert len(huge) > 10 * analysis.MAX_QUERY_CHARS
    assert elsewhere(range(3), huge, query_words(huge), lambda term, kind: ())
    assert 0 < sum(read) <= analysis.MAX_QUERY_CHARS + 1
    # 10,000 names in the whole query; only those in the part analysed are read
    assert len(names(huge.replace("password", "Zebra"), frozenset())) < 10_000
