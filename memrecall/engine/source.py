"""Where a recall's documents come from.

A :class:`DocumentSource` gives a consistent snapshot of the pool (documents
in recall order plus a ranker over exactly that list). :class:`TreeSource`
scans the memory tree afresh for every recall; :class:`StaticSource` serves a
fixed list (tests, simulations, evaluation);
:class:`~memrecall.engine.catalog.CatalogSource` (the engine's default for a
memory tree) keeps parsed documents between recalls and reads only what
changed. :func:`prepare_recall` runs the whole deterministic pass: snapshot,
exclusion, noise filter, ranking, candidates and manifest. It is synchronous
and is what the scan worker runs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

import attrs

from memrecall.events.documents import MemoryDocument

from .candidates import Manifest, Ranker, RecallCandidates, prepare_candidates
from .scanner import Diagnostic, MemoryTree, scan_tree
from .scorer import ReferenceIndex

__all__ = [
    "CandidatePreparer",
    "DocumentSource",
    "Snapshot",
    "StaticSource",
    "TreeSource",
    "prepare_recall",
]


class CandidatePreparer(Protocol):
    """An index that prepares a recall's candidates itself, faster than the generic pass.

    Its result must equal :func:`~memrecall.engine.candidates.prepare_candidates`
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
    """

    documents: tuple[MemoryDocument, ...]
    ranker: Ranker
    diagnostics: tuple[Diagnostic, ...] = ()
    preparer: CandidatePreparer | None = None


class DocumentSource(Protocol):
    """Supplies the pool for one recall. Called from a worker thread."""

    def snapshot(self) -> Snapshot:
        """The current documents; must reflect every change completed before the call."""
        ...


@attrs.define
class TreeSource:
    """Scan the tree on every recall (no cache)."""

    tree: MemoryTree

    def snapshot(self) -> Snapshot:
        """Scan now and index the result."""
        result = scan_tree(self.tree)
        return Snapshot(result.documents, ReferenceIndex.of(result.documents), result.diagnostics)


@attrs.define
class StaticSource:
    """A fixed pool, indexed once."""

    documents: tuple[MemoryDocument, ...]
    _snapshot: Snapshot | None = None

    def snapshot(self) -> Snapshot:
        """The same snapshot every time."""
        if self._snapshot is None:
            self._snapshot = Snapshot(self.documents, ReferenceIndex.of(self.documents))
        return self._snapshot


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
        )
    if not query.strip():
        # Nothing to ask a selector about: no candidates, so the plan settles empty.
        return attrs.evolve(candidates, candidates=(), fallback=(), manifest=Manifest("", ()))
    return candidates
