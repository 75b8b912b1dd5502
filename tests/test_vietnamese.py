"""Vietnamese syllables (issue 18, silence on small talk): folded, *mật* (secret, of *mật khẩu*,
password), *mặt* (face) and *mát* (cool) are one term, so two adjacent words are a term of their
own, and a memory that a Vietnamese question matches only by single syllables is no match."""

from __future__ import annotations

import unicodedata

import pytest

from memrecall.engine.scoring.analysis import query_candidates, syllable_pairs, vietnamese_words
from memrecall.engine.scoring.features import DocumentFeatures
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Thresholds
from tests.factories import filler, memory

OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)


def test_adjacent_words_of_vietnamese_text_are_pairs() -> None:
    pairs = syllable_pairs("Mật khẩu WiFi cho khách, họp đứng lúc mấy giờ?")
    assert {"mat_khau", "khau_wifi", "hop_dung", "dung_luc", "may_gio"} <= set(pairs)
    assert "khach_hop" not in pairs  # never across punctuation
    assert "wifi_cho" not in pairs  # two unmarked words are no pair
    assert vietnamese_words("Mình quên mật khẩu Facebook") == {"minh", "quen", "mat", "khau"}
    # text written with combining marks (NFD) is the same text
    assert syllable_pairs(unicodedata.normalize("NFD", "họp đứng lúc")) == {
        "hop_dung": 1,
        "dung_luc": 1,
    }


@pytest.mark.parametrize(
    "text",
    [
        "Quanto a empresa paga de bônus?",  # Portuguese ô
        "Où est le café près de la gare ?",  # French
        "Cine știe când începe ședința?",  # Romanian ă, ș
        "plain English text",
    ],
)
def test_text_without_letters_only_vietnamese_has_has_no_pairs(text: str) -> None:
    assert syllable_pairs(text) == {}
    assert vietnamese_words(text) == frozenset()


def test_pairs_are_extra_terms_of_documents_and_queries() -> None:
    features = DocumentFeatures.of(memory("Lịch họp đứng", "", "Họp đứng mỗi sáng lúc 9 giờ."))
    assert "hop_dung" in features.counts[0]
    assert features.lengths[0] == 3  # a pair is no word of the field's length
    assert "hop_dung" in {qt.term for qt in query_candidates("họp đứng lúc mấy giờ")}


def _pool() -> list:  # type: ignore[type-arg]
    return [
        memory("Lịch họp đứng hằng ngày", "", "Họp đứng lúc 9 giờ qua Google Meet, mặt đối mặt."),
        memory("Guest WiFi", "", "The guest WiFi password rotates daily."),
        *filler(20),
    ]


def test_a_memory_sharing_only_syllables_with_a_vietnamese_question_is_no_match() -> None:
    index = FieldedIndex.of(_pool(), thresholds=OPEN)
    # "I forgot my Facebook password, how do I get my account back now?": mật is not mặt
    assert 0 not in index.rank("Mình quên mật khẩu Facebook rồi, lấy lại bây giờ?", 5)
    # the standup note is found by its own two-syllable words
    assert index.rank("họp đứng lúc mấy giờ?", 1) == [0]
    # and a word of another language still counts: the guest WiFi note
    assert index.rank("Mật khẩu WiFi cho khách là gì?", 1) == [1]
