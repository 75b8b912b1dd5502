"""Where a recall's documents come from.

A :class:`DocumentSource` gives a consistent snapshot of the pool (documents
in recall order plus a ranker over exactly that list). :class:`TreeSource`
scans the memory tree afresh for every recall; :class:`StaticSource` serves a
fixed list (tests, simulations, evaluation);
:class:`~memrecall.sources.catalog.source.CatalogSource` (the engine's default for a
memory tree) keeps parsed documents between recalls and reads only what
changed, and keeps its scorer's per-document data itself.
:class:`RankedSource` re-ranks any other source's snapshots with the
``fielded`` scorer (the default), analysing each document once.
:func:`prepare_recall` runs the whole deterministic pass: snapshot,
exclusion, noise filter, ranking, candidates and manifest. It is synchronous
and is what the scan worker runs.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from typing import Literal, Protocol

import attrs

from memrecall.engine.scoring.candidates import (
    Manifest,
    PoolLookups,
    PoolOrder,
    Ranker,
    RecallCandidates,
    prepare_candidates,
)
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex
from memrecall.engine.scoring.reference import ReferenceIndex
from memrecall.events.documents import MemoryDocument
from memrecall.sources import pacing
from memrecall.sources.feature_store import FeatureStore
from memrecall.sources.scanner import Diagnostic, MemoryTree, scan_tree
from memrecall.sources.turn_reader import default_turns, passage_embedder

ScorerName = Literal["fielded", "reference"]
DEFAULT_SCORER: ScorerName = "fielded"
"""The scorer of the fast path, the fallback and candidate ranking."""

__all__ = [
    "DEFAULT_SCORER",
    "CandidatePreparer",
    "DocumentSource",
    "FieldedRanking",
    "RankedSource",
    "ScorerName",
    "Snapshot",
    "StaticSource",
    "TreeSource",
    "prepare_recall",
]


class CandidatePreparer(Protocol):
    """An index that prepares a recall's candidates itself, faster than the generic pass.

    Its result must equal :func:`~memrecall.engine.scoring.candidates.prepare_candidates`
    over the snapshot's documents and ranker.
    """

    def prepare_candidates(
        self,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        excluded_paths: Collection[str] = frozenset(),
    ) -> RecallCandidates:
        """Candidates, fallback and manifest for ``query``."""
        ...


@attrs.frozen
class Snapshot:
    """Documents in recall order, a ranker over exactly them, and scan diagnostics.

    ``preparer``, when set, replaces the generic candidate pass (same result).
    ``order`` holds per-pool lookups, computed once per snapshot.
    """

    documents: Sequence[MemoryDocument]
    ranker: Ranker
    diagnostics: tuple[Diagnostic, ...] = ()
    preparer: CandidatePreparer | None = None
    order: PoolLookups | None = None


class DocumentSource(Protocol):
    """Supplies the pool for one recall. Called from a worker thread."""

    def snapshot(self) -> Snapshot:
        """The current documents; must reflect every change completed before the call."""
        ...


class FieldedRanking:
    """Builds ``fielded`` indexes, analysing each document once across snapshots.

    Per-document features are kept while the document is unchanged (equal),
    and in ``store`` (a :class:`~memrecall.sources.feature_store.FeatureStore`)
    across processes when it has a path; the per-pool index is rebuilt only
    when the document list changes.
    """

    def __init__(self, store: FeatureStore | None = None) -> None:
        self.store = store or FeatureStore(None)
        self._features: dict[MemoryDocument, DocumentFeatures] = {}
        self._last: tuple[tuple[MemoryDocument, ...], FieldedIndex, PoolOrder] | None = None
        self._lock = threading.Lock()

    def index(self, documents: tuple[MemoryDocument, ...]) -> tuple[FieldedIndex, PoolOrder]:
        """The index and pool order for exactly ``documents``."""
        with self._lock:
            if self._last is not None and self._last[0] == documents:
                return self._last[1], self._last[2]
            old = self._features
            missing = [d for d in documents if d not in old]
            found = dict(zip(missing, self.store.features(missing), strict=True))
            fresh = {d: old.get(d) or found[d] for d in documents}
            self._features = fresh
            index = FieldedIndex.from_features(
                [fresh[d] for d in documents],
                checkpoint=pacing.checkpoint,
                turns=default_turns(),
                passages=passage_embedder() is not None,
            )
            order = PoolOrder.of(documents)
            self._last = (documents, index, order)
            return index, order

    def save(self) -> bool:
        """Persist the features of the current pool (see :meth:`FeatureStore.save`)."""
        with self._lock:
            current = () if self._last is None else self._last[0]
            return self.store.save(current)


def _ranked(documents: tuple[MemoryDocument, ...], scorer: ScorerName) -> Snapshot:
    if scorer == "fielded":
        index, order = FieldedRanking().index(documents)
        return Snapshot(documents, index, order=order)
    return Snapshot(
        documents, ReferenceIndex.of(documents, word_index=True), order=PoolOrder.of(documents)
    )


@attrs.define
class TreeSource:
    """Scan the tree on every recall (no cache; ranked with the ``reference`` scorer).

    Wrap it in :class:`RankedSource` for the ``fielded`` scorer.
    """

    tree: MemoryTree

    def snapshot(self) -> Snapshot:
        """Scan now and index the result."""
        result = scan_tree(self.tree)
        return Snapshot(result.documents, ReferenceIndex.of(result.documents), result.diagnostics)


@attrs.define
class StaticSource:
    """A fixed pool, indexed once with ``scorer``."""

    documents: tuple[MemoryDocument, ...]
    scorer: ScorerName = DEFAULT_SCORER
    _snapshot: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        """The same snapshot every time."""
        if self._snapshot is None:
            self._snapshot = _ranked(tuple(self.documents), self.scorer)
        return self._snapshot


@attrs.define
class RankedSource:
    """Another source's documents and diagnostics, ranked with the ``fielded`` scorer."""

    inner: DocumentSource
    ranking: FieldedRanking = attrs.field(factory=FieldedRanking)

    def snapshot(self) -> Snapshot:
        """The inner snapshot with a ``fielded`` index (documents analysed once each)."""
        inner = self.inner.snapshot()
        index, order = self.ranking.index(tuple(inner.documents))
        return Snapshot(inner.documents, index, inner.diagnostics, order=order)


def prepare_recall(
    source: DocumentSource,
    query: str,
    *,
    recent_tools: Sequence[str] = (),
    excluded_paths: Collection[str] = frozenset(),
) -> RecallCandidates:
    """The deterministic pass of one recall (what the scan worker runs)."""
    snapshot = source.snapshot()
    if snapshot.preparer is not None:
        candidates = snapshot.preparer.prepare_candidates(
            query, recent_tools=recent_tools, excluded_paths=excluded_paths
        )
    else:
        candidates = prepare_candidates(
            query,
            snapshot.documents,
            snapshot.ranker,
            recent_tools=recent_tools,
            excluded_paths=excluded_paths,
            order=snapshot.order,
        )
    if not query.strip():
        # Nothing to ask a selector about: no candidates, so the plan settles empty.
        nothing = Manifest("", ())
        return attrs.evolve(candidates, candidates=(), fallback=(), fast=(), manifest=nothing)
    return candidates
