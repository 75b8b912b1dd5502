"""Whether a turn speaks of the person asking (memrecall.engine.scoring.first_person)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.first_person import speaks_of_self


@pytest.mark.parametrize(
    "turn",
    [
        "who's my manager again?",
        "remind me who I report to",
        "I'm filling in the org chart form",
        "Darf ich Smileys in die MR-Beschreibung setzen?",
        "Wie groß ist mein Team eigentlich?",
        "Tu te rappelles ce que je fais exactement dans la boîte ?",
        "j'ai oublié le nom du canal",
        "qui partage les gardes avec moi en ce moment ?",
        "si algo falla a las 20h, ¿me avisas?",
        "Como você deve revisar meu código?",
        "Io preferisco risposte brevi",
        "Ho aggiornato il deployment.yaml, posso applicarlo?",  # the pronoun dropped
        "No tengo tarjeta de acceso, ¿cómo entro?",
        "não tenho cartão de acesso, pode?",
        "у меня в сентябре какой-то забег, какого числа?",
        "Набросай пару строк обо мне",
        "मेरे लेवल के हिसाब से समझाओ",
        "tôi cần gì",
        "我一般哪几天下午不在办公室来着",
        "私の担当はどこ？",
        "내가 회사 나가는 날이 언제였지?",
        "제 코드 리뷰 어떻게 해요?",
        "ตอนฉันไปเที่ยว ใครดูแลแทน",
    ],
)
def test_a_turn_in_the_first_person_speaks_of_self(turn: str) -> None:
    assert speaks_of_self(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "what is the standup time?",
        "¿Cuánto cuesta al mes?",  # Spanish "mes" is a month
        "ma che cosa succede?",  # Italian "ma" is "but"
        "IO performance of the ledger disks",  # two capitals: an acronym
        "the MI team's dashboard",
        "Mitarbeiter im Büro",  # "mi" and "im" inside and beside words
        "내부 시스템 점검",  # 내 inside a word: "inside"
        "제1 회의실 예약",  # 제 before a digit: "the first"
        "how does one rotate the keys?",
    ],
)
def test_a_turn_without_a_first_person_pronoun_does_not(turn: str) -> None:
    assert not speaks_of_self(turn)


@given(st.text(max_size=60), st.sampled_from(["my", "ich", "je", "мне", "我", "내가", "मैं"]))
def test_a_pronoun_as_a_word_of_its_own_makes_any_turn_first_person(
    text: str, pronoun: str
) -> None:
    assert speaks_of_self(f"{text} {pronoun} ?")


@given(st.text(alphabet=st.characters(categories=["Nd", "P", "Zs", "Sm"]), max_size=40))
def test_a_turn_with_no_letter_never_speaks_of_self(text: str) -> None:
    assert not speaks_of_self(text)
