"""Issue 18: a later version stands in for its note whatever the question's words, except
where the two stand side by side: a dated record, headings named apart, or a question that
names what sets the older heading apart (``time_rules.stands_in``, ``record_dates``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import term_counts
from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.record_dates import OPENING_CHARS, opening, opens_with_date
from memrecall.engine.scoring.time_rules import stands_in
from tests.factories import memory

RECORDS = [
    "Payments sync, 3 Feb. Refund webhooks move to the refunds-v2 queue.",
    "Oktober 2025: 1.240 Tickets, mediane Erstantwortzeit 3 Std.",
    "2025年8月の点検結果：OS未更新のノートPCが12台。",
    "T3 2025 : 14 comptes Salesforce désactivés.",
    "Octubre: 1.240 tickets recibidos.",
    "Октябрь: 1 240 обращений, среднее время первого ответа.",
    "Sondaggio di ottobre su Officevibe: partecipazione 71%.",
    "서연은 8월 3일부터 14일까지 제주도로 여름휴가를 간다.",
    "รายงานประจำเดือนมกราคม ยอดขายเพิ่มขึ้น",
    "Họp ngày 3 tháng 8: chốt lịch phát hành.",
    "Retro del sprint 22 (9 de febrero): el despliegue falló.",
    "Sync 03.02.2026 with the payments team.",
    "Feb 3 sync: the consumer is live.",
    "Review 2025, laptops: twelve out of date.",
    "Begehung der Praxis Freiburg-Herdern am 9. September 2025 durch die Hygienebeauftragte.",
    "1분기 총 대여 18만 2천 건, 평균 이용 시간 17분.",
    "第3四半期の売上は前年比12%増。",
    "Báo cáo quý 2: doanh thu tăng 8%.",
]
STANDING = [
    "Les contrats et CGV à traduire sont envoyés au cabinet Lingua Juris.",
    "Staging Postgres: pg-staging-01.internal:5432, database ledger.",
    "Airflow 2.9 runs the settlement batch every night at 02:00.",
    "Standup at 09:30 daily in the small room.",
    "Um marco de trabalho novo para os testes de integração.",
    "You may want to ask Aisha before you merge on Fridays.",
    # a date further on is when something changed or is due, not the occasion recorded
    "Translations go through Tradulex. The old vendor was dropped in March 2026.",
    "Die Kühlkette prüft Frau Weber. Nächster Termin: 9. September 2026.",
]


@pytest.mark.parametrize("body", RECORDS)
def test_a_record_names_its_occasion_first(body: str) -> None:
    assert opens_with_date(body)
    assert opens_with_date("\n  " + body)  # leading blanks aside


@pytest.mark.parametrize("body", STANDING)
def test_a_standing_fact_names_no_date_first(body: str) -> None:
    assert not opens_with_date(body)


def test_only_the_first_sentence_counts() -> None:
    date = " 3 Feb 2026"
    assert not opens_with_date("x" * OPENING_CHARS + date)  # a sentence cut at the cap
    assert opens_with_date("x" * (OPENING_CHARS - len(date)) + date)
    assert opening("Minutes. 3 Feb 2026: the consumer is live.") == "Minutes."
    assert opening("会议纪要。2026年2月3日") == "会议纪要。"
    # an ordinal or a decimal point ends no sentence
    assert opening("Am 9. September 2025 geprüft. Rest") == "Am 9. September 2025 geprüft."


def features(title: str, body: str, description: str = "") -> DocumentFeatures:
    return DocumentFeatures.of(memory(title, description, body))


def keys(text: str) -> set[str]:
    return set(term_counts(text))


def heads(*pool: DocumentFeatures) -> Callable[[str], int]:
    """How many of ``pool``'s documents hold a term in their title or description."""
    return lambda term: sum(term in f.counts[0] or term in f.counts[1] for f in pool)


def each(words: set[str]) -> list[set[str]]:
    """A question's terms, each looked up by its own key alone (no variants)."""
    return [{word} for word in sorted(words)]


def alone(note: DocumentFeatures, update: DocumentFeatures, asked: set[str]) -> bool:
    """``stands_in`` for a pool of the two notes alone."""
    return stands_in(note, update, lambda: each(asked), heads(note, update))


TRANSLATION_OLD = features(
    "Legal translations",
    "Contracts to translate go to Lingua Juris (contact: Sophie Marchand), 0.12 per word.",
)
TRANSLATION_NEW = features(
    "Legal translations",
    "Legal translations go through Tradulex: upload the files to their portal, 0.09 per word.",
)


def test_an_update_stands_in_for_a_question_in_the_old_words() -> None:
    asked = keys("do I send the contract to Sophie Marchand at Lingua Juris?")
    assert alone(TRANSLATION_OLD, TRANSLATION_NEW, asked)


def test_a_dated_record_keeps_its_place() -> None:
    october = features("Support report", "October 2025: 1,240 tickets; first answer in 3 hours.")
    january = features("Support report", "January 2026: 980 tickets; first answer in 2 hours.")
    assert october.dated
    assert january.dated
    assert not alone(october, january, keys("how many tickets did support get?"))
    # the same notes without their dates are a fact and its update
    undated = features("Support report", "1,240 tickets; first answer in 3 hours.")
    assert not undated.dated
    assert alone(undated, january, keys("how many tickets did support get?"))


def test_headings_that_share_nothing_keep_the_older_first() -> None:
    minutes = features("Meeting notes", "Cloud spend is capped at 18,000 a month this quarter.")
    alert = features("Cloud spend alert threshold", "The budget alarm posts to #finops.")
    assert not alone(minutes, alert, keys("how much may we spend on cloud?"))


def test_headings_that_share_only_what_heads_other_notes_keep_the_older_first() -> None:
    # "Meeting notes" heads a third note too: it names a kind of note, not a subject
    payments = features("Meeting notes", "Refund webhooks move to the refunds-v2 queue.")
    search = features("Meeting notes", "The Elasticsearch upgrade moves to the third quarter.")
    mobile = features("Meeting notes", "The iOS submission moves to 14 July.")
    asked = keys("meeting notes about refund webhooks")
    assert alone(payments, search, asked)  # two notes alone: their heading is their own
    assert not stands_in(payments, search, lambda: each(asked), heads(payments, search, mobile))
    # a heading term of their own, beside the kind of note, names their subject again
    named = features("Meeting notes: payments", "The refunds-v2 consumer is live.")
    later = features("Meeting notes: payments", "Tomás owns the consumer now.")
    pool = heads(named, later, mobile)
    assert stands_in(named, later, lambda: each(keys("who owns the refund consumer?")), pool)


def test_a_question_naming_what_sets_the_older_heading_apart_asks_about_it() -> None:
    cologne = features("Opening hours Cologne office", "Monday to Friday, 7:30 to 19:00.")
    hurth = features("Opening hours Hürth warehouse", "Monday to Friday, 6:00 to 22:00.")
    assert not alone(cologne, hurth, keys("when is the Cologne office open?"))
    # words both headings hold, or the update's own, name nothing apart
    assert alone(cologne, hurth, keys("what are the opening hours?"))
    assert alone(cologne, hurth, keys("opening hours of the warehouse?"))


def test_a_question_term_found_in_both_headings_names_nothing_apart() -> None:
    # "tyre" finds "tyres" (a variant) in the older heading and "tyre" in the update's: the
    # question names what the two share, not what sets the older apart
    old = features(
        "Fleet tyre orders", "Spare tyres come from Hollins.", "Where the fleet's tyres come from"
    )
    new = features("Tyre and tube orders", "Tyres come from Quayside Wheelworks.")
    pool = heads(old, new)
    assert stands_in(old, new, lambda: [{"tyre", "tyres"}], pool)
    assert not stands_in(old, new, lambda: [{"tyres"}], pool)  # found in the older alone
    assert not stands_in(old, new, lambda: [{"tyre"}, {"fleet"}], pool)


def test_under_one_title_the_older_descriptions_words_are_the_old_fact() -> None:
    # the description of each version states its own fact: a question in the old one's
    # words ("Sanne de Wit", the form) asks what the update replaced
    old = features(
        "Fietsvergoeding", "Formulier invullen.", "€0,21 per km, formulier bij Sanne de Wit"
    )
    new = features("Fietsvergoeding", "Gaat vanzelf.", "€0,23 per km, automatisch via Hello Bike")
    asked = keys("moet ik het formulier nog bij Sanne de Wit inleveren?")
    assert asked & (old.counts[1].keys() - new.counts[1].keys())
    assert alone(old, new, asked)
    # an update whose title grows the older one's is under that title too
    longer = features("Fietsvergoeding 2026", "Gaat vanzelf.", "€0,23 per km via Hello Bike")
    assert alone(old, longer, asked)
    # where the older title holds a word of its own, its description's words name it again:
    # two neighbours on one service, asked about the older one's readings
    retention = features(
        "grua-telemetria: retención",
        "Después se agregan por hora.",
        "Las lecturas de las grúas se guardan 90 días",
    )
    wind = features(
        "grua-telemetria: alertas de viento",
        "Alerta a PagerDuty.",
        "Umbral de viento a partir del cual se detienen las grúas",
    )
    readings = keys("¿cuántos días guardamos las lecturas?")
    assert not alone(retention, wind, readings)
    assert alone(retention, wind, keys("grua-telemetria"))


WORDS = st.sampled_from(["legal", "translations", "contract", "sophie", "tradulex", "cologne"])


@given(st.sets(WORDS), st.sets(WORDS))
def test_only_the_older_headings_own_words_keep_it_first(asked: set[str], more: set[str]) -> None:
    # Adding words to the question changes the answer only through a word of the older
    # heading that the update's heading lacks; the question is asked for keys only when
    # the notes are not already told apart.
    old = features("Legal translations Cologne", "Contracts go to Lingua Juris (Sophie).")
    new = features("Legal translations", "Translations go through Tradulex.")
    apart = keys("Legal translations Cologne") - keys("Legal translations")
    assert alone(old, new, asked) == (not asked & apart)
    assert alone(old, new, asked | more) == (not (asked | more) & apart)
    # under one title, no word of the question keeps the older first
    same = features(
        "Legal translations", "Contracts go to Lingua Juris.", "Sophie, Cologne: contract work"
    )
    assert alone(same, new, asked | more)


def test_the_question_is_not_read_when_the_notes_stand_apart_anyway() -> None:
    def unread() -> set[str]:
        raise AssertionError("the question's keys were read")

    dated = features("Support report", "October 2025: 1,240 tickets.")
    later = features("Support report", "January 2026: 980 tickets.")
    assert not stands_in(dated, later, unread, heads(dated, later))
    minutes, budget = features("Meeting notes", "x y"), features("Budget", "x y")
    assert not stands_in(minutes, budget, unread, heads(minutes, budget))
