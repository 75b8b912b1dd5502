"""A query word matches the compounds it opens and the first part it is made of
(memrecall.engine.scoring.variants.compound_parts; issue 18)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import is_plain_word, terms
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.variants import COMPOUND_PART, compound_parts, index_terms
from tests.factories import memory


def _term(word: str) -> str:
    """A word as the index holds it (lower case, accents folded); an identifier as written."""
    if "-" in word:
        return word
    (term,) = terms(word)
    return term


VOCABULARY = sorted(
    _term(w)
    for w in (
        "Preis Preisänderungen Auslastung Kennzahlen Designsystem Design donne installieren"
        " Deployment deploy перед ownership owner Statusfarben preis-sync-v2"
    ).split()
)


def _parts(term: str) -> set[str]:
    return compound_parts(_term(term), set(VOCABULARY), VOCABULARY, is_plain_word)


def test_a_word_matches_the_compounds_it_opens_and_the_part_it_opens_with() -> None:
    assert _parts("Preis") == {_term("Preisänderungen")}
    assert _parts("Auslastungszahl") == {_term("Auslastung")}
    assert _parts("Designs") == {_term("Designsystem")}  # the plural opens it too


def test_derivations_function_words_short_parts_and_heads_are_not_compounds() -> None:
    assert _parts("install") == set()  # installieren derives from it
    assert _parts("deploy") == set()  # deployment too
    assert _parts("передается") == set()  # перед is a function word
    assert _parts("Donnerstag") == set()  # donne: five letters cannot open a word
    assert _parts("owner") == set()  # ownership: "ship" is too short a part
    assert _parts("Farben") == set()  # a head (the last part) is not looked up


def test_compound_parts_count_at_the_variant_credit() -> None:
    keys = index_terms(
        _term("Auslastungszahl"), "word", set(VOCABULARY), VOCABULARY, 0.6, plain=is_plain_word
    )
    assert keys == [(_term("Auslastung"), 0.6)]
    assert index_terms(_term("Auslastungszahl"), "word", set(VOCABULARY), VOCABULARY, 0.6) == keys


WORD = st.text(alphabet="abcdeilnorstuäö", min_size=1, max_size=14)


@given(term=WORD, vocabulary=st.lists(WORD, max_size=12))
def test_parts_are_words_of_the_pool_that_open_or_are_opened_by_the_term(
    term: str, vocabulary: list[str]
) -> None:
    ordered = sorted(set(vocabulary))
    for part in compound_parts(term, set(ordered), ordered, lambda w: True):
        assert part in ordered
        shorter, longer = sorted((part, term), key=len)
        assert longer.startswith(shorter)
        assert len(shorter) >= COMPOUND_PART
        assert len(longer) - len(shorter) >= COMPOUND_PART


TREE = [
    memory(
        "Kennzahlen immer mit Quelle",
        "Bei Zahlen angeben, woher sie stammen",
        "Wenn ich Kennzahlen wie Auslastung oder Umsatz nenne, schreibe ich dazu, aus welchem"
        " Dashboard sie kommen.",
        name="kennzahlen",
    ),
    memory("Urlaub", "Vertretung im August", "Im August ist Mira die Vertretung.", name="urlaub"),
    memory("Arbeitszeit", "Montag bis Donnerstag", "Freitags nicht erreichbar.", name="zeit"),
]


def test_a_compound_in_the_question_finds_the_memory_of_its_first_part() -> None:
    index = FieldedIndex.of(TREE)
    assert index.rank("Woher stammt die Auslastungszahl aus deiner Antwort?", 5)[:1] == [0]
    assert index.rank("Wie ist die Stimmung im Team?", 5) == []
