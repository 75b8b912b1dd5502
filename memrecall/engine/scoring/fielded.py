"""The ``fielded`` scorer: BM25F over word-boundary terms, with an absolute match judgement.

Per query term (:mod:`memrecall.engine.scoring.analysis`) a document earns
``weight × idf × tf / (k1 + tf)``, where ``tf`` sums the term's occurrences
over the document's fields (title, description, body window, rest of the
body), each scaled by its field weight and normalised by the field's length
relative to the pool average (BM25F). ``idf`` comes from the pool: a word that
half the memories use says little. A query word also matches inflected forms
of itself (``charged``/``charges``, ``магазин``/``магазины``) at
:attr:`Params.variant` of the exact credit, but never a longer unrelated word
(``owner`` is not ``ownership``, ``tea`` is not ``team``).

Ranking: score descending, then mtime descending, then input order, with
five rules about time (docs/decisions.md, issue 18):

* **Freshness prior.** The order (never the judgement) uses the score times
  ``1 + freshness × 0.5 ** (age / half_life)``, age measured from the pool's
  newest document: at most :attr:`Params.freshness` apart, so it only decides
  near-ties.
* **Same-subject pairs.** Among the first :attr:`Params.subject_window`, a newer
  document about the same subject as an older one ranked above it (their
  shared subject terms weigh :attr:`Params.subject` of either's) moves just above
  it when it scores at least :attr:`Params.subject_ratio` of the older one; the
  older one is then never judged strong. Not when the query words only the older
  one matches outweigh the most specific query term the newer one matches: the
  older one then answers something the newer one does not speak of (an update
  names what it replaces). A newer document that says it changes something
  ("now", "no longer", "retired", "ab sofort", "改为", "廃止", "이제":
  :data:`~memrecall.engine.scoring.change_words.CHANGE_WORDS`) speaks for the older
  one on what it does not repeat: the query terms both match need only weigh
  :attr:`Params.subject_query` of those the newer one matches. In a paste, the newer
  one always moves up: a pasted log, config or thread shows the state the user is in
  (the old host, the old setup guide), which is what the older note describes. So it
  does for a question that asks whether something still holds ("still", "noch",
  "toujours", "まだ": :data:`~memrecall.engine.scoring.change_words.CURRENT_WORDS`),
  asked in the words of what its asker last knew.
* **Possible updates.** A document that a newer one among the first
  :attr:`Params.subject_window` may update (written :attr:`Params.subject_gap` days
  later, scoring :attr:`Params.subject_ratio` of it, saying alike
  :attr:`Params.doubt`: a weaker bar than a same-subject pair) is fast-delivered only
  together with that newer one when the newer one matches the most specific query term
  it matches, or when the two are about the same subject (:attr:`Match.newer`; else as
  before). A question asked in the older note's own words ("do we still park in the
  Building B basement?") keeps the older note first, and its update then goes in beside
  it, never behind it. The rendered dates tell the model which is current.
* **An update follows its note.** When the first document of a ranking has a newer one on
  its subject (:meth:`same_subject`, written :attr:`Params.subject_gap` days later or more)
  that the ranking lacks, the newest such goes right after it in :meth:`rank`, whether or
  not the query matches it (an update asked about in its older note's words). It goes before
  it (from anywhere in the ranking) when it says it changes something (:meth:`says_change`),
  or when it stands in for the note (:meth:`stands_in`): the note is no dated record, the
  two headings share a term that heads no third note, and, where the note's title has a
  term the update's lacks, the question names nothing that sets the note's heading apart
  from the update's. The memories the passages give a turn the words leave silent
  (:meth:`_clearly_nearest`) are placed alike. The fast result takes an update the words
  match where it goes before its note, and then before it (:meth:`_fast_placed`), whether
  or not they ranked it that high.
* **Explicit supersession.** A document whose ``supersedes`` names another
  (by relative path, or by name when exactly one other document has it) makes
  that one an older version: it ranks right after its successor when both
  match, and is never judged strong. Equal titles alone mean nothing.

The judgement (:class:`~memrecall.engine.scoring.judgement.Judgement`) is absolute:
it compares two figures of one document against calibrated thresholds, never
against the other documents. ``rank`` returns only documents judged at least
``weak``; ``fast`` only ``strong`` ones among the first two, a second one only
when it scores at least :attr:`Params.second` of the first and matches the most
specific query term the first one matches.

Rules about what a query is (issue 18, continued):

* **Common words only.** A document that only common query words match
  (:data:`~memrecall.engine.scoring.analysis.COMMON_WORDS`, the common CJK
  bigrams), or only pieces of a katakana word of which it has at most half the
  bigrams (``メン`` of ``ラーメン``, ``ルドカ`` of ``ワールドカップ`` in ``ワイルドカード``), is
  judged none (:func:`common_only`).
* **Answered at all.** A query (not a paste) whose best contending document explains
  less than :attr:`~memrecall.engine.scoring.judgement.Thresholds.answer_coverage` of
  its weight gets nothing (:func:`answered`): it is about something no memory knows
  ("a pivot table in Excel" against a memory that mentions a *table*).
* **One ordinary word.** A turn that is one word and nothing else, written as
  ordinary words are ("deploy", "Datenbank", "сервис", "数据库", "デプロイ", "ฐานข้อมูล"),
  gets nothing (:func:`one_word`): it asks nothing, even when one memory owns the word. A
  word written as names are (``VPN``, ``GitLab``) or an identifier (``billing-api``) is
  judged as below.
* **One word.** A query with a single topical term (besides common words) is
  answered only when one memory stands out: its runner-up, older same-subject
  versions left aside, scores under :attr:`Params.paste_margin` of it. Else nothing
  is returned ("deploy", "update"). When that term is a lone CJK bigram it is never
  fast-delivered: it may be a piece of a longer word of the memory (``服务`` of
  ``服务器``).
* **What kind of turn.** (:mod:`memrecall.engine.scoring.turn_words`, not for a paste.)
  A turn with thanks, a greeting or an apology ("Danke dir, das hat echt geholfen",
  "감사합니다") is answered only by documents judged strong, or weak ones that hold a topical
  term of a clause without the thanks; one whose names (capitalised words inside a
  sentence: "a pivot table in *Excel*") are mostly unknown to every memory only by strong
  ones, and one whose names the memories know only by strong ones or weak ones that hold a
  name (not an acronym: *CI*, *PRs*), or that may update one that does
  (:func:`~memrecall.engine.scoring.time_rules.later_alike`). A question about the asker's
  home, family or life outside work ("家里路由器的密码", "la macchina del caffè di casa
  mia", the weather) is answered only by documents that speak of it too, or that hold a
  topical term of a clause without it, unless it also names the office, the job or the team
  ("the office VPN from home").
* **Small talk by its kind.** (:mod:`memrecall.engine.scoring.turn_model`, not for a paste,
  nor for a turn that names work.) A turn the turn model is confident is small talk (a recipe,
  a trip, a trivia question, a phone setting: at least its calibrated cutoff) is answered only
  by documents judged strong. On plain small talk (at least its second cutoff, ``plain``) a
  strong document must also explain :attr:`Params.talk_share` of the turn, unless another
  document does ("reverse a string in *python*" is not about the Python versions memory).
  On a turn the semantic reader only leans to call small talk (from its ``lean``, under the
  cutoff), documents judged weak are held back when none ranked is strong and none explains
  :attr:`Params.low_share` of the turn.
* **Vietnamese syllables.** Two adjacent words of Vietnamese text are a term of their own
  (:func:`~memrecall.engine.scoring.analysis.syllable_pairs`, kind ``id``: ``mật khẩu`` is
  ``mat_khau``), and a document that a Vietnamese query matches only by single syllables,
  with no pair and no word of another language, is judged none
  (:func:`~memrecall.engine.scoring.query_rules.loose_syllables`): folded, *mật* (secret) is
  *mặt* (face).
* **Runs of CJK bigrams.** In the ordering of the first
  2 × :attr:`Params.subject_window` (never in the judgement), a bigram that
  overlaps, right after it, another bigram of the query the document also has
  counts :data:`RUN_CREDIT` of its value: ``系统里`` is one word and a
  postposition, not two words.

These rules are module functions of :mod:`memrecall.engine.scoring.query_rules`
(:func:`common_only`, :func:`count_runs`, :func:`lone_term`, :func:`one_word`,
:func:`stands_out`, re-exported here) so that the store's ranker
(:class:`memrecall.store.source.StoreRanker`) applies them as this index does; inflected
forms are matched by :mod:`memrecall.engine.scoring.variants`.

Compound identifiers (``pg-prod-02``, ``pg_isready``, ``ledger-db.internal``:
:func:`~memrecall.engine.scoring.analysis.identifier_counts`) are terms of their own
beside their pieces, in documents and queries alike: a host, a command or a setting
named exactly is the most specific thing a paste and a memory can share. They do not
count in a field's length, in what two documents say alike (:meth:`FieldedIndex.similarity`),
in the one-word rule, or (when no memory has them) in the query's weight.

Pasted queries (more distinct terms than
:data:`~memrecall.engine.scoring.analysis.MAX_QUERY_TERMS`): the scorer keeps the
most specific terms (:meth:`FieldedIndex.query_terms`), the analysis weighs down
the words on most lines of a paste, and only a first document that stands out
(its runner-up under :attr:`Params.paste_margin` of it) may be judged strong.

Three parts, so that a catalog can cache the expensive ones:

* :class:`~memrecall.engine.scoring.features.DocumentFeatures` (per document,
  query- and pool-independent): the terms of each field, counted
  (:mod:`memrecall.engine.scoring.features`, with :class:`Params`).
* :class:`~memrecall.engine.scoring.pool.FieldedPool` (per pool, changed one
  document at a time): document frequencies, field lengths and postings.
* :class:`FieldedIndex` (here): an immutable view of a pool that ranks and
  judges, made over a catalog's pool (:meth:`FieldedIndex.over`), from a
  sequence of features (:meth:`FieldedIndex.from_features`), or straight from
  documents (:meth:`FieldedIndex.of`).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection, Iterable, Sequence

import attrs

from memrecall.engine.render import MAX_FAST_DOCS
from memrecall.engine.scoring.analysis import (
    QueryTerm,
    is_plain_word,
    query_text,
    query_words,
    vietnamese_words,
    words_among,
)
from memrecall.engine.scoring.change_words import asks_current, declares_change
from memrecall.engine.scoring.features import (
    FIELDS,
    MAX_ANALYSED_CHARS,
    MAX_ANALYSED_HEADING_CHARS,
    DocumentFeatures,
    Params,
    no_pause,
    pool_idf,
)
from memrecall.engine.scoring.freshness import FreshnessPrior
from memrecall.engine.scoring.judgement import Judgement, Thresholds, default_thresholds
from memrecall.engine.scoring.passages import (
    CLOSE_DEPTH,
    PassageEmbedder,
    PassageMatrix,
    joined,
    nearer_first,
    script_of,
    thinly_held,
    unpack,
)
from memrecall.engine.scoring.pool import (
    TERM_CACHE,
    FieldedPool,
    PoolStatistics,
    TermValues,
    rows_of,
)
from memrecall.engine.scoring.pool_image import features_in
from memrecall.engine.scoring.query_rules import (
    RUN_CREDIT,
    MatchedTerm,
    answered,
    beside_owner,
    common_only,
    count_runs,
    heaviest_terms,
    lone_term,
    loose_syllables,
    on_fitted_scale,
    one_word,
    select_query_terms,
    stands_out,
)
from memrecall.engine.scoring.silent_turns import answer_silent
from memrecall.engine.scoring.time_rules import (
    asked_keys,
    fast_with_update,
    later_alike,
    later_versions,
    move_newer_up,
    one_subject,
    possible_updates,
    stands_in,
    subject_of,
    unclear,
    updates_placed,
)
from memrecall.engine.scoring.time_rules import similarity as alike
from memrecall.engine.scoring.turn_judgement import explains_turn, holds_little, in_turn
from memrecall.engine.scoring.turn_model import Reading, default_model, read_turn
from memrecall.engine.scoring.turn_semantic import OnceEmbedded, SemanticTurns, TurnReader
from memrecall.engine.scoring.turn_words import elsewhere, strong_only
from memrecall.engine.scoring.variants import index_terms, is_variant
from memrecall.events.documents import MemoryDocument

__all__ = [
    "FIELDS",
    "MAX_ANALYSED_CHARS",
    "MAX_ANALYSED_HEADING_CHARS",
    "RUN_CREDIT",
    "DocumentFeatures",
    "FieldedIndex",
    "FieldedPool",
    "Match",
    "MatchedTerm",
    "Params",
    "PoolStatistics",
    "answered",
    "common_only",
    "count_runs",
    "heaviest_terms",
    "index_terms",
    "is_variant",
    "lone_term",
    "no_pause",
    "one_word",
    "select_query_terms",
    "stands_out",
]

_MERGED_CACHE = 250_000
"""At most this many merged postings (of terms with variants) are kept per pool."""

_CHUNK = 512
"""Documents (or postings) handled between two pacing checkpoints."""

_WALK_STEPS = 16
"""Steps of a walk over merged postings that cost about one document's own lookup
(:meth:`FieldedIndex._add_where_matched`: four field rows per variant, then the value)."""


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
    newer: int | None = None
    """A newer document among the first ranked that may be this one's update (pool
    position; :meth:`FieldedIndex.similarity`), or None. When it answers what this one
    answers, the fast path delivers this document only together with it."""
    outranked: bool = False
    """An older version that a newer document on its subject ranked above for this query
    (fresher facts first): if that one is left out, its update goes before this one
    (:func:`~memrecall.engine.scoring.time_rules.with_update`)."""


class FieldedIndex:
    """The ``fielded`` scorer over a fixed pool (input order = pool order).

    Same ranking interface as :class:`~memrecall.engine.scoring.reference.ReferenceIndex`
    (``rank(query, limit, *, exclude)``), plus :meth:`judge`, :meth:`fast` and
    :meth:`matches`. Built from scratch from features (or documents), or as a
    view of a :class:`FieldedPool` (:meth:`FieldedPool.view`); either way a
    term's values are computed the first time a query needs them.
    """

    name = "fielded"

    def __init__(
        self,
        features: Sequence[DocumentFeatures],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
        checkpoint: Callable[[], None] = no_pause,
    ) -> None:
        pool = FieldedPool(params=params)
        for start in range(0, len(features), _CHUNK):
            checkpoint()
            pool.extend(enumerate(features[start : start + _CHUNK], start))
        pool.publish()
        self._setup(pool, range(len(pool)), thresholds, checkpoint)

    _turns: TurnReader | None

    @property
    def turns(self) -> TurnReader:
        """How likely a turn is small talk: the reader the index was made with
        (:mod:`memrecall.sources.turn_reader` gives the runtime's), else the shipped lexical
        model (:mod:`~memrecall.engine.scoring.turn_model`, read when first needed)."""
        return default_model() if self._turns is None else self._turns

    @classmethod
    def over(
        cls,
        pool: FieldedPool,
        order: Sequence[int],
        *,
        thresholds: Thresholds | None = None,
        checkpoint: Callable[[], None] = no_pause,
        turns: TurnReader | None = None,
        passages: bool = False,
    ) -> FieldedIndex:
        """An immutable index over ``pool``'s documents under ``order``'s keys, in that order.

        ``order`` must name every key of the pool exactly once. The pool copies
        what the index reads before its next change, so the index stays valid.
        ``turns`` replaces the shipped lexical turn model; ``passages`` says the documents
        were analysed with a passage embedder (recall across languages).
        """
        if len(order) != len(pool):
            raise ValueError("a view must order every document of the pool")
        pool.publish()
        index = cls.__new__(cls)
        index._setup(pool, order, thresholds, checkpoint)
        index._turns = turns
        index._passages = passages
        return index

    def _setup(
        self,
        pool: FieldedPool,
        order: Sequence[int],
        thresholds: Thresholds | None,
        checkpoint: Callable[[], None],
    ) -> None:
        # Everything read from ``pool`` here is the containers of this moment: the pool
        # copies them before its next change (FieldedPool._unshare).
        features = pool._features
        self._checkpoint = checkpoint
        self.params = pool.params
        self.thresholds = thresholds or default_thresholds()
        self._turns = None
        self._keys_order = order
        self._doc_features = features
        self._df = pool._df
        self._field_postings = pool._postings
        self._base = pool._base
        self._lengths = (pool._lengths0, pool._lengths1, pool._lengths2, pool._lengths3)
        self._vocabulary = pool._vocabulary
        self._position: dict[int, int] | None = (
            None if isinstance(order, range) else dict(zip(order, range(len(order)), strict=True))
        )
        self._mtimes = list(map(pool._mtimes.__getitem__, order))
        count = max(len(order), self.params.min_pool)
        self._count = count
        p = self.params
        averages = pool._averages()
        self._averages = averages
        self._term_cache = pool._term_cache
        # BM25F length normalisation per field, for each length present in the pool
        self._norm_tables = tuple(
            {
                length: p.weights[i] / (1.0 - p.b[i] + p.b[i] * length / averages[i])
                for length in pool._length_counts[i]
            }
            for i in range(len(FIELDS))
        )
        self._idf_max = pool_idf(count, 0)
        # what the thresholds judge is read at the calibration corpus's size (fitted_pool)
        self._fitted_count = max(len(order), p.fitted_pool)
        self._fitted_max = pool_idf(self._fitted_count, 0) if self._fitted_count > count else None
        self._values: dict[str, tuple[Sequence[int], tuple[float, ...]]] = {}
        self._variants: dict[str, list[tuple[str, float]]] = {}
        self._merged: dict[str, tuple[Sequence[int], Sequence[float]]] = {}
        self._merged_size = 0
        # explicit supersession (``supersedes`` links): older position -> newer position
        where = self._where
        # several successors: the newest (then the first in order) counts
        self._successor = {
            where(old): min((where(n) for n in new), key=lambda i: (-self._mtimes[i], i))
            for old, new in pool._successors().items()
        }
        self._drop_cycles()
        # the freshness prior, per position: 1 + freshness × 0.5 ** (age / half life)
        newest = max(self._mtimes, default=0.0)
        half_life = p.half_life * 86_400.0
        self._prior = FreshnessPrior(self._mtimes, newest, p.freshness, half_life)
        self._subjects: dict[int, tuple[frozenset[str], float]] = {}
        self._later: dict[int, tuple[int, ...]] = {}
        self._matrix: PassageMatrix | None = None
        self._passages = False

    def _drop_cycles(self) -> None:
        """Links that come back to where they started (a -> b -> c -> a) supersede nothing."""
        successor = self._successor
        cyclic: set[int] = set()
        for start in successor:
            seen = [start]
            at = successor.get(start)
            while at is not None and at not in seen and at not in cyclic:
                seen.append(at)
                at = successor.get(at)
            if at is not None and at in seen:
                cyclic.update(seen[seen.index(at) :])
        for i in cyclic:
            del successor[i]

    def _where(self, key: int) -> int:
        return key if self._position is None else self._position[key]

    @classmethod
    def of(
        cls,
        documents: Sequence[MemoryDocument],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
        checkpoint: Callable[[], None] = no_pause,
        turns: TurnReader | None = None,
        passage: PassageEmbedder | None = None,
    ) -> FieldedIndex:
        """Index documents, analysing each once; ``turns`` replaces the shipped turn model,
        ``passage`` embeds each document's passage (recall across languages:
        :mod:`~memrecall.engine.scoring.passages`)."""
        index = cls(
            [DocumentFeatures.of(d, checkpoint=checkpoint, passage=passage) for d in documents],
            params=params,
            thresholds=thresholds,
            checkpoint=checkpoint,
        )
        index._turns = turns
        index._passages = passage is not None
        return index

    @classmethod
    def from_features(
        cls,
        features: Iterable[DocumentFeatures],
        *,
        params: Params | None = None,
        thresholds: Thresholds | None = None,
        checkpoint: Callable[[], None] = no_pause,
        turns: TurnReader | None = None,
        passages: bool = False,
    ) -> FieldedIndex:
        """Index pre-analysed documents (e.g. cached per document by a catalog); ``turns``
        replaces the shipped lexical turn model; ``passages`` says they were analysed with a
        passage embedder (recall across languages)."""
        index = cls(list(features), params=params, thresholds=thresholds, checkpoint=checkpoint)
        index._turns = turns
        index._passages = passages
        return index

    def __len__(self) -> int:
        return len(self._mtimes)

    @property
    def features(self) -> tuple[DocumentFeatures, ...]:
        """Each document's features, in pool order."""
        features = self._doc_features
        return tuple(features_in(features, key) for key in self._keys_order)

    def _idf(self, term: str) -> float | None:
        df = self._df.get(term)
        if df is None:
            return None
        return pool_idf(self._count, df)

    def _fitted_idf(self, term: str) -> float | None:
        """A term's idf as if the pool held :attr:`Params.fitted_pool` documents."""
        df = self._df.get(term)
        if df is None:
            return None
        return pool_idf(self._fitted_count, df)

    def _judged(
        self, query: str, scores: dict[int, float], mass: float
    ) -> tuple[dict[int, float], float, float]:
        """``scores``, the query's weight and the largest idf, read on the scale the
        thresholds were fitted on (:attr:`Params.fitted_pool`): each index term's value times
        its idf there over its idf here, the best credited variant kept. A pool that large
        gives its own figures back."""
        fitted_max = self._fitted_max
        if fitted_max is None:
            return scores, mass, self._idf_max
        judged, weight = on_fitted_scale(
            query,
            scores,
            self.query_terms(query)[0],
            keys=self._keys,
            idf=self._idf,
            fitted_idf=self._fitted_idf,
            values=lambda key: zip(*self._term_postings(key), strict=True),
            fitted_max=fitted_max,
            saturation=self.params.saturation,
        )
        return judged, weight, fitted_max

    def _term_postings(self, term: str) -> tuple[Sequence[int], tuple[float, ...]]:
        """An index term's documents (pool positions) and values, computed once per index.

        Per document the fields are added in order, as one pass over the
        document would: ``tf = Σ count × norm(field length)``, then
        ``idf × tf / (k1 + tf)``. Values an earlier view of the same pool
        computed from the same rows, averages and idf are reused.
        """
        cached = self._values.get(term)
        if cached is not None:
            return cached
        idf = self._idf(term)
        if idf is None:
            return (), ()
        rows = rows_of(self._field_postings, self._base, term)
        averages = tuple(a if row else None for a, row in zip(self._averages, rows, strict=True))
        known = self._term_cache.get(term)
        if (
            known is not None
            and known.idf == idf
            and known.averages == averages
            and all(a is b for a, b in zip(known.rows, rows, strict=True))
        ):
            keys, values = known.keys, known.values
        else:
            keys, values = self._compute(rows, idf)
            if len(self._term_cache) < TERM_CACHE or term in self._term_cache:
                self._term_cache[term] = TermValues(rows, averages, idf, keys, values)
        position = self._position
        docs = keys if position is None else tuple(map(position.__getitem__, keys))
        result = (docs, values)
        if len(self._values) < 50_000:
            self._values[term] = result
        return result

    def _compute(
        self, rows: tuple[dict[int, int] | None, ...], idf: float
    ) -> tuple[tuple[int, ...], tuple[float, ...]]:
        tfs: dict[int, float] = {}
        get = tfs.get
        for i, row in enumerate(rows):
            if not row:
                continue
            lengths = self._lengths[i]
            norms = self._norm_tables[i]
            for key, count in row.items():
                tfs[key] = get(key, 0.0) + count * norms[lengths[key]]
            self._checkpoint()
        k1 = self.params.k1
        return tuple(tfs), tuple([idf * tf / (k1 + tf) for tf in tfs.values()])

    def _keys(self, term: str, kind: str) -> list[tuple[str, float]]:
        """Index terms that count for a query term, with their credit."""
        cached = self._variants.get(term)
        if cached is not None:
            return cached
        keys = index_terms(
            term, kind, self._df, self._vocabulary, self.params.variant, plain=is_plain_word
        )
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
            merged = self._term_postings(keys[0][0])
        else:
            best: dict[int, float] = {}
            for key, credit in keys:
                docs, values = self._term_postings(key)
                for doc, value in zip(docs, values, strict=True):
                    credited = value * credit
                    if credited > best.get(doc, 0.0):
                        best[doc] = credited
                self._checkpoint()
            merged = (tuple(best), tuple(best.values()))
            if self._merged_size + len(best) > _MERGED_CACHE:
                return merged
            self._merged_size += len(best)
        if len(self._merged) < 50_000:
            self._merged[term] = merged
        return merged

    def _score(self, query: str) -> tuple[dict[int, float], float]:
        """Every matching document's score, and the query's own weight (for coverage)."""
        scores, mass, _, _ = self._scored(query)
        return scores, mass

    def query_terms(self, query: str) -> tuple[list[QueryTerm], float, bool]:
        """The terms this index scores for ``query``, the query's own weight, and whether
        the query was cut to its most specific terms (a paste): :func:`select_query_terms`."""
        return select_query_terms(query, self._idf, self._keys, self._idf_max)

    def _scored(
        self, query: str, *, floor: bool = False
    ) -> tuple[dict[int, float], float, list[MatchedTerm], bool]:
        """:meth:`_score`, the query's terms the pool knows (:class:`MatchedTerm`: term, kind,
        weight × idf, ...), and whether the query is a paste (see :meth:`query_terms`).

        With ``floor``, documents that cannot reach :meth:`_floor` are left out of the
        scores (the rest are exactly as without it): a query term whose best possible
        contribution, added to those of the terms below it, stays under the floor cannot
        bring a document up to it on its own (MaxScore). Such terms only add to the
        documents the other terms matched, looked up one by one, so a word found in
        every document costs what the query's rarer words matched, not a pass over the
        pool. Each kept document's sum is taken in query order, as without the floor.
        """
        scores: dict[int, float] = {}
        get = scores.get
        selected, mass, pasted = self.query_terms(query)
        mass = min(mass, self.params.saturation * self._idf_max)
        optional = self._optional(selected, mass) if floor else set()
        candidates: set[int] = set()
        for position, qt in enumerate(selected):
            if position not in optional:
                candidates.update(self._credited(qt.term, qt.kind)[0])
        terms = []
        for position, qt in enumerate(selected):
            idf = self._idf(qt.term)
            weight = qt.weight
            if position in optional:
                if self._add_where_matched(qt.term, qt.kind, weight, candidates, scores):
                    terms.append(MatchedTerm.of(qt, weight * (idf or 0.0)))
                self._checkpoint()
                continue
            docs, values = self._credited(qt.term, qt.kind)
            if docs:
                terms.append(MatchedTerm.of(qt, weight * (idf or 0.0)))
            for doc, value in zip(docs, values, strict=True):
                scores[doc] = get(doc, 0.0) + weight * value
            self._checkpoint()
        return scores, mass, terms, pasted

    def _optional(self, selected: Sequence[QueryTerm], mass: float) -> set[int]:
        """Positions of the query terms that together cannot lift a document to the floor.

        A term's bound is its weight times its largest ``idf × credit`` over its index
        terms (a document's value for an index term is ``idf × tf / (k1 + tf)``, below
        its idf); terms are taken smallest bound first while the bounds' sum (with a
        margin for rounding) stays under the floor. No posting is read.
        """
        lowest = self._floor(mass) * (1 - 1e-9)
        bounds = sorted(
            (qt.weight * self._bound(qt.term, qt.kind), i) for i, qt in enumerate(selected)
        )
        optional: set[int] = set()
        total = 0.0
        for bound, position in bounds:
            if (total + bound) * (1 + 1e-9) >= lowest:
                break
            total += bound
            optional.add(position)
        return optional

    def _bound(self, term: str, kind: str) -> float:
        """An upper bound of a query term's credited value in any document (0 when none)."""
        return max(
            ((self._idf(key) or 0.0) * credit for key, credit in self._keys(term, kind)),
            default=0.0,
        )

    def _add_where_matched(
        self, term: str, kind: str, weight: float, where: set[int], scores: dict[int, float]
    ) -> bool:
        """Add a query term's credited value to the documents in ``where`` that have it;
        True if the term matches any document at all.

        Few documents: each one's value is computed from its own counts, with the
        operations of :meth:`_compute` in the same order (so the same bits), and the
        best credited variant kept as :meth:`_credited` keeps it. Many: the merged
        postings are walked, and so are postings already merged when ``where`` is not
        tiny against them (a step of that walk costs a fraction of one document's
        lookup; the run rule asks for a handful of documents, MaxScore for many).
        """
        keys = self._keys(term, kind)
        matched = sum(self._df.get(key, 0) for key, _ in keys)
        if not matched:
            return False
        get = scores.get
        merged = self._merged.get(term)
        if len(where) * 4 >= matched or (
            merged is not None and len(where) * _WALK_STEPS >= len(merged[0])
        ):
            docs, values = self._credited(term, kind)
            for doc, value in zip(docs, values, strict=True):
                if doc in where:
                    scores[doc] = get(doc, 0.0) + weight * value
            return True
        k1 = self.params.k1
        rows = [
            (rows_of(self._field_postings, self._base, key), self._idf(key), credit)
            for key, credit in keys
        ]
        exact = len(rows) == 1 and rows[0][2] == 1.0
        order = self._keys_order
        for doc in sorted(where):
            pool_key = order[doc]
            best = 0.0
            for field_rows, idf, credit in rows:
                tf = 0.0
                found = False
                for i, row in enumerate(field_rows):
                    count = row.get(pool_key) if row else None
                    if count is not None:
                        tf = tf + count * self._norm_tables[i][self._lengths[i][pool_key]]
                        found = True
                if not found or idf is None:
                    continue
                value = idf * tf / (k1 + tf)
                if exact:
                    best = value
                elif value * credit > best:
                    best = value * credit
            if best > 0.0:
                scores[doc] = get(doc, 0.0) + weight * best
        return True

    def _floor(self, mass: float, idf_max: float | None = None) -> float:
        """The lowest score a document judged weak (or better) can have for this query
        (``idf_max``: the largest idf on the scale it is judged, by default the pool's)."""
        t = self.thresholds
        return max(t.weak_coverage * mass, t.weak_evidence * (idf_max or self._idf_max))

    def _ranked(
        self,
        query: str,
        exclude: Collection[int],
        limit: int | None,
        *,
        floor: bool,
        keep_none: bool = False,
        turns: TurnReader | None = None,
    ) -> list[Match]:
        """Matches best first; with ``floor``, only those that can be judged weak or better.

        ``keep_none`` keeps documents judged ``none`` among the first ``limit`` (so
        callers can derive several answers from one pass); ``turns`` reads the turn
        instead of :attr:`turns` (one call's reader: :meth:`_one_turn`).
        """
        fitted = self._fitted_max is not None
        # MaxScore skips documents under the floor on the pool's scale: not the judged one
        scores, mass, terms, pasted = self._scored(query, floor=floor and not fitted)
        if not scores:
            return []
        # coverage and evidence are judged on the calibration's scale (Params.fitted_pool)
        judged, mass, idf_max = self._judged(query, scores, mass)
        lowest = self._floor(mass, idf_max) * (1 - 1e-9) if floor else 0.0
        own = {
            i: v for i, v in scores.items() if v > 0.0 and judged[i] >= lowest and i not in exclude
        }
        muted = self._common_only(own, terms)
        words = query_words(query)
        if not pasted:

            def holders(term: str, kind: str) -> Sequence[int]:
                return self._credited(term, kind)[0]

            muted.update(elsewhere(own, query, words, holders))
            muted.update(loose_syllables(own, terms, holders, vietnamese_words(query_text(query))))
        if floor:
            for i in muted:
                del own[i]
        prior = self._prior
        order = {i: v * prior[i] for i, v in own.items()}
        successor = self._successor
        window = self.params.subject_window
        wanted = None if limit is None else max(limit, window)
        if successor:
            self._follow(order, successor)
        mtimes = self._mtimes

        def key(i: int) -> tuple[float, float, int]:
            return (-order[i], -mtimes[i], i)

        if wanted is not None and len(order) > 2 * wanted:
            ranked = heapq.nsmallest(wanted, order, key=key)
        else:
            ranked = sorted(order, key=key)
        # the run rule recounts the first 2 × subject_window, which then compete again
        last = ranked[-1] if ranked else None
        before = None if last is None else order[last]
        if self._count_runs(order, terms, ranked[: 2 * window]):
            if successor:
                self._follow(order, successor)
            ranked.sort(key=key)
            # values only went down: the documents left out stay behind an unchanged last one
            moved = ranked[-1] != last or order[ranked[-1]] != before
            if wanted is not None and len(ranked) == wanted and moved:
                least, kept = order[ranked[-1]], set(ranked)
                others = [i for i, v in order.items() if v >= least and i not in kept]
                if others:
                    ranked = sorted(ranked + others, key=key)[:wanted]
        # a paste shows the state the user is in; a question that asks whether something
        # still holds is asked in the words of what its asker last knew: either way the
        # newer of two notes on one subject says what holds now
        newest_wanted = pasted or asks_current(words)
        limited = None if pasted else strong_only(query, words, lambda t, k: bool(self._keys(t, k)))

        # what the turn reader makes of the turn (turn_judgement: read once, when needed)
        def reading() -> Reading:
            reader = self.turns if turns is None else turns
            return Reading.QUESTION if pasted else read_turn(reader, query, words)

        let_through: set[int] = set()
        for kind, term in limited or ():
            let_through.update(self._credited(term, kind)[0])
        stale = self._same_subject(ranked, order, terms, newest_wanted=newest_wanted)
        outranked = frozenset(stale)
        if pasted:
            stale.update(self._unclear(ranked, order, stale))
        else:
            lone = lone_term(terms, lambda: self.query_terms(query)[0])
            # Contenders: documents that could be answers (over the weak floor, not muted),
            # with or without ``floor``, so that rank() and matches() decide alike; an older
            # version does not compete with its update.
            answers = self._floor(mass, idf_max) * (1 - 1e-9)
            best = max(
                (judged[i] for i in own if i not in muted and judged[i] >= answers), default=0.0
            )
            if one_word(query) or not answered(best, mass, self.thresholds):
                muted.update(ranked)
            elif lone is not None:
                contenders = [
                    i for i in ranked if i not in stale and i not in muted and judged[i] >= answers
                ]
                if not stands_out(contenders, order, self.params.paste_margin):
                    muted.update(ranked)
                else:  # the memory that owns the word answers, with its older versions
                    passing = beside_owner(ranked, contenders[:1], stale, self.same_subject)
                    muted.update(passing)
                    if floor:  # not answers: they take no place within the limit
                        ranked = [i for i in ranked if i not in passing]
                    if lone.kind != "word":
                        stale.update(ranked)  # a lone bigram may be a piece of a longer word
        newer = self._doubted(ranked, order)
        if let_through:  # an update of a memory let through speaks for it
            let_through.update(
                later_alike(
                    let_through,
                    ranked,
                    mtime=self._mtimes.__getitem__,
                    similarity=self.similarity,
                    params=self.params,
                )
            )
        judge = self.thresholds.judge
        every = []  # (document, coverage, judgement by the thresholds alone)
        for i in ranked:
            coverage = min(1.0, judged[i] / mass) if mass > 0 else 0.0
            by_thresholds = Judgement.NONE if i in muted else judge(coverage, judged[i] / idf_max)
            every.append((i, coverage, by_thresholds))
        # whether a memory explains the turn is judged over every ranked one, so that the
        # fast result and a longer ranking agree on it
        first = every if limit is None else every[:limit]
        talk_share = self.params.talk_share
        judgements = in_turn(
            first,
            read=reading,
            talk_share=talk_share,
            explained=explains_turn([(c, j) for _, c, j in every], talk_share),
            little=holds_little([(c, j) for _, c, j in every], self.params.low_share),
            let_through=None if limited is None else let_through,
            older=successor.keys() | stale,
        )
        out = []
        for (i, coverage, _), judgement in zip(first, judgements, strict=True):
            if floor and not keep_none and judgement is Judgement.NONE:
                continue
            out.append(
                Match(
                    i,
                    own[i],
                    judgement,
                    coverage,
                    judged[i] / idf_max,
                    newer.get(i),
                    i in outranked,
                )
            )
        return out

    def _count_runs(
        self, order: dict[int, float], terms: Sequence[MatchedTerm], among: Collection[int]
    ) -> bool:
        """:func:`count_runs` over this pool."""

        def values(term: str, kind: str, where: set[int]) -> dict[int, float]:
            found: dict[int, float] = {}
            self._add_where_matched(term, kind, 1.0, where, found)
            return found

        return count_runs(order, terms, among, values, self._prior.__getitem__)

    def _common_only(self, own: dict[int, float], terms: Sequence[MatchedTerm]) -> set[int]:
        """:func:`common_only` over this pool.

        Only documents whose score the common words and katakana pieces alone could
        reach are looked at: a score above the sum of those terms' bounds
        (:meth:`_bound`) has a topical term in it.
        """
        reach = sum(t.weight * self._bound(t.term, t.kind) for t in terms if t.common or t.fragment)
        if reach <= 0.0:
            return set()
        reach *= 1 + 1e-9  # the scores' sums are rounded in another order
        return common_only(
            [i for i, v in own.items() if v <= reach],
            terms,
            lambda term, kind: self._credited(term, kind)[0],
            lambda t: sum(self._df.get(key, 0) for key, _ in self._keys(t.term, t.kind)),
        )

    def _unclear(
        self, ranked: list[int], order: dict[int, float], older: Collection[int] = ()
    ) -> list[int]:
        """:func:`~memrecall.engine.scoring.time_rules.unclear` with this scorer's margin."""
        return unclear(ranked, order, older, self.params.paste_margin)

    @staticmethod
    def _follow(order: dict[int, float], successor: dict[int, int]) -> None:
        """Rank each explicitly superseded document right after its successor (in place).

        Along a chain of links (c superseded by b, b by a) the capped values are
        computed from the newest end, so the result does not depend on the order
        documents are visited; a cycle of links caps nothing beyond itself.
        """
        done: dict[int, float] = {}

        def capped(i: int, path: set[int]) -> float:
            known = done.get(i)
            if known is not None:
                return known
            value = order[i]
            new = successor.get(i)
            if new is not None and new in order and new not in path:
                path.add(i)
                value = min(value, capped(new, path) * (1 - 1e-9))
            done[i] = value
            return value

        for i in [i for i in order if i in successor]:
            capped(i, set())
        order.update(done)

    def _subject(self, i: int) -> tuple[frozenset[str], float]:
        """A document's subject terms (title, description, rendered body) and their idf sum
        (:func:`~memrecall.engine.scoring.time_rules.subject_of`)."""
        known = self._subjects.get(i)
        if known is None:
            known = subject_of(features_in(self._doc_features, self._keys_order[i]), self._idf)
            if len(self._subjects) < 50_000:
                self._subjects[i] = known
        return known

    def same_subject(self, a: int, b: int) -> bool:
        """True when two documents (pool positions) are about the same subject: the
        subject terms they share weigh (by idf) at least :attr:`Params.subject` of the
        terms either has. Measured against both, not against the smaller one, so that a
        broad note (a retro touching ten topics) is not an older version of each short
        note on one of its topics. Where both have a passage embedding, also when their
        subjects are at least :attr:`Params.doubt` alike, their titles differ, and their
        passages' cosine is at least :attr:`Params.subject_cosine`."""
        store, keys = self._doc_features, self._keys_order

        def pair() -> tuple[DocumentFeatures, DocumentFeatures]:
            return features_in(store, keys[a]), features_in(store, keys[b])

        return one_subject(self.similarity(a, b), self.params, pair if self._passages else None)

    def similarity(self, a: int, b: int) -> float:
        """How much two documents (pool positions) say alike: the idf weight of the
        subject terms (title, description, rendered body) both have over that of the
        terms either has (a weighted Jaccard index, 0 to 1)."""
        return alike(self._subject(a), self._subject(b), self._idf)

    def _doubted(self, ranked: list[int], order: dict[int, float]) -> dict[int, int]:
        """Documents among the first :attr:`Params.subject_window` that a newer one there
        may update, with that newer one (the best ranked if several): written
        :attr:`Params.subject_gap` days later or more, scoring at least
        :attr:`Params.subject_ratio` of it, and saying alike at least :attr:`Params.doubt`
        (:meth:`similarity`). When that newer one also matches the most specific query
        term the older one matches (:func:`heaviest_terms`, what any second fast
        document must match), the fast path puts the older one in the prompt only beside
        it: a fact a newer note may have changed goes in with that note, and the dates
        rendered with both tell which is current."""
        return possible_updates(
            ranked,
            order,
            mtime=self._mtimes.__getitem__,
            similarity=self.similarity,
            params=self.params,
        )

    def _same_subject(
        self,
        ranked: list[int],
        order: dict[int, float],
        terms: Sequence[MatchedTerm],
        *,
        newest_wanted: bool = False,
    ) -> set[int]:
        """Fresher facts first: move a newer same-subject document above an older one.

        Two documents written at least :attr:`Params.subject_gap` days apart are
        a same-subject pair for this query when their subjects overlap
        (:meth:`same_subject`) and they answer the query with the same words:
        the query terms both match weigh at least :attr:`Params.subject_query`
        of those either matches (weight × idf), or of those the newer one matches
        when it says it changes something (:func:`declares_change`).
        Works in place on the first :attr:`Params.subject_window` of ``ranked``;
        returns the older documents of pairs whose newer one now ranks above
        them (never judged strong).
        """
        return move_newer_up(
            ranked,
            order,
            terms,
            mtime=self._mtimes.__getitem__,
            same_subject=self.same_subject,
            holders=lambda term, kind: self._credited(term, kind)[0],
            says_change=self.says_change,
            params=self.params,
            newest_wanted=newest_wanted,
        )

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
        """Indices of the best ``limit`` documents judged at least weak, best first, the
        first one's newest update right after it (before it when a newer one outranked the
        first for this query, or the update says it changes something: :meth:`_with_update`)."""
        turns, once = self._one_turn()
        kept = self._nearer_first(
            query, self._ranked(query, exclude, limit, floor=True, turns=turns), once
        )
        ranking = self._nearest_too(
            query, kept, self._with_update(query, kept, exclude, limit), exclude, limit, once=once
        )
        return ranking or self._clearly_nearest(query, exclude, limit, turns, once)

    def _holders(self, term: str) -> set[int]:
        """The documents (pool positions) that have an index term, from its postings alone
        (no values computed)."""
        keys: set[int] = set()
        for row in rows_of(self._field_postings, self._base, term):
            if row:
                keys.update(row)
        position = self._position
        return keys if position is None else {position[k] for k in keys}

    def _with_update(
        self, query: str, matches: list[Match], exclude: Collection[int], limit: int
    ) -> list[int]:
        """An update follows its note (:func:`~memrecall.engine.scoring.time_rules.with_update`):
        the newest document on the first one's subject written later
        (:func:`~memrecall.engine.scoring.time_rules.later_versions`) goes right after it,
        whether or not the query matches it; before it when the first is
        :attr:`Match.outranked`, or the update says it changes something
        (:meth:`says_change`) or stands in for the note (:meth:`stands_in`), and in those
        two cases also when the words ranked the update below it
        (:func:`~memrecall.engine.scoring.time_rules.said_update_first`). The fast path
        takes an update the words match where it goes before its note
        (:meth:`_fast_placed`)."""
        outranked = bool(matches) and matches[0].outranked
        return self._updates_placed(query, [m.index for m in matches], outranked, exclude, limit)

    def _updates_placed(
        self, query: str, kept: list[int], outranked: bool, exclude: Collection[int], limit: int
    ) -> list[int]:
        """:meth:`_with_update` over positions: the words' ranking, or the memories the
        passages give a silent turn (:meth:`_clearly_nearest`)."""
        return updates_placed(
            kept,
            limit,
            later=self._later_versions,
            excluded=lambda j: j in exclude,
            goes_first=lambda note, j: self._goes_first(query, note, j),
            outranked=outranked,
        )

    def _goes_first(self, query: str, note: int, update: int) -> bool:
        """Whether ``update``, a later version of ``note``, goes before it for ``query``: it
        says it changes something (:meth:`says_change`) or stands in (:meth:`stands_in`)."""
        return self.says_change(update) or self.stands_in(query, note, update)

    def _fast_placed(self, fast: list[int], query: str, exclude: Collection[int]) -> list[int]:
        """The fast result with its first memory's update before it where the ranking puts
        it there and the words match it
        (:func:`~memrecall.engine.scoring.time_rules.fast_with_update`)."""
        return fast_with_update(
            fast,
            max(len(fast), MAX_FAST_DOCS),
            later=self._later_versions,
            excluded=lambda j: j in exclude,
            goes_first=lambda note, j: self._goes_first(query, note, j),
            matched=lambda j: self.terms_matching(query, j) > 0,
        )

    def stands_in(self, query: str, note: int, update: int) -> bool:
        """:func:`~memrecall.engine.scoring.time_rules.stands_in` for two pool positions
        (``update`` a later version of ``note``), asked by ``query``'s scored terms, with
        the pool's title and description postings counting the notes a term heads."""
        store, keys = self._doc_features, self._keys_order

        def asked() -> list[set[str]]:
            return asked_keys(self.query_terms(query)[0], self._keys)

        def heads(term: str) -> int:
            found: set[int] = set()
            for row in rows_of(self._field_postings, self._base, term)[:2]:
                if row:
                    found.update(row)
            return len(found)

        return stands_in(
            features_in(store, keys[note]), features_in(store, keys[update]), asked, heads
        )

    def says_change(self, position: int) -> bool:
        """Whether the document at ``position`` says that it changes an earlier state of
        things (:func:`~memrecall.engine.scoring.change_words.declares_change`)."""
        return declares_change(self._subject(position)[0])

    def _versions(self, first: Match, second: Match) -> bool:
        """Whether two ranked memories are the fresher-facts rules' to order, not the
        passages' (:meth:`_nearer_first`): either has a possible update ranked or a later
        version in the pool, either was outranked by a newer one, or the two are about the
        same subject."""
        return bool(
            first.newer is not None
            or second.newer is not None
            or first.outranked
            or second.outranked
            or self._pool_versions(first.index, second.index)
        )

    def _pool_versions(self, a: int, b: int) -> bool:
        """The pool's half of :meth:`_versions`, for two positions judged or not: the two are
        about the same subject, or either has a later version in the pool."""
        return bool(self.same_subject(a, b) or self._later_versions(a) or self._later_versions(b))

    def _script(self, position: int) -> str:
        """:meth:`DocumentFeatures.script` of the document at ``position``."""
        return features_in(self._doc_features, self._keys_order[position]).script()

    def _later_versions(self, first: int) -> tuple[int, ...]:
        """The pool's later versions of a document, newest first
        (:func:`~memrecall.engine.scoring.time_rules.later_versions`): the pool's, not the
        query's, so computed once per document."""
        later = self._later.get(first)
        if later is None:
            later = tuple(
                later_versions(
                    first,
                    self._subject(first),
                    holders=self._holders,
                    idf=self._idf,
                    mtime=self._mtimes.__getitem__,
                    same_subject=self.same_subject,
                    place=int,
                    params=self.params,
                )
            )
            if len(self._later) < 50_000:
                self._later[first] = later
        return later

    def fast(
        self, query: str, *, exclude: Collection[int] = (), limit: int = MAX_FAST_DOCS
    ) -> list[int]:
        """The fast result: strong documents among the first ``limit`` ranked.

        A second (or later) document must also score at least
        :attr:`Params.second` of the first one's score, and match the most
        specific query term the first one matches (:meth:`_alternative`).
        """
        ranked = self._ranked(query, exclude, limit, floor=True)
        return self._fast_placed(self._fast_of(ranked, query), query, exclude)

    def _fast_of(self, ranked: Sequence[Match], query: str) -> list[int]:
        fast = [m for m in ranked if m.judgement is Judgement.STRONG]
        if fast and fast[0].newer is not None:
            # a fact a newer note may have changed goes in only beside that note, when
            # that one is about the same subject or answers what the first answers (the
            # rule for any second document)
            newer = [m for m in ranked if m.index == fast[0].newer]
            if (
                newer
                and newer[0].judgement is not Judgement.NONE
                and (
                    self.same_subject(fast[0].index, newer[0].index)
                    or self._alternative(query, fast[0].index, newer)
                )
            ):
                return [fast[0].index, fast[0].newer]
        if len(fast) > 1:
            least = self.params.second * fast[0].score
            rest = [m for m in fast[1:] if m.score >= least]
            if rest:
                rest = self._alternative(query, fast[0].index, rest)
            fast = fast[:1] + rest
        return [m.index for m in fast]

    def _alternative(self, query: str, first: int, others: list[Match]) -> list[Match]:
        """Those of ``others`` that answer what ``first`` answers (:func:`heaviest_terms`)."""
        terms = self.query_terms(query)[0]
        heaviest = heaviest_terms(
            terms, self._idf, lambda qt: first in self._credited(qt.term, qt.kind)[0]
        )
        if not heaviest:
            return others
        held = [set(self._credited(qt.term, qt.kind)[0]) for qt in heaviest]
        return [m for m in others if any(m.index in docs for docs in held)]

    def rank_and_fast(
        self, query: str, limit: int, *, exclude: Collection[int] = ()
    ) -> tuple[list[int], list[int]]:
        """``rank(query, limit)`` and ``fast(query)`` from one scoring pass."""
        turns, once = self._one_turn()
        ranked = self._ranked(
            query, exclude, max(limit, MAX_FAST_DOCS), floor=True, keep_none=True, turns=turns
        )
        fast = self._fast_of(ranked[:MAX_FAST_DOCS], query)
        words = [m for m in ranked[:limit] if m.judgement is not Judgement.NONE]
        kept = self._nearer_first(query, words, once)
        if kept is not words and kept[0].index in fast:  # the same memories, in the ranking's order
            fast = [kept[0].index, *(i for i in fast if i != kept[0].index)]
        fast = self._fast_placed(fast, query, exclude)
        ranking = self._nearest_too(
            query, kept, self._with_update(query, kept, exclude, limit), exclude, limit, once=once
        )
        return ranking or self._clearly_nearest(query, exclude, limit, turns, once), fast

    def _nearer_first(
        self, query: str, kept: list[Match], once: OnceEmbedded | None
    ) -> list[Match]:
        """``kept`` (the words' ranking, judged at least weak), or a copy with one of its
        first memories moved to the front where its passage is nearer the turn
        (:func:`~memrecall.engine.scoring.passages.nearer_first`): where passages take part
        (``once``, the call's embedder), not for a paste, and never past a version of its
        subject (:meth:`_versions`)."""
        if once is None or len(kept) < 2 or self.query_terms(query)[2]:
            return kept
        head = kept[:CLOSE_DEPTH]
        matrix = self._passage_matrix()
        params = self.params
        chosen = nearer_first(
            [m.score for m in head],
            [matrix.vector(m.index) for m in head],
            lambda: once.turn(query),
            scripts=lambda: (
                [script_of([query_text(query)])] + [self._script(m.index) for m in head]
            ),
            versions=lambda i, j: self._versions(head[i], head[j]),
            ratio=params.passage_ratio,
            margin=params.passage_margin,
        )
        if not chosen:
            return kept
        return [kept[chosen], *kept[:chosen], *kept[chosen + 1 :]]

    def _clearly_nearest(
        self,
        query: str,
        exclude: Collection[int],
        limit: int,
        turns: TurnReader | None,
        once: OnceEmbedded | None,
    ) -> list[int]:
        """For a turn the words leave silent: :func:`answer_silent` over this pool, an
        update placed by the rules of the words' ranking (:meth:`_updates_placed`)."""
        nearest = answer_silent(
            query,
            limit=limit,
            reader=turns,
            once=once,
            query_terms=self.query_terms,
            matrix=self._passage_matrix,
            exclude=exclude,
            params=self.params,
        )
        return self._updates_placed(query, nearest, False, exclude, limit)

    def _one_turn(self) -> tuple[TurnReader | None, OnceEmbedded | None]:
        """The reader of one ranking call, and its embedder: where the passages take part,
        the semantic reader over an :class:`OnceEmbedded`, so that reading the turn and
        finding the memories nearest it embed the turn once; else the index's reader."""
        turns = self._turns
        if not self._passages or not isinstance(turns, SemanticTurns):
            return None, None
        return turns.for_one_turn()

    def _nearest_too(
        self,
        query: str,
        kept: Sequence[Match],
        ranking: list[int],
        exclude: Collection[int],
        limit: int,
        *,
        once: OnceEmbedded | None,
    ) -> list[int]:
        """``ranking`` (the lexical one, updates placed) with the places after its first
        memory shared with the memories whose passage embedding is nearest the turn's
        (:func:`~memrecall.engine.scoring.passages.fused`), where the index was made with the
        semantic turn reader and documents analysed with a passage embedder (``once``, the
        call's embedder); an update placed next to the first keeps its place too.

        A paste is left to its words (its rarest terms name what failed; embedding a
        thousand characters costs a quarter of a second), and a turn the reader did not
        embed is embedded from its first
        :data:`~memrecall.engine.scoring.passages.NEAREST_CHARS` characters."""
        if once is None or not ranking:
            return ranking
        matrix = self._passage_matrix()
        if not matrix or self.query_terms(query)[2]:
            return ranking
        return joined(
            ranking,
            [m.index for m in kept[:2]],
            lambda: once.turn(query),
            matrix,
            exclude=exclude,
            limit=limit,
            yields=lambda first, nearest: self._yields(query, kept, first, nearest),
            lead=self.params.thin_lead,
        )

    def _yields(self, query: str, kept: Sequence[Match], first: int, nearest: int) -> bool:
        """:func:`~memrecall.engine.scoring.passages.thinly_held` for this pool: the words'
        one-word hold on ``first`` (:meth:`terms_matching`), and the guards of
        :meth:`_versions` (the nearest may be unjudged: its flags count where it has them)."""

        def versions() -> bool:
            flagged = (m.newer is not None or m.outranked for m in kept if m.index in pair)
            return any(flagged) or self._pool_versions(first, nearest)

        pair = (first, nearest)
        return thinly_held(
            lambda: self.terms_matching(query, first),
            versions,
            lambda: (script_of([query_text(query)]), self._script(first), self._script(nearest)),
        )

    def terms_matching(self, query: str, position: int) -> int:
        """How many of the words scored for ``query`` (:meth:`query_terms`) match the
        document at ``position``, inflected forms and compound parts included; the
        overlapping CJK bigrams of one word count once
        (:func:`~memrecall.engine.scoring.analysis.words_among`)."""
        return words_among(
            qt
            for qt in self.query_terms(query)[0]
            if position in self._credited(qt.term, qt.kind)[0]
        )

    def passage(self, position: int) -> tuple[float, ...] | None:
        """The passage embedding of the document at ``position`` (None: it has none, or
        none yet: :mod:`~memrecall.engine.scoring.passages`)."""
        vector = unpack(features_in(self._doc_features, self._keys_order[position]).passage)
        return None if vector is None else tuple(vector)

    def _passage_matrix(self) -> PassageMatrix:
        """Each position's passage embedding (None where its document has none), unpacked
        the first time a turn needs them."""
        matrix = self._matrix
        if matrix is None:
            store = self._doc_features
            matrix = self._matrix = PassageMatrix(
                [unpack(features_in(store, key).passage) for key in self._keys_order]
            )
        return matrix
