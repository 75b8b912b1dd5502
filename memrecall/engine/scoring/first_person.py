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
pronoun, so their first person of *can*, *must*, *have* and *am* counts too (*puedo*,
*posso*, *ho aggiornato*). Left out: French *ma* and *mes* (Italian *ma* is "but", Spanish
*mes* is "month").
"""

from __future__ import annotations

import regex

__all__ = ["speaks_of_self"]

_SPACED = (
    # English, German
    "i i'm i've i'd i'll me my mine myself ich mir mich mein meine meinen meinem meiner meines",
    # French, Spanish, Portuguese, Italian
    "je moi mon yo mi mis eu meu minha meus minhas io mio mia miei mie",
    # the first person of "can", "must", "have", "am" where the pronoun is dropped: Spanish,
    # Portuguese, Italian
    "puedo debo tengo estoy posso devo tenho estou ho",
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


def speaks_of_self(text: str) -> bool:
    """Whether ``text`` holds a first-person pronoun of a language people write to the agent
    in ("who's *my* manager?", "Darf *ich*…", "*j'*ai", "у *меня*", "*我*一般…", "*내가*…").
    A word of two capitals is an acronym, not a pronoun (``IO``, ``MI``)."""
    return any(not (len(found) == 2 and found.isupper()) for found in _PATTERN.findall(text))
