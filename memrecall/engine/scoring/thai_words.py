"""Common Thai words in a query (issue 18, silence on small talk).

Thai is written without spaces, so :func:`~memrecall.engine.scoring.analysis.sea_terms` cuts
a run into trigrams of grapheme clusters and never sees a word. Every trigram then weighs as
a topic: in "จะ resize รูปหลายไฟล์พร้อมกันบน Mac ทำยังไง" the pieces of *หลาย* (many),
*พร้อมกัน* (at once) and *ยังไง* (how) count as much as the pieces of *ไฟล์* (file), and a
memory that also says "at once" answers a how-to about image files. Languages written with
spaces have :data:`~memrecall.engine.scoring.analysis.COMMON_WORDS` for this; this module is
the same list for Thai: question words and particles, pronouns, connectives, the everyday
verbs, adjectives and time words of the English list. A query trigram most of whose clusters
lie in such a word is common (it weighs :data:`~memrecall.engine.scoring.analysis.COMMON_WEIGHT`),
unless the same trigram also stands among other words elsewhere in the query.

The words are found by the longest match from the left, so a common word inside a longer
word (*มา*, come, in *มาราธอน*, marathon) may mark one of its trigrams: a loss of weight on a
piece of a topic, never a topic made of common words. Words of one cluster (*ที่*) give no
trigram of their own and are left out.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import regex

__all__ = ["THAI_COMMON", "WORD_CLUSTERS", "clusters_of", "common_trigrams", "one_thai_word"]

THAI_COMMON = frozenset(
    unicodedata.normalize("NFKC", word)
    for word in """
    ไหม มั้ย หรือเปล่า หรือยัง ครับ ค่ะ นะคะ นะครับ หน่อย บ้าง ยังไง อย่างไร อะไร ทำไม
    เมื่อไร เมื่อไหร่ ที่ไหน ตรงไหน ไหน ใคร เท่าไร เท่าไหร่ เหรอ หรอ
    คุณ ผม ฉัน เรา พวกเรา เขา ตัวเอง
    และ หรือ แต่ แล้ว แล้วก็ เพราะ เพราะว่า ถ้า เพื่อ โดย สำหรับ ด้วย จาก ของ ให้ ว่า ตาม
    ระหว่าง เกี่ยวกับ
    ได้ ไม่ เป็น คือ ควร ต้อง อยาก ช่วย ทำ ใช้ ดู หา รู้ รู้จัก บอก เอา ไป มา ลอง แนะนำ คิด
    ชอบ เริ่ม ขอ มี อยู่ เคย กำลัง
    ดี ใหม่ เก่า มาก หลาย ทุก บาง เยอะ น้อย ใหญ่ เล็ก ง่าย ยาก เร็ว ช้า จริง เลย อีก ยัง กัน
    พร้อมกัน อย่าง แบบ นาน ก่อน หลัง สุด กว่า ทั้ง ทั้งหมด เอง แค่ ประมาณ นิดหน่อย
    วันนี้ พรุ่งนี้ เมื่อวาน ตอนนี้ ช่วงนี้ เวลา วัน สัปดาห์ เดือน ปี เช้า เย็น คืน
    อัน เรื่อง วิธี ขั้นตอน สิ่ง คน ที่นี่ นี่ นี้ นั้น งาน ทำงาน
    """.split()
)
"""Thai words that are frequent in any text and rarely name a topic on their own (see the
module's docstring), in NFKC as the analysis normalises a query."""

_LONGEST = 8
"""No word of :data:`THAI_COMMON` is longer than this many grapheme clusters."""


def _common_clusters(clusters: Sequence[str], words: frozenset[str]) -> list[bool]:
    """For each cluster of a run, whether it lies in a word of ``words`` of two or more
    clusters, matched longest first from the left."""
    marked = [False] * len(clusters)
    i = 0
    while i < len(clusters):
        for size in range(min(_LONGEST, len(clusters) - i), 1, -1):
            if "".join(clusters[i : i + size]) in words:
                marked[i : i + size] = [True] * size
                i += size
                break
        else:
            i += 1
    return marked


WORD_CLUSTERS = 8
"""A run of Thai of at most this many grapheme clusters may be one word: up to about three
syllables, as a compound or a loanword is (*ฐานข้อมูล*, database, 7; *เซิร์ฟเวอร์*, server,
8). A question is rarely that short without a question word or particle in it."""

_CLUSTER = regex.compile(r"\X")


def clusters_of(text: str) -> list[str]:
    """The grapheme clusters of ``text`` (a letter with its combining marks is one): the unit
    of the scripts written without spaces (:mod:`~memrecall.engine.scoring.analysis` makes
    their terms of them)."""
    found: list[str] = _CLUSTER.findall(text)
    return found


def one_thai_word(run: str) -> bool:
    """Whether a run of Thai letters (written without spaces) reads as one word: at most
    :data:`WORD_CLUSTERS` grapheme clusters, none of them in a common word of two or more
    clusters (a question word, a particle, a pronoun: *ใครดูแล*, who looks after, is a
    question). Thai has no spaces to say where a word ends, so this is the length of one
    word, not a proof of it; the one-word rule
    (:func:`~memrecall.engine.scoring.query_rules.one_word`) asks it of a whole turn."""
    clusters = clusters_of(unicodedata.normalize("NFKC", run))
    if not clusters or len(clusters) > WORD_CLUSTERS:
        return False
    return not any(_common_clusters(clusters, THAI_COMMON))


def common_trigrams(runs: Sequence[Sequence[str]]) -> frozenset[str]:
    """The trigrams of ``runs`` (each a run's grapheme clusters, as
    :func:`~memrecall.engine.scoring.analysis.sea_terms` cuts it) of which at least two
    clusters lie in common Thai words, and that stand nowhere else among other words; and
    the runs of two clusters that are a common word."""
    common: set[str] = set()
    other: set[str] = set()
    for clusters in runs:
        if len(clusters) == 2:  # a run of two clusters is one term
            gram = "".join(clusters)
            (common if gram in THAI_COMMON else other).add(gram)
            continue
        marked = _common_clusters(clusters, THAI_COMMON)
        for i in range(len(clusters) - 2):
            gram = "".join(clusters[i : i + 3])
            (common if sum(marked[i : i + 3]) >= 2 else other).add(gram)
    return frozenset(common - other)
