"""The ``fielded`` scorer: BM25F over word-boundary terms, with an absolute match judgement.

Per query term (:mod:`memrecall.engine.analysis`) a document earns
``weight × idf × tf / (k1 + tf)``, where ``tf`` sums the term's occurrences
over the document's fields (title, description, body window, rest of the
body), each scaled by its field weight and normalised by the field's length
relative to the pool average (BM25F). ``idf`` comes from the pool: a word that
half the memories use says little. A query word also matches inflected forms
of itself (``charged``/``charges``, ``магазин``/``магазины``) at
:attr:`Params.variant` of the exact credit, but never a longer unrelated word
(``owner`` is not ``ownership``, ``tea`` is not ``team``).

Ranking: score descending, then mtime descending, then input order. Versions
of one memory (documents with the same title and description) rank together
at the best of their scores, newest first, and an older version is never
judged strong (the reference scorer gets the same order from its ties).

The judgement (:class:`~memrecall.engine.judgement.Judgement`) is absolute:
it compares two figures of one document against calibrated thresholds, never
against the other documents. ``rank`` returns only documents judged at least
``weak``; ``fast`` only ``strong`` ones among the first two.

Two halves, so that a catalog can cache the expensive one:

* :class:`DocumentFeatures` (per document, query- and pool-independent): the
  terms of each field, counted. Build with :meth:`DocumentFeatures.of`.
* :class:`FieldedIndex` (per pool): document frequencies, average field
  lengths and postings, built from a sequence of features in one pass
  (:meth:`FieldedIndex.from_features`), or straight from documents
  (:meth:`FieldedIndex.of`).
"""

from __future__ import annotations

import bisect
import heapq
import math
import unicodedata
from collections.abc import Collection, Iterable, Sequence

import attrs

from memrecall.events.documents import MemoryDocument

from .analysis import query_terms, term_counts
from .judgement import Judgement, Thresholds, default_thresholds
from .pacing import checkpoint
from .render import MAX_FAST_DOCS
from .scorer import MAX_BODY_CHARS
from .text import body_text, normalize, utf16_prefix

__all__ = [
    "FIELDS",
    "MAX_ANALYSED_CHARS",
    "MAX_ANALYSED_HEADING_CHARS",
    "DocumentFeatures",
    "FieldedIndex",
    "Match",
    "Params",
    "is_variant",
]

FIELDS = ("title", "description", "body", "tail")
"""Scored fields: ``body`` is the rendered window, ``tail`` the rest of the body."""

MAX_ANALYSED_CHARS = 20_000
"""How much of a body is analysed (window and tail together, in characters).

A memory is a note, not an archive: 1,200 characters are rendered and the
reference scorer searches only those. Past this bound a pasted log or dump
would only cost time (a 0.9 MB body took 330 ms to analyse, more than the
whole initial wait) and dilute its own length normalisation. The rest of such
a body is not searched.
"""

MAX_ANALYSED_HEADING_CHARS = 2_000
"""How much of a title, and of a description, is analysed (characters)."""

_MERGED_CACHE = 250_000
"""At most this many merged postings (of terms with variants) are kept per pool."""

_CHUNK = 512
"""Documents (or postings) handled between two pacing checkpoints."""

_INFLECTIONS = frozenset({"ing", "ings", "ies", "ied", "ers", "ion", "ions"})
"""Longer endings accepted besides any ending of at most two characters."""
_SIBILANTS = ("s", "x", "z", "ch", "sh")


@attrs.frozen
class Params:
    """The scorer's constants.

    ``k1``, the field weights and ``b`` are conventional BM25F values, kept after a sweep
    found nothing clearly better; ``variant``, ``saturation`` and ``second`` were chosen on
    measured runs. docs/evaluation.md has the measurements.
    """

    k1: float = 1.2
    weights: tuple[float, float, float, float] = (3.0, 2.0, 1.0, 0.5)
    """Field weights, in :data:`FIELDS` order."""
    b: tuple[float, float, float, float] = (0.3, 0.5, 0.75, 0.75)
    """Length normalisation per field."""
    variant: float = 0.6
    """Credit of an inflected form relative to the exact term."""
    saturation: float = 4.0
    """Coverage is measured against at most this many of the rarest possible terms."""
    second: float = 0.8
    """The second fast document must score at least this share of the first."""
    min_pool: int = 20
    """idf is computed as if the pool held at least this many documents. In a
    tree of a handful of memories every word is "common" by the plain formula,
    so nothing could ever be judged strong; pools this size or larger (like the
    calibration corpus) are unaffected."""


@attrs.frozen
class DocumentFeatures:
    """A document as the ``fielded`` scorer sees it: counted terms per field, and its mtime.

    Depends only on the document (and this module's analysis), so it can be
    cached per document and reused for every pool and query.
    """

    counts: tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int]]
    lengths: tuple[int, int, int, int]
    mtime: float
    identity: str
    """Normalised title and description: documents sharing it are versions of one memory."""

    @classmethod
    def of(cls, document: MemoryDocument) -> DocumentFeatures:
        """Analyse a document's fields (body split at the rendered window, cut at
        :data:`MAX_ANALYSED_CHARS`)."""
        checkpoint()
        body = body_text(document.body)[:MAX_ANALYSED_CHARS]
        window = utf16_prefix(body, MAX_BODY_CHARS)
        fields = (
            document.title[:MAX_ANALYSED_HEADING_CHARS],
            document.description[:MAX_ANALYSED_HEADING_CHARS],
            window,
            body[len(window) :],
        )
        counts = []
        for text in fields:
            counts.append(term_counts(text))
            checkpoint()
        lengths = [sum(c.values()) for c in counts]
        return cls(
            counts=(counts[0], counts[1], counts[2], counts[3]),
            lengths=(lengths[0], lengths[1], lengths[2], lengths[3]),
            mtime=document.mtime,
            identity=normalize(document.title).strip()
            + "\x00"
            + normalize(document.description).strip(),
        )


@attrs.frozen
class Match:
    """One document's standing for a query: its score, judgement and the two figures behind it."""

    index: int
    score: float
    judgement: Judgement
    coverage: float
    """Score over the query's own weight (sum of weight × idf of its terms): 0 to 1."""
    evidence: float
    """Score over the largest idf the pool can give: how much rare matching text there is."""


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _is_mark(text: str, at: int) -> bool:
    return at < len(text) and unicodedata.category(text[at])[0] == "M"


def is_variant(query: str, term: str) -> bool:
    """True when ``term`` is an inflected form of ``query`` (or the reverse), not the same word.

    Both must share a prefix of at least four characters (five when both go
    on) that does not end inside a grapheme cluster, and what follows it in
    each must be at most two characters or a common longer ending (``ing``,
    ``ies``, ``ion``, ...); or one is the other plus ``s`` (``es`` after a
    sibilant).
    """
    if query == term:
        return False
    shorter, longer = (query, term) if len(query) <= len(term) else (term, query)
    if longer == shorter + "s" or (longer == shorter + "es" and shorter.endswith(_SIBILANTS)):
        return True
    common = _common_prefix(query, term)
    if common < 4 or _is_mark(query, common) or _is_mark(term, common):
        return False
    rest = (query[common:], term[common:])
    if rest[0] and rest[1] and common < 5:
        return False  # two different endings on a short stem: colony/colour, passt/passes
    return all(len(r) <= 2 or r in _INFLECTIONS for r in rest)


class FieldedIndex:
    """The ``fielded`` scorer over a fixed pool (input order = pool order).

    Same ranking interface as :class:`~memrecall.engine.scorer.ReferenceIndex`
    (``rank(query, limit, *, exclude)``), plus :meth:`judge`, :meth:`fast` and
    :meth:`matches`.
    """

    name = "fielded"

    def __init__(
        self,
        features: Sequence[DocumentFeatures],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
    ) -> None:
        self.features = tuple(features)
        self.params = params or Params()
        self.thresholds = thresholds or default_thresholds()
        count = max(len(self.features), self.params.min_pool)
        self._mtimes = [f.mtime for f in self.features]
        averages = []
        for i in range(len(FIELDS)):
            filled = [f.lengths[i] for f in self.features if f.lengths[i]]
            averages.append(max(1.0, sum(filled) / len(filled)) if filled else 1.0)
        p = self.params
        # tf of each term per document, weighted and length-normalised per field (BM25F)
        merged: dict[str, dict[int, float]] = {}
        for doc, feature in enumerate(self.features):
            if doc % _CHUNK == 0:
                checkpoint()
            for i, counts in enumerate(feature.counts):
                if not counts:
                    continue
                norm = p.weights[i] / (1.0 - p.b[i] + p.b[i] * feature.lengths[i] / averages[i])
                for term, tf in counts.items():
                    row = merged.get(term)
                    if row is None:
                        merged[term] = {doc: tf * norm}
                    else:
                        row[doc] = row.get(doc, 0.0) + tf * norm
        self._idf_max = math.log(1.0 + (count + 0.5) / 0.5)
        self._idf: dict[str, float] = {}
        self._postings: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        k1 = p.k1
        for n, (term, row) in enumerate(merged.items()):
            if n % (_CHUNK * 8) == 0:
                checkpoint()
            idf = math.log(1.0 + (count - len(row) + 0.5) / (len(row) + 0.5))
            self._idf[term] = idf
            self._postings[term] = (
                tuple(row),
                tuple(idf * tf / (k1 + tf) for tf in row.values()),
            )
        self._vocabulary = sorted(merged)
        self._variants: dict[str, list[tuple[str, float]]] = {}
        self._merged: dict[str, tuple[Sequence[int], Sequence[float]]] = {}
        self._merged_size = 0
        # versions of one memory (same title and description): newest is current
        groups: dict[str, list[int]] = {}
        for doc, feature in enumerate(self.features):
            if feature.identity != "\x00":
                groups.setdefault(feature.identity, []).append(doc)
        self._group: dict[int, tuple[int, ...]] = {}
        self._superseded: set[int] = set()
        for members in groups.values():
            if len(members) < 2:
                continue
            newest = max(self._mtimes[i] for i in members)
            for i in members:
                self._group[i] = tuple(members)
                if self._mtimes[i] < newest:
                    self._superseded.add(i)

    @classmethod
    def of(
        cls,
        documents: Sequence[MemoryDocument],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
    ) -> FieldedIndex:
        """Index documents, analysing each once."""
        return cls(
            [DocumentFeatures.of(d) for d in documents], params=params, thresholds=thresholds
        )

    @classmethod
    def from_features(
        cls,
        features: Iterable[DocumentFeatures],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
    ) -> FieldedIndex:
        """Index pre-analysed documents (e.g. cached per document by a catalog)."""
        return cls(list(features), params=params, thresholds=thresholds)

    def __len__(self) -> int:
        return len(self.features)

    # ------------------------------------------------------------------ scoring

    def _keys(self, term: str, kind: str) -> list[tuple[str, float]]:
        """Index terms that count for a query term, with their credit."""
        cached = self._variants.get(term)
        if cached is not None:
            return cached
        keys: list[tuple[str, float]] = []
        if term in self._postings:
            keys.append((term, 1.0))
        if kind == "word":
            vocabulary = self._vocabulary
            candidates = set()
            stem = term[: max(4, len(term) - 4)]
            if len(stem) >= 4:
                start = bisect.bisect_left(vocabulary, stem)
                while start < len(vocabulary) and vocabulary[start].startswith(stem):
                    candidates.add(vocabulary[start])
                    start += 1
            for shorter in (term[:-1], term[:-2]):
                if shorter in self._postings:
                    candidates.add(shorter)
            for longer in (term + "s", term + "es"):
                if longer in self._postings:
                    candidates.add(longer)
            variant = self.params.variant
            keys.extend((key, variant) for key in sorted(candidates) if is_variant(term, key))
        if len(self._variants) < 50_000:
            self._variants[term] = keys
        return keys

    def _credited(self, term: str, kind: str) -> tuple[Sequence[int], Sequence[float]]:
        """A query term's postings over the vocabulary: each document with its best credited value.

        The term's variants are found in the vocabulary (:meth:`_keys`), and their
        postings merged, once per pool and term; a query then walks one posting
        list per term, whatever the number of variants.
        """
        cached = self._merged.get(term)
        if cached is not None:
            return cached
        keys = self._keys(term, kind)
        merged: tuple[Sequence[int], Sequence[float]]
        if not keys:
            merged = ((), ())
        elif len(keys) == 1 and keys[0][1] == 1.0:
            merged = self._postings[keys[0][0]]
        else:
            best: dict[int, float] = {}
            for key, credit in keys:
                docs, values = self._postings[key]
                for doc, value in zip(docs, values, strict=True):
                    credited = value * credit
                    if credited > best.get(doc, 0.0):
                        best[doc] = credited
                checkpoint()
            merged = (tuple(best), tuple(best.values()))
            if self._merged_size + len(best) > _MERGED_CACHE:
                return merged
            self._merged_size += len(best)
        if len(self._merged) < 50_000:
            self._merged[term] = merged
        return merged

    def _score(self, query: str) -> tuple[dict[int, float], float]:
        """Every matching document's score, and the query's own weight (for coverage)."""
        scores: dict[int, float] = {}
        get = scores.get
        mass = 0.0
        idf_max = self._idf_max
        for qt in query_terms(query):
            mass += qt.weight * self._idf.get(qt.term, idf_max)
            docs, values = self._credited(qt.term, qt.kind)
            weight = qt.weight
            for doc, value in zip(docs, values, strict=True):
                scores[doc] = get(doc, 0.0) + weight * value
            checkpoint()
        return scores, min(mass, self.params.saturation * idf_max)

    def _floor(self, mass: float) -> float:
        """The lowest score a document judged weak (or better) can have for this query."""
        t = self.thresholds
        return max(t.weak_coverage * mass, t.weak_evidence * self._idf_max)

    def _ranked(
        self,
        query: str,
        exclude: Collection[int],
        limit: int | None,
        *,
        floor: bool,
        keep_none: bool = False,
    ) -> list[Match]:
        """Matches best first; with ``floor``, only those that can be judged weak or better.

        ``keep_none`` keeps documents judged ``none`` among the first ``limit`` (so
        callers can derive several answers from one pass).
        """
        scores, mass = self._score(query)
        if not scores:
            return []
        lowest = self._floor(mass) * (1 - 1e-9) if floor else 0.0
        own = {i: v for i, v in scores.items() if v > 0.0 and v >= lowest and i not in exclude}
        order = own
        if self._group:
            # versions of one memory rank together, at their best score, newest first
            order = dict(own)
            for i in own:
                members = self._group.get(i)
                if members:
                    order[i] = max(own.get(j, 0.0) for j in members)
        mtimes = self._mtimes

        def key(i: int) -> tuple[float, float, int]:
            return (-order[i], -mtimes[i], i)

        if limit is not None and len(order) > 2 * limit:
            ranked = heapq.nsmallest(limit, order, key=key)
        else:
            ranked = sorted(order, key=key)[:limit]
        judge = self.thresholds.judge
        idf_max = self._idf_max
        out = []
        for i in ranked:
            coverage = min(1.0, own[i] / mass) if mass > 0 else 0.0
            evidence = own[i] / idf_max
            judgement = judge(coverage, evidence)
            if judgement is Judgement.STRONG and i in self._superseded:
                judgement = Judgement.WEAK  # an older version is never fast-delivered
            if floor and not keep_none and judgement is Judgement.NONE:
                continue
            out.append(Match(i, own[i], judgement, coverage, evidence))
        return out

    def matches(
        self, query: str, *, exclude: Collection[int] = (), limit: int | None = None
    ) -> list[Match]:
        """Every document with any lexical evidence (judged none included), best first."""
        return self._ranked(query, exclude, limit, floor=False)

    def judge(
        self, query: str, limit: int | None = None, *, exclude: Collection[int] = ()
    ) -> list[tuple[int, Judgement]]:
        """``(index, judgement)`` of the ranked documents (weak or strong), best first."""
        return [(m.index, m.judgement) for m in self._ranked(query, exclude, limit, floor=True)]

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents judged at least weak, best first."""
        return [m.index for m in self._ranked(query, exclude, limit, floor=True)]

    def fast(
        self, query: str, *, exclude: Collection[int] = (), limit: int = MAX_FAST_DOCS
    ) -> list[int]:
        """The fast result: strong documents among the first ``limit`` ranked.

        A second (or later) document must also score at least
        :attr:`Params.second` of the first one's score.
        """
        ranked = self._ranked(query, exclude, limit, floor=True)
        return self._fast_of(ranked)

    def _fast_of(self, ranked: Sequence[Match]) -> list[int]:
        fast = [m for m in ranked if m.judgement is Judgement.STRONG]
        if fast:
            least = self.params.second * fast[0].score
            fast = fast[:1] + [m for m in fast[1:] if m.score >= least]
        return [m.index for m in fast]

    def rank_and_fast(
        self, query: str, limit: int, *, exclude: Collection[int] = ()
    ) -> tuple[list[int], list[int]]:
        """``rank(query, limit)`` and ``fast(query)`` from one scoring pass."""
        ranked = self._ranked(query, exclude, max(limit, MAX_FAST_DOCS), floor=True, keep_none=True)
        kept = [m.index for m in ranked[:limit] if m.judgement is not Judgement.NONE]
        return kept, self._fast_of(ranked[:MAX_FAST_DOCS])
