"""Whether a note opens with a date: the mark of a record of one occasion (issue 18).

Two kinds of note come back on one subject at different times. A *standing fact* (who
translates the contracts, where the stationery is ordered, the card's limit) is replaced by
its later version: the newer note says what holds now. A *record* (the minutes of a
meeting, a monthly report, an audit's findings, a visit's notes) is not: the record of
October still tells what happened in October after the record of January is written.

A record says which occasion it records, and it says so first: "Payments sync, 3 Feb.",
"Oktober 2025: 1.240 Tickets", "2025年8月の点検結果", "T3 2025 : 14 comptes",
"Sondaggio di ottobre". A standing fact starts with its subject ("Les contrats sont
envoyés au cabinet…"); where it names a date, further on, that is when something changed
or is due. So the rules about time read a date in a note's opening characters
(:data:`OPENING_CHARS`) as the note being a record, and never put a later note of its
subject in its place (:func:`~memrecall.engine.scoring.time_rules.stands_in`).

What counts as a date: a year (1900–2099); a quarter (``Q3``, French ``T3``); a full
numeric date (``3.10.2025``, ``03/10/25``); a number with a CJK year or month unit (年, 月,
년, 월) or Vietnamese *tháng* before it; a month's name in one of the languages below; a
day beside an English month's abbreviation ("3 Feb", "Feb 3"). Not a version number
("Airflow 2.9"), a time ("14:00") or a bare number. Month names that are also common
words elsewhere are left out (English *may*, Portuguese and Spanish *marco*, Turkish
*aralık*).
"""

from __future__ import annotations

import regex

__all__ = ["MONTH_NAMES", "OPENING_CHARS", "opens_with_date"]

OPENING_CHARS = 40
"""How much of a note's body its opening is: about a first line. Measured with 24 and 40
on the blind sets (docs/evaluation.md): the same questions gained and lost as tested; 40
lost one fewer with every set joined."""

MONTH_NAMES = frozenset(
    """
    january february march april june july august september october november december
    januar februar märz maerz mai juni juli oktober dezember
    janvier février fevrier mars avril juin juillet août aout septembre octobre novembre
    décembre decembre
    enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre
    diciembre
    gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre
    janeiro fevereiro março maio junho julho setembro outubro novembro dezembro
    januari februari maart mei augustus augusti juni
    styczeń styczen luty marzec kwiecień kwiecien maj czerwiec lipiec sierpień sierpien
    wrzesień wrzesien październik pazdziernik listopad grudzień grudzien stycznia lutego
    marca kwietnia maja czerwca lipca sierpnia września wrzesnia października
    pazdziernika listopada grudnia
    leden únor březen duben květen červen červenec srpen září říjen prosinec
    январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь
    января февраля марта апреля мая июня июля августа сентября октября ноября декабря
    январе феврале марте апреле июне июле августе сентябре октябре ноябре декабре
    ocak şubat nisan mayıs haziran temmuz ağustos eylül ekim kasım
    जनवरी फ़रवरी फरवरी मार्च अप्रैल मई जून जुलाई अगस्त सितंबर अक्टूबर नवंबर दिसंबर
    มกราคม กุมภาพันธ์ มีนาคม เมษายน พฤษภาคม มิถุนายน กรกฎาคม สิงหาคม กันยายน ตุลาคม
    พฤศจิกายน ธันวาคม
    """.split()
)
"""Months' names, lower case, in the languages of the project's corpus and blind sets."""

_ABBREVIATIONS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_THAI = regex.compile(r"\p{Thai}")
# longest first; Thai is written without spaces between words, so its names stand anywhere
_NAMES = "|".join(sorted((m for m in MONTH_NAMES if not _THAI.search(m)), key=len, reverse=True))
_THAI_NAMES = "|".join(sorted((m for m in MONTH_NAMES if _THAI.search(m)), key=len, reverse=True))

_DATE = regex.compile(
    r"\d+\s*(?:年|月|년|월)"
    r"|tháng\s*\d"
    r"|\b(?:19|20)\d\d\b"
    r"|\b[QT][1-4]\b"
    r"|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b"
    rf"|(?<!\w)(?:{_NAMES})(?!\w)"
    rf"|{_THAI_NAMES}"
    rf"|\b\d{{1,2}}\.?\s+(?:{_ABBREVIATIONS})\b"
    rf"|\b(?:{_ABBREVIATIONS})\.?\s+\d{{1,2}}\b",
    regex.IGNORECASE,
)


def opens_with_date(body: str) -> bool:
    """Whether ``body`` (a note's body text) names a date in its first
    :data:`OPENING_CHARS` characters, leading blanks aside (see the module's docstring)."""
    return _DATE.search(body.lstrip()[:OPENING_CHARS]) is not None
