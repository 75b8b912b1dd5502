"""What the ``fielded`` scorer keeps per document: :class:`DocumentFeatures`, and its constants.

A document's features depend only on the document (and the analysis in
:mod:`memrecall.engine.scoring.analysis`), never on the pool or the query, so
a catalog caches them per file. :class:`Params` holds the scorer's constants.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import msgspec

from memrecall.engine.scoring.analysis import identifier_counts, syllable_pairs, term_counts
from memrecall.engine.scoring.katakana import katakana_forms
from memrecall.engine.scoring.passages import PassageEmbedder, pack, passage_text, script_of
from memrecall.engine.scoring.record_dates import opens_with_date
from memrecall.engine.scoring.reference import MAX_BODY_CHARS
from memrecall.engine.scoring.text import body_text, normalize, utf16_prefix
from memrecall.events.documents import MemoryDocument

__all__ = [
    "FIELDS",
    "MAX_ANALYSED_CHARS",
    "MAX_ANALYSED_HEADING_CHARS",
    "DocumentFeatures",
    "Params",
    "link_target",
    "no_pause",
    "passage_of",
    "pool_idf",
]


def pool_idf(count: int, df: int) -> float:
    """A term's idf in a pool of ``count`` documents, ``df`` of which hold it (BM25's, never
    negative); ``df`` 0 gives the largest idf the pool can give."""
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


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


def no_pause() -> None:
    """The default pacing checkpoint: returns at once.

    Scoring is CPU-bound; a caller that runs it in a worker thread beside an event loop
    passes its pacer's checkpoint instead (:func:`memrecall.sources.pacing.checkpoint`).
    """


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
    freshness: float = 0.05
    """Most the freshness prior can add to a document's ordering score (a share)."""
    half_life: float = 180.0
    """Days after which the freshness prior has halved (age from the pool's newest document)."""
    subject: float = 0.12
    """Idf-weighted share of two documents' subject terms (title, description, rendered
    body) that both have, at which they are about the same subject: a weighted Jaccard
    index. Every update pair the project corpus's recency slice labels reaches 0.14
    (tests/test_supersession.py); 0.12 leaves a margin (docs/decisions.md)."""
    subject_cosine: float = 0.90
    """Cosine of two documents' passage embeddings
    (:mod:`~memrecall.engine.scoring.passages`) from which two documents whose subjects
    are at least :attr:`doubt` alike, under different titles, are about the same subject
    too: an update that says the fact again in new words (a new vendor, new days) shares
    few of the old one's, but means the same. Equal titles are no evidence here (issue 18),
    and a passage starts with its title, so two notes under one title are near whatever
    they say: their words alone decide."""
    subject_query: float = 0.5
    """Share of the matched query weight both documents of a same-subject pair must match."""
    subject_gap: float = 14.0
    """Days at least between the two documents of a same-subject pair: notes written
    within the same fortnight are companions, not one updating the other."""
    subject_ratio: float = 0.35
    """A newer same-subject document overtakes an older one from this share of its score."""
    doubt: float = 0.06
    """Similarity (the weighted Jaccard index of :attr:`subject`) from which a newer
    document that scores close to an older one may be its update: the older one is then
    never judged strong (never fast-delivered). Half of :attr:`subject`."""
    subject_window: int = 8
    """How many of the best-ranked documents the same-subject rule looks at."""
    paste_margin: float = 0.8
    """In a paste (a query cut to its most specific terms), the first document is judged
    strong only when the runner-up scores under this share of it; no other one is."""
    min_pool: int = 20
    """idf is computed as if the pool held at least this many documents. In a
    tree of a handful of memories every word is "common" by the plain formula,
    so nothing could ever be judged strong."""
    fitted_pool: int = 124
    """What the thresholds judge, a match's coverage and evidence, is read as if the pool
    held at least this many documents (the others holding none of the query's terms): the
    size of the calibration corpus, the scale the thresholds were fitted on
    (``thresholds.json``'s provenance; a test checks the two agree). By the pool's own idf
    a word in two of sixteen memories weighs 0.79 of the rarest possible word, and 0.90 in
    two of 124; a query's words that no memory holds weigh the rarest. So in a small tree a
    question's coverage and evidence fell under thresholds fitted on a larger one, and
    questions went unanswered (issue 18: each language of sets 34 to 36 alone in its pool).
    The order of the matches stays the pool's own: what is rare in this tree. Pools this
    size or larger are unaffected."""
    passage_ratio: float = 0.5
    """Where memories carry passage embeddings, one of the words' first memories goes first
    when it scores at least this share of the first, is no version of a memory above it,
    and its passage is nearer the turn than theirs by more than :attr:`passage_margin`
    (:func:`~memrecall.engine.scoring.passages.nearer_first`): memories the words rank
    that close are often told apart by what the turn means, not by its words (a question
    in other words than its note's; a title's word the question shares). Chosen with
    :attr:`passage_margin` on the corpus and blind sets 5 to 33 (docs/evaluation.md)."""
    passage_margin: float = 0.015
    """How much nearer (cosine) the turn a memory's passage must be than those of every
    memory the words rank above it for it to go first (:attr:`passage_ratio`)."""
    thin_lead: float = 0.03
    """Where memories carry passage embeddings and the words matched their first memory by
    one query term only, the memory whose passage is the nearest of the pool goes first when
    it is among the ranked memories and nearer the turn than the first by at least this
    (cosine), unless the two are versions of one subject or the nearest is nearer by its
    language (:func:`~memrecall.engine.scoring.passages.nearest_over_thin`). Chosen on the
    corpus and blind sets 5 to 33 (docs/evaluation.md)."""
    clear_near: float = 0.80
    """Where memories carry passage embeddings, a turn the words leave silent gets the memory
    whose passage is at least this near it (cosine) and nearer than every other by
    :attr:`clear_lead`, when the reader is sure it asks something (under
    :attr:`clear_talk`): :func:`~memrecall.engine.scoring.passages.clearly_nearest`. Never
    for a paste, never into the fast result. Chosen with the other two on the corpus and
    blind sets 5 to 33, the pools where it answers no small talk (docs/evaluation.md)."""
    clear_lead: float = 0.02
    """How much nearer the turn (cosine) the memory that stands out must be than the next
    nearest (:attr:`clear_near`); where two are that near together, how much nearer the
    second must be than the third for the two to stand out."""
    clear_talk: float = 0.15
    """The reader's probability of small talk under which a silent turn may get the memory
    that stands out (:attr:`clear_near`). 0.1 on the first grid (0.05, 0.1, 0.2, 0.3); a finer
    one (``scripts/clearly_nearest_grid.py``) found 0.15 the least bound that answers the
    most questions of the corpus and blind sets 5 to 33 with no more small talk."""
    talk_share: float = 1 / 3
    """On plain small talk (:attr:`~memrecall.engine.scoring.turn_model.Reading.PLAIN_TALK`),
    the share of the turn's weight a memory must match to stay strong: a memory that
    explains less of it shares a word with the turn, not its subject ("reverse a string in
    *python*", "my *Netflix password*"), and is judged weak, so held back."""
    low_share: float = 0.18
    """On a turn the reader leans to call small talk
    (:attr:`~memrecall.engine.scoring.turn_model.Reading.LEANING`), weak memories are held
    back when no memory ranked for it is strong and none explains this share of it."""


class DocumentFeatures(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A document as the ``fielded`` scorer sees it: counted terms per field, and its mtime.

    Depends only on the document (and this module's analysis), so it can be
    cached per document and reused for every pool and query; it is a msgspec
    Struct so that a cache file stores it as it is.
    """

    counts: tuple[dict[str, int], dict[str, int], dict[str, int], dict[str, int]]
    lengths: tuple[int, int, int, int]
    mtime: float
    handles: tuple[str, str]
    """Normalised relative path (without ``.md``) and name: what a ``supersedes`` link can name."""
    supersedes: str
    """The normalised ``supersedes`` link (empty when none)."""
    passage: bytes = b""
    """The memory's passage embedding (:mod:`~memrecall.engine.scoring.passages`: packed
    32-bit floats); empty when analysed without an embedder."""
    dated: bool = False
    """Whether the body opens with a date
    (:func:`~memrecall.engine.scoring.record_dates.opens_with_date`): the note records one
    occasion, and a later note of its subject does not take its place."""

    @classmethod
    def of(
        cls,
        document: MemoryDocument,
        *,
        checkpoint: Callable[[], None] = no_pause,
        passage: PassageEmbedder | None = None,
    ) -> DocumentFeatures:
        """Analyse a document's fields (body split at the rendered window, cut at
        :data:`MAX_ANALYSED_CHARS`), calling ``checkpoint`` between fields; with
        ``passage``, embed its :func:`~memrecall.engine.scoring.passages.passage_text` too
        (an embedder that fails leaves it without one: ranked by its words alone)."""
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
        lengths = []
        for text in fields:
            found = term_counts(text)
            # a field's length counts its words; an identifier is words already counted
            lengths.append(sum(found.values()))
            found.update(identifier_counts(text))
            found.update(syllable_pairs(text))
            found.update(katakana_forms(text))  # looked up by the fragment rule only
            counts.append(found)
            checkpoint()
        return cls(
            counts=(counts[0], counts[1], counts[2], counts[3]),
            lengths=(lengths[0], lengths[1], lengths[2], lengths[3]),
            mtime=document.mtime,
            handles=(link_target(document.relative_path), link_target(document.title)),
            supersedes=link_target(document.supersedes),
            passage=b"" if passage is None else _embedded(document, passage),
            dated=opens_with_date(body),
        )

    def script(self) -> str:
        """The writing system of the title, description and rendered body
        (:func:`~memrecall.engine.scoring.passages.script_of` over their terms)."""
        return script_of(term for field in self.counts[:3] for term in field)


def passage_of(document: MemoryDocument) -> str:
    """What is embedded of ``document``: :func:`~memrecall.engine.scoring.passages.passage_text`
    of its title, description and body text."""
    return passage_text(document.title, document.description, body_text(document.body))


def _embedded(document: MemoryDocument, passage: PassageEmbedder) -> bytes:
    try:
        return pack(passage(passage_of(document)))
    except Exception:  # the embedder is the host's code (a C engine): never stop analysis
        return b""


def link_target(text: str) -> str:
    """How a ``supersedes`` link and the names it may match are compared: NFKC,
    lower case, trimmed, without a leading ``./`` or a trailing ``.md``."""
    target = normalize(text).strip().replace("\\", "/")
    while target.startswith("./"):
        target = target[2:]
    if target.endswith(".md"):
        target = target[:-3]
    return target.strip()
