"""Words with which a note says that it changes an earlier state of things (issue 18).

An update is often written against what it replaces: "standups *now* start at 10",
"*no longer* by e-mail", "the old script was *retired*", "*ab sofort* über das Portal",
"*改为*线上申请", "*廃止*されました", "*이제* 포털에서". When the newer of two notes about the
same subject says so, it speaks for the older one even on the words it does not repeat
(:meth:`memrecall.engine.scoring.fielded.FieldedIndex.same_subject` pairs, issue 18's
"fresher facts first").

The set holds terms as :func:`memrecall.engine.scoring.analysis.term_counts` yields
them: lower case, accents folded, CJK as bigrams. Words that also commonly mean
something else (English *change*, Spanish *ya*, German *mehr*, Russian *больше*,
Korean *이상*) are left out: a false marker would let an unrelated newer note speak for
an older one. Phrases made only of stopwords (Spanish *ya no*, French *ne ... plus*)
leave no term and go unseen; such a note still takes the older one's place where the
query's words agree (the ordinary same-subject rule).
"""

from __future__ import annotations

from collections.abc import Collection

__all__ = ["CHANGE_WORDS", "CURRENT_WORDS", "asks_current", "declares_change"]

CHANGE_WORDS = frozenset(
    {
        # English
        "now",
        "longer",  # "no longer"
        "anymore",
        "instead",
        "replaced",
        "replaces",
        "retired",
        "deprecated",
        "discontinued",
        "superseded",
        "obsolete",
        "moved",
        "switched",
        "migrated",
        "renamed",
        "changed",
        # Spanish, Portuguese, Italian
        "ahora",
        "reemplaza",
        "reemplazado",
        "reemplazada",
        "sustituye",
        "sustituido",
        "sustituida",
        "cambiado",
        "trasladado",
        "retirado",
        "agora",
        "substituido",
        "substitui",
        "mudou",
        "adesso",
        "sostituito",
        # French
        "desormais",
        "maintenant",
        "remplace",
        "remplacee",
        "demenage",
        # German, Dutch
        "jetzt",
        "nun",
        "sofort",  # "ab sofort"
        "stattdessen",
        "ersetzt",
        "abgelost",
        "umgezogen",
        "geandert",
        "nu",
        "voortaan",
        "vervangen",
        # Russian
        "теперь",
        "вместо",
        "заменен",
        "заменили",
        "перенесли",
        # Chinese (bigrams)
        "现在",
        "改为",
        "改成",
        "改用",
        "不再",
        "停用",
        "取代",
        "替代",
        "代替",
        "换成",
        "迁移",
        # Japanese (bigrams)
        "現在",
        "今は",
        "廃止",
        "移行",
        "変更",
        "替え",
        # Korean
        "이제",
        "변경",
        "폐지",
        "대신",
        "바뀌",
    }
)
"""Terms by which a note says that it changes something (see the module's docstring)."""


def declares_change(terms: Collection[str]) -> bool:
    """Whether a note whose terms are ``terms`` says that it changes an earlier state."""
    return not CHANGE_WORDS.isdisjoint(terms)


CURRENT_WORDS = frozenset(
    {
        # English
        "still",
        "now",
        "anymore",
        "currently",
        "nowadays",
        # German
        "noch",
        "jetzt",
        "aktuell",
        "inzwischen",
        "mittlerweile",
        # French
        "toujours",
        "maintenant",
        "actuellement",
        "desormais",
        # Spanish
        "todavia",
        "aun",
        "sigue",
        "siguen",
        "ahora",
        "actualmente",
        # Portuguese
        "ainda",
        "agora",
        "atualmente",
        "continua",
        # Italian
        "ancora",
        "adesso",
        "attualmente",
        # Dutch
        "nog",
        # Russian (folded: ещё is еще)
        "еще",
        "сейчас",
        "теперь",
        # Vietnamese (folded; "vẫn" folds to "van", which is Dutch "of": left out)
        "hien",
        # Chinese (bigrams)
        "还是",
        "仍然",
        "现在",
        "目前",
        # Japanese
        "まだ",
        "今も",
        "現在",
        "っけ",  # "…だっけ？": checking what one remembers
        # Korean
        "아직",
        "지금",
        "여전",
        "요즘",
        "맞죠",  # "…맞죠?": checking what one remembers
        "맞나",
        "맞지",
    }
)
"""Terms by which a question asks whether something holds now ("is it *still* …", "*noch*",
"*toujours*", "*todavía*", "*ainda*", "*还是*", "*まだ*", "*아직*"), as
:func:`memrecall.engine.scoring.analysis.analyze` yields them. Such a question is asked in
the words of what the asker last knew: the newer of two notes about the same subject
answers it, whichever shares more of its words."""


def asks_current(terms: Collection[str]) -> bool:
    """Whether a question whose terms are ``terms`` asks about the present state of things."""
    return not CURRENT_WORDS.isdisjoint(terms)
