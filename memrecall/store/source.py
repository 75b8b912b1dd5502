"""Recall from the store: a :class:`~memrecall.sources.source.DocumentSource` over one user's
visible, active memories, so ``open_engine`` recalls them on every turn exactly as it
recalls a memory tree (fast path, selector, telemetry).

Records become :class:`~memrecall.events.documents.MemoryDocument` values
(:func:`record_document`):

- ``path``: ``store/<scope>/<key>.md`` (``store/global/editor.md``,
  ``store/workspace-learning/editor.md``): stable, unique per visible record, and never the
  database's location; ``relative_path``: ``<key>.md``;
- ``scope``: ``user`` for global records, ``project`` for workspace records (a workspace
  record overrides a global one with the same key, as a project file shadows a user file);
- ``title``: the key with ``_`` read as spaces; ``description``: the content's first line
  (at most 200 characters); ``body``: the content; ``mtime``: ``updated_at``;
- ``type``: from the category (:data:`CATEGORY_TYPES`, compared NFKC + case-folded):
  ``feedback`` for corrections and workflow rules, ``project`` for project, goal and
  schedule facts, ``reference`` for tools, links and references, ``user`` for everything
  else (preferences, people, facts about the user).

Kept current incrementally: each snapshot asks the store for the user's
``memory_revision`` (one small read) and, when it moved, only the records written since
(:meth:`~memrecall.store.backend.Store.changes_since`); a write is visible to the next
recall, and nothing is reloaded whole. Expired records leave the pool when their time
comes. Ranking uses an :class:`~memrecall.store.index.IncrementalIndex` through
:class:`StoreRanker`, which ranks exactly like a ``FieldedIndex`` built over the same
documents (tested), without rebuilding the index on each write.

Recall across languages, as for a memory tree: where turns are read by the semantic reader
(and ``MEMRECALL_PASSAGES`` is not ``off``), each pooled memory's passage is embedded after
the snapshot that pooled it is out, by a worker thread
(:class:`~memrecall.sources.catalog.passage_filler.PassageFiller`); until it is in, the
memory is ranked by its words. The vectors are kept in this process's memory only, with the
memory's other features: never written to the store or to any file, and dropped with the
document when its record is rewritten, forgotten, suppressed or expires (an embedding of a
text that changed meanwhile is discarded). A new process embeds them again.
:meth:`StoreSource.settle` waits for them; :meth:`StoreSource.close` stops the worker.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime

import msgspec

from memrecall.engine.render import MAX_FAST_DOCS
from memrecall.engine.scoring.analysis import query_text, query_words, vietnamese_words
from memrecall.engine.scoring.change_words import asks_current
from memrecall.engine.scoring.features import passage_of
from memrecall.engine.scoring.fielded import (
    DocumentFeatures,
    FieldedIndex,
    MatchedTerm,
    answered,
    common_only,
    count_runs,
    lone_term,
    stands_out,
)
from memrecall.engine.scoring.judgement import Judgement, Thresholds, default_thresholds
from memrecall.engine.scoring.passages import (
    CLOSE_DEPTH,
    PassageMatrix,
    joined,
    nearer_first,
    script_of,
    thinly_held,
    unpack,
)
from memrecall.engine.scoring.query_rules import beside_owner, loose_syllables, one_word
from memrecall.engine.scoring.silent_turns import answer_silent
from memrecall.engine.scoring.time_rules import (
    fast_with_update,
    later_alike,
    move_newer_up,
    possible_updates,
    unclear,
    updates_placed,
)
from memrecall.engine.scoring.turn_judgement import explains_turn, holds_little, in_turn
from memrecall.engine.scoring.turn_model import Reading, read_turn
from memrecall.engine.scoring.turn_semantic import OnceEmbedded, SemanticTurns, TurnReader
from memrecall.engine.scoring.turn_words import elsewhere, strong_only
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources.catalog.passage_filler import Embedded, PassageFiller, ToEmbed
from memrecall.sources.source import Snapshot
from memrecall.sources.turn_reader import background_passage_embedder, default_turns

from .backend import Store, StoreChanges
from .index import IncrementalIndex
from .keys import normalize_category
from .model import MemoryRecord, MemoryScope, ScopeType, WorkspaceType, visible_scopes

_Judged = tuple[int, Judgement, float, str, str | None, bool]
"""One ranked memory: pool position, judgement, score, path, a newer document that may be
its update (or None), and whether a newer one on its subject ranks above it (outranked)."""

__all__ = [
    "CATEGORY_TYPES",
    "StorePoolOrder",
    "StoreRanker",
    "StoreSource",
    "document_path",
    "record_document",
]

CATEGORY_TYPES: dict[str, MemoryType] = {
    "feedback": MemoryType.FEEDBACK,
    "correction": MemoryType.FEEDBACK,
    "workflow": MemoryType.FEEDBACK,
    "rule": MemoryType.FEEDBACK,
    "project": MemoryType.PROJECT,
    "goal": MemoryType.PROJECT,
    "schedule": MemoryType.PROJECT,
    "deadline": MemoryType.PROJECT,
    "reference": MemoryType.REFERENCE,
    "tool": MemoryType.REFERENCE,
    "link": MemoryType.REFERENCE,
    "resource": MemoryType.REFERENCE,
}
"""Normalised category → document type; any other category is ``user``."""

_DESCRIPTION_CHARS = 200


def document_path(scope: MemoryScope, key: str) -> str:
    """``store/global/<key>.md`` or ``store/workspace-<type>/<key>.md``."""
    folder = "global" if scope.workspace is None else f"workspace-{scope.workspace.value}"
    return f"store/{folder}/{key}.md"


def record_document(record: MemoryRecord) -> MemoryDocument:
    """The document a record is recalled as (module docstring)."""
    first = record.content.strip().splitlines()[0] if record.content.strip() else ""
    return MemoryDocument(
        scope=Scope.USER if record.scope.type is ScopeType.GLOBAL else Scope.PROJECT,
        path=document_path(record.scope, record.key),
        relative_path=f"{record.key}.md",
        type=CATEGORY_TYPES.get(normalize_category(record.category), MemoryType.USER),
        title=record.key.replace("_", " "),
        description=first[:_DESCRIPTION_CHARS],
        body=record.content,
        mtime=record.updated_at.timestamp(),
    )


def _ordering(
    kept: dict[str, float],
    prior: Callable[[str], float],
    wanted: int,
    excluded: Collection[str],
    most: float,
) -> dict[str, float]:
    """The ordering values (score × freshness prior) of the documents that can be among the
    ``wanted`` best: a prior is at least 1 and at most ``most``, so a document whose score
    times ``most`` stays under the ``wanted``-th best score cannot get there (after a write
    every prior changes, and computing them all cost half the recall at 100,000 memories)."""
    if len(kept) <= 4 * wanted:
        return {d: v * prior(d) for d, v in kept.items()}
    best = heapq.nlargest(wanted, (v for d, v in kept.items() if d not in excluded))
    cut = best[-1] / most * (1 - 1e-9) if len(best) == wanted else 0.0
    return {d: v * prior(d) for d, v in kept.items() if v >= cut}


class StoreRanker:
    """``rank`` and ``rank_and_fast`` over one snapshot's documents, from the source's
    incremental index; equal to a ``FieldedIndex`` built over the same documents.

    Valid while the source has not changed since the snapshot; after that (a later recall
    changed the pool while this one still ranks) it builds a ``FieldedIndex`` from the
    snapshot's cached features instead, so a snapshot is always ranked over exactly its
    own documents.
    """

    def __init__(
        self,
        source: StoreSource,
        generation: int,
        documents: tuple[MemoryDocument, ...],
        features: tuple[DocumentFeatures, ...],
    ) -> None:
        self._source = source
        self._generation = generation
        self._documents = documents
        self._features = features
        self._fallback: FieldedIndex | None = None
        self._matrix: PassageMatrix | None = None

    def _stale(self) -> FieldedIndex | None:
        if self._source.generation == self._generation:
            return None
        if self._fallback is None:
            self._fallback = FieldedIndex.from_features(
                self._features, turns=default_turns(), passages=self._source.index.passages
            )
        return self._fallback

    def _judged(
        self,
        query: str,
        exclude: Collection[int],
        limit: int,
        *,
        keep_none: bool,
        turns: TurnReader | None = None,
    ) -> list[_Judged]:
        index = self._source.index
        thresholds = self._source.thresholds
        scores = index.scores(query)
        if not scores:
            return []
        # coverage and evidence are judged on the calibration's scale (Params.fitted_pool)
        judged, mass, idf_max = index.judged(query, scores, index.mass(query))
        lowest = max(thresholds.weak_coverage * mass, thresholds.weak_evidence * idf_max) * (
            1 - 1e-9
        )
        kept = {d: v for d, v in scores.items() if judged[d] >= lowest}
        paths = self._documents
        excluded = {paths[i].path for i in exclude if 0 <= i < len(paths)}
        # the query rules of FieldedIndex._ranked (fielded.py's docstring)
        selected, _, pasted = index.query_terms(query)
        terms = [
            MatchedTerm.of(qt, qt.weight * (index._idf(qt.term) or 0.0))
            for qt in selected
            if index._credit(qt.term, qt.kind)
        ]
        for doc in common_only(
            kept,
            terms,
            lambda term, kind: index._credit(term, kind).keys(),
            lambda t: len(index._credit(t.term, t.kind)),
        ):
            del kept[doc]

        def holders(term: str, kind: str) -> Iterable[str]:
            return index._credit(term, kind).keys()

        words = query_words(query)
        if not pasted:
            for doc in elsewhere(kept, query, words, holders):
                del kept[doc]
            for doc in loose_syllables(kept, terms, holders, vietnamese_words(query_text(query))):
                del kept[doc]
        params = index.params
        wanted = max(limit, 2, params.subject_window)
        # the ordering value: the score times the freshness prior, as in FieldedIndex
        prior = index.prior
        order = _ordering(kept, prior, wanted, excluded, 1.0 + params.freshness)
        docs = index.top(order, wanted, excluded=excluded)

        def values(term: str, kind: str, where: set[str]) -> dict[str, float]:
            credit = index._credit(term, kind)
            return {d: credit[d] for d in where if d in credit}

        if count_runs(order, terms, docs[: 2 * params.subject_window], values, prior):
            # values went down: any document may compete now
            for d, v in kept.items():
                if d not in order:
                    order[d] = v * prior(d)
            docs = index.top(order, wanted, excluded=excluded)
        # the rules about time (time_rules, as FieldedIndex applies them)
        stale = move_newer_up(
            docs,
            order,
            terms,
            mtime=index.mtime,
            same_subject=index.same_subject,
            holders=holders,
            says_change=index.says_change,
            params=params,
            newest_wanted=pasted or asks_current(words),
        )
        outranked = frozenset(stale)  # older versions a newer one ranks above (fresher first)
        margin = params.paste_margin
        # contenders: the documents that could be answers, as FieldedIndex._ranked counts them
        floor = max(thresholds.weak_coverage * mass, thresholds.weak_evidence * idf_max)
        contenders = [d for d in docs if judged[d] >= floor * (1 - 1e-9)]
        if pasted:
            # only a first document that stands out may be strong (FieldedIndex._unclear)
            stale.update(unclear(contenders, order, stale, margin))
        if not pasted and one_word(query):
            return []  # one ordinary word asks nothing
        if not pasted and not answered(
            max(
                (judged[d] for d in kept if judged[d] >= floor * (1 - 1e-9) and d not in excluded),
                default=0.0,
            ),
            mass,
            thresholds,
        ):
            return []  # the query is about something no memory knows
        lone = None if pasted else lone_term(terms, lambda: selected)
        if lone is not None:
            owners = [d for d in contenders if d not in stale]
            if not stands_out(owners, order, margin):
                return []  # one word that no memory stands out for
            # the memory that owns the word answers, with its older versions
            passing = beside_owner(docs, owners[:1], stale, index.same_subject)
            docs = [d for d in docs if d not in passing]
        newer = possible_updates(
            docs, order, mtime=index.mtime, similarity=index.similarity, params=params
        )
        limited = (
            None
            if pasted
            else strong_only(query, words, lambda term, kind: bool(index._credit(term, kind)))
        )
        let_through: set[str] = set()
        for kind, term in limited or ():
            let_through.update(index._credit(term, kind).keys())
        if let_through:  # an update of a memory let through speaks for it
            let_through.update(
                later_alike(
                    let_through,
                    docs,
                    mtime=index.mtime,
                    similarity=index.similarity,
                    params=params,
                )
            )

        # what the turn reader makes of the turn (turn_judgement: read once, when needed)
        def reading() -> Reading:
            return Reading.QUESTION if pasted else read_turn(turns or default_turns(), query, words)

        every = []  # (document, coverage, judgement by the thresholds alone)
        for doc in docs:
            coverage = min(1.0, judged[doc] / mass) if mass > 0 else 0.0
            every.append((doc, coverage, thresholds.judge(coverage, judged[doc] / idf_max)))
        first = every[:limit]
        judgements = in_turn(
            first,
            read=reading,
            talk_share=params.talk_share,
            # judged over every ranked memory, as FieldedIndex._ranked judges it
            explained=explains_turn([(c, j) for _, c, j in every], params.talk_share),
            little=holds_little([(c, j) for _, c, j in every], params.low_share),
            let_through=None if limited is None else let_through,
            # a lone bigram may be a piece of a longer word: nothing is strong for it
            older=docs if lone is not None and lone.kind != "word" else stale,
        )
        out = []
        for (doc, _, _), judgement in zip(first, judgements, strict=True):
            if not keep_none and judgement is Judgement.NONE:
                continue
            position = self._source.position(doc)
            out.append((position, judgement, kept[doc], doc, newer.get(doc), doc in outranked))
        return out

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents judged at least weak, best first."""
        with self._source.lock:
            fallback = self._stale()
            if fallback is not None:
                return fallback.rank(query, limit, exclude=exclude)
            turns, once = self._one_turn()
            judged = self._judged(query, exclude, limit, keep_none=False, turns=turns)
            judged = self._nearer_first(query, judged, once)
            ranking = self._with_update(query, judged, exclude, limit)
            ranking = self._nearest_too(query, judged, ranking, exclude, limit, once=once)
            return ranking or self._clearly_nearest(query, exclude, limit, turns, once)

    def rank_and_fast(
        self, query: str, limit: int, *, exclude: Collection[int] = ()
    ) -> tuple[list[int], list[int]]:
        """``rank(query, limit)`` and the fast result from one scoring pass."""
        with self._source.lock:
            fallback = self._stale()
            if fallback is not None:
                return fallback.rank_and_fast(query, limit, exclude=exclude)
            turns, once = self._one_turn()
            wanted = max(limit, MAX_FAST_DOCS)
            ranked = self._judged(query, exclude, wanted, keep_none=True, turns=turns)
            fast = self._fast_of(ranked[:MAX_FAST_DOCS], query)
            words = [r for r in ranked[:limit] if r[1] is not Judgement.NONE]
            kept = self._nearer_first(query, words, once)
            if kept is not words and kept[0][0] in fast:  # the same, in the ranking's order
                fast = [kept[0][0], *(i for i in fast if i != kept[0][0])]
            fast = self._fast_placed(fast, query, exclude)
            ranking = self._with_update(query, kept, exclude, limit)
            ranking = self._nearest_too(query, kept, ranking, exclude, limit, once=once)
            return ranking or self._clearly_nearest(query, exclude, limit, turns, once), fast

    def _one_turn(self) -> tuple[TurnReader | None, OnceEmbedded | None]:
        """The reader of one ranking call and its embedder, as ``FieldedIndex._one_turn``:
        where the passages take part, reading the turn and finding the memories nearest it
        embed the turn once."""
        reader = default_turns()
        if not self._source.index.passages or not isinstance(reader, SemanticTurns):
            return None, None
        return reader.for_one_turn()

    def _nearest_too(
        self,
        query: str,
        kept: Sequence[_Judged],
        ranking: list[int],
        exclude: Collection[int],
        limit: int,
        *,
        once: OnceEmbedded | None,
    ) -> list[int]:
        """The places after the first shared with the memories nearest the turn, as
        ``FieldedIndex._nearest_too`` shares them (call under the source's lock)."""
        if once is None or not ranking:
            return ranking
        matrix = self._passage_matrix()
        if not matrix or self._source.index.query_terms(query)[2]:
            return ranking
        return joined(
            ranking,
            [r[0] for r in kept[:2]],
            lambda: once.turn(query),
            matrix,
            exclude=exclude,
            limit=limit,
            yields=lambda first, nearest: self._yields(query, kept, first, nearest),
            lead=self._source.index.params.thin_lead,
        )

    def _yields(self, query: str, kept: Sequence[_Judged], first: int, nearest: int) -> bool:
        """``passages.thinly_held`` for this pool, as ``FieldedIndex._yields`` asks it (call
        under the source's lock)."""
        index = self._source.index
        doc, other = self._documents[first].path, self._documents[nearest].path

        def versions() -> bool:
            flagged = (r[4] is not None or r[5] for r in kept if r[0] in (first, nearest))
            return any(flagged) or self._pool_versions(doc, other)

        def scripts() -> tuple[str, str, str]:
            asked = script_of([query_text(query)])
            return asked, self._features[first].script(), self._features[nearest].script()

        return thinly_held(lambda: index.terms_matching(query, doc), versions, scripts)

    def _pool_versions(self, a: str, b: str) -> bool:
        """The pool's half of the versions guard (as ``FieldedIndex._pool_versions``): the
        two documents are about the same subject, or either has a later version."""
        index = self._source.index
        return bool(index.same_subject(a, b) or index.later_versions(a) or index.later_versions(b))

    def _clearly_nearest(
        self,
        query: str,
        exclude: Collection[int],
        limit: int,
        turns: TurnReader | None,
        once: OnceEmbedded | None,
    ) -> list[int]:
        """For a turn the words leave silent, ``silent_turns.answer_silent`` over this pool, as
        ``FieldedIndex._clearly_nearest`` asks it (call under the source's lock)."""
        index = self._source.index
        nearest = answer_silent(
            query,
            limit=limit,
            reader=turns,
            once=once,
            query_terms=index.query_terms,
            matrix=self._passage_matrix,
            exclude=exclude,
            params=index.params,
        )
        paths = [self._documents[i].path for i in nearest]  # the snapshot is current here
        return self._updates_placed(query, paths, False, exclude, limit)

    def _passage_matrix(self) -> PassageMatrix:
        """Each position's passage embedding, unpacked the first time a turn needs them
        (call under the source's lock)."""
        matrix = self._matrix
        if matrix is None:
            matrix = self._matrix = PassageMatrix([unpack(f.passage) for f in self._features])
        return matrix

    def _nearer_first(
        self, query: str, kept: list[_Judged], once: OnceEmbedded | None
    ) -> list[_Judged]:
        """``kept`` with one of its first memories moved to the front where its passage is
        nearer the turn, as ``FieldedIndex._nearer_first`` decides it (call under the
        source's lock)."""
        index = self._source.index
        if once is None or len(kept) < 2 or index.query_terms(query)[2]:
            return kept
        head = kept[:CLOSE_DEPTH]
        matrix = self._passage_matrix()
        params = index.params

        def versions(i: int, j: int) -> bool:
            a, b = head[i], head[j]
            return bool(
                a[4] is not None
                or b[4] is not None
                or a[5]
                or b[5]
                or self._pool_versions(a[3], b[3])
            )

        chosen = nearer_first(
            [r[2] for r in head],
            [matrix.vector(r[0]) for r in head],
            lambda: once.turn(query),
            scripts=lambda: (
                [script_of([query_text(query)])] + [self._features[r[0]].script() for r in head]
            ),
            versions=versions,
            ratio=params.passage_ratio,
            margin=params.passage_margin,
        )
        if not chosen:
            return kept
        return [kept[chosen], *kept[:chosen], *kept[chosen + 1 :]]

    def _with_update(
        self,
        query: str,
        kept: list[_Judged],
        exclude: Collection[int],
        limit: int,
    ) -> list[int]:
        """The kept positions, the first one's newest update right after it, or before it
        (as ``FieldedIndex._with_update``, over paths; call under the source's lock)."""
        outranked = bool(kept) and kept[0][5]
        return self._updates_placed(query, [r[3] for r in kept], outranked, exclude, limit)

    def _updates_placed(
        self, query: str, docs: list[str], outranked: bool, exclude: Collection[int], limit: int
    ) -> list[int]:
        """``_with_update`` over paths (as ``FieldedIndex._updates_placed``; call under the
        source's lock)."""
        index = self._source.index
        position = self._source.position

        placed = updates_placed(
            docs,
            limit,
            later=index.later_versions,
            excluded=lambda d: position(d) in exclude,
            goes_first=lambda note, d: self._goes_first(query, note, d),
            outranked=outranked,
        )
        return [position(doc) for doc in placed]

    def _goes_first(self, query: str, note: str, update: str) -> bool:
        """As ``FieldedIndex._goes_first``, over paths."""
        index = self._source.index
        return index.says_change(update) or index.stands_in(query, note, update)

    def _fast_placed(self, fast: list[int], query: str, exclude: Collection[int]) -> list[int]:
        """The fast result with its first memory's update before it where the ranking puts
        it there and the words match it (as ``FieldedIndex._fast_placed``; call under the
        source's lock)."""
        index = self._source.index
        position = self._source.position
        placed = fast_with_update(
            [self._documents[i].path for i in fast],  # the snapshot is current here
            max(len(fast), MAX_FAST_DOCS),
            later=index.later_versions,
            excluded=lambda d: position(d) in exclude,
            goes_first=lambda note, d: self._goes_first(query, note, d),
            matched=lambda d: index.terms_matching(query, d) > 0,
        )
        return [position(doc) for doc in placed]

    def _fast_of(self, ranked: list[_Judged], query: str) -> list[int]:
        """The fast result from the first judged documents (as ``FieldedIndex._fast_of``)."""
        index = self._source.index
        strong = [r for r in ranked if r[1] is Judgement.STRONG]
        if not strong:
            return []
        first, first_doc, newer_doc = strong[0][0], strong[0][3], strong[0][4]
        if newer_doc is not None:
            # a fact a newer note may have changed goes in only beside that note, when
            # that one is about the same subject or answers what the first answers
            newer = [r for r in ranked if r[3] == newer_doc]
            if (
                newer
                and newer[0][1] is not Judgement.NONE
                and (
                    index.same_subject(first_doc, newer_doc)
                    or index.second_answer(query, first_doc, newer_doc)
                )
            ):
                return [first, newer[0][0]]
        least = index.params.second * strong[0][2]
        return [first] + [
            i
            for i, _j, s, d, _n, _o in strong[1:]
            if s >= least and index.second_answer(query, first_doc, d)
        ]


class StorePoolOrder:
    """The :class:`~memrecall.engine.scoring.candidates.PoolLookups` of one snapshot, built in
    constant time: the pool is already in recency order (newest first, then path), so
    ``by_recency`` is the identity and a path's index is found by bisection on the
    snapshot's sort keys (``(-mtime, path)``, sorted, one per document)."""

    def __init__(self, keys: tuple[tuple[float, str], ...], mtimes: Callable[[str], float | None]):
        self._keys = keys
        self._mtimes = mtimes
        self._by_path: dict[str, int] | None = None

    @property
    def by_recency(self) -> range:
        """Pool indices, newest first (the pool's own order)."""
        return range(len(self._keys))

    def indices_of(self, path: str) -> tuple[int, ...]:
        """The pool index of the document at ``path`` (at most one)."""
        mtime = self._mtimes(path)
        if mtime is not None:
            at = bisect.bisect_left(self._keys, (-mtime, path))
            if at < len(self._keys) and self._keys[at] == (-mtime, path):
                return (at,)
        if self._by_path is None:  # the path's time moved since this snapshot: look it up
            self._by_path = {p: i for i, (_m, p) in enumerate(self._keys)}
        at_path = self._by_path.get(path)
        return () if at_path is None else (at_path,)


class StoreSource:
    """One user's visible, active memories as a document source (module docstring).

    ``workspace`` picks the visible scopes (global, plus that workspace's). ``clock``
    decides expiry. ``passages=False`` ranks by the words alone (no passage is embedded);
    by default the passages are embedded where ``MEMRECALL_PASSAGES`` and the turn reader
    allow it (module docstring). ``snapshot`` is called from the engine's worker thread; the
    source serialises its own state with a lock. :meth:`close` stops the worker that embeds
    passages.
    """

    def __init__(
        self,
        store: Store,
        user_id: str,
        workspace: WorkspaceType | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
        thresholds: Thresholds | None = None,
        passages: bool = True,
    ) -> None:
        from .service import utc_now

        self.store = store
        self.user_id = user_id
        self.scopes = visible_scopes(workspace)
        self.thresholds = thresholds or default_thresholds()
        self.lock = threading.RLock()
        self.index = IncrementalIndex()
        self.generation = 0
        """Advances whenever the pool (the indexed documents) changes."""
        self.loaded = 0
        """Records read from the store so far (a work counter)."""
        self.analysed = 0
        """Documents analysed so far (a work counter)."""
        self.snapshots_built = 0
        """Snapshots built so far (one per change of the pool, a work counter)."""
        self._clock = clock or utc_now
        self._memory_revision = -1
        self._cursor: int | None = None
        self._records: dict[str, MemoryRecord] = {}
        self._by_key: dict[str, set[str]] = {}
        self._pending_keys: set[str] = set()
        """Keys whose documents must be recomputed (written, or a record removed)."""
        self._documents: dict[str, tuple[MemoryDocument, DocumentFeatures, datetime | None]] = {}
        # the pool, sorted by (-mtime, path); three lists kept at the same indices, so a
        # snapshot copies them (C-level pointer copies) instead of rebuilding them
        self._order: list[tuple[float, str]] = []
        self._pool: list[MemoryDocument] = []
        self._pool_features: list[DocumentFeatures] = []
        self._expiries: list[tuple[datetime, str]] = []  # (expires_at, key) of pooled docs
        self._synced_at: datetime | None = None
        self._last: Snapshot | None = None
        self.embedded = 0
        """Passages embedded so far (a work counter)."""
        self._stamp = 0
        self._unembedded: dict[int, str] = {}
        """Documents whose passage is still to embed: a stamp given when the document was
        pooled → its path (a rewrite or a removal drops the stamp: an embedding of an older
        text never lands)."""
        self._stamps: dict[str, int] = {}
        self._closed = not passages
        """Closed, or never to embed: no passage is embedded."""
        self._filler = PassageFiller(
            self._passages_to_embed, self._store_passages, background_passage_embedder, "store"
        )

    def _apply(self, changes: StoreChanges) -> None:
        if changes.full:
            self._pending_keys.update(r.key for r in self._records.values())
            self._records.clear()
            self._by_key.clear()
        for memory_id in changes.removed:
            self._drop(memory_id)
        for record in changes.records:
            self._drop(record.memory_id)
            self._records[record.memory_id] = record
            self._by_key.setdefault(record.key, set()).add(record.memory_id)
            self._pending_keys.add(record.key)
        self.loaded += len(changes.records)
        self._memory_revision = changes.memory_revision
        self._cursor = changes.cursor

    def _drop(self, memory_id: str) -> None:
        record = self._records.pop(memory_id, None)
        if record is None:
            return
        members = self._by_key[record.key]
        members.discard(memory_id)
        if not members:
            del self._by_key[record.key]
        self._pending_keys.add(record.key)

    def _wanted(self, key: str, now: datetime) -> dict[str, MemoryRecord]:
        """The visible documents of one key: unexpired, workspace overriding global."""
        live = [
            self._records[m] for m in self._by_key.get(key, ()) if not self._records[m].expired(now)
        ]
        if any(r.scope.type is ScopeType.WORKSPACE for r in live):
            live = [r for r in live if r.scope.type is ScopeType.WORKSPACE]
        return {document_path(r.scope, r.key): r for r in live}

    def _sync_pool(self, now: datetime) -> None:
        keys = self._pending_keys
        self._pending_keys = set()
        if self._synced_at is not None:
            # expiries that came due since the last sync
            start = bisect.bisect_right(self._expiries, (self._synced_at, "\uffff"))
            end = bisect.bisect_right(self._expiries, (now, "\uffff"))
            keys.update(key for _t, key in self._expiries[start:end])
        changed = False
        for key in keys:
            wanted = self._wanted(key, now)
            for scope in self.scopes:
                path = document_path(scope, key)
                held = self._documents.get(path)
                record = wanted.get(path)
                document = None if record is None else record_document(record)
                if held is not None and held[0] == document:
                    continue
                if held is not None:
                    del self._documents[path]
                    self._unembedded.pop(self._stamps.pop(path, -1), None)
                    self.index.remove(path)
                    at = bisect.bisect_left(self._order, (-held[0].mtime, path))
                    del self._order[at], self._pool[at], self._pool_features[at]
                    self._unexpire(held[2], key)
                if record is not None and document is not None:
                    features = DocumentFeatures.of(document)
                    self.analysed += 1
                    self._documents[path] = (document, features, record.expires_at)
                    self.index.add(path, features)
                    at = bisect.bisect_left(self._order, (-document.mtime, path))
                    self._order.insert(at, (-document.mtime, path))
                    self._pool.insert(at, document)
                    self._pool_features.insert(at, features)
                    if record.expires_at is not None:
                        bisect.insort(self._expiries, (record.expires_at, key))
                    if self.index.passages:
                        self._stamp += 1
                        self._stamps[path] = self._stamp
                        self._unembedded[self._stamp] = path
                changed = True
        if changed:
            self.generation += 1
            self._last = None
        self._synced_at = now

    def _unexpire(self, expires_at: datetime | None, key: str) -> None:
        if expires_at is not None:
            at = bisect.bisect_left(self._expiries, (expires_at, key))
            if at < len(self._expiries) and self._expiries[at] == (expires_at, key):
                del self._expiries[at]

    def snapshot(self) -> Snapshot:
        """The user's visible, active, unexpired memories now, ranked (pool order: newest
        first, then path). Their passages are embedded after it, in the background (module
        docstring)."""
        with self.lock:
            snapshot = self._snapshot()
            pending = bool(self._unembedded)
        if pending:  # woken outside the lock: the worker takes it to ask for work
            self._filler.wake()
        return snapshot

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every passage the last snapshot left is embedded (the steady state:
        tests, tools); False if ``timeout`` (seconds) passed first."""
        return self._filler.settle(timeout)

    def close(self) -> None:
        """Stop embedding passages (idempotent); snapshots still work, by the words for any
        memory whose passage is not in."""
        self._filler.close()
        with self.lock:
            self._closed = True

    def passage(self, path: str) -> bytes | None:
        """The passage embedding held for the pooled memory at ``path`` (packed; empty: not
        embedded yet, or not at all), or None when no memory is pooled there."""
        with self.lock:
            held = self._documents.get(path)
            return None if held is None else held[1].passage

    def _passages_to_embed(self, limit: int) -> list[ToEmbed]:
        with self.lock:
            if self._closed:
                return []
            # a large store publishes less often: each publication passes over the pool
            todo = itertools.islice(self._unembedded.items(), max(limit, len(self._pool) // 100))
            return [(stamp, stamp, passage_of(self._documents[path][0])) for stamp, path in todo]

    def _store_passages(self, embedded: Sequence[Embedded]) -> None:
        with self.lock:
            landed = 0
            for stamp, _stamp, vector in embedded:
                path = self._unembedded.pop(stamp, None)
                if path is None or not vector:
                    continue  # rewritten, forgotten or expired meanwhile; or not embedded
                document, features, expires_at = self._documents[path]
                features = msgspec.structs.replace(features, passage=vector)
                self._documents[path] = (document, features, expires_at)
                self._pool_features[self.position(path)] = features
                self.index.embedded(path, features)
                landed += 1
            if landed:
                self.embedded += landed
                self.generation += 1
                self._last = None

    def _snapshot(self) -> Snapshot:
        with self.lock:
            if self.generation == 0 and self._synced_at is None and not self._closed:
                # recall across languages where turns are read by the semantic reader
                # (loads the model: in the engine's worker thread, not in the constructor)
                self.index.passages = background_passage_embedder() is not None
            revision = self.store.memory_revision(self.user_id)
            if revision != self._memory_revision:
                self._apply(self.store.changes_since(self.user_id, self.scopes, self._cursor))
            now = self._clock()
            due = self._synced_at is None or (bool(self._expiries) and self._expiries[0][0] <= now)
            if self._pending_keys or due:
                self._sync_pool(now)
            if self._last is None:
                documents = tuple(self._pool)
                ranker = StoreRanker(self, self.generation, documents, tuple(self._pool_features))
                order = StorePoolOrder(tuple(self._order), self._mtime)
                self._last = Snapshot(documents, ranker, order=order)
                self.snapshots_built += 1
            return self._last

    def _mtime(self, path: str) -> float | None:
        with self.lock:
            held = self._documents.get(path)
            return None if held is None else held[0].mtime

    def position(self, path: str) -> int:
        """The current pool index of the pooled document at ``path`` (call under ``lock``)."""
        return bisect.bisect_left(self._order, (-self._documents[path][0].mtime, path))
