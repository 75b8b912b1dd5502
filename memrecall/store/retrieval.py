"""Deterministic lexical retrieval over one user's visible, active records (seed 002 §10).

Order of work for a query:

1. The caller passes only the user's active records in the visible scopes (identity and
   scope filter, status filter: :meth:`memrecall.store.backend.Store.snapshot`).
2. Expired records are dropped (by the caller's clock), then a global record is dropped when
   a live workspace record has the same key (workspace overrides global), then records of
   another category when a category filter is given.
3. Candidates: records whose key equals the query read as a key (:func:`normalize_key`), and
   records with any lexical evidence under the project's default scorer (the ``fielded``
   BM25F scorer of :mod:`memrecall.engine.scoring.fielded`; fields: key → title, content →
   description, category → body, so key words weigh most, then content, then category).
   Nothing else: a query with no match returns nothing.
4. Order: exact key match first; then records not due for review before due ones; then
   records whose content contains the whole multi-word query as a phrase; then score; then
   ``updated_at`` (newest first) only as a tie-break; then ``memory_id``.
5. Budgets (:class:`Budget`): at most ``limit`` hits, each content cut to
   ``per_content_tokens``, and the sum kept within ``total_tokens`` (the last hit is cut to
   what is left; hits stop once nothing is left). Tokens: :mod:`memrecall.store.budget`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from datetime import datetime

import attrs

from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex
from memrecall.engine.scoring.text import normalize
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources.turn_reader import default_turns

from .backend import StoreChanges
from .budget import truncate_tokens
from .index import IncrementalIndex
from .keys import normalize_category, normalize_key
from .model import InvalidInput, MemoryRecord, MemoryScope, ScopeType, SourceType

__all__ = [
    "RETRIEVAL_VERSION",
    "Budget",
    "LiveView",
    "RetrievalView",
    "SearchHit",
    "document_features",
    "normalize_query",
]

RETRIEVAL_VERSION = "lexical-1"
"""Changes whenever the ordering or budgets change (part of the query-cache key)."""


@attrs.frozen
class Budget:
    """Retrieval limits (seed 002 §10 defaults)."""

    limit: int = 5
    total_tokens: int = 600
    per_content_tokens: int = 160


@attrs.frozen
class SearchHit:
    """One retrieved memory, as a tool or prompt sees it."""

    memory_id: str
    key: str
    content: str
    """The content, cut to the budget when ``truncated``."""
    truncated: bool
    tokens: int
    category: str
    scope: MemoryScope
    source_type: SourceType
    updated_at: datetime
    review_due: bool
    exact_key: bool


def normalize_query(query: str) -> str:
    """The query as retrieval and the cache see it: NFKC, lower-cased, whitespace collapsed."""
    return " ".join(normalize(query).split())


def _document(record: MemoryRecord) -> MemoryDocument:
    return MemoryDocument(
        scope=Scope.USER if record.scope.type is ScopeType.GLOBAL else Scope.PROJECT,
        path=record.memory_id,
        relative_path=record.key,
        type=MemoryType.USER,
        title=record.key.replace("_", " "),
        description=record.content,
        body=record.category,
        mtime=record.updated_at.timestamp(),
    )


class RetrievalView:
    """The records of one user and one set of visible scopes at one ``memory_revision``,
    prepared for queries. Immutable once built; safe to share between tasks."""

    def __init__(self, memory_revision: int, records: Sequence[MemoryRecord]) -> None:
        self.memory_revision = memory_revision
        self.records = tuple(records)
        self._index = FieldedIndex.of([_document(r) for r in self.records], turns=default_turns())
        self._by_key: dict[str, list[int]] = {}
        for i, record in enumerate(self.records):
            self._by_key.setdefault(record.key, []).append(i)
        # global record -> workspace records with the same key (which override it while live)
        self._overridden_by: dict[int, list[int]] = {}
        for members in self._by_key.values():
            workspace = [i for i in members if self.records[i].scope.type is ScopeType.WORKSPACE]
            if workspace:
                for i in members:
                    if self.records[i].scope.type is ScopeType.GLOBAL:
                        self._overridden_by[i] = workspace
        self._expiring = [i for i, r in enumerate(self.records) if r.expires_at is not None]
        self._reviewed = [i for i, r in enumerate(self.records) if r.review_after is not None]
        self._instants = sorted(
            {t for r in self.records for t in (r.expires_at, r.review_after) if t is not None}
        )
        self._folded = [normalize_query(r.content) for r in self.records]

    def valid_until(self, now: datetime) -> datetime | None:
        """The next instant after ``now`` at which an expiry or review changes results."""
        at = bisect.bisect_right(self._instants, now)
        return self._instants[at] if at < len(self._instants) else None

    def _excluded(self, now: datetime, category: str | None) -> set[int]:
        expired = {i for i in self._expiring if self.records[i].expired(now)}
        out = set(expired)
        for i, overriders in self._overridden_by.items():
            if any(j not in expired for j in overriders):
                out.add(i)
        if category is not None:
            wanted = normalize_category(category)
            out.update(
                i for i, r in enumerate(self.records) if normalize_category(r.category) != wanted
            )
        return out

    def search(
        self,
        query: str,
        now: datetime,
        *,
        category: str | None = None,
        budget: Budget = Budget(),
    ) -> list[SearchHit]:
        """The hits for an already normalised query (:func:`normalize_query`), best first."""
        excluded = self._excluded(now, category)
        phrase = query if " " in query else None
        phrased = (
            {i for i, text in enumerate(self._folded) if phrase in text and i not in excluded}
            if phrase is not None
            else set()
        )
        due = sum(
            1 for i in self._reviewed if i not in excluded and self.records[i].review_due(now)
        )
        # Only the tiers below the score can reorder documents: a due record can push at most
        # `due` others down, and phrase matches are taken whole, so the best
        # limit + due + len(phrased) by score hold every hit.
        wanted = budget.limit + due + len(phrased)
        scores: dict[int, float] = {}
        for match in self._index.matches(query, exclude=excluded, limit=wanted):
            if match.score > 0:
                scores[match.index] = match.score
        missing = phrased - scores.keys()
        if missing:
            others = set(range(len(self.records))) - missing
            for match in self._index.matches(query, exclude=others):
                scores[match.index] = match.score
        exact: set[int] = set()
        try:
            key = normalize_key(query)
        except InvalidInput:
            key = None
        if key is not None:
            exact = {i for i in self._by_key.get(key, ()) if i not in excluded}

        def order(i: int) -> tuple[int, int, int, float, float, str]:
            record = self.records[i]
            return (
                0 if i in exact else 1,
                1 if record.review_due(now) else 0,
                0 if i in phrased else 1,
                -scores.get(i, 0.0),
                -record.updated_at.timestamp(),
                record.memory_id,
            )

        ranked = sorted(exact | set(scores), key=order)
        return _budgeted(
            [self.records[i] for i in ranked], exact_ids(self.records, exact), now, budget
        )


def exact_ids(records: Sequence[MemoryRecord], exact: set[int]) -> set[str]:
    """The memory ids of the exact-key hits."""
    return {records[i].memory_id for i in exact}


def _budgeted(
    ranked: Sequence[MemoryRecord], exact: set[str], now: datetime, budget: Budget
) -> list[SearchHit]:
    hits: list[SearchHit] = []
    left = budget.total_tokens
    for record in ranked[: budget.limit]:
        if left <= 0:
            break
        text, tokens, truncated = truncate_tokens(
            record.content, min(budget.per_content_tokens, left)
        )
        if not text:
            break
        left -= tokens
        hits.append(
            SearchHit(
                memory_id=record.memory_id,
                key=record.key,
                content=text,
                truncated=truncated,
                tokens=tokens,
                category=record.category,
                scope=record.scope,
                source_type=record.source_type,
                updated_at=record.updated_at,
                review_due=record.review_due(now),
                exact_key=record.memory_id in exact,
            )
        )
    return hits


def document_features(record: MemoryRecord) -> DocumentFeatures:
    """A record as the ``fielded`` scorer analyses it (fields as in :class:`RetrievalView`)."""
    return DocumentFeatures.of(_document(record))


class LiveView:
    """The records of one user and one set of visible scopes, kept current by applying the
    store's changes (:meth:`memrecall.store.backend.Store.changes_since`) instead of
    rebuilding: only changed records are read and analysed.

    Ranks exactly like a :class:`RetrievalView` built from scratch at the same
    ``memory_revision`` (``tests/store/test_live_view.py`` checks it after random operation
    sequences). Not thread-safe: the service serialises refreshes and searches per view.
    """

    def __init__(self) -> None:
        self.memory_revision = -1
        self.cursor: int | None = None
        self.records: dict[str, MemoryRecord] = {}
        self.index = IncrementalIndex()
        self.loaded = 0
        """Records read and analysed so far (a work counter for tests and benches)."""
        self._by_key: dict[str, set[str]] = {}
        self._by_category: dict[str, set[str]] = {}
        self._shared_keys: set[str] = set()
        """Keys held by more than one record (a global and a workspace one)."""
        self._expiring: set[str] = set()
        self._reviewed: set[str] = set()
        self._instants: list[datetime] = []
        self._folded: dict[str, str] = {}
        self._joined: tuple[str, list[int], list[str]] | None = None

    # ------------------------------------------------------------------ changes

    def prepare(self, changes: StoreChanges) -> list[tuple[MemoryRecord, DocumentFeatures]]:
        """Analyse the changed records (the costly part; may run in a worker thread)."""
        return [(r, document_features(r)) for r in changes.records]

    def apply(
        self,
        changes: StoreChanges,
        prepared: Sequence[tuple[MemoryRecord, DocumentFeatures]] | None = None,
    ) -> None:
        """Apply one :class:`StoreChanges` (a ``full`` one replaces everything)."""
        if prepared is None:
            prepared = self.prepare(changes)
        if changes.full:
            for memory_id in list(self.records):
                self.discard(memory_id)
        for memory_id in changes.removed:
            self.discard(memory_id)
        for record, features in prepared:
            self._put(record, features)
        self.loaded += len(prepared)
        self.memory_revision = changes.memory_revision
        self.cursor = changes.cursor

    def _put(self, record: MemoryRecord, features: DocumentFeatures) -> None:
        self.discard(record.memory_id)
        memory_id = record.memory_id
        self.records[memory_id] = record
        self.index.add(memory_id, features)
        same_key = self._by_key.setdefault(record.key, set())
        same_key.add(memory_id)
        if len(same_key) > 1:
            self._shared_keys.add(record.key)
        self._by_category.setdefault(normalize_category(record.category), set()).add(memory_id)
        if record.expires_at is not None:
            self._expiring.add(memory_id)
        if record.review_after is not None:
            self._reviewed.add(memory_id)
        for t in (record.expires_at, record.review_after):
            if t is not None:
                bisect.insort(self._instants, t)
        self._folded[memory_id] = normalize_query(record.content)
        self._joined = None

    def discard(self, memory_id: str) -> None:
        """Drop a record and every trace of it (postings, vocabulary, text) from the view."""
        record = self.records.pop(memory_id, None)
        if record is None:
            return
        self.index.remove(memory_id)
        for table, name in (
            (self._by_key, record.key),
            (self._by_category, normalize_category(record.category)),
        ):
            members = table[name]
            members.discard(memory_id)
            if not members:
                del table[name]
        if len(self._by_key.get(record.key, ())) < 2:
            self._shared_keys.discard(record.key)
        self._expiring.discard(memory_id)
        self._reviewed.discard(memory_id)
        for t in (record.expires_at, record.review_after):
            if t is not None:
                del self._instants[bisect.bisect_left(self._instants, t)]
        del self._folded[memory_id]
        self._joined = None

    # ------------------------------------------------------------------ queries

    def valid_until(self, now: datetime) -> datetime | None:
        """The next instant after ``now`` at which an expiry or review changes results."""
        at = bisect.bisect_right(self._instants, now)
        return self._instants[at] if at < len(self._instants) else None

    def _excluded(self, now: datetime) -> set[str]:
        """Expired records, and global records overridden by a live workspace record."""
        records = self.records
        expired = {m for m in self._expiring if records[m].expired(now)}
        out = set(expired)
        for key in self._shared_keys:
            members = self._by_key[key]
            workspace = [m for m in members if records[m].scope.type is ScopeType.WORKSPACE]
            if any(m not in expired for m in workspace):
                out.update(m for m in members if records[m].scope.type is ScopeType.GLOBAL)
        return out

    def _phrased(self, phrase: str) -> set[str]:
        if "\x00" in phrase:
            return {m for m, text in self._folded.items() if phrase in text}
        if self._joined is None:
            ids = list(self._folded)
            starts = []
            at = 0
            for m in ids:
                starts.append(at)
                at += len(self._folded[m]) + 1
            self._joined = ("\x00".join(self._folded[m] for m in ids), starts, ids)
        text, starts, ids = self._joined
        found: set[str] = set()
        at = text.find(phrase)
        while at >= 0:
            slot = bisect.bisect_right(starts, at) - 1
            found.add(ids[slot])
            # continue after this document
            nxt = starts[slot + 1] if slot + 1 < len(starts) else len(text)
            at = text.find(phrase, nxt)
        return found

    def search(
        self,
        query: str,
        now: datetime,
        *,
        category: str | None = None,
        budget: Budget = Budget(),
    ) -> list[SearchHit]:
        """The hits for an already normalised query (:func:`normalize_query`), best first."""
        records = self.records
        excluded = self._excluded(now)
        only: set[str] | None = None
        if category is not None:
            only = self._by_category.get(normalize_category(category), set())

        def allowed(m: str) -> bool:
            return m not in excluded and (only is None or m in only)

        phrased = {m for m in self._phrased(query) if allowed(m)} if " " in query else set()
        due = sum(1 for m in self._reviewed if allowed(m) and records[m].review_due(now))
        wanted = budget.limit + due + len(phrased)
        best, score_of = self.index.best(query, wanted, excluded=excluded, only=only)
        scores: dict[str, float] = {}
        for m in itertools.chain(best, phrased):
            value = score_of(m)
            if value is not None:
                scores[m] = value
        exact: set[str] = set()
        try:
            key = normalize_key(query)
        except InvalidInput:
            key = None
        if key is not None:
            exact = {m for m in self._by_key.get(key, ()) if allowed(m)}

        def order(m: str) -> tuple[int, int, int, float, float, str]:
            record = records[m]
            return (
                0 if m in exact else 1,
                1 if record.review_due(now) else 0,
                0 if m in phrased else 1,
                -scores.get(m, 0.0),
                -record.updated_at.timestamp(),
                m,
            )

        ranked = sorted(exact | set(scores), key=order)
        return _budgeted([records[m] for m in ranked], exact, now, budget)
