"""The ranking rules about time (issue 18), over any kind of document key.

:class:`~memrecall.engine.scoring.fielded.FieldedIndex` (keys: pool positions) and the
store's ranker (:class:`memrecall.store.source.StoreRanker`, keys: memory ids) apply them
alike, so that a memory store months old ranks as a memory tree does:

* :func:`~memrecall.engine.scoring.freshness.freshness` — the prior that decides near-ties
  (``1 + freshness × 0.5 ** (age / half_life)``);
* :func:`subject_of` and :func:`similarity` — what a note is about, and how much two notes
  say alike (a weighted Jaccard index of their subject terms);
* :func:`restated` — whether a note says another's fact in new words, by their passages'
  embeddings (one subject, where their words are in doubt);
* :func:`move_newer_up` — fresher facts first: a newer note on the same subject moves above
  an older one ranked above it;
* :func:`possible_updates` — older notes that a newer, alike one may update (the fast path
  puts such a note in only beside its update);
* :func:`later_alike` — documents that may update one of some others, whatever they score;
* :func:`later_versions` and :func:`with_update` — an update follows its note into the
  result, even when no query word matches it, and goes before it when it says it changed
  something or stands in for the note (:func:`stands_in`; :func:`said_update_first`: also
  when the words ranked it below; :func:`updates_placed`: the two, as the rankers apply them);
* :func:`unclear` — in a paste, the documents never judged strong.

:mod:`memrecall.engine.scoring.fielded`'s docstring states the rules; this module only
computes them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from memrecall.engine.scoring.analysis import QueryTerm, is_identifier
from memrecall.engine.scoring.features import DocumentFeatures, Params
from memrecall.engine.scoring.katakana import is_katakana_form
from memrecall.engine.scoring.passages import cosine
from memrecall.engine.scoring.query_rules import MatchedTerm

__all__ = [
    "asked_keys",
    "fast_with_update",
    "later_alike",
    "later_versions",
    "move_newer_up",
    "one_subject",
    "possible_updates",
    "restated",
    "said_update_first",
    "similarity",
    "stands_in",
    "subject_of",
    "unclear",
    "updates_placed",
    "with_update",
]

_K = TypeVar("_K", bound=Hashable)
_P = TypeVar("_P", int, str)

DAY = 86_400.0


def subject_of(
    features: DocumentFeatures, idf: Callable[[str], float | None]
) -> tuple[frozenset[str], float]:
    """A document's subject terms (title, description, rendered body; words only: an
    identifier, or a whole katakana word, repeats terms the document has already) and
    their idf sum."""
    counts = features.counts
    terms = frozenset(
        t
        for t in itertools.chain(counts[0], counts[1], counts[2])
        if not is_identifier(t) and not is_katakana_form(t)
    )
    return terms, sum(idf(t) or 0.0 for t in terms)


def similarity(
    a: tuple[frozenset[str], float],
    b: tuple[frozenset[str], float],
    idf: Callable[[str], float | None],
) -> float:
    """How much two documents say alike, from their :func:`subject_of`: the idf weight of
    the subject terms both have over that of the terms either has (0 to 1)."""
    terms_a, weight_a = a
    terms_b, weight_b = b
    shared = sum(idf(t) or 0.0 for t in terms_a & terms_b)
    union = weight_a + weight_b - shared
    return shared / union if union > 0.0 else 0.0


def restated(first: DocumentFeatures, second: DocumentFeatures, params: Params) -> bool:
    """Whether two notes say one fact in other words, by their passages: under different
    titles (equal titles are no evidence, and a passage starts with its title), both
    embedded, at a cosine of at least :attr:`Params.subject_cosine`. For a pair whose words
    are alike between :attr:`Params.doubt` and :attr:`Params.subject`, it makes them one
    subject (a version that says the fact in new words)."""
    if first.handles[1] == second.handles[1] or not first.passage or not second.passage:
        return False
    return cosine(first.passage, second.passage) >= params.subject_cosine


def one_subject(
    shared: float,
    params: Params,
    pair: Callable[[], tuple[DocumentFeatures, DocumentFeatures]] | None,
) -> bool:
    """Whether two documents whose subjects are ``shared`` alike (:func:`similarity`) are
    about one subject: alike at least :attr:`Params.subject`; or, where their passages are
    embedded (``pair`` gives the two documents' features, None where they are not), at least
    :attr:`Params.doubt` alike and :func:`restated`. The one test of ``FieldedIndex`` and the
    store's index."""
    if pair is not None and params.doubt <= shared < params.subject:
        return restated(*pair(), params)
    return shared >= params.subject


def move_newer_up(
    ranked: list[_K],
    order: Mapping[_K, float],
    terms: Sequence[MatchedTerm],
    *,
    mtime: Callable[[_K], float],
    same_subject: Callable[[_K, _K], bool],
    holders: Callable[[str, str], Iterable[_K]],
    says_change: Callable[[_K], bool],
    params: Params,
    newest_wanted: bool = False,
) -> set[_K]:
    """Fresher facts first, in place on the first :attr:`Params.subject_window` of
    ``ranked``; returns the older documents of pairs whose newer one now ranks above them.

    Two documents written at least :attr:`Params.subject_gap` days apart are a pair for
    this query when they are about the same subject (``same_subject``) and, unless
    ``newest_wanted`` (a paste, or a question about what holds now), answer it with the
    same words: the query terms both match (``holders`` gives the documents a term
    matches) weigh at least :attr:`Params.subject_query` of those either matches, or of
    those the newer one matches when it says it changes something (``says_change``), and
    the words only the older one matches do not outweigh the most specific term the newer
    one matches.
    """
    p = params
    top = ranked[: p.subject_window]
    gap = p.subject_gap * DAY
    if len(top) < 2 or max(map(mtime, top)) - min(map(mtime, top)) < gap:
        return set()
    matched: dict[_K, set[int]] | None = None

    def agree(older: _K, newer: _K) -> bool:
        nonlocal matched
        if not same_subject(older, newer):
            return False
        if newest_wanted:
            # a paste (the state the user is in) or a question about what holds now
            # (asked in the words of what the asker last knew): the newer one answers
            return True
        if matched is None:
            matched = {i: set() for i in top}
            for t, matched_term in enumerate(terms):
                for doc in holders(matched_term.term, matched_term.kind):
                    hits = matched.get(doc)
                    if hits is not None:
                        hits.add(t)
        to, tn = matched.get(older, set()), matched.get(newer, set())
        both = sum(terms[t].mass for t in to & tn)
        if says_change(newer):
            # an update that says so speaks for the older note on what it does not
            # repeat: it need only answer with the older one's words
            answered = sum(terms[t].mass for t in tn)
            return answered > 0.0 and both >= p.subject_query * answered
        either = sum(terms[t].mass for t in to | tn)
        if either <= 0.0 or both < p.subject_query * either:
            return False
        # the words only the older one matches outweigh the most specific term the
        # newer one matches: it answers a question the newer one does not speak of. A
        # number is no such word: a value the asker remembers ("I think it was 10 MB") is
        # what an update changes
        own = sum(
            terms[t].mass
            for t in to - tn
            if terms[t].kind == "word" and not terms[t].term.isdigit()
        )
        return own <= max((terms[t].mass for t in tn), default=0.0)

    # asked about what holds now, a newer note on the subject that scores well below the
    # older one (it does not repeat the older one's words) still answers
    ratio = p.subject_ratio / 2 if newest_wanted else p.subject_ratio
    stale: set[_K] = set()
    for b in range(1, len(top)):
        current = ranked[b]
        for a in range(b):
            above = ranked[a]
            if abs(mtime(above) - mtime(current)) < gap:
                continue
            if mtime(above) > mtime(current):
                if agree(current, above):
                    stale.add(current)
                    break
            elif order[current] >= ratio * order[above] and agree(above, current):
                ranked.insert(a, ranked.pop(b))
                stale.add(above)
                break
    return stale


def possible_updates(
    ranked: Sequence[_K],
    order: Mapping[_K, float],
    *,
    mtime: Callable[[_K], float],
    similarity: Callable[[_K, _K], float],
    params: Params,
) -> dict[_K, _K]:
    """Documents among the first :attr:`Params.subject_window` that a newer one there may
    update, with that newer one (the best ranked if several): written
    :attr:`Params.subject_gap` days later or more, scoring at least
    :attr:`Params.subject_ratio` of it, and saying alike at least :attr:`Params.doubt`."""
    p = params
    top = ranked[: p.subject_window]
    doubted: dict[_K, _K] = {}
    for older in top:
        for newer in top:
            if order[newer] >= p.subject_ratio * order[older] and _may_update(
                older, newer, mtime, similarity, p
            ):
                doubted[older] = newer
                break
    return doubted


def _may_update(
    older: _K,
    newer: _K,
    mtime: Callable[[_K], float],
    similarity: Callable[[_K, _K], float],
    params: Params,
) -> bool:
    """Whether ``newer`` may update ``older``: written :attr:`Params.subject_gap` days later
    or more, and saying alike at least :attr:`Params.doubt`."""
    return (
        mtime(newer) - mtime(older) >= params.subject_gap * DAY
        and similarity(older, newer) >= params.doubt
    )


def later_alike(
    held: Collection[_K],
    ranked: Sequence[_K],
    *,
    mtime: Callable[[_K], float],
    similarity: Callable[[_K, _K], float],
    params: Params,
) -> set[_K]:
    """The documents among the first :attr:`Params.subject_window` of ``ranked`` that may
    update one of ``held``: written :attr:`Params.subject_gap` days later or more, and saying
    alike at least :attr:`Params.doubt` (what :func:`possible_updates` asks, whatever they
    score). A rule that lets through only the memories holding some term lets these through
    too: an update need not repeat what it replaces ("the permit for Building B" and the
    note that staff now park in another garage)."""
    top = ranked[: params.subject_window]
    return {
        newer
        for newer in top
        if newer not in held
        and any(
            _may_update(older, newer, mtime, similarity, params) for older in top if older in held
        )
    }


def later_versions(
    doc: _K,
    subject: tuple[frozenset[str], float],
    *,
    holders: Callable[[str], Iterable[_K]],
    idf: Callable[[str], float | None],
    mtime: Callable[[_K], float],
    same_subject: Callable[[_K, _K], bool],
    place: Callable[[_K], _P],
    params: Params,
    rarest: int = 3,
) -> list[_K]:
    """Documents about the same subject as ``doc`` (``subject`` is its :func:`subject_of`)
    written :attr:`Params.subject_gap` days later or more, newest first. They are looked for
    among the holders of its ``rarest`` subject terms that some other document has too (a
    note on the same subject shares its rarer words): a few posting lists, whatever the
    pool's size. Equal times are in pool order (``place``: a position, or a path where the
    pool is ordered by time and path)."""
    since = mtime(doc) + params.subject_gap * DAY
    found: set[_K] = set()
    shared = 0
    for term in sorted(subject[0], key=lambda t: (-(idf(t) or 0.0), t)):
        others = [c for c in holders(term) if c != doc]
        if not others:
            continue  # a word of this document alone
        found.update(c for c in others if mtime(c) >= since)
        shared += 1
        if shared == rarest:
            break
    return sorted((c for c in found if same_subject(doc, c)), key=lambda c: (-mtime(c), place(c)))


def with_update(
    kept: list[_K],
    limit: int,
    update: Callable[[_K], _K | None],
    *,
    outranked: bool = False,
    says_change: Callable[[_K], bool] | None = None,
) -> list[_K]:
    """``kept`` with the newest update of its first document (``update``: a document not
    ``kept`` and not excluded, or None) right after it, cut to ``limit``. An update follows
    its note: when the best answer has a newer version on its subject that shares no word
    with the query ("where do I get the parking permit?" against the note that parking is
    now booked in an app), that version still goes to the selector, and the dates rendered
    with both tell which is current.

    The update goes *before* its note instead:

    * when the update says it changes something (``says_change``: "the old fixed password
      *no longer* works", "*ya no* por correo", "Excel提出は*廃止*"): a question asked in
      the words of what the asker last knew ("is it still guest2025?") is answered by what
      replaced it;
    * when the first document is ``outranked``: an older version that a newer one on its
      subject ranked above for this query (:func:`move_newer_up`), and that newer one was
      then left out (judged none: by the turn's reading, or by the strong-only rule). What
      the turn is read as decides what is left out, never that an older fact goes first."""
    if not kept:
        return kept
    newer = update(kept[0])
    if newer is None:
        return kept
    if outranked or (says_change is not None and says_change(newer)):
        return [newer, *kept][:limit]
    return [kept[0], newer, *kept[1:]][:limit]


def said_update_first(
    kept: list[_K], newest: _K | None, says_change: Callable[[_K], bool]
) -> list[_K]:
    """``kept`` with ``newest`` (the first document's newest later version on its subject,
    :func:`later_versions`, or None) moved to the front where the words ranked it below the
    first and it says it changes something (``says_change``): the rule of
    :func:`with_update` for an update the words found too. A copy where it moves."""
    if newest is None or newest not in kept[1:] or not says_change(newest):
        return kept
    return [newest, *(d for d in kept if d != newest)]


def asked_keys(
    terms: Iterable[QueryTerm], keys: Callable[[str, str], Iterable[tuple[str, float]]]
) -> list[set[str]]:
    """The index keys of each of a question's scored ``terms`` (``keys``: an index's keys
    and credits for a term, variants included), as :func:`stands_in` reads the question."""
    return [{key for key, _ in keys(t.term, t.kind)} for t in terms]


def stands_in(
    note: DocumentFeatures,
    update: DocumentFeatures,
    asked: Callable[[], Iterable[Collection[str]]],
    heads: Callable[[str], int],
) -> bool:
    """Whether ``update``, a later version on ``note``'s subject (:func:`later_versions`),
    answers in ``note``'s place whatever the question's words: a question asked in the
    words of what its asker last knew (the old vendor, the old contact, the old amount)
    is answered by what replaced it, as where the update says it changed something.

    It does not where the two notes stand side by side:

    * ``note`` records one occasion: its body opens with a date
      (:attr:`DocumentFeatures.dated`; "Payments sync, 3 Feb.", "2025年8月の点検結果"). A
      later record of the series does not replace it.
    * Their headings (titles and descriptions) share no term that heads no third note
      (``heads``: how many documents of the pool hold a term in their heading). A heading
      term of many notes names a kind of note ("Meeting notes", "Feedback", "Notizen"),
      not a subject: two notes that share only such terms, or none, were named apart by
      their authors, whatever the words and passages make of their subjects.
    * The question names what sets ``note``'s heading apart: a term of its title or
      description that ``update``'s lack ("the Cologne office" of two offices' opening
      hours, "internal" of the internal and the partner rate limits). It asks about that
      one. ``asked`` gives the index keys of each of the question's scored terms (its
      variants: "tyre" finds "tyres"), called only here; a question term that finds a key
      in both headings names what they share. This holds only where ``note``'s title has
      a term ``update``'s title lacks: under one title ("Fietsvergoeding" twice), what
      sets the older description apart is the old fact itself (the old form, the old
      contact, the old rate), the very words of a question asked in what its asker last
      knew.

    A third version of one subject shares its heading's terms with the other two, so
    along a chain of three versions or more only the update rules that do not look at
    headings apply (:func:`with_update`'s ``says_change``, :func:`move_newer_up`).
    """
    if note.dated:
        return False
    heading = note.counts[0].keys() | note.counts[1].keys()
    others = update.counts[0].keys() | update.counts[1].keys()
    if not any(heads(term) <= 2 for term in heading & others):
        return False
    if not note.counts[0].keys() - update.counts[0].keys():
        return True  # one title: nothing in the older heading names a subject of its own
    return not any(heading & set(keys) and not others & set(keys) for keys in asked())


def updates_placed(
    kept: list[_K],
    limit: int,
    *,
    later: Callable[[_K], Sequence[_K]],
    excluded: Callable[[_K], bool],
    goes_first: Callable[[_K, _K], bool],
    outranked: bool = False,
) -> list[_K]:
    """``kept`` with its first document's update placed as both rankers place it:
    :func:`said_update_first` (unless the first is ``outranked``), then :func:`with_update`.
    ``later`` gives a document's later versions, newest first (:func:`later_versions`);
    ``excluded`` says which are already delivered; ``goes_first(note, update)`` whether an
    update goes before its note (it says it changed something, or :func:`stands_in`)."""
    if kept and not outranked:
        first = kept[0]
        newest = next(iter(later(first)), None)
        kept = said_update_first(kept, newest, lambda u: goes_first(first, u))
    if not kept:
        return kept
    note = kept[0]

    def update(doc: _K) -> _K | None:
        return next((d for d in later(doc) if d not in kept and not excluded(d)), None)

    return with_update(
        kept, limit, update, outranked=outranked, says_change=lambda u: goes_first(note, u)
    )


def fast_with_update(
    fast: list[_K],
    limit: int,
    *,
    later: Callable[[_K], Sequence[_K]],
    excluded: Callable[[_K], bool],
    goes_first: Callable[[_K, _K], bool],
    matched: Callable[[_K], bool],
) -> list[_K]:
    """The fast result ``fast`` with its first document's newest later version
    (:func:`later_versions`, not yet delivered) put before it where the ranking puts it
    there (``goes_first(note, update)``: it says it changed something, or :func:`stands_in`)
    and the question's words match it (``matched``: the fast path delivers nothing they do
    not), whether or not they ranked it among the fast result's: a standing fact the fast
    path delivers comes with what replaced it. The note stays beside it (the rendered dates
    tell the model which is current); what else there was gives way, to at most ``limit``
    documents."""
    if not fast:
        return fast
    first = fast[0]
    update = next((d for d in later(first) if not excluded(d)), None)
    if update is None or not matched(update) or not goes_first(first, update):
        return fast
    return [update, *(d for d in fast if d != update)][:limit]


def unclear(
    ranked: Sequence[_K], order: Mapping[_K, float], older: Collection[_K], margin: float
) -> list[_K]:
    """For a paste: the documents never judged strong. A paste matches many memories a
    little, so the fast path takes only a first document that stands out: its runner-up
    (``older`` versions of what ranks above them left aside) scores under ``margin`` of
    it. Every other document is capped."""
    if len(ranked) < 2:
        return list(ranked)
    rest = [i for i in ranked[1:] if i not in older]
    if not rest or order[rest[0]] < margin * order[ranked[0]]:
        return list(ranked[1:])
    return list(ranked)
