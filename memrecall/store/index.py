"""An incrementally maintained ``fielded`` (BM25F) index that scores exactly like
:class:`memrecall.engine.scoring.fielded.FieldedIndex`.

:class:`FieldedIndex` precomputes every posting's value, and each value depends on pool-wide
figures (document count, document frequency, average field lengths): one added memory
changes them all, so it has to be rebuilt whole. This index keeps only what changes
locally — each document's counted terms (:class:`DocumentFeatures`), the term → documents
postings, the sorted vocabulary and the field length totals — and computes values at query
time with the same formulas and the same order of floating-point operations, so every
score is bit-identical to a ``FieldedIndex`` built from scratch over the same documents.
Values of a term are cached until the next change (the cache is dropped by ``add`` and
``remove``, never patched).

Documents are identified by a string id (the memory id). Where ``FieldedIndex`` breaks
ties by position in the pool, this index breaks them by id; a pool ordered by id (as
:meth:`memrecall.store.backend.Store.snapshot` returns it) ranks identically.

Removing a document removes it from the postings, and a term no document uses any more
leaves the vocabulary and every cache: a forgotten memory's words are not kept.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Callable, Collection

from memrecall.engine.scoring.analysis import QueryTerm, is_plain_word, words_among
from memrecall.engine.scoring.change_words import declares_change
from memrecall.engine.scoring.features import pool_idf
from memrecall.engine.scoring.fielded import (
    FIELDS,
    DocumentFeatures,
    Params,
    heaviest_terms,
    select_query_terms,
)
from memrecall.engine.scoring.freshness import freshness
from memrecall.engine.scoring.query_rules import on_fitted_scale
from memrecall.engine.scoring.time_rules import (
    DAY,
    asked_keys,
    later_versions,
    one_subject,
    similarity,
    stands_in,
    subject_of,
)
from memrecall.engine.scoring.variants import index_terms

__all__ = ["IncrementalIndex"]

_Values = dict[str, float]


class IncrementalIndex:
    """BM25F over a changing set of documents (module docstring)."""

    def __init__(self, params: Params | None = None) -> None:
        self.params = params or Params()
        self._features: dict[str, DocumentFeatures] = {}
        self._postings: dict[str, set[str]] = {}
        self._vocabulary: list[str] = []
        self._length_sum = [0] * len(FIELDS)
        self._filled = [0] * len(FIELDS)
        self._values: dict[str, _Values] = {}
        self._credited: dict[str, _Values] = {}
        self._norms: dict[str, tuple[float, ...]] = {}
        self._peaks: dict[str, float] = {}
        self._ordered: dict[str, list[str]] = {}
        self._subjects: dict[str, tuple[frozenset[str], float]] = {}
        self._later: dict[str, tuple[str, ...]] = {}
        self._newest: float | None = None
        self._priors: dict[str, float] = {}
        self.passages = False
        """Whether the documents' passage embeddings take part (recall across languages:
        the source embeds them); set before documents are added."""

    # ------------------------------------------------------------------ changes

    def __len__(self) -> int:
        return len(self._features)

    def __contains__(self, doc: object) -> bool:
        return doc in self._features

    def vocabulary(self) -> tuple[str, ...]:
        """Every indexed term (sorted)."""
        return tuple(self._vocabulary)

    def _invalidate(self) -> None:
        self._values.clear()
        self._credited.clear()
        self._norms.clear()
        self._peaks.clear()
        self._ordered.clear()
        self._subjects.clear()
        self._later.clear()

    # ------------------------------------------------------------------ time

    def mtime(self, doc: str) -> float:
        """An indexed document's mtime."""
        return self._features[doc].mtime

    def prior(self, doc: str) -> float:
        """The freshness prior of an indexed document (as ``FieldedIndex``: its age from
        the pool's newest document). Kept across changes that leave the newest document
        where it is, since a prior depends only on the two mtimes."""
        value = self._priors.get(doc)
        if value is None:
            if self._newest is None:
                self._newest = max((f.mtime for f in self._features.values()), default=0.0)
            p = self.params
            value = self._priors[doc] = freshness(
                self._features[doc].mtime, self._newest, p.freshness, p.half_life * DAY
            )
        return value

    def _subject(self, doc: str) -> tuple[frozenset[str], float]:
        known = self._subjects.get(doc)
        if known is None:
            known = self._subjects[doc] = subject_of(self._features[doc], self._idf)
        return known

    def later_versions(self, doc: str) -> tuple[str, ...]:
        """The indexed documents on ``doc``'s subject written later, newest first (then by
        path; ``time_rules.later_versions``), computed once until the index changes."""
        known = self._later.get(doc)
        if known is None:
            known = self._later[doc] = tuple(
                later_versions(
                    doc,
                    self._subject(doc),
                    holders=lambda term: self._postings.get(term, ()),
                    idf=self._idf,
                    mtime=self.mtime,
                    same_subject=self.same_subject,
                    place=str,
                    params=self.params,
                )
            )
        return known

    def similarity(self, a: str, b: str) -> float:
        """How much two indexed documents say alike (as ``FieldedIndex.similarity``)."""
        return similarity(self._subject(a), self._subject(b), self._idf)

    def same_subject(self, a: str, b: str) -> bool:
        """Whether two indexed documents are about the same subject (as
        ``FieldedIndex.same_subject``, passages included)."""
        features = self._features

        def pair() -> tuple[DocumentFeatures, DocumentFeatures]:
            return features[a], features[b]

        return one_subject(self.similarity(a, b), self.params, pair if self.passages else None)

    def embedded(self, doc: str, features: DocumentFeatures) -> None:
        """``doc``'s features again, now with its passage embedding (nothing the words
        index changes: only what is decided by the passages is computed again)."""
        self._features[doc] = features
        self._later.clear()

    def says_change(self, doc: str) -> bool:
        """Whether an indexed document says that it changes an earlier state."""
        return declares_change(self._subject(doc)[0])

    def stands_in(self, query: str, note: str, update: str) -> bool:
        """Whether the indexed ``update``, a later version of ``note``, answers ``query`` in
        its place (as ``FieldedIndex.stands_in``:
        :func:`~memrecall.engine.scoring.time_rules.stands_in`)."""

        def asked() -> list[set[str]]:
            return asked_keys(self.query_terms(query)[0], self._keys)

        features = self._features

        def heads(term: str) -> int:
            holders = self._postings.get(term, ())
            return sum(
                1 for d in holders if term in features[d].counts[0] or term in features[d].counts[1]
            )

        return stands_in(features[note], features[update], asked, heads)

    def add(self, doc: str, features: DocumentFeatures) -> None:
        """Index ``doc`` (replacing its previous features, if any)."""
        if doc in self._features:
            self.remove(doc)
        self._features[doc] = features
        self._priors.pop(doc, None)
        if self._newest is not None and features.mtime > self._newest:
            # a newer newest document: every prior changes (they are ages from it)
            self._newest = features.mtime
            self._priors.clear()
        for i, length in enumerate(features.lengths):
            if length:
                self._length_sum[i] += length
                self._filled[i] += 1
        for counts in features.counts:
            for term in counts:
                row = self._postings.get(term)
                if row is None:
                    self._postings[term] = {doc}
                    bisect.insort(self._vocabulary, term)
                else:
                    row.add(doc)
        self._invalidate()

    def remove(self, doc: str) -> None:
        """Drop ``doc`` (no-op when absent); terms nobody uses any more leave the vocabulary."""
        features = self._features.pop(doc, None)
        if features is None:
            return
        self._priors.pop(doc, None)
        if self._newest is not None and features.mtime >= self._newest:
            self._newest = None  # the newest one left: the next prior asks again
            self._priors.clear()
        for i, length in enumerate(features.lengths):
            if length:
                self._length_sum[i] -= length
                self._filled[i] -= 1
        for counts in features.counts:
            for term in counts:
                row = self._postings.get(term)
                if row is None:
                    continue
                row.discard(doc)
                if not row:
                    del self._postings[term]
                    at = bisect.bisect_left(self._vocabulary, term)
                    del self._vocabulary[at]
        self._invalidate()

    # ------------------------------------------------------------------ scoring

    def _count(self) -> int:
        return max(len(self._features), self.params.min_pool)

    def idf_max(self) -> float:
        """The largest idf the pool can give (as ``FieldedIndex``)."""
        return pool_idf(self._count(), 0)

    def _idf(self, term: str) -> float | None:
        row = self._postings.get(term)
        if row is None:
            return None
        return pool_idf(self._count(), len(row))

    def _fitted_idf(self, term: str) -> float | None:
        """A term's idf as if the pool held ``params.fitted_pool`` documents."""
        row = self._postings.get(term)
        if row is None:
            return None
        return pool_idf(max(len(self._features), self.params.fitted_pool), len(row))

    def judged(
        self, query: str, scores: dict[str, float], mass: float
    ) -> tuple[dict[str, float], float, float]:
        """``scores``, the query's weight and the largest idf read on the scale the
        thresholds were fitted on (as ``FieldedIndex._judged``); a pool that large gives its
        own figures back."""
        fitted = max(len(self._features), self.params.fitted_pool)
        if fitted <= self._count():
            return scores, mass, self.idf_max()
        fitted_max = pool_idf(fitted, 0)
        judged, weight = on_fitted_scale(
            query,
            scores,
            self.query_terms(query)[0],
            keys=self._keys,
            idf=self._idf,
            fitted_idf=self._fitted_idf,
            values=lambda key: self._term_values(key).items(),
            fitted_max=fitted_max,
            saturation=self.params.saturation,
        )
        return judged, weight, fitted_max

    def _norm(self, doc: str) -> tuple[float, ...]:
        norm = self._norms.get(doc)
        if norm is None:
            p = self.params
            lengths = self._features[doc].lengths
            values = []
            for i in range(len(FIELDS)):
                filled = self._filled[i]
                average = max(1.0, self._length_sum[i] / filled) if filled else 1.0
                values.append(p.weights[i] / (1.0 - p.b[i] + p.b[i] * lengths[i] / average))
            norm = tuple(values)
            self._norms[doc] = norm
        return norm

    def _term_values(self, term: str) -> _Values:
        """Each document's value for one index term (as ``FieldedIndex._postings``)."""
        cached = self._values.get(term)
        if cached is not None:
            return cached
        idf = self._idf(term)
        out: _Values = {}
        if idf is not None:
            k1 = self.params.k1
            for doc in self._postings[term]:
                features = self._features[doc]
                norm = self._norm(doc)
                tf = 0.0
                for i, counts in enumerate(features.counts):
                    n = counts.get(term)
                    if n is not None:
                        tf = tf + n * norm[i]
                out[doc] = idf * tf / (k1 + tf)
        self._values[term] = out
        return out

    def _keys(self, term: str, kind: str) -> list[tuple[str, float]]:
        return index_terms(
            term, kind, self._postings, self._vocabulary, self.params.variant, plain=is_plain_word
        )

    def _credit(self, term: str, kind: str) -> _Values:
        cached = self._credited.get(term)
        if cached is not None:
            return cached
        keys = self._keys(term, kind)
        merged: _Values
        if not keys:
            merged = {}
        elif len(keys) == 1 and keys[0][1] == 1.0:
            merged = self._term_values(keys[0][0])
        else:
            merged = {}
            for key, credit in keys:
                for doc, value in self._term_values(key).items():
                    credited = value * credit
                    if credited > merged.get(doc, 0.0):
                        merged[doc] = credited
        self._credited[term] = merged
        return merged

    def terms_matching(self, query: str, doc: str) -> int:
        """How many of the words scored for ``query`` match ``doc`` (as
        ``FieldedIndex.terms_matching``: the overlapping CJK bigrams of one word count once)."""
        return words_among(
            qt for qt in self.query_terms(query)[0] if doc in self._credit(qt.term, qt.kind)
        )

    def query_terms(self, query: str) -> tuple[list[QueryTerm], float, bool]:
        """The terms scored for ``query``, its weight, and whether it is a paste (as
        ``FieldedIndex.query_terms``)."""
        return select_query_terms(query, self._idf, self._keys, self.idf_max())

    def second_answer(self, query: str, first: str, other: str) -> bool:
        """Whether ``other`` may follow ``first`` in the fast result (as ``FieldedIndex.fast``):
        it matches one of the heaviest query terms ``first`` matches."""
        heaviest = heaviest_terms(
            self.query_terms(query)[0],
            self._idf,
            lambda qt: first in self._credit(qt.term, qt.kind),
        )
        return not heaviest or any(other in self._credit(qt.term, qt.kind) for qt in heaviest)

    def scores(self, query: str) -> dict[str, float]:
        """Every document with a positive score for ``query`` (as ``FieldedIndex._score``)."""
        scores: dict[str, float] = {}
        get = scores.get
        for qt in self.query_terms(query)[0]:
            weight = qt.weight
            for doc, value in self._credit(qt.term, qt.kind).items():
                scores[doc] = get(doc, 0.0) + weight * value
        return {doc: value for doc, value in scores.items() if value > 0.0}

    def top(
        self,
        scores: dict[str, float],
        limit: int,
        *,
        excluded: Collection[str] = (),
        only: Collection[str] | None = None,
    ) -> list[str]:
        """The best ``limit`` scored documents, leaving out ``excluded`` (and, when given,
        everything not in ``only``), in ``FieldedIndex`` order: score, then mtime newest
        first, then id."""
        own = {d: v for d, v in scores.items() if d not in excluded and (only is None or d in only)}
        order = own
        features = self._features
        if not order:
            return []
        if len(order) > limit:
            # every document at or above the limit-th best value, then the exact order
            floor = heapq.nlargest(limit, order.values())[-1]
            pool = [d for d, v in order.items() if v >= floor]
        else:
            pool = list(order)

        def key(d: str) -> tuple[float, float, str]:
            return (-order[d], -features[d].mtime, d)

        return sorted(pool, key=key)[:limit]

    def mass(self, query: str) -> float:
        """The query's own weight, for coverage (as ``FieldedIndex._score``)."""
        mass = self.query_terms(query)[1]
        return min(mass, self.params.saturation * self.idf_max())

    def best(
        self,
        query: str,
        limit: int,
        *,
        excluded: Collection[str] = (),
        only: Collection[str] | None = None,
    ) -> tuple[list[str], Callable[[str], float | None]]:
        """``top(scores(query), limit, ...)`` and a function giving any document's score
        (None: no evidence), computing as few scores as it can.

        Exact, not approximate: when a query has both rare and common terms, only documents
        holding a rare term are scored, and the answer is used only if the limit-th of them
        beats the most any other document could score (the common terms' best values
        summed); a one-term query walks that term's documents best first. Anything else takes
        the full pass.
        """
        terms: list[tuple[float, str, _Values]] = []
        for qt in self.query_terms(query)[0]:
            values = self._credit(qt.term, qt.kind)
            if values:
                terms.append((qt.weight, qt.term, values))

        def score(doc: str) -> float | None:
            total: float | None = None
            for weight, _term, values in terms:
                value = values.get(doc)
                if value is not None:
                    total = weight * value if total is None else total + weight * value
            return total

        def allowed(doc: str) -> bool:
            return doc not in excluded and (only is None or doc in only)

        if terms:
            if len(terms) == 1:
                return self._walk(terms[0], limit, allowed), score
            many = len(self._features) // 8
            common = [t for t in terms if len(t[2]) > many]
            rare = [t for t in terms if len(t[2]) <= many]
            if common and rare:
                bound = sum(weight * self._peak(term, values) for weight, term, values in common)
                candidates: set[str] = set()
                for _w, _t, values in rare:
                    candidates.update(values)
                own: dict[str, float] = {}
                for doc in candidates:
                    if allowed(doc):
                        value = score(doc)
                        if value is not None:
                            own[doc] = value
                found = self.top(own, limit)
                if len(found) == limit and own[found[-1]] > bound * (1 + 1e-9):
                    return found, score
        every = self.scores(query)
        return self.top(every, limit, excluded=excluded, only=only), every.get

    def _peak(self, term: str, values: _Values) -> float:
        peak = self._peaks.get(term)
        if peak is None:
            peak = max(values.values())
            self._peaks[term] = peak
        return peak

    def _walk(
        self, term: tuple[float, str, _Values], limit: int, allowed: Callable[[str], bool]
    ) -> list[str]:
        """A one-term query's best ``limit``: the term's documents by value, best first."""
        weight, name, values = term
        features = self._features
        ordered = self._ordered.get(name)
        if ordered is None:
            ordered = sorted(values, key=lambda d: (-values[d], -features[d].mtime, d))
            self._ordered[name] = ordered
        found: dict[str, float] = {}
        last: float | None = None
        for doc in ordered:
            value = weight * values[doc]
            if last is not None and len(found) >= limit and value != last:
                break
            if allowed(doc):
                found[doc] = value
                last = value
        return self.top(found, limit)
