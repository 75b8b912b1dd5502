"""What kind of turn a query is (issue 18, silence on small talk).

Phrases in many languages, matched on the terms
:func:`~memrecall.engine.scoring.analysis.analyze` cuts (lower case, accents folded, CJK as
bigrams, stopwords included): a phrase is in a query when every one of its terms is.

* **Social phrases** (:data:`SOCIAL_PHRASES`): thanks, greetings, apologies, goodbyes
  ("thanks, that fixed it", "Guten Morgen!", "감사합니다", "你好呀"). The user is talking to the
  assistant, not asking about the memories; a memory that shares a word with the turn in
  passing ("das *hat* echt geholfen", "chúc bạn *một* ngày") is no answer. Such a turn is
  answered only by memories judged strong, or by weak ones that hold a topical term of a
  clause without the social phrase ("¡Gracias! Otra cosa: ¿…?"; :func:`strong_only`).
* **Names** (:func:`names`): a capitalised word inside a sentence ("a pivot table in
  *Excel*", "a LEFT JOIN in *SQL*", "*iPhone*"; not weekdays and months, none in German).
  When no memory knows most of a question's names, the question is about those things, and
  only a strong match answers it; when the memories know them, a weak match answers only if
  it holds one ("a background blur in *Zoom*" is not answered by a memory that only says
  *background*; acronyms such as *CI* and *PRs* hold nothing back: :func:`strong_only`).
* **Private life** (:data:`PRIVATE_PHRASES`): home, family, friends, parents, school, one's
  phone and photos, one's health, the weather, cooking, eating out, films, sport, holidays,
  birthdays and gifts ("my sister's wedding speech", "家里路由器", "la macchina del caffè di casa
  mia", "Mi hijo quiere aprender Python", "दिवाली पर टीम को क्या गिफ़्ट दूँ?"). Such a question
  is about the asker's own life; a memory that never speaks of it (the office's coffee machine,
  the guest Wi-Fi, the team's Python versions) answers something else, however many words they
  share (:func:`elsewhere`). A memory that does speak of it (one that names the user's
  daughter, or working from home) still counts, and so does one that holds a topical term of a
  clause without a private phrase ("my kid is sick — who's on the pager?"), and so does every
  memory when the question also names work (:data:`WORK_PHRASES`: "the office network from
  home", "zu Hause ins Büro").

Words that commonly mean something else are left out, as in
:mod:`~memrecall.engine.scoring.change_words`: Spanish *son* (they are), French *femme* and
German *Frau* alone (woman, a title: "Frau Keller"), *personal* and *personnel* (personal data,
staff), *child* and *family* (a child process, a font family), *brother* (a printer brand),
Japanese *彼女* (also "she"), German *Kinder* and *Handy* alone (English "kinder", "handy"),
English *phone* alone (the on-call phone), Vietnamese *con* (also "still" once folded), English
*bad* (of "my bad"); *home page* and *home directory* are work. Goodbyes whose words a question
uses too are left out: *see you* ("where can I see…"), *good afternoon* ("is Friday afternoon a
good slot?"), Russian *пока* (also "while", "so far") and *до встречи* ("before the meeting"),
and a farewell until tomorrow (*à demain*, *hasta mañana*, *bis morgen*: "can it wait until
tomorrow?"). The rules are functions of a few callables, so that
:class:`~memrecall.engine.scoring.fielded.FieldedIndex` and the store's ranker apply them
alike.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable
from typing import TypeVar

import regex

from memrecall.engine.scoring.analysis import (
    LANGUAGE_MARKERS,
    analyze,
    fold,
    query_candidates,
    query_text,
    query_words,
)

__all__ = [
    "GERMAN_MARKERS",
    "PRIVATE_PHRASES",
    "SOCIAL_PHRASES",
    "WORK_PHRASES",
    "Pair",
    "Phrase",
    "elsewhere",
    "names",
    "private_phrases",
    "says_social",
    "says_work",
    "strong_only",
]

_K = TypeVar("_K", bound=Hashable)
"""A document key: a pool position in the index, a memory id in the store's index."""

SOCIAL_PHRASES = (
    # English
    "thanks",
    "thank you",
    "thx",
    "cheers",
    "hello",
    "hey",
    "good morning",
    "good evening",
    "good night",
    "goodbye",
    "bye",
    "cya",
    "ttyl",
    "have a nice day",
    "have a nice weekend",
    "sorry",
    "never mind",
    "nevermind",
    "lol",
    "haha",
    "ugh",
    "brb",
    "bin gleich",
    # German, Dutch
    "danke",
    "vielen dank",
    "hallo",
    "moin",
    "servus",
    "guten morgen",
    "guten tag",
    "guten abend",
    "gute nacht",
    "tschuss",
    "auf wiedersehen",
    "bis bald",
    "bis später",
    "schönes wochenende",
    "bedankt",
    "dank je",
    "dankjewel",
    "goedemorgen",
    "goedenavond",
    "tot ziens",
    # French
    "merci",
    "bonjour",
    "bonsoir",
    "salut",
    "coucou",
    "au revoir",
    "bonne journée",
    "bonne soirée",
    "bonne nuit",
    # Spanish
    "gracias",
    "hola",
    "buenos dias",
    "buenas tardes",
    "buenas noches",
    "adiós",
    "chao",
    "hasta luego",
    "hasta pronto",
    "nos vemos",
    "buen finde",
    # Portuguese
    "obrigado",
    "obrigada",
    "valeu",
    "bom dia",
    "boa tarde",
    "boa noite",
    "tchau",
    "até logo",
    # Italian
    "grazie",
    "ciao",
    "buongiorno",
    "buonasera",
    "buonanotte",
    "buona notte",
    "buona giornata",
    "buona serata",
    "buon weekend",
    "arrivederci",
    # Russian, Ukrainian
    "спасибо",
    "привет",
    "здравствуйте",
    "доброе утро",
    "добрый день",
    "добрый вечер",
    "до свидания",
    "всего доброго",
    "спокойной ночи",
    "хороших выходных",
    "дякую",
    "привіт",
    "до побачення",
    # Polish, Czech
    "dziękuję",
    "dzięki",
    "cześć",
    "dzień dobry",
    "dobranoc",
    "do widzenia",
    "děkuji",
    "díky",
    "ahoj",
    "na shledanou",
    # Swedish, Turkish, Indonesian
    "hej",
    "god morgon",
    "teşekkürler",
    "teşekkür ederim",
    "merhaba",
    "günaydın",
    "görüşürüz",
    "iyi geceler",
    "terima kasih",
    "selamat pagi",
    "selamat malam",
    "sampai jumpa",
    # Arabic
    "شكرا",
    "مرحبا",
    "صباح الخير",
    "مساء الخير",
    # Hindi
    "धन्यवाद",
    "शुक्रिया",
    "नमस्ते",
    "नमस्कार",
    "सुप्रभात",
    "शुभ रात्रि",
    "अलविदा",
    "फिर मिलेंगे",
    # Vietnamese (folded)
    "xin chao",
    "chao ban",
    "tạm biệt",
    "hẹn gặp lại",
    "chúc ngủ ngon",
    # Chinese
    "你好",
    "您好",
    "谢谢",
    "多谢",
    "辛苦了",
    "早上好",
    "下午好",
    "晚上好",
    "晚安",
    "再见",
    "拜拜",
    "回头见",
    "明天见",
    "周末愉快",
    # Japanese
    "ありがとう",
    "こんにちは",
    "おはよう",
    "こんばんは",
    "おやすみ",
    "お疲れ様",
    "お疲れさま",
    "お先に失礼",
    "さようなら",
    "じゃあね",
    "すみません",
    "ごめん",
    # Korean
    "감사합니다",
    "고맙습니다",
    "고마워",
    "안녕하세요",
    "안녕",
    "수고하셨습니다",
    "좋은 주말",
    "미안",
    # Thai
    "ขอบคุณ",
    "สวัสดี",
    "ลาก่อน",
    "แล้วเจอกัน",
    "ราตรีสวัสดิ์",
)
"""Thanks, greetings, apologies and goodbyes (see the module's docstring)."""

PRIVATE_PHRASES = (
    # English
    "home",
    "wife",
    "husband",
    "daughter",
    "kid",
    "kids",
    "meine kinder",
    "die kinder",
    "unsere kinder",
    "kindern",
    "mom",
    "mum",
    "dad",
    "mother",
    "father",
    "sister",
    "girlfriend",
    "boyfriend",
    "my friend",
    "wedding",
    # German, Dutch
    "zu hause",
    "zuhause",
    "daheim",
    "meine frau",
    "mein mann",
    "sohn",
    "tochter",
    "mutter",
    "vater",
    "schwester",
    "bruder",
    "freundin",
    "familie",
    "thuis",
    # French
    "maison",
    "chez moi",
    "chez nous",
    "mon mari",
    "fils",
    "fille",
    "enfant",
    "enfants",
    "pere",
    "soeur",
    "frere",
    "copine",
    "copain",
    "famille",
    # Spanish
    "hijo",
    "hija",
    "hijos",
    "ninos",
    "esposa",
    "esposo",
    "marido",
    "hermana",
    "hermano",
    "novia",
    "novio",
    "pareja",
    "familia",
    # Portuguese
    "filho",
    "filha",
    "filhos",
    "irma",
    "irmao",
    "namorada",
    "namorado",
    # Italian
    "casa",
    "figlio",
    "figlia",
    "figli",
    "moglie",
    "marito",
    "sorella",
    "fratello",
    "fidanzata",
    "famiglia",
    # Russian
    "дома",
    "сын",
    "дочь",
    "дочка",
    "дети",
    "жена",
    "муж",
    "мама",
    "папа",
    "сестра",
    "брат",
    "семья",
    "семьи",
    # Vietnamese (folded)
    "gia dinh",
    # Chinese
    "家里",
    "我家",
    "老婆",
    "老公",
    "儿子",
    "女儿",
    "孩子",
    "妈妈",
    "爸爸",
    "女朋友",
    "男朋友",
    "家人",
    "家庭",
    # Japanese
    "家族",
    "子供",
    "子ども",
    "息子",
    "実家",
    "彼氏",
    "旦那",
    # Korean
    "우리 아들",
    "아들",
    "남편",
    "아내",
    "가족",
    "엄마",
    "아빠",
    "여자친구",
    "남자친구",
    # Thai: home, family, partner, the weather
    *("ที่บ้าน", "ลูกสาว", "ลูกชาย", "แฟน", "ครอบครัว", "อากาศ", "ฝนตก"),
    # life outside work: the weather, cooking, films and novels, sport, birthdays
    *("weather", "forecast", "wetter", "meteo", "pleuvoir", "pluie", "lluvia", "llover"),
    *("chuva", "chover", "pioggia", "погода", "дождь", "天气", "下雨", "天気", "날씨"),
    *("recipe", "recipes", "rezept", "kochen", "backen", "recette", "cuisiner", "receta"),
    *("cocinar", "receita", "cozinhar", "ricetta", "cucinare", "рецепт", "菜谱", "レシピ"),
    *("movie", "movies", "film", "novel", "映画", "电影", "영화", "pelicula", "filme", "фильм"),
    *("football", "soccer", "足球", "サッカー", "축구", "futbol", "futebol"),
    *("birthday", "geburtstag", "anniversaire", "cumpleanos", "aniversario", "compleanno"),
    *("生日", "誕生日", "생일"),
    # parents and school, in the languages above
    *("madre", "padre", "mama", "papa", "mae", "maman", "mutti", "школа", "school"),
    *("parents", "eltern", "padres", "genitori", "родители", "부모", "両親", "父母"),
    *("schule", "ecole", "escuela", "escola", "scuola", "学校", "학교"),
    *("rain", "snow", "sunny"),
    # holidays (not business trips: "trip", "travel" and "Reise" are left out)
    *("sightseeing", "tourist", "beach", "playa", "praia", "spiaggia", "旅行", "旅游"),
    *("観光", "温泉", "여행", "관광"),
    # one's own phone and photos (a memory about the company phone speaks of a phone)
    *("smartphone", "mein handy", "meinem handy", "das handy"),
    *("dem handy", "mon telephone"),
    *("celular", "meu celular", "il mio telefono", "мой телефон", "моем телефоне", "手机"),
    *("スマホ", "携帯", "핸드폰", "휴대폰", "아이폰", "스마트폰", "dien thoai"),
    *("photo", "photos", "foto", "fotos", "фото", "照片", "写真", "사진"),
    # friends, eating out, one's health, autumn leaves and blossoms
    *("friends", "amigos", "amigas", "amis", "freunde", "amici", "друзья", "朋友"),
    *("友達", "友だち", "친구", "restaurante", "ristorante", "ресторан", "美食"),
    *("グルメ", "맛집", "肩こり", "頭痛", "腰痛", "風邪", "感冒", "发烧", "头疼", "감기"),
    *("두통", "ダイエット", "减肥", "다이어트", "紅葉", "花見", "お酒", "喝酒"),
    # gifts
    *("gift", "geschenk", "cadeau", "regalo", "подарок", "礼物", "プレゼント", "선물"),
    # Thai: eating out, autumn leaves, the haze, gifts, birthdays, friends, health (not
    # เที่ยว, a trip: a holiday is also leave, a work matter, as "trip" is left out above)
    *("ร้านอาหาร", "ร้านกาแฟ", "อร่อย", "ใบไม้เปลี่ยนสี", "ฝุ่น", "ของขวัญ"),
    *("วันเกิด", "ฟุตบอล", "ทำอาหาร", "เพื่อน", "ไม่สบาย", "ปวดหัว"),
    # Hindi: home, family, the weather, birthdays, gifts, films, cricket, friends
    *("घर", "परिवार", "बेटी", "बेटा", "पत्नी", "पति", "मम्मी", "मौसम", "बारिश"),
    *("जन्मदिन", "तोहफा", "गिफ़्ट", "फिल्म", "क्रिकेट", "दोस्त"),
    # Vietnamese (folded): the weather, birthdays
    *("thoi tiet", "sinh nhat"),
    # one's own home, hobbies, side job and household money, grandparents and their care, a
    # passport: Japanese, then Chinese and Korean
    *("自宅", "趣味", "マンション", "引っ越し", "家計簿", "副業", "確定申告", "私用"),
    *("祖母", "祖父", "介護", "パスポート", "爱好", "搬家", "副业", "취미", "부업", "와이프"),
    # Korean: daycare and cram school, savings and rent, a removal firm, an umbrella, games
    *("어린이집", "학원", "적금", "월세", "포장이사", "우산", "게임"),
)
"""Home, family, partner, friends, one's personal things, and life outside work: the
weather, cooking, eating out, films and novels, sport, holidays, one's health, one's phone
and photos (see the module's docstring)."""


WORK_PHRASES = (
    # English
    "office",
    "work",
    "working",
    "job",
    "company",
    "colleague",
    "colleagues",
    "coworker",
    "team",
    "boss",
    "manager",
    "client",
    "customer",
    "vpn",
    "home page",
    "home directory",
    "home folder",
    # German, Dutch
    "buro",
    "arbeit",
    "firma",
    "kollegen",
    "kollegin",
    "kantoor",
    "werk",
    # French
    "bureau",
    "travail",
    "boulot",
    "collegue",
    "collegues",
    "entreprise",
    # Spanish, Portuguese, Italian
    "oficina",
    "trabajo",
    "empresa",
    "escritorio",
    "trabalho",
    "ufficio",
    "lavoro",
    "azienda",
    "colleghi",
    # Russian
    "офис",
    "работа",
    "работе",
    "работы",
    "коллеги",
    # Vietnamese (folded)
    "van phong",
    "cong ty",
    # Chinese
    "公司",
    "办公室",
    "上班",
    "同事",
    # Japanese
    "会社",
    "職場",
    "出社",
    "社内",
    "オフィス",
    # Korean
    "회사",
    "사무실",
    "출근",
    "동료",
)
"""The office, the job, the team: a question that names one of them beside home or family
("the office network from home", "zu Hause ins Büro") is about work."""


Pair = tuple[str, str]
"""A term as ``(kind, term)``."""

Phrase = frozenset[Pair]
"""A phrase as its ``(kind, term)`` pairs."""


def _terms(phrases: Iterable[str]) -> tuple[Phrase, ...]:
    out = []
    for phrase in phrases:
        terms = frozenset(analyze(phrase))
        if not terms:
            raise ValueError(f"a turn phrase with no terms: {phrase!r}")
        out.append(terms)
    return tuple(out)


def _keyed(phrases: tuple[Phrase, ...]) -> dict[str, tuple[Phrase, ...]]:
    """The phrases by one of their terms (the longest), so that a query is checked only
    against the phrases one of whose terms it holds."""
    keyed: dict[str, list[Phrase]] = {}
    for phrase in phrases:
        key = max(sorted(term for _, term in phrase), key=len)
        keyed.setdefault(key, []).append(phrase)
    return {key: tuple(found) for key, found in keyed.items()}


_SOCIAL = _keyed(_terms(SOCIAL_PHRASES))
_PRIVATE = _keyed(_terms(PRIVATE_PHRASES))
_WORK = _keyed(_terms(WORK_PHRASES))


def _found(words: Collection[str], keyed: dict[str, tuple[Phrase, ...]]) -> list[Phrase]:
    return [
        phrase
        for term in sorted(words)
        for phrase in keyed.get(term, ())
        if all(t in words for _, t in phrase)
    ]


def says_social(words: Collection[str]) -> bool:
    """Whether a query whose terms (:func:`~memrecall.engine.scoring.analysis.query_words`)
    are ``words`` holds a social phrase."""
    return bool(_found(words, _SOCIAL))


def says_work(words: Collection[str]) -> bool:
    """Whether a query whose terms are ``words`` names work (:data:`WORK_PHRASES`: the
    office, a colleague, the company): a question about one's work however it sounds."""
    return bool(_found(words, _WORK))


def private_phrases(words: Collection[str]) -> list[Phrase]:
    """The private-life phrases a query whose terms are ``words`` holds, none when it also
    names work (:data:`WORK_PHRASES`)."""
    found = _found(words, _PRIVATE)
    if found and _found(words, _WORK):
        return []
    return found


GERMAN_MARKERS = frozenset(map(fold, LANGUAGE_MARKERS["de"]))
"""Words of German, a language that writes every noun with a capital: a question holding
one of them names nothing by its capitals (:func:`names`). Not *was* and *des*, which are
also English and French words."""

_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april"
    " may june july august september october november december ok okay".split()
)
"""English words written with a capital that name nothing a memory could know of."""

_SENTENCES = regex.compile(r"[.!?;:\n\"“”«»()\[\]¿¡。？！：；「」『』（）]+")
_LATIN = regex.compile(r"\p{Latin}[\p{Latin}\p{N}]*(?:['’][\p{Latin}]+)?", regex.V1)
_CJK_TEXT = regex.compile(
    r"[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]"
)


def names(query: str, words: Collection[str]) -> list[str]:
    """The words of ``query`` that name something: a Latin-script word with a capital letter
    that does not open its sentence (``Excel``, ``iPhone``, ``SQL``, ``Lyon``), or that
    opens one written in Chinese, Japanese or Korean (``Amazonのレビュー``). None in a German
    question (its terms ``words`` hold a :data:`GERMAN_MARKERS` word): German capitalises
    every noun."""
    if not GERMAN_MARKERS.isdisjoint(words):
        return []
    out: list[str] = []
    for sentence in _SENTENCES.split(query_text(query)):
        cjk = _CJK_TEXT.search(sentence) is not None
        for position, match in enumerate(_LATIN.finditer(sentence)):
            word = match.group()
            if (
                len(word) > 1
                and (cjk or position > 0)
                and any(ch.isupper() for ch in word)
                and word.lower() not in _CALENDAR
            ):
                out.append(word)
    return out


_ACRONYM = regex.compile(r"[\p{Lu}\d]+s?")
"""A name of capitals and digits only (``CI``, ``PRs``, ``Q4``): a word of the trade."""

_CLAUSES = regex.compile(r"[.!?;:\n—–。？！：；]+|\s-\s")


def _free_terms(query: str, marked: Callable[[Collection[str]], bool]) -> frozenset[Pair]:
    """The topical terms (no common words) of the clauses of ``query`` that ``marked`` (read
    on a clause's terms) does not mark: "my kid is sick so I'm off tomorrow — who's on the
    payments pager?" asks its question in a clause of its own."""
    out: set[Pair] = set()
    for clause in _CLAUSES.split(query_text(query)):
        if clause.strip() and not marked(query_words(clause)):
            out.update((qt.kind, qt.term) for qt in query_candidates(clause) if not qt.common)
    return frozenset(out)


def strong_only(
    query: str, words: Collection[str], known: Callable[[str, str], bool]
) -> frozenset[Pair] | None:
    """Whether only memories judged strong answer ``query`` (not a paste; ``words`` are its
    terms), and which query terms still let a weak memory through; None when any may.

    * The query names things (:func:`names`) and the pool knows fewer than half of them
      (``known(term, kind)``): "a pivot table in Excel", "a LEFT JOIN in SQL" where no memory
      says Excel or SQL. The question is about those things; a memory that shares a word with
      it in passing is no answer, and no term lets one through.
    * It holds a social phrase: a weak memory still counts when it holds a topical term of a
      clause without one ("thanks! one more thing: which provider sends the SMS codes?").
    * It names things the pool knows: "the Sentry project's URL" is about Sentry, so a weak
      memory counts when it holds a known name (whether or not it says URL), and one that
      only says "background" is no answer to "a background blur in Zoom". An acronym
      (``CI``, ``PRs``, ``SLO``: capitals and digits only) is a common word of the trade
      here, not a thing the question is about, and holds no memory back.
    """
    named = [
        (name, [(kind, term) for kind, term in analyze(name) if kind == "word"])
        for name in names(query, words)
    ]
    found = [pairs for _, pairs in named if pairs]
    unknown = sum(not any(known(term, kind) for kind, term in pairs) for pairs in found)
    if unknown * 2 > len(found):
        return frozenset()
    if says_social(words):
        return _free_terms(query, says_social)
    held = frozenset(
        (kind, term)
        for name, pairs in named
        if not _ACRONYM.fullmatch(name)
        for kind, term in pairs
        if known(term, kind)
    )
    return held or None


def elsewhere(
    candidates: Iterable[_K],
    query: str,
    words: Collection[str],
    holders: Callable[[str, str], Iterable[_K]],
) -> set[_K]:
    """The ``candidates`` that speak of none of the private-life phrases the query (terms
    ``words``) holds (:func:`private_phrases`; judged none); none when it holds none.
    ``holders(term, kind)`` gives the documents that have a term (or a form of it). A
    memory that holds a topical term of a clause without a private phrase still counts:
    "my kid is sick so I'm off tomorrow — who's on the payments pager?" asks about work."""
    phrases = private_phrases(words)
    remaining = set(candidates)
    if not phrases or not remaining:
        return set()
    for phrase in phrases:
        held: set[_K] | None = None
        for kind, term in sorted(phrase):
            docs = remaining.intersection(holders(term, kind))
            held = docs if held is None else held & docs
        remaining.difference_update(held or ())
    for kind, term in sorted(_free_terms(query, lambda w: bool(private_phrases(w)))):
        if not remaining:
            break
        remaining.difference_update(holders(term, kind))
    return remaining
