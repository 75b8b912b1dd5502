"""The ``fielded`` scorer's rules about what a query is (issue 18), as module functions.

Which terms of a long query are scored (:func:`select_query_terms`), what a second
fast document must match (:func:`heaviest_terms`), documents only common words match
(:func:`common_only`), runs of CJK bigrams (:func:`count_runs`), one-word queries
(:func:`lone_term`, :func:`stands_out`) and the answer floor (:func:`answered`).
They are functions of a few callables rather than methods so that
:class:`~memrecall.engine.scoring.fielded.FieldedIndex` and the store's ranker
(:class:`memrecall.store.source.StoreRanker`) apply them alike; the module docstring of
:mod:`memrecall.engine.scoring.fielded` says why each rule exists.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import NamedTuple, TypeVar

import regex

from memrecall.engine.scoring.analysis import (
    IDENTIFIER,
    MAX_QUERY_TERMS,
    QueryTerm,
    katakana_bigrams,
    query_candidates,
)
from memrecall.engine.scoring.judgement import Thresholds
from memrecall.engine.scoring.katakana import KANA, katakana_parts
from memrecall.engine.scoring.thai_words import one_thai_word

__all__ = [
    "RUN_CREDIT",
    "MatchedTerm",
    "answered",
    "beside_owner",
    "common_only",
    "count_runs",
    "heaviest_terms",
    "lone_term",
    "loose_syllables",
    "on_fitted_scale",
    "one_word",
    "query_weight",
    "select_query_terms",
    "stands_out",
]

_K = TypeVar("_K", bound=Hashable)
"""A document key: a pool position in the index, a memory id in the store's index."""


def select_query_terms(
    query: str,
    idf: Callable[[str], float | None],
    keys: Callable[[str, str], list[tuple[str, float]]],
    idf_max: float,
) -> tuple[list[QueryTerm], float, bool]:
    """The terms a pool scores for ``query``, the query's own weight, and whether the query
    was cut to its most specific terms (a paste).

    ``idf`` gives a pool term's idf (None when unknown), ``keys`` the index terms that count
    for a query term with their credit (:func:`index_terms`). A query of at most
    :data:`~memrecall.engine.scoring.analysis.MAX_QUERY_TERMS` distinct candidates
    (:func:`~memrecall.engine.scoring.analysis.query_candidates`) is scored whole. A longer
    one (a pasted log, a chat thread) keeps the most specific: by weight × the largest
    credited idf any of its index terms has (its own, or an inflected form's), so a rare
    service name or error in the middle of a paste outweighs the bulk; ties keep the
    earlier term. The weight sums weight × idf over every candidate, an unseen one at
    ``idf_max``.
    """
    found = query_candidates(query)
    mass = query_weight(found, idf, idf_max)
    if len(found) <= MAX_QUERY_TERMS:
        return found, mass, False
    specific = []
    for position, qt in enumerate(found):
        credited = keys(qt.term, qt.kind)
        best = max((credit * (idf(key) or 0.0) for key, credit in credited), default=0.0)
        specific.append((-qt.weight * best, position))
    kept = sorted(position for _, position in heapq.nsmallest(MAX_QUERY_TERMS, specific))
    return [found[position] for position in kept], mass, True


def query_weight(
    found: Iterable[QueryTerm], idf: Callable[[str], float | None], idf_max: float
) -> float:
    """The weight of a query's candidate terms (:func:`select_query_terms`): weight × idf
    summed, a term no memory has at ``idf_max``, an identifier no memory has not at all (its
    words already weigh the query)."""
    mass = 0.0
    for qt in found:
        known = idf(qt.term)
        if known is None and qt.kind == IDENTIFIER:
            continue
        mass += qt.weight * (idf_max if known is None else known)
    return mass


def on_fitted_scale(
    query: str,
    scores: Mapping[_K, float],
    selected: Iterable[QueryTerm],
    *,
    keys: Callable[[str, str], list[tuple[str, float]]],
    idf: Callable[[str], float | None],
    fitted_idf: Callable[[str], float | None],
    values: Callable[[str], Iterable[tuple[_K, float]]],
    fitted_max: float,
    saturation: float,
) -> tuple[dict[_K, float], float]:
    """The documents' ``scores`` and the query's weight read on the scale the thresholds
    were fitted on (``Params.fitted_pool``; ``fitted_idf`` gives an index term's idf there,
    ``idf`` in the pool, ``values`` each document's value for an index term, ``keys`` a query
    term's index terms with their credit): each index term's value times its idf there over
    its idf in the pool, the best credited variant kept; the weight as
    :func:`select_query_terms` sums it, at most ``saturation`` rarest terms. The one reading
    of ``FieldedIndex`` and the store's index."""
    weight = query_weight(query_candidates(query), fitted_idf, fitted_max)
    judged = dict.fromkeys(scores, 0.0)
    for qt in selected:
        best: dict[_K, float] = {}
        for key, credit in keys(qt.term, qt.kind):
            here, there = idf(key), fitted_idf(key)
            if here is None or there is None:
                continue
            ratio = credit * there / here
            for doc, value in values(key):
                if doc in judged and value * ratio > best.get(doc, 0.0):
                    best[doc] = value * ratio
        for doc, value in best.items():
            judged[doc] += qt.weight * value
    return judged, min(weight, saturation * fitted_max)


def heaviest_terms(
    terms: Iterable[QueryTerm],
    idf: Callable[[str], float | None],
    matches: Callable[[QueryTerm], bool],
) -> list[QueryTerm]:
    """Of the query ``terms`` a document ``matches``, those of the largest weight × idf.

    What a second fast document must match one of to count as a second answer to what the
    first one answers: a close runner-up that matches only other, more general words of
    the query (a memory about *version* next to the one about *httpx* and *pin*) is a
    partial match on another aspect; it stays in the ranking only.
    """
    best = 0.0
    heaviest: list[QueryTerm] = []
    for qt in terms:
        if not matches(qt):
            continue
        weight = qt.weight * (idf(qt.term) or 0.0)
        if weight > best * (1 + 1e-9):
            best, heaviest = weight, [qt]
        elif weight >= best * (1 - 1e-9):
            heaviest.append(qt)
    return heaviest


RUN_CREDIT = 0.5
"""In the ranking (not the judgement), what a CJK bigram counts for when the document also
matches the bigram it overlaps right after in the query: a run of k + 1 shared characters
counts as (k + 1) / 2 bigrams, about the words it holds, not as k separate words."""


class MatchedTerm(NamedTuple):
    """A query term the pool knows, as the ranking rules read it."""

    term: str
    kind: str
    mass: float
    """weight × idf"""
    common: bool
    weight: float
    follows: frozenset[str]
    words: frozenset[str]
    """The katakana words this bigram is a piece of (:attr:`QueryTerm.words`)."""

    @property
    def fragment(self) -> bool:
        """Whether this is a piece of a longer katakana word."""
        return bool(self.words)

    @classmethod
    def of(cls, qt: QueryTerm, mass: float) -> MatchedTerm:
        """The matched term ``qt`` with its weight × idf."""
        return cls(qt.term, qt.kind, mass, qt.common, qt.weight, qt.follows, qt.words)


def common_only(
    candidates: Iterable[_K],
    terms: Sequence[MatchedTerm],
    holders: Callable[[str, str], Iterable[_K]],
    cost: Callable[[MatchedTerm], int],
) -> set[_K]:
    """The ``candidates`` that only common query words, or pieces of a katakana word they
    do not mostly share, match (judged none). ``holders`` gives the documents that have a
    query term, ``cost`` how many there are about (the rarest terms are read first, so
    that a common word's long postings rarely are).

    Common words (:data:`~memrecall.engine.scoring.analysis.COMMON_WORDS`, and the common
    CJK bigrams) rarely name a topic: a memory that shares nothing else with the query is
    not about it (``最近寒くなってきたね`` against a memory that says ``なった``). A katakana
    word is one loanword: its pieces count for a memory that has more than half of its
    bigrams and has the word itself, or a compound that starts or ends with it
    (:mod:`~memrecall.engine.scoring.katakana`). One with fewer bigrams has a longer,
    other word, as ``tea`` is not ``team``: ``メン`` of ``ラーメン`` in ``メンション``,
    ``ルドカ`` of ``ワールドカップ`` in ``ワイルドカード``; so does one with every bigram but
    not the word: ``トーク`` (talk) in ``トークン`` (token).
    """
    if all(not t.common and not t.fragment for t in terms):
        return set()
    remaining = set(candidates)
    for t in sorted((t for t in terms if not t.common and not t.fragment), key=cost):
        if not remaining:
            return remaining
        remaining.difference_update(holders(t.term, t.kind))
    pieces: dict[str, list[MatchedTerm]] = {}
    for t in terms:
        for word in t.words:
            pieces.setdefault(word, []).append(t)
    for word in sorted(pieces):
        if not remaining:
            break
        need = len(katakana_bigrams(word)) // 2 + 1
        held: Counter[_K] = Counter()
        for t in pieces[word]:
            held.update(remaining.intersection(holders(t.term, t.kind)))
        whole: set[_K] = set()
        for form in katakana_parts(word):
            whole.update(holders(form, KANA))
        remaining.difference_update(doc for doc, n in held.items() if n >= need and doc in whole)
    return remaining


def count_runs(
    order: dict[_K, float],
    terms: Sequence[MatchedTerm],
    among: Iterable[_K],
    values: Callable[[str, str, set[_K]], dict[_K, float]],
    scale: Callable[[_K], float],
) -> bool:
    """Count a run of overlapping CJK bigrams a document of ``among`` shares with the query
    as fewer words than bigrams (in place, on the ordering values ``order``): a bigram
    that follows another matched one in the query (:attr:`QueryTerm.follows`) and that
    the document also has adds :data:`RUN_CREDIT` of its value. ``values(term, kind,
    where)`` gives the value of a term in those documents of ``where`` that have it;
    ``scale`` what a document's ordering value multiplies a score by. ``系统里`` is the
    word ``系统`` and a postposition, not two words; without this, a three-character
    overlap outranks a memory titled with the query's two-character subject. True when a
    value changed."""
    runs = [t for t in terms if t.follows]
    if not runs:
        return False
    changed = False
    known = {t.term for t in terms}
    where = set(among)
    # each term's values over ``where`` are read once (a bigram is often both the one
    # that follows and the one followed)
    read: dict[str, dict[_K, float]] = {}

    def of(term: str, kind: str) -> dict[_K, float]:
        found = read.get(term)
        if found is None:
            found = read[term] = values(term, kind, where)
        return found

    for t in runs:
        before = [f for f in t.follows if f in known]
        if not before:
            continue
        own = of(t.term, t.kind)
        if not own:
            continue
        held: set[_K] = set()
        for f in before:
            other = of(f, "cjk")
            held.update(d for d in own if d in other)
        for doc in held:
            order[doc] -= (1.0 - RUN_CREDIT) * t.weight * own[doc] * scale(doc)
            changed = True
    return changed


def lone_term(
    terms: Sequence[MatchedTerm], query_terms: Callable[[], Sequence[QueryTerm]]
) -> MatchedTerm | None:
    """The query's only topical term (not a common word), when it has exactly one and a
    memory matches it; else None. ``terms`` are the matched ones, ``query_terms`` gives
    all of them (read only when needed)."""
    topical = [t for t in terms if not t.common and t.kind != IDENTIFIER]
    if len(topical) != 1:
        return None
    if sum(not qt.common and qt.kind != IDENTIFIER for qt in query_terms()) != 1:
        return None
    return topical[0]


_ONE_RUN = regex.compile(r"^[\p{P}\p{S}\s]*+(\p{L}[\p{L}\p{M}]*+)[\p{P}\p{S}\s]*+$")
"""A turn that is one run of letters, with nothing around it but punctuation and spaces."""
_NO_SPACES = regex.compile(r"[\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
"""Scripts written without spaces between words, where one run may be a whole sentence."""
_ALL_THAI = regex.compile(r"^[\p{Thai}]+$")
_KANJI_KANA = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]")
_ONE_HAN_WORD = regex.compile(r"^\p{Han}{1,3}$")
_CAPITAL = regex.compile(r"\p{Lu}")
_LINKED = regex.compile(
    r"^[\p{P}\p{S}\s]*+(\p{Latin}[\p{Latin}\p{M}]*+)\s++"
    r"(?:(?:de|di|da|do|du|des|del|della|dei|delle|degli|dos|das)\s++|d['’])"
    r"(\p{Latin}[\p{Latin}\p{M}]*+)[\p{P}\p{S}\s]*+$",
    regex.IGNORECASE,
)
"""One word written as two linked by *de* (French, Spanish, Portuguese, Italian: ``base de
données``, ``banco de dados``, ``base di dati``), as German writes *Datenbank*."""
_ONE_KANA_WORD = regex.compile(r"^(?:[\p{Katakana}\u30fc\u30fb]+|[\p{Hiragana}\u30fc]+)$")


def one_word(query: str) -> bool:
    """Whether the whole turn is one ordinary word ("deploy", "Datenbank", "сервис",
    "数据库", "デプロイ", "배포"), which asks nothing: such a turn gets no memory, however
    clearly one memory owns the word (issue 18: a single generic word is small talk).

    Not one ordinary word: a turn with anything else in it (a second word, a digit, a
    hyphen or underscore inside: ``billing-api``), or a word written as only names are,
    with a capital after its first letter (``VPN``, ``GitLab``): the memory that owns such
    a word answers it as before (:func:`stands_out`). A capital first letter alone says
    nothing (phones write one on every turn, German on every noun). In Han, one word is a
    run of at most three characters; in kana, a run of katakana or of hiragana alone
    (mixed, it is a phrase: ``デプロイはどうやるの``). Thai, Lao, Khmer and Myanmar are
    written without spaces, so one run there may be a sentence: in Thai, a run is one word
    when it is as short as one and holds no common word (:func:`one_thai_word`:
    ``ฐานข้อมูล``, database, but not ``ใครดูแล``, who looks after); in the others it is
    never taken for one word. Two words linked by *de* (or *di*, *da*, *du*, *del*, *d'*)
    are one, as French, Spanish, Portuguese and Italian write a compound (``base de
    données``, ``base de datos``: German's *Datenbank*); a capital in the second
    (``logs de Kafka``), or after the first letter of the first, is a name.
    """
    linked = _LINKED.match(query)
    if linked is not None:
        first, second = linked.groups()
        return _CAPITAL.search(first, 1) is None and _CAPITAL.search(second) is None
    match = _ONE_RUN.match(query)
    if match is None:
        return False
    run = match.group(1)
    if _NO_SPACES.search(run):
        return _ALL_THAI.match(run) is not None and one_thai_word(run)
    if _KANJI_KANA.search(run):
        return bool(_ONE_HAN_WORD.match(run) or _ONE_KANA_WORD.match(run))
    return _CAPITAL.search(run, 1) is None


def answered(best: float, mass: float, thresholds: Thresholds) -> bool:
    """Whether a query (not a paste) whose best contending document scores ``best``, and
    whose own weight is ``mass``, is answered at all: that document explains at least
    :attr:`~memrecall.engine.scoring.judgement.Thresholds.answer_coverage` of it. A
    question about a pivot table in Excel that shares *table* with a meeting's notes
    is about something no memory knows."""
    return mass <= 0.0 or best >= thresholds.answer_coverage * mass * (1 - 1e-9)


def stands_out(ranked: Sequence[_K], order: Mapping[_K, float], margin: float) -> bool:
    """For a query of a single topical term (:func:`lone_term`): whether its first memory
    stands out, the runner-up scoring under ``margin`` of it. One word is not a question
    ("deploy", "update"); it is answered only when one memory clearly owns it, and when
    that word is a lone CJK bigram (``服务``, ``확인``) it is never fast-delivered: a
    bigram may be a piece of a longer word of the memory (``服务器``), which nothing else
    in the query confirms."""
    return len(ranked) < 2 or order[ranked[1]] < margin * order[ranked[0]]


def beside_owner(
    ranked: Iterable[_K],
    owner: Sequence[_K],
    older: Collection[_K],
    same_subject: Callable[[_K, _K], bool],
) -> set[_K]:
    """For a query of a single topical term whose first memory stands out (:func:`stands_out`;
    ``owner`` holds it, or nothing when no memory contends): the ``ranked`` documents other
    than that memory and its ``older`` versions on the same subject. The word is that
    memory's; the runners-up share it in passing ("服务" answered by the test-server notes,
    not also by the alerting dashboard that mentions a service)."""
    if not owner:
        return set()
    first = owner[0]
    return {d for d in ranked if d != first and not (d in older and same_subject(d, first))}


def loose_syllables(
    candidates: Iterable[_K],
    terms: Sequence[MatchedTerm],
    holders: Callable[[str, str], Iterable[_K]],
    vietnamese: frozenset[str],
) -> set[_K]:
    """The ``candidates`` that a Vietnamese query (its syllables, folded: ``vietnamese``)
    matches only by single syllables (judged none): no two adjacent words of it
    (:func:`~memrecall.engine.scoring.analysis.syllable_pairs`) and no word of another
    language. Folded, *mật* (secret, of *mật khẩu*, password) is *mặt* (face) and *mát*
    (cool); a memory that shares syllables with a question but none of its two-syllable
    words is about something else ("Mình quên mật khẩu Facebook" against a standup note)."""
    remaining = set(candidates)
    if not vietnamese or not remaining:
        return set()
    for t in terms:
        if t.kind == IDENTIFIER or t.term not in vietnamese:
            remaining.difference_update(holders(t.term, t.kind))
            if not remaining:
                break
    return remaining
