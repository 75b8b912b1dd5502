"""Text analysis for the ``fielded`` scorer: terms on word boundaries, in every script.

A text becomes a list of *terms* (keys for the inverted index). After
:func:`~memrecall.engine.scoring.text.normalize` (NFKC, lower case) and
:func:`clean` (invisible joiners removed, zero-width spaces made spaces):

* **words**: maximal runs of letters, combining marks and digits outside the
  scripts below. A word is kept when it has at least three base characters
  (combining marks do not count), or two when one of them is a digit (``q4``,
  ``s3``) or the word is in an abugida where two base characters already make a
  word (Devanagari and the other Brahmic scripts), or two capital ASCII letters
  that are not a function word (an acronym: ``CI``, ``CD``, ``PR``, ``DB``;
  :func:`is_acronym`). Each word is then *folded*
  (:func:`fold`): optional diacritics are dropped where the script treats them
  as optional (Latin, Greek, Arabic and Hebrew vowel points, the Devanagari
  nukta, the Cyrillic diaeresis), so ``gelöscht``/``geloscht`` and
  ``फ़ोन``/``फोन`` are one term, while Devanagari vowel signs stay.
* **CJK** (Han, Hiragana, Katakana, Hangul): adjacent-character bigrams, as the
  reference scorer does; a single character gives nothing.
* **Scripts written without spaces** (Thai, Lao, Khmer, Myanmar): bigrams of
  extended grapheme clusters, so a term never splits a consonant from its vowel
  sign or tone mark (a code-point bigram would).

* **identifiers**: besides its pieces, a code-like compound of ASCII letters and digits
  joined by ``-``, ``_`` or ``.`` (``pg-prod-02``, ``pg_isready``) is a term of kind
  :data:`IDENTIFIER` (:func:`identifier_counts`; the ``fielded`` scorer's documents and
  queries only).

Query words additionally carry a *weight*: function words (:data:`STOPWORDS`)
are dropped, and very common general words (:data:`COMMON_WORDS`, and for CJK
:data:`COMMON_BIGRAMS` and bigrams with a hiragana character) count for
:data:`COMMON_WEIGHT` of a normal word, so "thanks, that works" is not a query
about a document titled "Works from Lisbon". A query of fewer than
:data:`BULK_LINES` lines made only of common words has no terms at all ("long time
no see"). Query CJK bigrams also record which bigram they overlap right after
(:attr:`QueryTerm.follows`) and whether they are a piece of a longer katakana word
(:attr:`QueryTerm.fragment`), for the ranking's run and fragment rules.

Everything here is a pure function of the text; the per-document part
(:func:`document_terms`) is what a catalog may cache.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable, Iterator

import regex

from memrecall.engine.scoring.thai_words import clusters_of, common_trigrams

__all__ = [
    "AMBIGUOUS_WORDS",
    "COMMON_BIGRAMS",
    "COMMON_WEIGHT",
    "COMMON_WORDS",
    "IDENTIFIER",
    "LANGUAGE_MARKERS",
    "MAX_QUERY_CANDIDATES",
    "MAX_QUERY_CHARS",
    "MAX_QUERY_TERMS",
    "STOPWORDS",
    "TWO_LETTER_WORDS",
    "QueryTerm",
    "analyze",
    "clean",
    "fold",
    "identifier_counts",
    "is_identifier",
    "is_plain_word",
    "katakana_bigrams",
    "query_candidates",
    "query_terms",
    "query_text",
    "query_words",
    "sea_terms",
    "syllable_pairs",
    "term_counts",
    "terms",
    "vietnamese_words",
    "words_among",
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


_ASCII_WORD = regex.compile(r"[A-Za-z0-9]+")
_HAS_DIGIT = regex.compile(r"[0-9]")

TWO_LETTER_WORDS = frozenset(
    """
    am an as at be by do go he hi if in is it me my no of oh ok on or so to up us we
    """.split()
)
"""Two-letter English words that stay function words even in capitals (``IS IT OK``):
no acronym (:func:`is_acronym`) is made of them."""


def is_acronym(word: str) -> bool:
    """True for a two-letter word written in capital ASCII letters (``CI``, ``CD``, ``PR``,
    ``QA``, ``DB``) that is not one of :data:`TWO_LETTER_WORDS`.

    Such a word names something (a pipeline, a review, a database); a lower-case
    two-letter word is usually a function word (``is``, ``to``, ``de``), so it is kept
    only in capitals.
    """
    return (
        len(word) == 2
        and word.isascii()
        and word.isalpha()
        and word.isupper()
        and word.lower() not in TWO_LETTER_WORDS
    )


def _ascii_keep(word: str) -> bool:
    """Whether an ASCII word (as written, before lower-casing) becomes a term."""
    return len(word) >= 3 or (len(word) == 2 and bool(_HAS_DIGIT.search(word))) or is_acronym(word)


def _ascii_words(text: str) -> Iterator[tuple[str, str]]:
    """The same terms as the general path, for ASCII text (no CJK, no marks, nothing to fold)."""
    for word in _ASCII_WORD.findall(text):
        if _ascii_keep(word):
            yield "word", word.lower()


def _cased(text: str) -> tuple[str, str | None]:
    """The text as analysed (:func:`normalize`, then :func:`clean`), and the same text before
    lower-casing when every character keeps its offset (else None: no acronym is found)."""
    folded = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    lowered = folded.lower()
    cleaned = clean(lowered)
    return cleaned, (folded if len(cleaned) == len(folded) else None)


def analyze(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, term)`` for every term of a raw text, in order, with repeats.

    ``kind`` is ``word``, ``cjk`` or ``sea``.
    """
    if text.isascii():
        yield from _ascii_words(text)
        return
    cleaned, cased = _cased(text)
    for match in _RUN.finditer(cleaned):
        kind = match.lastgroup
        run = match.group()
        if kind == "word":
            if _keep_word(run) or (
                cased is not None and is_acronym(cased[match.start() : match.end()])
            ):
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
    clusters = clusters_of(run)
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
        for word, n in Counter(_ASCII_WORD.findall(text)).items():
            if _ascii_keep(word):
                counts[word.lower()] += n
        return dict(counts)
    cleaned, cased = _cased(text)
    for word, n in Counter(_WORDS.findall(cleaned)).items():
        if _keep_word(word):
            counts[fold(word)] += n
    if cased is not None:
        for match in _WORDS.finditer(cased):
            if is_acronym(match.group()):
                counts[match.group().lower()] += 1
    for run in _CJK_RUNS.findall(cleaned):
        counts.update(run[i : i + 2] for i in range(len(run) - 1))
    for run in _SEA_RUNS.findall(cleaned):
        counts.update(sea_terms(run))
    return dict(counts)


_IDENTIFIER = re.compile(r"(?<![a-z0-9_.-])[a-z0-9]+(?:[-_.][a-z0-9]+)+")
_LETTER = re.compile(r"[a-z]")

IDENTIFIER = "id"
"""The kind of a compound identifier term (:func:`identifier_counts`)."""


def is_identifier(term: str) -> bool:
    """Whether an index term is a compound identifier (:func:`identifier_counts`): no
    other term holds ``-``, ``_`` or ``.``."""
    return "-" in term or "_" in term or "." in term


def identifier_counts(text: str) -> dict[str, int]:
    """The compound identifiers of a text, counted: ASCII letters and digits joined by
    ``-``, ``_`` or ``.`` (``pg-prod-02``, ``pg_isready``, ``ledger-db.internal``,
    ``maxmemory-policy``), lower-cased, with at least one letter.

    Each of its pieces is a word term already (:func:`term_counts`); the whole is an
    extra term of its own (kind :data:`IDENTIFIER`) that only the same identifier
    matches: a host, a command or a setting named exactly is the most specific thing a
    pasted log and a memory can share. Numbers (``3.12``, ``10.4.7.21``) are not
    identifiers.
    """
    counts: dict[str, int] = {}
    lowered = (text if text.isascii() else unicodedata.normalize("NFKC", text)).lower()
    # an identifier never spans white space: only the pieces of text with a separator in
    # them are searched (the same matches as searching the whole text, several times faster)
    for piece in lowered.split():
        if "-" not in piece and "_" not in piece and "." not in piece:
            continue
        for found in _IDENTIFIER.findall(piece):
            if _LETTER.search(found) and (
                _HAS_DIGIT.search(found) or "_" in found or "." in found or found.count("-") >= 2
            ):
                counts[found] = counts.get(found, 0) + 1
    return counts


_VIETNAMESE_MARK = regex.compile(
    r"[đơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", regex.IGNORECASE
)
_MAYBE_VIETNAMESE = regex.compile(r"[đĐơƠưƯ\u0300-\u036f\u1ea0-\u1ef9]")
"""A first, cheap look: the letters of Vietnamese, precomposed, or a combining mark (text
in NFD); only text with one is normalised and searched for :data:`_VIETNAMESE_MARK`."""
_LATIN_RUN = regex.compile(r"\p{Latin}+(?:\s+\p{Latin}+)*", regex.V1)


def _vietnamese(text: str) -> str | None:
    """``text`` in NFC when it has a letter or tone mark only Vietnamese has, else None."""
    if text.isascii() or not _MAYBE_VIETNAMESE.search(text):
        return None
    normal = unicodedata.normalize("NFC", text)
    return normal if _VIETNAMESE_MARK.search(normal) else None


def vietnamese_words(text: str) -> frozenset[str]:
    """In a text with a letter or tone mark only Vietnamese has (``ơ``, ``đ``, ``ậ``; not
    ``â``, ``ê``, ``ô``, which Portuguese and French have too), the
    words written with any mark, folded (``mật`` → ``mat``, ``mình`` → ``minh``): syllables
    of Vietnamese, which fold onto one another (*mật*, *mặt*, *mát* are all ``mat``)."""
    normal = _vietnamese(text)
    if normal is None:
        return frozenset()
    return frozenset(
        fold(word).lower() for word in regex.findall(r"\p{Latin}+", normal) if not word.isascii()
    )


def syllable_pairs(text: str) -> dict[str, int]:
    """In Vietnamese text, two adjacent words of which one at least is marked
    (:func:`vietnamese_words`),
    counted, folded and joined by ``_`` (``mật khẩu`` → ``mat_khau``, ``họp đứng`` →
    ``hop_dung``): a Vietnamese word is most often two syllables, and a syllable alone says
    little once folded. An extra term beside the words, like a compound identifier (kind
    :data:`IDENTIFIER`), that only the same pair matches; pairs never span punctuation."""
    normal = _vietnamese(text)
    if normal is None:
        return {}
    counts: dict[str, int] = {}
    for run in _LATIN_RUN.findall(normal):
        words = run.split()
        for a, b in itertools.pairwise(words):
            if not (a.isascii() and b.isascii()):
                pair = f"{fold(a).lower()}_{fold(b).lower()}"
                counts[pair] = counts.get(pair, 0) + 1
    return counts


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
    whats hows wheres whos whens whys thats theres heres youre ive isnt doesnt didnt cant
    wont shouldnt couldnt wouldnt arent wasnt
    hey hello thanks thank please okay yes yeah sure sorry hmm lol haha
    der die das und ist nicht mit für auf ein eine dem den des wie was wer wann
    danke bitte hallo tschüss genau klar alles vielen dank beaucoup mille muchas muchísimas
    les des une est pas pour que qui dans avec sur
    merci bonjour salut accord oui
    los las una por para con que del como
    gracias hola vale claro
    obrigado obrigada valeu olá tchau
    grazie ciao prego
    что как это для при или его она они
    спасибо привет пожалуйста ладно хорошо отлично пока
    dass sich einer einen einem eines ich sie wir mein meine meinen meinem dein deine seine
    unser unsere ihre ihren zum zur vom beim aus bei nach von vor über unter durch gegen ohne
    bis seit oder aber doch schon auch nur sehr kann kannst können muss musst müssen soll
    sollte sollen wird werden wurde haben habe hast hatte sind bist wenn weil als warum welche
    welcher welches welchen diese dieser dieses diesen jetzt hier dort eigentlich mal gibt ihm
    ihn ihnen uns euch mich dich mir kein keine keinen etwas viel viele mehr zwischen wieder
    denn dann wohin woher wieso weshalb ganz gern gerne
    cuando donde porque este esta estos estas ese esa eso esto mis tus sus nuestro nuestra
    nuestros les nos algún alguno alguna algunos algo nada muy más menos pero también tampoco
    hay está están estoy estás soy eres fue ser estar tiene tengo tienes tener hacer hago hace
    puedo puede puedes pueden debo debe sobre entre desde hasta contra según durante todo todos
    toda todas otro otra otros otras mismo misma cada unos unas qué cómo cuál cuáles quién
    dónde cuándo cuánto cuánta cuántos usted ustedes ella ellos ellas nosotros mucho mucha
    muchos poco sin aquí allí ahí entonces así pues aunque mientras voy vas vamos tal
    nous vous ils elle elles mes tes notre votre nos vos leur leurs cette ces aux par mais donc
    comme quand quel quelle quels quelles pourquoi combien être avoir suis sommes êtes sont
    était avons avez ont avait fait faire peut peux pouvez dois doit faut très plus moins aussi
    déjà tout tous toute toutes rien chez sans sous depuis pendant avant après cela quoi dont
    lui moi toi eux
    você vocês ele ela nós eles elas meu minha meus minhas seu sua seus suas nosso nossa isso
    isto esse essa aquele aquela uma uns umas dos das numa pelo pela pelos pelas com sem
    até mas onde qual quais quem muito muita muitos mais não sim sou estou são foi tem tenho ter
    fazer faço faz pode posso podem deve vai vou há algum alguma então assim porquê aqui já
    lei noi voi loro mio mia miei mie tuo tua suo nostro nostra questo questa questi queste
    quello quella uno del della dei delle dello degli nel nella nei nelle alla alle agli dal
    dalla dai tra fra senza sopra sotto che chi cosa perché quale quali quanto quanti molto
    molti più meno anche già non sono sei siamo siete stato essere avere hai abbiamo avete hanno
    può devo ogni tutto tutti tutta qualche niente gli allora così qui però
    чтобы где когда почему зачем какой какая какие какое кто чем этот эта эти этого этом этой
    тот той того том мой моя мои моё твой её наш ваш свой своя свои без под над через после
    перед между про уже ещё еще очень тоже также только все всё весь вся быть есть был была
    было были будет можно нужно надо мне меня тебя тебе нас нам вас вам ему ней ним них себя
    сколько так там тут здесь вот если потому ничего
    tôi của các những này với cho không được trong khi thì nên như nào đang cũng
    chị chúng vào từ lại nhưng hoặc thế vậy sao nhiều lắm hơn đến tại còn thôi nhé
    على إلى هذا هذه ذلك تلك التي الذي هل كيف ماذا لماذا متى أين كان كانت لكن لقد بعد قبل عند
    شكرا جزيلا مرحبا
    darf darfst dürfen durfte will willst wollen wollte wolltest möchte möchtest möchten
    konnte könnte könnten musste müsste sollst solltest hab hatte hätte hätten wäre wären
    waren nochmal nochmals dazu damit davon dafür darauf darüber deshalb trotzdem sonst
    cet celui celle ceux celles fais veut veulent voudrais pourrais pourrait devrais
    devrait serait serais étais étaient avais
    conmigo contigo aquel aquella aquello esos esas podría debería sería estaba tenía había
    hemos habéis querría
    pra pras comigo contigo conosco dele dela deles delas nele nela aquilo estes estas esses
    essas podia poderia queria devia deveria estava seria tava
    vorrei potrei dovrei sarebbe puoi possiamo devi deve dobbiamo vuoi vuole ero erano stai
    sto stanno fai faccio suoi vostro vostra
    хочешь хотел хотела могу можешь может мог могла должен должна буду будешь который
    которая которые которого свою своей моей моего твоя твои наша наши нашей ваша ваши
    каком какого какому каким какую каких кого кому чего чему quando
    और लेकिन मगर पर तक भी ही तो जो कि या
    मैं मेरा मेरी मेरे मुझे मुझको हम हमारा हमारी हमारे हमें तुम तुम्हारा तुम्हारी तुम्हारे
    तुम्हें आप आपका आपकी आपके आपको वह वो वे ये यह इस इसे इसका इसकी इसके उस उसे उसका उसकी
    उसके उन उनका उनकी उनके इन इनका किस किसी किसे कोई कुछ सब सभी अपना अपनी अपने
    क्या कैसे कैसा कैसी कब कहाँ क्यों कौन कौनसा कौनसी कितना कितनी कितने
    है हैं था थी थे हो हूँ होगा होगी होंगे होता होती होते रहा रही रहे सकता सकती सकते
    चाहिए वाला वाली वाले लिए बारे साथ पास नहीं हाँ
    """.split()
)
"""Function words (articles, pronouns, prepositions, conjunctions, auxiliaries and question
words of English, German, Spanish, French, Portuguese, Italian, Russian, Vietnamese, Arabic and
Hindi: *पर*, *किसी*, *क्या*, *कैसे*, *रहा*, *सकता*) and chat fillers (thanks, hello, okay and
the like), as the tokenizer cuts them (``don't`` gives ``don``). Left out on purpose: words
that are also ordinary content words in English (``son``, ``hat``, ``bin``, ``war``, ``man``,
``comment``, ``mon``, ``era``, ``fare``, ``vers``, ``car``, ``van``, ``dove``, ``dir``,
``nas``, ``num``; French ``été`` is also *summer*; Vietnamese ``vẫn``, ``bạn``, ``một`` and
``rất`` fold to ``van``, ``ban``, ``mot`` and ``rat``), and words that are also common first
names (``ali``, ``anh``, ``minh``); in a query written in their language some of them count as
common words (:data:`AMBIGUOUS_WORDS`). The last lines are the modal verbs, conditionals, past
auxiliaries, demonstratives and pronoun forms a question is phrased with in German, French,
Spanish, Portuguese, Italian and Russian (*darf*, *wollte*, *pourrait*, *podría*, *comigo*,
*vorrei*, *могу*); French *font* (they do) and Italian *sue* (her) are left out, English words.
Dropped from queries: they carry no topic. Words shorter than three letters become terms only
with a digit, or as capital acronyms (:func:`is_acronym`). Hindi's list was added last: the
Hindi turns of the blind sets matched memories on *पर* and *क्या* alone. Then Portuguese and
Italian *quando* (Spanish *cuando* and French *quand* were in) and the Russian cases of
*какой*, *кто* and *что* (*каком*, *какого*, *кого*, *чего*): a question's *when* or *which*
counted as a topical word and halved the share of it a memory could explain."""

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
    instructions method procedure procedures process steps
    gut gute guten morgen heute bien bueno buena buenos perfecto parfait marche bom boa
    beleza tudo perfetto bene большое большой хороший сегодня завтра
    tage woche abend nacht jahr gestern
    día días semana noche tarde mañana año hoy ayer
    jour jours semaine soir nuit matin année demain hier
    dia dias noite manhã amanhã ano hoje ontem
    giorno giorni settimana sera notte mattina domani oggi ieri anno
    день дня неделя неделе вечер вечером ночь утро утром год вчера
    methode verfahren vorgehen schritte anleitung prozess ablauf
    método procedimiento proceso pasos instrucciones
    méthode procédure processus étapes
    procedimento processo passos instruções
    metodo procedura passaggi istruzioni
    способ метод процедура процесс шаги инструкция
    idee ideen idea ideia consejo consejos conseil conseils tipp tipps dica dicas consiglio
    consigli совет советы ayuda aide hilfe ajuda aiuto помощь rapide rápido rápida schnell
    veloce noch todavía encore ainda ancora immer siempre toujours sempre fin fim gentile
    помог помогла помогли
    wieder andere anderes fragen frage gefragt zurück beste besten besser bisschen kommen kommt
    kam jeder jede jedes finden finde erste ersten vergessen bekommen kriegen geben gehen geht
    gegangen toll glaube passiert helfen wissen weiß letzte letzten klein kleine lange schauen
    sehen machen mache macht vielleicht brauche brauchen nie neue neuen nächste nächsten nett
    nichts alte alten schnell wirklich richtig sagen sagt scheint zeigen bald anfangen sachen
    sache nehmen ding dinge denken denke heute zeit versuchen benutzen nutzen wollen arbeiten
    funktioniert fertig setzen stellen legen
    otra vez otro pregunta preguntar volver mejor mejores grande pequeño llamar venir viene
    cualquier encontrar primero primera olvidé olvidar conseguir ir voy bueno genial creo pasa
    pasó ayudar saber sé último última gusta poco largo mirar ver parece necesito necesitar
    nunca nuevo nueva próximo próxima bonito nadie viejo vieja poner rápido realmente decir dice
    dijo empezar cosa cosas tomar pensar pienso hoy tiempo intentar usar quiero querer trabajo
    funciona
    encore autre autres demander demandé retour mieux meilleur grand grande petit petite appeler
    venir viens trouver premier première oublié avoir obtenir aller vais bon bonne super crois
    arrive aider savoir sais dernier dernière aime peu long longue regarder voir semble besoin
    jamais nouveau nouvelle prochain prochaine gentil vieux vieille mettre vraiment dire dit
    commencer chose choses prendre penser pense aujourd temps essayer utiliser veux vouloir
    travail marche fonctionne
    outro outra perguntar voltar melhor grande pequeno ligar vir vem encontrar achar primeiro
    primeira esqueci conseguir ir vou bom boa ótimo acho acontece ajudar saber sei último
    última gosto pouco longo olhar ver parece preciso precisar nunca novo nova próximo próxima
    legal velho velha colocar rápido realmente dizer disse começar coisa coisas pegar pensar
    penso hoje tempo tentar usar quero querer trabalho funciona demais
    altro altra chiedere tornare meglio migliore grande piccolo chiamare venire viene trovare
    primo prima dimenticato ottenere andare vado buono buona ottimo credo succede aiutare
    sapere so ultimo ultima piace poco lungo guardare vedere sembra bisogno mai nuovo nuova
    prossimo prossima bello vecchio vecchia mettere veloce davvero dire detto cominciare cose
    prendere pensare penso tempo provare usare voglio volere lavoro funziona
    снова другой другая спросить вернуть лучше лучший большая маленький позвонить прийти найти
    первый первая забыл получить пойти иду хорошая отличный думаю случилось помочь знать знаю
    последний последняя нравится немного длинный посмотреть смотреть видеть кажется нужен
    никогда новый новая новые следующий старый старая поставить быстро правда сказать начать
    вещь вещи взять думать время попробовать использовать хочу хотеть работа работает
    ngày tốt cách muốn biết làm đi thấy cần giúp thử dùng xem mới cũ nhanh thật
    मदद अच्छा अच्छी अच्छे करना करने करें करूँ करो करते करता करती किया करके देना दें दूँ दो बताओ
    बताइए बताएं बताना देखें देखना देखूँ पता चल चलता जानना चाहता चाहती चाहते नया नई नए
    पुराना बहुत ज़्यादा थोड़ा अभी फिर आज कल दिन हफ्ते साल समय तरीका
    """.split()
)
"""General words that are frequent in any text and rarely name a topic on their own (English,
then the same kind in German, Spanish, French, Portuguese, Italian and Russian, and the
English time words — day, week, evening, night, year, yesterday — in each of those); the
kind of answer asked for (a method, a procedure, the steps), not its subject, in English and
those languages; and the chat words of a request in those languages (an idea, a tip, help,
quick, still, always), then the everyday verbs, adjectives and nouns of the English list
(go, make, get, know, want, need, find, good, new, old, thing, time ...) in German, Spanish,
French, Portuguese, Italian, Russian, Vietnamese and Hindi. An inflected form of an English
common word (``keeps``, ``helped``, ``making``) is common too (:func:`_common_stem`)."""

COMMON_BIGRAMS = frozenset(
    """
    什么 怎么 为什 可以 问题 没有 这个 那个 这样 那样 我们 你们 他们 一下 就是 还是 已经 现在
    知道 觉得 需要 应该 因为 所以 但是 如果 然后 时候 好的 谢谢 没事 不是 一个 哈哈 今天 明天
    昨天 大家 东西 事情 多少 一些 不错 早上 上午 下午 晚上
    今日 明日 昨日 大丈 丈夫 了解 本当 時間 場合 最近 問題 仕事 一緒
    감사 사합 합니 니다 좋아 아요 해요 어요 그렇 렇게 안녕 하세 세요 있어 없어 어떻 떻게 오늘
    내일 정말 진짜 그냥 지금 우리 이거 저거
    어제 요즘 에서 에게 으로 하고 하는 하면 해서 습니 입니 있는 주세 까지 부터 처럼 마다 한테
    께서 이랑
    方法 办法 如何 步骤 流程 过程 说明 手順 手続 説明 방법 절차 과정 단계 설명
    """.split()
)
"""CJK bigrams that are general words or grammatical endings (Chinese, Japanese, Korean):
like :data:`COMMON_WORDS`, they count for :data:`COMMON_WEIGHT`. So do bigrams with a
hiragana character (particles, inflections, and the bigrams that straddle a word and its
particle, like ``日の``); Korean particles and endings (``에서``, ``으로``, ``하는``,
``습니``) are the same kind. The last line is the kind-of-answer words of
:data:`COMMON_WORDS` (method, procedure, process, steps, instructions) in Chinese, Japanese
and Korean."""

COMMON_WEIGHT = 0.3
"""What a common word counts for, relative to a normal query word."""

LANGUAGE_MARKERS: dict[str, frozenset[str]] = {
    "de": frozenset(
        "der die das den dem und ist ich wir nicht mit ein eine einen für auf wie wann noch"
        " bei mein meinen meine sich sind wird werden kann gibt".split()
    ),
    "fr": frozenset(
        "les une est pas pour qui dans avec nous vous cette mais quand quel quelle pourquoi"
        " très déjà chez".split()
    ),
    "es": frozenset(
        "los las una por para con del como cuando donde porque está están qué cómo cuál"
        " dónde cuándo también muy".split()
    ),
    "it": frozenset(
        "della delle dello degli nel nella che chi sono perché quale anche già gli cosa"
        " questo questa".split()
    ),
    "pt": frozenset(
        "você vocês não uma com isso isto muito também onde quem pelo pela então".split()
    ),
}
"""Function words that tell a query's language: a query holding one is read as (also)
written in it. Words that are as often another language's are left out (*was*, *des*,
*come*); German *die* stays, since a false mark only weighs *hat*, *bin*, *war*, *man* and
*dir* down to common words."""

AMBIGUOUS_WORDS: dict[str, frozenset[str]] = {
    "de": frozenset("hat bin war man dir".split()),
    "fr": frozenset("car comment mon son ton vers été".split()),
    "es": frozenset("son van era".split()),
    "it": frozenset("dove fare era come".split()),
    "pt": frozenset("nas num era come".split()),
}
"""Function words of a language that are also English content words (German *hat* "has",
French *car* "because", Italian *dove* "where", Portuguese *come* "eats"), so not in
:data:`STOPWORDS`: in a query written in that language (:data:`LANGUAGE_MARKERS`) they
count as common words ("Wer *hat* die Relativitätstheorie entwickelt?" is not about hats)."""

_STOP = frozenset(fold(w) for w in STOPWORDS)
_MARKERS = {lang: frozenset(map(fold, words)) for lang, words in LANGUAGE_MARKERS.items()}
_AMBIGUOUS = {lang: frozenset(map(fold, words)) for lang, words in AMBIGUOUS_WORDS.items()}


def ambiguous_common(terms: Collection[str]) -> frozenset[str]:
    """The :data:`AMBIGUOUS_WORDS` among ``terms`` (folded, as :func:`analyze` gives them)
    that are function words of a language the terms are written in."""
    out: set[str] = set()
    for lang, markers in _MARKERS.items():
        if not markers.isdisjoint(terms):
            out.update(_AMBIGUOUS[lang].intersection(terms))
    return frozenset(out)


_COMMON = frozenset(fold(w) for w in COMMON_WORDS)
_HAS_KANA = regex.compile(r"\p{Script=Hiragana}")
_KATAKANA_PAIR = regex.compile(r"[\p{Script=Katakana}ー]{2}$")


_ENDINGS: tuple[tuple[str, str], ...] = (
    ("ies", "y"),
    ("ied", "y"),
    ("es", ""),
    ("s", ""),
    ("ed", ""),
    ("ed", "e"),
    ("ing", ""),
    ("ing", "e"),
)


def _common_stem(word: str) -> bool:
    """True when an English inflection of ``word`` (``-s``, ``-es``, ``-ies``, ``-ed``,
    ``-ing``, with a dropped ``e``) is one of :data:`COMMON_WORDS` (``keeps``, ``helped``,
    ``making``): the inflected form is as general as the word."""
    for ending, restore in _ENDINGS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= 3 and stem + restore in _COMMON:
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _word_weight(word: str) -> float:
    if word in _STOP:
        return 0.0
    return COMMON_WEIGHT if word in _COMMON or _common_stem(word) else 1.0


def is_plain_word(word: str) -> bool:
    """Whether a word term (folded, as :func:`analyze` gives it) is neither a function word
    (:data:`STOPWORDS`) nor a common one (:data:`COMMON_WORDS`): one that may name a topic."""
    return _word_weight(word) == 1.0


class QueryTerm:
    """One distinct query term and its weight (1, or :data:`COMMON_WEIGHT`; less in the bulk
    of a paste). ``common`` says it is a common word or bigram, whatever its weight."""

    __slots__ = ("common", "follows", "kind", "term", "weight", "words")

    def __init__(
        self,
        kind: str,
        term: str,
        weight: float,
        *,
        common: bool = False,
        follows: frozenset[str] = frozenset(),
        words: frozenset[str] = frozenset(),
    ) -> None:
        self.kind = kind
        self.term = term
        self.weight = weight
        self.common = common
        self.follows = follows
        """The CJK bigrams this one overlaps right after somewhere in the query (``统里``
        follows ``系统`` in ``系统里``): a run of characters, not separate words."""
        self.words = words
        """The katakana words of three or more characters this bigram is a piece of
        (``ラーメン`` for ``メン``): part of one word, not a word."""

    @property
    def fragment(self) -> bool:
        """Whether this is a piece of a longer katakana word (:attr:`words`)."""
        return bool(self.words)

    def __repr__(self) -> str:
        return f"QueryTerm({self.kind!r}, {self.term!r}, {self.weight})"


MAX_QUERY_TERMS = 64
"""At most this many distinct terms are scored per query. :func:`query_terms` keeps half
from the head of the query and half from the tail; the ``fielded`` scorer instead keeps the
most specific of the :func:`query_candidates`."""

MAX_QUERY_CHARS = 16_000
"""How much of a query is analysed: the first and the last half of this many characters.

A pasted log or thread should not cost more than a few milliseconds of analysis, however
long it is (a 4,000-line paste would otherwise be analysed whole on every turn)."""

MAX_QUERY_CANDIDATES = 1_024
"""At most this many distinct terms are kept as candidates (half from the head, half from the
tail), out of which a scorer picks the :data:`MAX_QUERY_TERMS` it scores."""


def words_among(terms: Iterable[QueryTerm]) -> int:
    """How many words ``terms`` (some of a query's terms) stand for: a CJK bigram that
    :attr:`QueryTerm.follows` another of them continues that one's word (``派单``, ``单服``,
    ``服务`` are one: 派单服务), every other term is a word of its own."""
    chosen = list(terms)
    held = {qt.term for qt in chosen}
    return sum(1 for qt in chosen if not (qt.follows & held))


def query_text(query: str) -> str:
    """The part of a query that is analysed: all of it, or its first and last
    :data:`MAX_QUERY_CHARS` // 2 characters. Every rule that reads a query reads this, so a
    hostile query costs what a long one does."""
    if len(query) <= MAX_QUERY_CHARS:
        return query
    half = MAX_QUERY_CHARS // 2
    return query[:half] + "\n" + query[-half:]


BULK_LINES = 8
"""A query of at least this many non-empty lines is a paste (a log, a thread): its terms are
weighed by how many of its lines they are on (:func:`query_candidates`)."""

BULK_SPREAD = 2.0
"""In a paste, a term on at most this many lines keeps its full weight."""


def _weighed(kind: str, term: str) -> float:
    if kind == "word":
        return _word_weight(term)
    if kind == "cjk" and (term in COMMON_BIGRAMS or _HAS_KANA.search(term)):
        return COMMON_WEIGHT
    return 1.0


def _cut(found: list[QueryTerm], limit: int) -> list[QueryTerm]:
    if len(found) <= limit:
        return found
    half = limit // 2
    return found[:half] + found[-half:]


def _distinct(pairs: Iterable[tuple[str, str]], limit: int) -> list[QueryTerm]:
    seen: dict[str, QueryTerm] = {}
    for kind, term in pairs:
        if term not in seen:
            weight = _weighed(kind, term)
            if weight > 0:
                seen[term] = QueryTerm(kind, term, weight, common=weight < 1.0)
    return _cut(list(seen.values()), limit)


def _katakana_word(chain: list[str], words: dict[str, set[str]]) -> None:
    """Record the katakana word spelled by a chain of overlapping katakana bigrams
    against each of its bigrams (a chain of at least two: a word of three or more
    characters)."""
    if len(chain) < 2:
        return
    word = chain[0] + "".join(gram[1] for gram in chain[1:])
    for gram in chain:
        words.setdefault(gram, set()).add(word)


def katakana_bigrams(word: str) -> frozenset[str]:
    """The distinct bigrams of a katakana word (as :func:`analyze` cuts it)."""
    return frozenset(word[i : i + 2] for i in range(len(word) - 1))


def query_candidates(query: str, limit: int = MAX_QUERY_CANDIDATES) -> list[QueryTerm]:
    """The distinct weighted terms of a query, in order, stopwords dropped, and in a paste
    the bulk weighed down.

    Analyses at most :data:`MAX_QUERY_CHARS` characters (head and tail), each once, and
    keeps at most ``limit`` terms (the first and the last ``limit // 2``). A query of at
    least :data:`BULK_LINES` non-empty lines is a paste: the words on most of its lines
    (timestamps, levels, field names, the service that logs every line) are its template,
    not its subject, so a term on ``n`` of its ``L`` lines keeps
    ``log(1 + L / n) / log(1 + L / BULK_SPREAD)`` of its weight (at most all of it), and a
    name that appears once outweighs the bulk.
    """
    pairs: list[tuple[str, str]] = []
    spread: Counter[str] = Counter()
    follows: dict[str, set[str]] = {}
    words: dict[str, set[str]] = {}
    lines = 0
    sea_runs: list[list[str]] = []
    for line in query_text(query).splitlines():
        found = list(analyze(line))  # no term spans a line break
        if any(kind == "sea" for kind, _ in found):
            sea_runs.extend(clusters_of(run) for run in _SEA_RUNS.findall(_cased(line)[0]))
        chain: list[str] = []  # the katakana bigrams of the word being read
        for (kind, before), (next_kind, term) in itertools.pairwise(found):
            if kind == next_kind == "cjk" and before[1] == term[0] and before != term:
                follows.setdefault(term, set()).add(before)
                if _KATAKANA_PAIR.match(before) and _KATAKANA_PAIR.match(term):
                    chain = chain or [before]
                    chain.append(term)
                    continue
            _katakana_word(chain, words)
            chain = []
        _katakana_word(chain, words)
        found.extend((IDENTIFIER, term) for term in identifier_counts(line))
        found.extend((IDENTIFIER, term) for term in syllable_pairs(line))
        pairs.extend(found)
        spread.update({term for _, term in found})
        lines += bool(line.strip())
    distinct = _distinct(pairs, limit)
    ambiguous = ambiguous_common(spread)
    thai = common_trigrams(sea_runs) if sea_runs else frozenset()
    for qt in distinct:
        if not qt.common and (
            (qt.kind == "word" and qt.term in ambiguous) or (qt.kind == "sea" and qt.term in thai)
        ):
            qt.weight *= COMMON_WEIGHT
            qt.common = True
        if qt.term in follows:
            qt.follows = frozenset(follows[qt.term])
        if qt.term in words:
            qt.words = frozenset(words[qt.term])
    if lines < BULK_LINES:
        # a question made only of common words names no topic ("long time no see")
        return distinct if any(not qt.common for qt in distinct) else []
    full = math.log(1.0 + lines / BULK_SPREAD)
    out = []
    for qt in distinct:
        share = min(1.0, math.log(1.0 + lines / max(1, spread[qt.term])) / full)
        out.append(
            qt
            if share >= 1.0
            else QueryTerm(
                qt.kind,
                qt.term,
                qt.weight * share,
                common=qt.common,
                follows=qt.follows,
                words=qt.words,
            )
        )
    return out


def query_words(query: str) -> frozenset[str]:
    """Every distinct term of a query as :func:`analyze` cuts it (stopwords included), in its
    first and last :data:`MAX_QUERY_CHARS` // 2 characters: what a rule about how the query
    is asked reads (:func:`~memrecall.engine.scoring.change_words.asks_current`)."""
    return frozenset(term for _, term in analyze(query_text(query)))


def query_terms(query: str, limit: int = MAX_QUERY_TERMS) -> list[QueryTerm]:
    """The distinct weighted terms of a query, stopwords dropped, bounded like the reference.

    The bound keeps the first ``limit // 2`` distinct terms and the last
    ``limit // 2`` (a pasted log should not cost more than a question). The
    ``fielded`` scorer keeps the most specific ones instead
    (:meth:`~memrecall.engine.scoring.fielded.FieldedIndex.query_terms`).
    """
    return _distinct(analyze(query_text(query)), limit)
