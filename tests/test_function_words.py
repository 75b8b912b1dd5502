"""Function words of the languages people write to the agent in (issue 18, silence on small
talk): articles, pronouns, prepositions, conjunctions and auxiliaries are not query terms, so
a turn that shares only them with a memory (``sich``, ``cuando``, ``einer``) gets nothing."""

from __future__ import annotations

import pytest

from memrecall.engine.scoring.analysis import COMMON_WEIGHT, query_candidates
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Thresholds
from tests.factories import memory

OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)
"""Every document with any score is at least weak: only the query's terms decide."""


def weights(query: str) -> dict[str, float]:
    return {qt.term: qt.weight for qt in query_candidates(query)}


@pytest.mark.parametrize(
    ("query", "content", "function"),
    [
        (
            "Welche Kaffeebohnen eignen sich am besten für einen Siebträger?",
            {"kaffeebohnen", "eignen", "siebtrager"},
            {"welche", "sich", "fur", "einen"},
        ),
        (
            "¿Cuándo hay que enviar el informe mensual a finanzas?",
            {"enviar", "informe", "mensual", "finanzas"},
            {"cuando", "hay", "que"},
        ),
        (
            "Est-ce que vous avez déjà migré cette base vers Postgres ?",
            {"migre", "base", "postgres"},
            {"que", "vous", "avez", "deja", "cette"},
        ),
        (
            "Você sabe onde fica o certificado do gateway?",
            {"sabe", "fica", "certificado", "gateway"},
            {"voce", "onde"},
        ),
        (
            "Como você prefere receber o resumo quando o deploy falha?",
            {"prefere", "receber", "resumo", "deploy", "falha"},
            {"voce", "quando"},
        ),
        (
            "Cosa devo controllare quando il backup notturno non parte?",
            {"controllare", "backup", "notturno", "parte"},
            {"devo", "quando"},
        ),
        (
            "В каком канале обсуждают релизы и у кого спросить про доступ?",
            {"канале", "обсуждают", "релизы", "спросить", "доступ"},
            {"каком", "кого", "про"},
        ),
        (
            "Sai dove sono le chiavi della sala server?",
            {"sai", "chiavi", "sala", "server"},
            {"sono", "della"},
        ),
        (
            "Где можно посмотреть, когда был последний деплой?",
            {"посмотреть", "последний", "деплой"},
            {"где", "можно", "когда", "был"},
        ),
        (
            "Bạn có biết những lịch họp của nhóm không?",
            {"biet", "lich", "nhom"},
            {"nhung", "cua", "khong"},
        ),
        (
            "Linux में किसी पोर्ट पर कौन-सा process चल रहा है, कैसे पता करूँ?",
            {"linux", "पोर्ट", "process"},
            {"किसी", "पर", "कौन", "रहा", "कैसे"},
        ),
        (
            "हमारा डेटाबेस कहाँ होस्ट है और उसका बैकअप कब होता है?",
            {"डेटाबेस", "होस्ट", "बैकअप"},
            {"हमारा", "कहां", "और", "उसका", "कब", "होता"},
        ),
    ],
)
def test_function_words_are_dropped_and_content_words_kept(
    query: str, content: set[str], function: set[str]
) -> None:
    terms = weights(query)
    assert content <= set(terms)
    assert not function & set(terms)


@pytest.mark.parametrize(
    "word",
    [
        *("son", "hat", "bin", "war", "man", "comment", "mon", "era", "fare", "vers", "été"),
        *("car", "van", "dove", "dir", "nas", "num", "ali", "ban", "mot", "rat", "minh"),
    ],
)
def test_words_that_are_also_english_content_words_stay_terms(word: str) -> None:
    assert weights(f"the {word} status") != weights("the status")


def test_the_words_of_a_request_weigh_little_in_every_language() -> None:
    for word in (
        *("idee", "consejo", "conseil", "tipps", "dica", "consiglio", "hilfe", "rapide"),
        *("मदद", "बताओ", "तरीका", "करने"),
    ):
        assert weights(f"{word} kubernetes")[word] == COMMON_WEIGHT


def test_a_turn_sharing_only_function_words_with_a_memory_gets_nothing() -> None:
    pool = [
        memory(
            "Sammelpunkt bei Feueralarm",
            "",
            "Der Sammelpunkt befindet sich im Innenhof, wenn einer der Alarme losgeht.",
        ),
        memory("Turnos de guardia", "", "Cuando hay un incidente, llama primero al turno."),
        *(memory(f"note {i}", "", f"kafka backup grafana {i}") for i in range(20)),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert (
        index.rank(
            "Wie funktioniert eigentlich eine Wärmepumpe im Vergleich zu einer Gasheizung?", 5
        )
        == []
    )
    assert index.rank("Mi perro no deja de ladrar cuando salgo, ¿algún consejo?", 5) == []
    # the memories are still found by what they are about
    assert index.rank("Wo ist der Sammelpunkt bei Feueralarm?", 1) == [0]
    assert index.rank("¿Quién está de turno de guardia hoy?", 1) == [1]


@pytest.mark.parametrize(
    "words",
    [
        "gehen machen brauchen wissen",  # German
        "necesito saber encontrar nuevo",  # Spanish
        "trouver besoin nouveau essayer",  # French
        "preciso achar coisa tentar",  # Portuguese
        "trovare bisogno nuovo provare",  # Italian
        "найти нужен новый попробовать",  # Russian
    ],
)
def test_everyday_verbs_and_adjectives_weigh_like_their_english_ones(words: str) -> None:
    # "go, make, need, know, find, new, try" are common words in English; so are the
    # same words in the other languages people write in
    got = weights(f"kubernetes {words}")
    assert got.pop("kubernetes") == 1.0
    assert set(got.values()) == {COMMON_WEIGHT}


def test_a_personal_turn_sharing_only_an_everyday_verb_gets_nothing() -> None:
    pool = [
        memory(
            "Druckertreiber",
            "",
            "Den Treiber für den Drucker in Raum 2.14 gehen wir mit Ali durch.",
        ),
        *(memory(f"note {i}", "", f"kafka backup grafana {i}") for i in range(20)),
    ]
    # a memory that only common words match is no match (whatever the thresholds)
    index = FieldedIndex.of(pool, thresholds=OPEN)
    asked = "Mein Hund frisst kaum. Ab wann sollte ich mit ihm zum Tierarzt gehen?"
    assert index.rank(asked, 5) == []
    assert index.rank("Wo finde ich den Treiber für den Drucker?", 1) == [0]


@pytest.mark.parametrize(
    "turn",
    [
        "¡Hola! ¿Qué tal el fin de semana?",
        "Vielen Dank, das ist sehr nett von Ihnen!",
        "Merci beaucoup pour votre aide, c'est très gentil",
        "Valeu demais pela ajuda!",
        "Grazie mille, sei davvero gentile",
        "Спасибо большое, ты очень помог!",
    ],
)
def test_greetings_and_thanks_have_no_terms(turn: str) -> None:
    # made only of function, filler and common words: no topic, nothing recalled
    assert query_candidates(turn) == []
