"""The quick start: a new process publishes straight from the catalog file when the tree
is exactly as the file describes it.

Every new process of a CLI agent starts with a catalog file and an unchanged
tree, and its first recall must fit in the 100 ms window. Adopting the file
(one entry object, order key and map entry per file, then a walk making a
topic object per file) cost about 35 ms at 10,000 files before a single
query term was looked up. The quick start does only what proves the file
current, and publishes the file's own data:

1. every root's ancestors, and every directory the file lists, are watched
   *before* they are checked, as a full start does, so no change can fall
   between the check and the watch;
2. each root is where it was (``root_check``); each directory the walk from
   the roots reaches has the signature its stored listing was taken with; one
   changed within two seconds of being listed (an entry made in the same
   timestamp tick could be missing) is listed again and must list the same;
3. the walk over those listings finds exactly the files the file has
   entries for, and no problem in any directory (no unreadable entry, loop,
   overlap or symlink), and no file has several hard links; a file's own
   problems (bad frontmatter, too large) are the file's entry's diagnostics;
4. every file ``stat``-s as its entry says; one changed within two seconds of
   being read (an agent's last session wrote it just before the file was
   saved) is read again and must give the stored document and diagnostics
   (at most :data:`MAX_REREAD` of them).

Then the snapshot is the file's: its documents in the stored recall order
(read from the file as they are used), a view over its pool, the stored
recency order, the diagnostics of missing roots and of the entries. Anything
else (a single changed file, a missing listing, a directory with a problem)
falls back to the full start, which re-reads what changed. The catalog's own
per-file state is built later, from the same file, the first time a change
needs it (:meth:`~memrecall.sources.catalog.source.CatalogSource.snapshot`).
"""

from __future__ import annotations

import itertools
import operator
import os
from collections.abc import Callable, Sequence

import attrs

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.pool import FieldedPool
from memrecall.events.documents import MemoryDocument
from memrecall.sources.cachefile import CorruptRecord
from memrecall.sources.catalog.cached import CachedFile, EntryView, to_columns
from memrecall.sources.catalog.documents import (
    LoadedDocuments,
    StoredDocuments,
    read_from_tree,
    topic_of,
)
from memrecall.sources.catalog.feed import ChangeFeed
from memrecall.sources.catalog.listing import (
    DIR,
    SUSPECT_NS,
    TOPIC,
    Listing,
    diagnostic_of,
    list_directory,
    recent,
    signature_of,
    stored_diagnostic,
)
from memrecall.sources.catalog.order import Lookups
from memrecall.sources.catalog.store import ListedEntry, StoredCatalog
from memrecall.sources.scanner import Diagnostic, Root, read_topic_file, root_check
from memrecall.sources.source import Snapshot
from memrecall.sources.turn_reader import background_passage_embedder, default_turns

__all__ = ["MAX_REREAD", "QuickContext", "QuickStart", "quick_start"]

MAX_REREAD = 64
"""Past this many suspect files (changed within two seconds of their read), the full start."""

_SIGNATURE_FIELDS = tuple(
    map(operator.attrgetter, ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns"))
)
"""Each field of a :data:`~memrecall.sources.catalog.listing.Signature`, read from a ``stat``."""


@attrs.frozen
class QuickStart:
    """A verified file's snapshot, and the watched state the catalog takes over."""

    snapshot: Snapshot
    listings: dict[str, Listing]
    """Every directory walked, as stored, with the watch taken before it was checked."""
    root_infos: list[tuple[int, int] | Diagnostic]
    chains: list[list[int]]
    """Each root's ancestor watches."""
    read_again: int
    """Suspect files read again (and found unchanged)."""


@attrs.frozen
class QuickContext:
    """What the quick start needs of its catalog."""

    roots: Sequence[Root]
    feed: ChangeFeed
    clock: Callable[[], int]
    """Wall-clock nanoseconds (the catalog's)."""
    follow_links: bool
    real_roots: Callable[[], tuple[str, ...]]
    """The resolved roots, as a listing classifies links against them."""
    checkpoint: Callable[[], None]


@attrs.define
class _Walked:
    listings: dict[str, Listing] = attrs.field(factory=dict)
    infos: list[tuple[int, int] | Diagnostic] = attrs.field(factory=list)
    chains: list[list[int]] = attrs.field(factory=list)
    topics: dict[str, int] = attrs.field(factory=dict)
    """Every topic file's path, and the root it was found under."""


def _walk(context: QuickContext, stored: StoredCatalog) -> _Walked | None:
    """Steps 1 to 3 of the module doc; ``None`` when anything differs from the file."""
    feed = context.feed
    stored_listings = {listing.path: listing for listing in stored.listings}
    walked = _Walked()
    listings, infos, chains, topics = walked.listings, walked.infos, walked.chains, walked.topics
    visited: set[tuple[int, int]] = set()
    for index, root in enumerate(context.roots):
        chain: list[int] = []
        chains.append(chain)
        if not feed.watch_chain(index, chain):
            return None
        info = root_check(root)
        infos.append(info)
        if isinstance(info, Diagnostic):
            continue  # a missing root: the same diagnostic as a full start
        if info in visited:
            return None  # roots overlap: the full start reports it
        visited.add(info)
        pending = [root.path]
        while pending:
            directory = pending.pop()
            saved = stored_listings.get(directory)
            if saved is None:
                return None
            wd, refused = feed.watch_dir(directory)
            if wd is None or refused:
                return None
            feed.listed(directory, wd)
            try:
                now = os.stat(directory)
            except OSError:
                return None
            signature = (now.st_dev, now.st_ino, now.st_mtime_ns, now.st_ctime_ns)
            if tuple(saved.signature) != signature:
                return None
            if recent(signature[2], signature[3], saved.listed_ns):
                fresh = _listed_again(context, directory, saved.items, signature)
                if fresh is None:
                    return None
                fresh.wd = wd
                listings[directory] = fresh
            else:
                listings[directory] = Listing(
                    directory, saved.items, None, signature, saved.listed_ns, False, wd
                )
            for item in saved.items:
                if item.kind == TOPIC:
                    topics[item.path] = index
                elif item.kind == DIR and item.key is not None and tuple(item.key) not in visited:
                    visited.add((item.key[0], item.key[1]))
                    pending.append(item.path)
                else:
                    return None  # a problem, or a directory reached twice
    return walked


def _listed_again(
    context: QuickContext,
    directory: str,
    items: tuple[ListedEntry, ...],
    signature: tuple[int, int, int, int],
) -> Listing | None:
    """A suspect directory listed again: the new listing if it lists ``items`` and has
    ``signature``, else ``None``."""
    fresh = list_directory(
        directory, context.clock(), follow_links=context.follow_links, roots=context.real_roots()
    )
    if fresh.error is not None or fresh.has_symlink or fresh.links:
        return None
    if fresh.signature != signature or fresh.items != items:
        return None
    return fresh


def _read_again(context: QuickContext, entry: CachedFile, documents: StoredDocuments) -> int | None:
    """A suspect file read again: the time it was read if it gives the stored document and
    diagnostics, else ``None``."""
    seen = context.clock()
    try:
        signature = signature_of(os.stat(entry.path))
    except OSError:
        return None
    if signature != entry.signature:
        return None
    scope = context.roots[entry.root_index].scope
    document, problems = read_topic_file(topic_of(entry, scope))
    if tuple(map(stored_diagnostic, problems)) != entry.diagnostics:
        return None
    try:
        same = document is None if entry.slot < 0 else document == documents.document(entry.slot)
    except CorruptRecord:
        return None
    return seen if same else None


def quick_start(context: QuickContext, stored: StoredCatalog) -> QuickStart | None:
    """Publish ``stored`` as it is if the tree is exactly as it describes (module doc).

    Works on the entries' columns (``load_catalog(materialize=False)``) when it can, so
    that nothing is made per file but a ``stat`` and its signature; the entries read
    again are recorded in ``stored.read_again``.
    """
    feed, roots, checkpoint = context.feed, context.roots, context.checkpoint
    documents = stored.stored
    if not feed.active or stored.pool is None or documents is None:
        return None
    view = stored.columns if stored.columns is not None else EntryView(to_columns(stored.entries))
    size = view.size
    if view.nlinks.tolist().count(1) != size or view.columns.unsigned:
        return None  # hard links (or a file that could not be stat-ed): a full start
    walked = _walk(context, stored)
    if walked is None or walked.topics != dict(zip(view.paths, view.roots.tolist(), strict=True)):
        return None
    checkpoint()
    try:
        now = list(map(os.stat, view.paths))
    except OSError:
        return None
    flat = view.flat_signatures
    # field by field, in C: no tuple per file (half the time of comparing signatures)
    for field, read in enumerate(_SIGNATURE_FIELDS):
        if list(map(read, now)) != flat[field::5].tolist():
            return None
    # recent(), for every file at C speed: changed (mtime or ctime) within SUSPECT_NS of
    # its read
    since = list(map(operator.sub, view.read_ns, itertools.repeat(SUSPECT_NS, size)))
    suspect = sorted(
        set(itertools.compress(range(size), map(operator.ge, flat[3::5], since)))
        | set(itertools.compress(range(size), map(operator.ge, flat[4::5], since)))
    )
    if len(suspect) > MAX_REREAD:
        return None
    checkpoint()
    for i in suspect:
        seen = _read_again(context, view.entry(i), documents)
        if seen is None:
            return None
        stored.read_again[i] = seen
    # entries with documents come first, in recall order (CatalogEntries.stored)
    all_slots = view.slots.tolist()
    recalled = size - all_slots.count(-1)
    slots = all_slots[:recalled]
    if recalled and min(slots) < 0:
        return None
    pool = FieldedPool.from_image(stored.pool)
    distinct = set(slots)
    if len(distinct) != len(slots) or len(pool) != len(slots):
        return None
    if not all(map(pool.__contains__, slots)):
        return None
    if len(stored.recency) != len(slots) or set(stored.recency) != distinct:
        return None  # the recency order must name every document once
    scopes = [root.scope for root in roots]

    def reread(slot: int) -> MemoryDocument:
        entry = view.entry(all_slots.index(slot))
        return read_from_tree(entry, scopes[entry.root_index])

    loaded = LoadedDocuments(list(slots), documents, reread)
    index = FieldedIndex.over(
        pool,
        slots,
        checkpoint=checkpoint,
        turns=default_turns(),
        passages=background_passage_embedder() is not None,
    )
    paths = view.paths[:recalled]
    lookups = Lookups(
        slots, list(stored.recency), lambda: {p: (s,) for p, s in zip(paths, slots, strict=True)}
    )
    diagnostics = [info for info in walked.infos if isinstance(info, Diagnostic)]
    problems = sorted(
        view.columns.diagnostics, key=lambda found: (view.roots[found[0]], view.paths[found[0]])
    )
    diagnostics.extend(diagnostic_of(d) for _, found in problems for d in found)
    snapshot = Snapshot(loaded, index, tuple(diagnostics), order=lookups)
    return QuickStart(snapshot, walked.listings, walked.infos, walked.chains, len(suspect))
