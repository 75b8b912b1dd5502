"""Whether a turn speaks of the person asking (issue 18, questions left silent).

Memories are about the person and their work: who they report to, how they like their
reviews, the days they are in the office. A question about any of that is asked in the first
person ("who's my manager again?", "Tu te rappelles ce que je fais exactement dans la boîte
?", "我一般哪几天下午不在办公室来着") and in other words than the memory's ("reports to the
CTO"), so the words often leave it silent. :func:`speaks_of_self` tells such a turn; the
passages then answer it with its nearest memory even where that memory does not stand out
(:func:`~memrecall.engine.scoring.silent_turns.answer_silent`).

The pronouns are matched on the turn's own text, not on its terms: the analyser drops words
of one or two letters (*I*, *my*, *je*, *mi*, *я*). Spanish, Portuguese and Italian drop the
pronoun, so their first person of *can*, *must*, *have*, *am* and *need* counts too (*puedo*,
*posso*, *ho aggiornato*, *preciso*). Left out: French *ma* and *mes* (Italian *ma* is "but",
Spanish *mes* is "month").

A subject pronoun after a *how* that opens a clause asks how to do something, not about the
asker: "how do I find which process holds port 8080?", "comment je renomme une branche ?",
"Wie berechne ich eine laufende Summe in SQL?" are generic how-tos, so that pronoun does not
count (any other first-person word of the turn still does: "*Mon* abonnement…, comment je
peux le résilier ?"), unless the turn names work
(:func:`~memrecall.engine.scoring.turn_words.says_work`: "Wie komme ich ins *Büro* rein?" asks
about the asker's workplace).
"""

from __future__ import annotations

import regex

from memrecall.engine.scoring.analysis import query_words
from memrecall.engine.scoring.turn_words import says_work

__all__ = ["speaks_of_self"]

_PRO_DROP_HOW = "puedo debo tengo necesito posso devo tenho preciso"
"""The pro-drop first person of *can*, *must*, *have* and *need* (Spanish, Portuguese,
Italian): the verbs a how-to asks with ("cómo puedo…"); :data:`_HOW_I` takes them as its
subject."""

_SPACED = (
    # English, German
    "i i'm i've i'd i'll me my mine myself ich mir mich mein meine meinen meinem meiner meines",
    # French, Spanish, Portuguese, Italian
    "je moi mon yo mi mis eu meu minha meus minhas io mio mia miei mie",
    # the first person of "can", "must", "have", "am", "need" where the pronoun is dropped: Spanish,
    # Portuguese, Italian
    f"{_PRO_DROP_HOW} estoy estou ho",
    # Russian, Hindi, Vietnamese
    "я мне меня мной мой моя мою моё моего моей мои моих मैं मेरे मेरा मेरी मुझे tôi mình",
)
_WORDS = sorted({w for line in _SPACED for w in line.split()}, key=len, reverse=True)
_UNSPACED = (
    "我",  # Chinese: I, and 我们, we
    "私",  # Japanese
    "僕",
    "俺",
    "ฉัน",  # Thai
    "ผม",
)
_KOREAN = ("내가", "나는", "제가", "저는", "내 ", "제 ")
"""Korean *I* as subject or topic, and *my* before a space (not 내부, inside, or 제1, first)."""

_PATTERN = regex.compile(
    r"(?<![\p{L}\p{M}])(?:"
    + "|".join(regex.escape(w) for w in _WORDS)
    + r")(?![\p{L}\p{M}])|(?<![\p{L}\p{M}])j['’](?=\p{L})|"
    + "|".join(regex.escape(w) for w in (*_UNSPACED, *_KOREAN)),
    regex.IGNORECASE,
)


_W = r"[\p{L}\p{M}]"
_HOW_I = regex.compile(
    r"(?<=(?:^|[\p{P}\p{S}\n])\s*)(?:"
    rf"(?:how|wie)\s+{_W}+\s+(?:i|ich)"
    rf"|(?:comment|cómo|como|come)(?:\s+{_W}+)?\s+(?:je|j['’]{_W}+|yo|eu|io|"
    + "|".join(_PRO_DROP_HOW.split())
    + ")"
    r"|как\s+мне"
    rf")(?!{_W})",
    regex.IGNORECASE,
)
"""The subject of a how-to, its how-word opening the turn, a line or a clause (after
punctuation; "tu te rappelles comment je préfère…" asks about the asker): *how* and *wie* with
the verb or auxiliary between them and the pronoun ("how *do* I", "wie *mache* ich"; "how I
like my reviews" is about the asker); *comment*, *cómo*, *como*, *come* right before the
pronoun or the pro-drop verb, or one word before ("comment je fais", "cómo puedo", "como eu
peço"); Russian *как мне*."""


def speaks_of_self(text: str) -> bool:
    """Whether ``text`` holds a first-person pronoun of a language people write to the agent
    in ("who's *my* manager?", "Darf *ich*…", "*j'*ai", "у *меня*", "*我*一般…", "*내가*…"),
    other than the subject of a how-to (:data:`_HOW_I`) in a turn that does not name work.
    A word of two capitals is an acronym, not a pronoun (``IO``, ``MI``)."""
    found = [m for m in _PATTERN.finditer(text) if not (len(m[0]) == 2 and m[0].isupper())]
    if not found:
        return False
    how = [m.span() for m in _HOW_I.finditer(text)]
    if not how or says_work(query_words(text)):
        return True
    return any(not any(start <= m.start() < end for start, end in how) for m in found)
