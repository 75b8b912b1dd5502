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


@pytest.mark.parametrize(
    "turn",
    [
        "how do I find which process is using port 8080 on a Mac?",
        "How can I undo a pushed commit?",
        "git : comment je renomme une branche en local ET sur le remote ?",
        "comment j'installe Node sur Windows ?",
        "Wie berechne ich in SQL eine laufende Summe pro Kunde?",
        "¿Cómo puedo ver la contraseña del wifi desde el portátil?",
        "como eu faço um gráfico de pizza no Sheets?",
        "Come posso esportare un foglio in PDF?",
        "как мне поставить Python 3.12 на Ubuntu?",
        "ok thanks\nhow do I squash two commits?",  # a line of its own opens a clause too
    ],
)
def test_the_subject_of_a_how_to_is_not_the_asker(turn: str) -> None:
    # a generic how-to in the first person asks about the task, not about the person
    assert not speaks_of_self(turn)


@pytest.mark.parametrize(
    "turn",
    [
        "Mon abonnement se renouvelle, comment je peux le résilier ?",  # "mon" still counts
        "Ich brauch einen Testserver – wie bekomm ich den?",
        "Wie komme ich ins Büro rein, reicht der Ausweis noch?",  # names work: the office
        "remind me how I like my reviews",
        "do you remember how I like reviews?",  # "how I": no auxiliary, about the asker
        "tu te rappelles comment je préfère les revues ?",  # "comment" inside a clause
        "¿alguien como yo puede pedir acceso a producción?",  # "como yo": like me
        "Preciso de um servidor de teste, como eu peço?",  # Portuguese "I need"
        "Necesito acceso a staging",
    ],
)
def test_a_how_to_with_another_first_person_word_or_about_work_still_does(turn: str) -> None:
    assert speaks_of_self(turn)


@given(st.text(max_size=60), st.sampled_from(["my", "mein", "mon", "мой", "我", "내가", "मैं"]))
def test_a_pronoun_as_a_word_of_its_own_makes_any_turn_first_person(
    text: str, pronoun: str
) -> None:
    assert speaks_of_self(f"{text} {pronoun} ?")


@given(
    st.sampled_from(["how do I", "wie mache ich", "comment je", "cómo puedo", "как мне"]),
    st.text(alphabet=st.characters(categories=["Nd", "P", "Zs", "Sm"]), max_size=30),
)
def test_a_how_to_subject_alone_is_not_first_person_and_a_possessive_makes_it(
    how: str, rest: str
) -> None:
    assert not speaks_of_self(f"{how} {rest}")
    assert speaks_of_self(f"{how} {rest} my")


@given(st.text(alphabet=st.characters(categories=["Nd", "P", "Zs", "Sm"]), max_size=40))
def test_a_turn_with_no_letter_never_speaks_of_self(text: str) -> None:
    assert not speaks_of_self(text)
