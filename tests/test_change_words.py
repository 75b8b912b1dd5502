"""The words by which a note says that it changes an earlier state, and by which a question
asks whether something still holds (issue 18)."""

from __future__ import annotations

import pytest

from memrecall.engine.scoring.analysis import query_words, term_counts
from memrecall.engine.scoring.change_words import CURRENT_WORDS, asks_current, declares_change


@pytest.mark.parametrize(
    "text",
    [
        "Standups now start at 10:00.",
        "Expenses are no longer filed by e-mail.",
        "The old deploy script was retired last month.",
        "Ahora las vacaciones se solicitan en Factorial.",
        "Désormais, les congés se posent dans le portail.",
        "Ab sofort läuft die Freigabe über das Portal.",
        "Теперь отпуск оформляют в портале.",
        "报销改为在线上系统提交。",
        "旧ツールは廃止されました。",
        "이제 휴가는 포털에서 신청합니다.",
    ],
)
def test_an_update_in_any_of_several_languages_says_so(text: str) -> None:
    assert declares_change(term_counts(text))


@pytest.mark.parametrize(
    "text",
    [
        "Change requests go to the CAB on Thursdays.",
        "Deploy the ledger service between 10:00 and 16:00.",
        "Ya está todo listo para la entrega.",
        "Mehr Details stehen im Wiki.",
        "Больше информации в вики.",
        "报销在线上系统提交。",
        "経費は月末までに申請する。",
        "휴가는 포털에서 신청합니다.",
    ],
)
def test_a_plain_statement_of_a_fact_does_not(text: str) -> None:
    assert not declares_change(term_counts(text))


@pytest.mark.parametrize(
    "question",
    [
        "is the shuttle still leaving at 8:15?",
        "Hängt der Verbandskasten noch neben der Küche?",
        "La navette de 8h15, elle existe toujours ?",
        "¿Todavía usamos Jenkins para el CI?",
        "Ainda tá tudo no Dropbox?",
        "Il parcheggio si prenota ancora su Slack?",
        "Мы ещё пушим образы в Docker Hub?",
        "全员大会还是在餐厅开吗？",
        "勉強会はまだ7階でやってる？",
        "아직도 금요일에 배포해요?",
        "勉強会って7階のラウンジだっけ？",
        "배포는 금요일에 하는 거 맞죠?",
    ],
)
def test_a_question_about_what_holds_now_says_so(question: str) -> None:
    assert asks_current(query_words(question))


@pytest.mark.parametrize(
    "question",
    [
        "what did we decide about refund webhooks?",
        "Wie installiere ich den Druckertreiber?",
        "¿Dónde está el runbook de failover?",
        "怎么申请报销？",
    ],
)
def test_a_question_about_a_fact_does_not(question: str) -> None:
    assert not asks_current(query_words(question))


def test_the_current_words_are_terms_as_the_analysis_cuts_them() -> None:
    for word in CURRENT_WORDS:
        assert query_words(word) == {word}, word
