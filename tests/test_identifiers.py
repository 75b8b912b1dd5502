"""Compound identifiers (issue 18, long pasted queries): ``pg-prod-02``, ``pg_isready`` and
``ledger-db.internal`` are terms of their own beside their pieces, so a paste that names a
host, a command or a setting exactly ranks the memory that names it over one that only
shares the bulk's generic words."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring import analysis, features
from memrecall.engine.scoring.analysis import (
    IDENTIFIER,
    identifier_counts,
    is_identifier,
    query_candidates,
    term_counts,
)
from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Thresholds
from memrecall.events.documents import MemoryDocument
from tests.factories import filler, memory

OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)
"""Every document with any score is at least weak: the rules under test decide alone."""


def doc(title: str, body: str = "", *, description: str = "") -> MemoryDocument:
    return memory(title, description, body)


# --------------------------------------------------------------------------- analysis


def test_code_like_compounds_are_identifiers() -> None:
    text = "Run pg_isready on pg-prod-02, then update ledger-db.internal (v1.2.3, x-forwarded-for)."
    assert identifier_counts(text) == {
        "pg_isready": 1,
        "pg-prod-02": 1,
        "ledger-db.internal": 1,
        "v1.2.3": 1,
        "x-forwarded-for": 1,
    }


def test_numbers_and_hyphenated_words_are_not_identifiers() -> None:
    # a version or an address has no letter; two words joined by one hyphen are prose
    # ("follow-up", German "Tester-App"), whose pieces already say what they say
    assert identifier_counts("Python 3.12 on 10.4.7.21, a follow-up in the Tester-App") == {}


def test_an_identifier_is_counted_each_time_and_case_folded() -> None:
    assert identifier_counts("PG-PROD-02 failed; pg-prod-02 is back") == {"pg-prod-02": 2}


@given(st.text(alphabet=st.sampled_from("ab1_-. Zé语"), max_size=40))
def test_identifiers_and_word_terms_never_collide(text: str) -> None:
    assert all(is_identifier(t) for t in identifier_counts(text))
    assert not any(is_identifier(t) for t in term_counts(text))


@given(st.text(alphabet=st.sampled_from("ab1_-. Zé"), max_size=60))
def test_field_lengths_count_words_only(text: str) -> None:
    features = DocumentFeatures.of(memory(text, "", text))
    assert features.lengths[0] == sum(term_counts(text).values())
    assert features.counts[0] == {**term_counts(text), **identifier_counts(text)}


def test_a_query_line_yields_its_identifiers_as_their_own_kind() -> None:
    found = {qt.term: qt.kind for qt in query_candidates("is pg-prod-02 failing?")}
    assert found == {"prod": "word", "02": "word", "failing": "word", "pg-prod-02": IDENTIFIER}


# --------------------------------------------------------------------------- ranking

# the same words, one host each way round: only the exact identifier tells them apart
EXACT = doc("Database hosts", "The ledger primary is pg-prod-02; its replica is pg-dev-01.")
PIECES = doc("Database hosts", "The ledger primary is pg-dev-02; its replica is pg-prod-01.")
QUERY = "connection refused from pg-prod-02, is the ledger primary down?"


def test_a_query_naming_a_host_exactly_ranks_the_memory_that_names_it_first() -> None:
    index = FieldedIndex.of([PIECES, EXACT, *filler(30)], thresholds=OPEN)
    assert index.rank(QUERY, 2) == [1, 0]
    # a paste names it among many lines of bulk: the same (long-08 in the corpus)
    paste = "\n".join([*(f"INFO ledgerd.http request {n} status=200" for n in range(10)), QUERY])
    assert index.rank(paste, 2) == [1, 0]


def test_without_identifiers_the_two_memories_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    """What decides the test above is the identifier: switched off on both sides, the two
    memories score alike and keep their input order."""
    monkeypatch.setattr(analysis, "identifier_counts", lambda text: {})
    monkeypatch.setattr(features, "identifier_counts", lambda text: {})
    index = FieldedIndex.of([PIECES, EXACT, *filler(30)], thresholds=OPEN)
    first, second = index.matches(QUERY)[:2]
    assert (first.index, second.index) == (0, 1)
    assert first.score == second.score


def test_an_identifier_no_memory_has_does_not_dilute_the_query() -> None:
    pool = [doc("Health checks", "isready probes run every ten seconds"), *filler(30)]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    plain = index.matches("isready probes failing")
    named = index.matches("pg_isready probes failing")
    assert [m.index for m in plain] == [m.index for m in named] == [0]
    assert named[0].coverage == plain[0].coverage


def test_one_identifier_is_one_word_for_the_one_word_rule() -> None:
    # two memories own pg_isready alike: a bare one-word query gets nothing (it would get
    # both if the identifier counted as a second topical term beside its piece)
    pool = [
        doc("Primary checks", "pg_isready from two hosts before a failover"),
        doc("Replica checks", "pg_isready on each replica after a failover"),
        *filler(30),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("pg_isready", 5) == []
    assert index.rank("pg_isready primary", 5)[:1] == [0]


def test_identifiers_do_not_count_for_what_two_memories_say_alike() -> None:
    # the same words: the same subject, whichever host each names (the update rules
    # compare what memories say, and an identifier repeats words they both have)
    index = FieldedIndex.of([PIECES, EXACT, *filler(30)], thresholds=OPEN)
    assert index.similarity(0, 1) == 1.0


_WHOLE_TEXT = re.compile(r"(?<![a-z0-9_.-])[a-z0-9]+(?:[-_.][a-z0-9]+)+")


def _identifiers_of_the_whole_text(text: str) -> dict[str, int]:
    """The definition, searched over the whole text at once (the oracle)."""
    found: Counter[str] = Counter()
    for match in _WHOLE_TEXT.findall(unicodedata.normalize("NFKC", text).lower()):
        if re.search("[a-z]", match) and (
            re.search("[0-9]", match) or "_" in match or "." in match or match.count("-") >= 2
        ):
            found[match] += 1
    return dict(found)


@given(st.text(alphabet=st.sampled_from("aZ9_-. \n\t\u00a0é(/:"), max_size=60))
def test_searching_piece_by_piece_finds_what_the_whole_text_holds(text: str) -> None:
    assert identifier_counts(text) == _identifiers_of_the_whole_text(text)
