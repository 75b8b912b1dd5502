"""Text analysis for the ``fielded`` scorer: terms on word boundaries, in every script.

A text becomes a list of *terms* (keys for the inverted index). After
:func:`~memrecall.engine.scoring.text.normalize` (NFKC, lower case) and
:func:`clean` (invisible joiners removed, zero-width spaces made spaces):

* **words**: maximal runs of letters, combining marks and digits outside the
  scripts below. A word is kept when it has at least three base characters
  (combining marks do not count), or two when one of them is a digit (``q4``,
  ``s3``) or the word is in an abugida where two base characters already make a
  word (Devanagari and the other Brahmic scripts). Each word is then *folded*
  (:func:`fold`): optional diacritics are dropped where the script treats them
  as optional (Latin, Greek, Arabic and Hebrew vowel points, the Devanagari
  nukta, the Cyrillic diaeresis), so ``gelöscht``/``geloscht`` and
  ``फ़ोन``/``फोन`` are one term, while Devanagari vowel signs stay.
* **CJK** (Han, Hiragana, Katakana, Hangul): adjacent-character bigrams, as the
  reference scorer does; a single character gives nothing.
* **Scripts written without spaces** (Thai, Lao, Khmer, Myanmar): bigrams of
  extended grapheme clusters, so a term never splits a consonant from its vowel
  sign or tone mark (a code-point bigram would).

Query words additionally carry a *weight*: function words (:data:`STOPWORDS`)
are dropped, and very common general words (:data:`COMMON_WORDS`) count for
:data:`COMMON_WEIGHT` of a normal word, so "thanks, that works" is not a query
about a document titled "Works from Lisbon".

Everything here is a pure function of the text; the per-document part
(:func:`document_terms`) is what a catalog may cache.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter
from collections.abc import Iterator

import regex

from memrecall.engine.scoring.text import normalize

__all__ = [
    "COMMON_WEIGHT",
    "COMMON_WORDS",
    "STOPWORDS",
    "QueryTerm",
    "analyze",
    "clean",
    "fold",
    "query_terms",
    "sea_terms",
    "term_counts",
    "terms",
]

_CJK = r"\p{Script=Han}\p{Script=Hiragana}\p{scx=Katakana}\p{Script=Hangul}"
_SEA = r"\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}"
_CJK_RUN = rf"[[\p{{L}}\p{{M}}]&&[{_CJK}]]+"
_SEA_RUN = rf"[{_SEA}][[{_SEA}]||[\p{{M}}--[{_CJK}]]]*"
_WORD = rf"[[\p{{L}}\p{{N}}]--[{_CJK}{_SEA}]][[\p{{L}}\p{{M}}\p{{N}}]--[{_CJK}{_SEA}]]*"
_RUN = regex.compile(rf"(?P<cjk>{_CJK_RUN})|(?P<sea>{_SEA_RUN})|(?P<word>{_WORD})", regex.V1)
# The same runs, one kind at a time (a word never contains a CJK or Thai-script letter,
# so each kind's matches are the same spans as in _RUN).
_CJK_RUNS = regex.compile(_CJK_RUN, regex.V1)
_SEA_RUNS = regex.compile(_SEA_RUN, regex.V1)
_WORDS = regex.compile(_WORD, regex.V1)
_CLUSTER = regex.compile(r"\X")
_BRAHMIC = regex.compile(
    r"[\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Gurmukhi}\p{Script=Gujarati}"
    r"\p{Script=Oriya}\p{Script=Tamil}\p{Script=Telugu}\p{Script=Kannada}"
    r"\p{Script=Malayalam}\p{Script=Sinhala}]"
)
_BASE = regex.compile(r"[\p{L}\p{N}]")
_DIGIT = regex.compile(r"\p{N}")

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u034f\u200c\u200d\u2060\ufeff"), None)
_INVISIBLE[0x200B] = " "  # zero-width space separates words (Thai, Khmer, Myanmar)

# Marks dropped by fold(): optional diacritics over these base scripts.
_FOLD_SCRIPTS = regex.compile(
    r"[\p{Script=Latin}\p{Script=Greek}\p{Script=Arabic}\p{Script=Hebrew}]"
)
_CYRILLIC = regex.compile(r"\p{Script=Cyrillic}")
_NUKTA = "\u093c"
_CANDRABINDU, _ANUSVARA = "\u0901", "\u0902"
_LETTER_FOLDS = str.maketrans({"đ": "d", "ł": "l", "ø": "o", "ß": "ss", "ς": "σ", "ı": "i"})


def clean(normalized: str) -> str:
    """Drop invisible joiners (soft hyphen, ZWJ, ZWNJ, word joiner, BOM) and turn ZWSP into a space.

    Joiners sit inside words (Persian, Devanagari half forms), so keeping them
    would split one word in two; a zero-width space is a word boundary.
    Also undoes the combining dot that lower-casing a Turkish ``İ`` leaves.
    """
    text = normalized.translate(_INVISIBLE)
    return text.replace("i\u0307", "i") if "\u0307" in text else text


@functools.lru_cache(maxsize=200_000)
def fold(word: str) -> str:
    """The word with optional diacritics removed (see the module docstring); ASCII is unchanged."""
    if word.isascii():
        return word
    out: list[str] = []
    base = ""
    for char in unicodedata.normalize("NFD", word.translate(_LETTER_FOLDS)):
        if unicodedata.category(char) != "Mn":
            base = char
            out.append(char)
        elif char == _CANDRABINDU:
            out.append(_ANUSVARA)
        elif char == _NUKTA or _FOLD_SCRIPTS.match(base):
            continue
        elif not (_CYRILLIC.match(base) and char == "\u0308"):
            out.append(char)
    return unicodedata.normalize("NFC", "".join(out))


def _keep_word(word: str) -> bool:
    if word.isascii():
        return len(word) >= 3 or (len(word) == 2 and bool(_HAS_DIGIT.search(word)))
    bases = len(_BASE.findall(word))
    if bases >= 3:
        return True
    if bases == 2:
        return bool(_DIGIT.search(word)) or bool(_BRAHMIC.match(word))
    return False


def _bigrams(units: list[str]) -> Iterator[str]:
    for i in range(len(units) - 1):
        yield units[i] + units[i + 1]


_ASCII_WORD = regex.compile(r"[a-z0-9]+")
_HAS_DIGIT = regex.compile(r"[0-9]")


def _ascii_words(text: str) -> Iterator[tuple[str, str]]:
    """The same terms as the general path, for ASCII text (no CJK, no marks, nothing to fold)."""
    for word in _ASCII_WORD.findall(text.lower()):
        if len(word) >= 3 or (len(word) == 2 and _HAS_DIGIT.search(word)):
            yield "word", word


def analyze(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, term)`` for every term of a raw text, in order, with repeats.

    ``kind`` is ``word``, ``cjk`` or ``sea``.
    """
    if text.isascii():
        yield from _ascii_words(text)
        return
    for match in _RUN.finditer(clean(normalize(text))):
        kind = match.lastgroup
        run = match.group()
        if kind == "word":
            if _keep_word(run):
                yield "word", fold(run)
        elif kind == "cjk":
            for gram in _bigrams(list(run)):
                yield "cjk", gram
        else:
            for gram in sea_terms(run):
                yield "sea", gram


def sea_terms(run: str) -> list[str]:
    """Terms of a run of Thai, Lao, Khmer or Myanmar text: grapheme-cluster trigrams.

    A run of two clusters is one term; a single cluster gives nothing.
    """
    clusters = _CLUSTER.findall(run)
    if len(clusters) < 3:
        return ["".join(clusters)] if len(clusters) == 2 else []
    return ["".join(clusters[i : i + 3]) for i in range(len(clusters) - 2)]


def terms(text: str) -> list[str]:
    """Every term of a text, in order, with repeats."""
    return [term for _, term in analyze(text)]


def term_counts(text: str) -> dict[str, int]:
    """The terms of a text, counted: the same as ``Counter(terms(text))``, faster.

    What a document field is indexed as.
    """
    counts: Counter[str] = Counter()
    if text.isascii():
        for word, n in Counter(_ASCII_WORD.findall(text.lower())).items():
            if len(word) >= 3 or (len(word) == 2 and _HAS_DIGIT.search(word)):
                counts[word] += n
        return dict(counts)
    cleaned = clean(normalize(text))
    for word, n in Counter(_WORDS.findall(cleaned)).items():
        if _keep_word(word):
            counts[fold(word)] += n
    for run in _CJK_RUNS.findall(cleaned):
        counts.update(run[i : i + 2] for i in range(len(run) - 1))
    for run in _SEA_RUNS.findall(cleaned):
        counts.update(sea_terms(run))
    return dict(counts)


# --------------------------------------------------------------------------- query side

STOPWORDS = frozenset(
    """
    about above after against all also and any are aren because been before being below between
    both but can cannot could couldn did didn does doesn doing don down during each few for from
    further had hadn has hasn have haven having her here hers herself him himself his how into
    isn its itself just let more most myself nor not now off once only other ought our ours
    ourselves out over own same she should shouldn some such than that the their theirs them
    themselves then there these they this those through too under until very was wasn were weren
    what when where which while who whom whose why will with won would wouldn you your yours
    yourself yourselves
    hey hello thanks thank please okay yes yeah sure sorry hmm
    der die das und ist nicht mit für auf ein eine dem den des wie was wer wann
    les des une est pas pour que qui dans avec sur
    los las una por para con que del como
    что как это для при или его она они
    """.split()
)
"""Function words (English, plus a few of German, French, Spanish and Russian) and chat
fillers, as the tokenizer cuts them (``don't`` gives ``don``). Dropped from queries: they
carry no topic. Words shorter than three letters never become terms anyway."""

COMMON_WORDS = frozenset(
    """
    again ago already always another anything anyway around ask asked back best better big bit
    bother call came come comes could day days did does doing done else even ever every
    everything find fine first forgot get gets getting give go goes going gone good got great
    guess happen happened happens help idea ideas keep kind know last left like little long look
    looks lot make makes many maybe mean means might morning much must need needs never new next
    nice night none nothing old one ones put quick quickly really remind right said say says see
    seem sense set show since something soon sounds start started still stuff take tell thing
    things think time today told tomorrow try trying turn two use used using want wants way week
    well went work worked works working year yesterday
    """.split()
)
"""General words that are frequent in any English text and rarely name a topic on their own."""

COMMON_WEIGHT = 0.3

_STOP = frozenset(fold(w) for w in STOPWORDS)
_KANA_ONLY = regex.compile(r"\p{Script=Hiragana}+")
"""What a common word counts for, relative to a normal query word."""


@functools.lru_cache(maxsize=4096)
def _word_weight(word: str) -> float:
    if word in _STOP:
        return 0.0
    return COMMON_WEIGHT if word in COMMON_WORDS else 1.0


class QueryTerm:
    """One distinct query term and its weight (1, or :data:`COMMON_WEIGHT`)."""

    __slots__ = ("kind", "term", "weight")

    def __init__(self, kind: str, term: str, weight: float) -> None:
        self.kind = kind
        self.term = term
        self.weight = weight

    def __repr__(self) -> str:
        return f"QueryTerm({self.kind!r}, {self.term!r}, {self.weight})"


MAX_QUERY_TERMS = 64
"""At most this many distinct terms; half from the head of the query, half from the tail."""


def query_terms(query: str, limit: int = MAX_QUERY_TERMS) -> list[QueryTerm]:
    """The distinct weighted terms of a query, stopwords dropped, bounded like the reference.

    The bound keeps the first ``limit // 2`` distinct terms and the last
    ``limit // 2`` (a pasted log should not cost more than a question).
    """
    seen: dict[str, QueryTerm] = {}
    for kind, term in analyze(query):
        if term in seen:
            continue
        if kind == "word":
            weight = _word_weight(term)
        elif kind == "cjk" and _KANA_ONLY.fullmatch(term):
            weight = COMMON_WEIGHT
        else:
            weight = 1.0
        if weight > 0:
            seen[term] = QueryTerm(kind, term, weight)
    found = list(seen.values())
    if len(found) <= limit:
        return found
    half = limit // 2
    return found[:half] + found[-half:]
