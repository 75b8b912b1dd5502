"""Whether a note opens with a date: the mark of a record of one occasion (issue 18).

Two kinds of note come back on one subject at different times. A *standing fact* (who
translates the contracts, where the stationery is ordered, the card's limit) is replaced by
its later version: the newer note says what holds now. A *record* (the minutes of a
meeting, a monthly report, an audit's findings, a visit's notes) is not: the record of
October still tells what happened in October after the record of January is written.

A record says which occasion it records, and it says so in its first sentence: "Payments
sync, 3 Feb.", "Oktober 2025: 1.240 Tickets", "2025年8月の点検結果", "T3 2025 : 14 comptes",
"Begehung der Praxis Freiburg am 9. September 2025". A standing fact starts with its
subject ("Les contrats sont envoyés au cabinet…"); where it names a date, further on, that
is when something changed or is due. So the rules about time read a date in a note's
opening (:func:`opening`: its first sentence, at most :data:`OPENING_CHARS` characters) as
the note being a record, and never put a later note of its subject in its place
(:func:`~memrecall.engine.scoring.time_rules.stands_in`).

What counts as a date: a year (1900–2099); a quarter (``Q3``, French ``T3``, 1분기, 3季度,
第2四半期 as a number and its unit, Vietnamese *quý 2*); a full numeric date
(``3.10.2025``, ``03/10/25``); a number with a CJK year or month unit (年, 月, 년, 월) or
Vietnamese *tháng* before it; a month's name in one of the languages below; a day beside
an English month's abbreviation ("3 Feb", "Feb 3"). Not a version number ("Airflow 2.9"),
a time ("14:00") or a bare number. Month names that are also common words elsewhere are
left out (English *may*, Portuguese and Spanish *marco*, Turkish *aralık*).
"""

from __future__ import annotations

import regex

__all__ = ["MONTH_NAMES", "OPENING_CHARS", "opening", "opens_with_date"]

OPENING_CHARS = 160
"""The longest opening: a first sentence longer than this is cut here."""

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
    r"\d+\s*(?:年|月|년|월|분기|季度|四半期)"
    r"|quý\s*\d"
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


# a sentence ends at a full stop, question or exclamation mark before a space (not after a
# digit: "9. September", "1.240"), at an ideographic one, or at the end of the line
_END = regex.compile(r"(?<!\d)[.!?](?=\s|$)|[。！？\n]")


def opening(body: str) -> str:
    """The first sentence of ``body`` (a note's body text), leading blanks aside, at most
    :data:`OPENING_CHARS` characters."""
    text = body.lstrip()[:OPENING_CHARS]
    end = _END.search(text)
    return text if end is None else text[: end.end()]


def opens_with_date(body: str) -> bool:
    """Whether ``body`` (a note's body text) names a date in its :func:`opening` (see the
    module's docstring)."""
    return _DATE.search(opening(body)) is not None
