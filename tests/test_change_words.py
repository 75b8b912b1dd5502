"""The words by which a note says that it changes an earlier state (issue 18)."""

from __future__ import annotations

import pytest

from memrecall.engine.scoring.analysis import term_counts
from memrecall.engine.scoring.change_words import declares_change


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
