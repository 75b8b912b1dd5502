"""The catalog: parsed documents kept between recalls, so a recall reads only what changed.

:class:`CatalogSource` is a :class:`~memrecall.sources.source.DocumentSource`.
It holds, for every topic file of the tree, the scanner's result (document and
diagnostics), what its scorer indexes about the document and the file's
``stat`` signature; for every directory, its classified listing; and the
active scorer's pool, kept current file by file: for ``fielded`` (the
engine's default) a :class:`~memrecall.engine.scoring.fielded.FieldedPool`
(per-document features, postings, document frequencies, field lengths,
vocabulary), for ``reference`` a word index
(:mod:`memrecall.engine.scoring.catalog_index`). A snapshot is exactly what
:func:`~memrecall.sources.scanner.scan_tree` would return at that moment (same
documents in the same order, same diagnostics), ranked as a from-scratch
index over them would rank; only the work differs.

Freshness (details and measurements in ``docs/catalog.md``): on Linux every
directory of the tree is watched with inotify, and so is every ancestor of each
root; a recall starts by draining the queued events and re-listing or
re-reading exactly what they name. A watch is always added *before* the
directory is listed, so no change can fall between the two. Where events may
have been lost (queue overflow, a watch dropped by the kernel) or cannot be
trusted (no inotify, a network or FUSE file system, a symlinked root or a
followed symlink anywhere in it, a watch refused), the affected root is
re-validated instead: listed again and every file ``stat``-ed, a file being
re-read when its ``(device, inode, size, mtime_ns, ctime_ns)`` differs from the
cached one, or when it was changed within two seconds of the time it was read
(a same-size edit in the same timestamp tick cannot then go unseen). Files with
several hard links are re-validated that way on every recall, since a change
through another link raises no event in the tree. Symlinks that are not
followed (the scanner's rule) leave the root watched: a directory holding one
is listed again only when a link now resolves differently, which every refresh
checks. A directory claimed by an earlier root is left to it, as in the scan.

Persistence (:mod:`memrecall.sources.catalog.store`): ``cache_path`` names a
file outside the memory roots. It is loaded lazily by the first snapshot,
re-validated as above before any of it is used, and written back by
:meth:`CatalogSource.save` (and :meth:`CatalogSource.close`). The memory files
themselves are only ever opened for reading.

A refresh runs with the cyclic garbage collector paused (and resumed only if it
was on): the catalog creates no reference cycles, and collections triggered by
the allocations of a large build made it about twice as slow.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import gc
import itertools
import logging
import os
import stat
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import cast

import attrs

from memrecall.engine.scoring.catalog_index import (
    CatalogIndex,
    FieldTexts,
    IndexBuilder,
    Slots,
    field_texts,
)
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedPool
from memrecall.engine.scoring.reference import DocumentFields
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.sources import pacing
from memrecall.sources.catalog import watch as catalog_watch
from memrecall.sources.catalog.listing import (
    DIR,
    SUSPECT_NS,
    TOPIC,
    Signature,
    list_directory,
    recent,
    signature_of,
    stored_diagnostic,
)
from memrecall.sources.catalog.listing import Listing as _Listing
from memrecall.sources.catalog.listing import diagnostic_of as _diagnostic
from memrecall.sources.catalog.order import SLOT, Lookups, OrderKey, apply, recency_key
from memrecall.sources.catalog.store import (
    CachedFile,
    ListedEntry,
    LoadFailure,
    StoredCatalog,
    StoredListing,
    StoredPostings,
    check_cache_target,
    load_catalog,
    remove_stale_temporaries,
    save_catalog,
)
from memrecall.sources.scanner import (
    INDEX_FILENAME,
    Diagnostic,
    DiagnosticKind,
    MemoryTree,
    Root,
    TopicFile,
    duplicate_link_diagnostic,
    link_fingerprint,
    loop_diagnostic,
    overlap_diagnostic,
    read_topic_file,
    real_roots,
    root_check,
)
from memrecall.sources.source import ScorerName, Snapshot

__all__ = ["SUSPECT_NS", "CatalogSource", "CatalogStats"]

log = logging.getLogger("memrecall.catalog")

_SCOPE_RANK = {Scope.PROJECT: 0, Scope.USER: 1}
_CONTENT_EVENTS = catalog_watch.IN_MODIFY | catalog_watch.IN_CLOSE_WRITE | catalog_watch.IN_ATTRIB
_ENTRY_EVENTS = (
    catalog_watch.IN_CREATE
    | catalog_watch.IN_DELETE
    | catalog_watch.IN_MOVED_FROM
    | catalog_watch.IN_MOVED_TO
)
_GONE_EVENTS = (
    catalog_watch.IN_DELETE_SELF
    | catalog_watch.IN_MOVE_SELF
    | catalog_watch.IN_IGNORED
    | catalog_watch.IN_UNMOUNT
)

_ADOPT_CHUNK = 512
"""Loaded documents added to the scorer's pool between two pacing checkpoints."""


def _postings(stored: StoredPostings) -> dict[str, Slots]:
    """A loaded column: each word's slots are a view into the one blob (no copies)."""
    if len(stored.words) != len(stored.counts) or sum(stored.counts) * 4 != len(stored.slots):
        raise ValueError("postings do not add up")
    blob = memoryview(stored.slots).cast("I")
    ends = list(itertools.accumulate(stored.counts))
    starts = [0, *ends[:-1]]
    return dict(zip(stored.words, map(blob.__getitem__, map(slice, starts, ends)), strict=True))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (the catalog makes no cycles; see module doc)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _relative(topic: TopicFile) -> str:
    return topic.relative_path


def _trusted(entry: CachedFile, info: os.stat_result) -> bool:
    """The cached result still holds for a file that now ``stat``-s as ``info``."""
    signature = entry.signature
    if signature is None or signature != signature_of(info):
        return False
    return not recent(signature[3], signature[4], entry.read_ns)


@attrs.define
class _RootState:
    info: tuple[int, int] | Diagnostic | None = None
    files: list[TopicFile] | None = None
    listing_diagnostics: list[Diagnostic] = attrs.field(factory=list)
    reached: set[str] = attrs.field(factory=set)
    prefixes: dict[str, str] = attrs.field(factory=dict)
    watched: bool = False
    resync: bool = True
    force_validate: bool = False
    chain: list[int] = attrs.field(factory=list)
    keys: set[tuple[int, int]] = attrs.field(factory=set)
    """``(device, inode)`` of every directory this root scanned (and so claimed)."""


@attrs.define
class CatalogStats:
    """Counters for tests, benchmarks and logs (cumulative since the catalog opened)."""

    mode: str = "new"
    refreshes: int = 0
    reads: int = 0
    stats: int = 0
    listings: int = 0
    resyncs: int = 0
    overflows: int = 0
    loaded: int = 0
    stale_on_load: int = 0
    load_problem: str | None = None


def _root_info(root: Root) -> tuple[int, int] | Diagnostic:
    """The scanner's check of a root: its (device, inode), or the diagnostic."""
    return root_check(root)


def _ancestors(path: str) -> list[tuple[str, str]]:
    """``(directory, child)`` pairs from ``/`` down to the root's parent."""
    pairs = []
    head, tail = os.path.split(path)
    while tail:
        pairs.append((head, tail))
        head, tail = os.path.split(head)
    pairs.reverse()
    return pairs


class CatalogSource:
    """A document source that keeps parsed documents between recalls (see the module doc).

    ``cache_path``: where to persist the catalog (``None``: in memory only).
    ``watch=False`` turns inotify off, so every recall re-validates by listing
    and ``stat`` (the fallback, also used where inotify is unavailable).
    ``clock`` returns wall-clock nanoseconds (the files' timestamps' clock).
    ``scorer`` is the ranking its snapshots carry (the engine passes its own,
    ``fielded`` by default): the catalog keeps that scorer's per-document data,
    and only that scorer's, up to date file by file.
    Thread-safe: :meth:`snapshot` may be called from several threads at once.
    """

    def __init__(
        self,
        tree: MemoryTree,
        *,
        cache_path: str | os.PathLike[str] | None = None,
        watch: bool = True,
        clock: Callable[[], int] = time.time_ns,
        scorer: ScorerName = "reference",
    ) -> None:
        self.tree = tree
        self.scorer: ScorerName = scorer
        self.stats = CatalogStats()
        self._roots = tree.roots
        self._clock = clock
        self._lock = threading.Lock()
        self._cache_path = self._checked_cache_path(cache_path)
        self._watcher = catalog_watch.open_watcher() if watch else None
        if self._watcher is not None:
            # A catalog dropped without close() still gives its inotify instance back.
            weakref.finalize(self, self._watcher.close)
        self.stats.mode = "inotify" if self._watcher is not None else "stat"
        self._snapshot: Snapshot | None = None
        self._reset()
        self._loaded = self._cache_path is None
        self._changed_since_save = False
        self._closed = False
        self._warned_limit = False

    # -- public ---------------------------------------------------------------------------

    @property
    def cache_path(self) -> str | None:
        """The persisted catalog file, or ``None`` when persistence is off."""
        return self._cache_path

    def snapshot(self) -> Snapshot:
        """Documents, ranker and diagnostics as a full scan would give them now."""
        with self._lock, _collector_paused():
            if not self._loaded:
                self._loaded = True
                if self._load():
                    self._refresh()
                    self._report_stale()
            changed = self._refresh()
            if changed or self._snapshot is None:
                self._snapshot = self._publish()
            return self._snapshot

    def preload(self) -> None:
        """Load the cache file and validate it against the tree now (in a worker thread,
        when the engine opens), so the first recall finds the catalog ready.

        Paces itself like a scan worker. A failure is logged; the first recall
        then tries again.
        """
        with pacing.worker():
            try:
                if not self._closed:
                    self.snapshot()
            except Exception:
                log.exception("catalog: preloading failed; the first recall will retry")

    def save(self) -> bool:
        """Write the catalog file now (atomically); False when persistence is off or failed."""
        with self._lock:
            return self._save()

    def close(self) -> None:
        """Save if anything changed, and release the inotify instance (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._changed_since_save:
                self._save()
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None
            self.stats.mode = "stat"
            for state in self._state:
                state.watched = False

    # -- persistence ----------------------------------------------------------------------

    def _checked_cache_path(self, cache_path: str | os.PathLike[str] | None) -> str | None:
        if cache_path is None:
            return None
        path = os.path.abspath(os.fspath(cache_path))
        real = os.path.realpath(path)
        for root in self._roots:
            for base in {root.path, os.path.realpath(root.path)}:
                if real == base or real.startswith(base.rstrip("/") + "/"):
                    log.warning(
                        "catalog: cache file %s is inside memory root %s; persistence is off",
                        path,
                        root.path,
                    )
                    return None
        try:
            check_cache_target(path)
        except OSError as exc:
            self.stats.load_problem = "not a regular file"
            log.warning("catalog: %s; running without a cache file", exc.strerror)
            return None
        return path

    def _reset(self) -> None:
        """Forget everything known about the tree (a cold start)."""
        self._state = [_RootState() for _ in self._roots]
        self._listings: dict[str, _Listing] = {}
        self._link_dirs: set[str] = set()
        self._real_roots: tuple[str, ...] | None = None
        self._stale: set[str] = set()
        self._revalidate_dirs: set[str] = set()
        self._wd_dirs: dict[int, set[str]] = {}
        self._wd_chain: dict[int, set[tuple[int, str]]] = {}
        self._entries: dict[tuple[int, str], CachedFile] = {}
        self._order: list[OrderKey] = []
        self._order_add: set[OrderKey] = set()
        self._order_del: set[OrderKey] = set()
        self._recency: list[OrderKey] = []  # fielded only: mtime first (see recency_key)
        self._docs: list[MemoryDocument | None] = []
        self._fields: list[FieldTexts | None] = []
        self._free: list[int] = []
        self._with_problems: set[tuple[int, str]] = set()
        self._linked: set[tuple[int, str]] = set()
        self._demoted: set[tuple[int, str]] = set()
        """Hard links recalled under another path (a ``duplicate_link`` diagnostic, no document)."""
        self._builder = IndexBuilder()
        self._pool = FieldedPool()
        self._pending: dict[int, tuple[FieldTexts | None, FieldTexts | None]] = {}
        self._by_type: dict[MemoryType, set[int]] = {kind: set() for kind in MemoryType}
        self._by_path: dict[str, tuple[int, ...]] = {}
        self._maps_shared = False
        self._snapshot = None
        self._loaded_keys: set[tuple[int, str]] = set()
        self._reread_keys: set[tuple[int, str]] = set()

    def _load(self) -> bool:
        """Adopt the catalog file if it verifies; False (and a log line) if not."""
        assert self._cache_path is not None
        began = time.perf_counter()
        removed = remove_stale_temporaries(os.path.dirname(self._cache_path))
        if removed:
            log.info("catalog: removed %d temporary file(s) of interrupted writes", len(removed))
        roots = [(root.scope.value, root.path) for root in self._roots]
        result = load_catalog(
            self._cache_path,
            roots,
            follow_links=self.tree.follow_links,
            scorer=self.scorer,
            checkpoint=pacing.checkpoint,
        )
        if isinstance(result, LoadFailure):
            if result.reason != "missing":
                self.stats.load_problem = result.reason
                log.warning(
                    "catalog: %s: %s (%s); rebuilding from the tree",
                    self._cache_path,
                    result.reason,
                    result.detail,
                )
            return False
        try:
            self._adopt(result)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            self._reset()
            self.stats.load_problem = "corrupt"
            log.warning(
                "catalog: %s: corrupt (%s: %s); rebuilding from the tree",
                self._cache_path,
                type(exc).__name__,
                exc,
            )
            return False
        log.info(
            "catalog: loaded %d files from %s in %.0f ms; validating against the tree",
            len(self._entries),
            self._cache_path,
            (time.perf_counter() - began) * 1000,
        )
        self._loaded_keys = set(self._entries)
        return True

    def _report_stale(self) -> None:
        """Count and log the loaded entries that the first validation found out of date."""
        entries = self._entries
        stale = self._loaded_keys - entries.keys()
        stale.update(key for key in self._loaded_keys & entries.keys() if key in self._reread_keys)
        self.stats.stale_on_load = len(stale)
        self._loaded_keys = set()
        self._reread_keys = set()
        if stale:
            log.info(
                "catalog: %d of %d cached files changed since the file was saved; re-read",
                len(stale),
                self.stats.loaded,
            )

    def _adopt(self, stored: StoredCatalog) -> None:
        """Take over a verified file's state; raises ValueError if it is inconsistent."""
        slots = [e.slot for e in stored.entries if e.document is not None]
        if len(set(slots)) != len(slots) or any(slot < 0 for slot in slots):
            raise ValueError("document slots are not unique")
        fielded = self.scorer == "fielded"
        if len(stored.postings) != (0 if fielded else 3):
            raise ValueError("the word index needs three columns (none for fielded)")
        capacity = max(slots, default=-1) + 1
        analysed: list[tuple[int, DocumentFeatures]] = []
        self._docs = [None] * capacity
        self._fields = [None] * capacity
        for entry in stored.entries:
            key = (entry.root_index, entry.path)
            self._entries[key] = entry
            if entry.diagnostics:
                self._with_problems.add(key)
            if entry.nlink > 1:
                self._linked.add(key)
            if any(d[1] == DiagnosticKind.DUPLICATE_LINK for d in entry.diagnostics):
                self._demoted.add(key)
            document = entry.document
            data = entry.features if fielded else entry.fields
            if document is None or data is None:
                entry.slot = -1
                continue
            self._docs[entry.slot] = document
            if entry.features is not None:
                analysed.append((entry.slot, entry.features))
            self._fields[entry.slot] = entry.fields
            self._order.append(self._order_key(entry))
            self._map_slot(entry.slot, document, add=True)
        for start in range(0, len(analysed), _ADOPT_CHUNK):
            pacing.checkpoint()
            self._pool.extend(analysed[start : start + _ADOPT_CHUNK])
        self._order.sort()
        if fielded:
            self._recency = sorted(map(recency_key, self._order))
        self._free = [slot for slot in range(capacity) if self._docs[slot] is None]
        if not fielded:
            self._builder = IndexBuilder.from_postings([_postings(c) for c in stored.postings])
        for stored_listing in stored.listings:
            self._listings[stored_listing.path] = _Listing(
                stored_listing.path,
                stored_listing.items,
                None,
                stored_listing.signature,
                stored_listing.listed_ns,
                False,
            )
            self._stale.add(stored_listing.path)
        self.stats.loaded = len(self._entries)

    def _stored(self) -> StoredCatalog:
        entries = list(self._entries.values())
        listings = [
            StoredListing(
                path=listing.path,
                signature=listing.signature,
                listed_ns=listing.listed_ns,
                items=listing.items,
            )
            for listing in self._listings.values()
            if listing.error is None
            and listing.signature is not None
            and not listing.has_symlink
            and not listing.links
            and listing.path not in self._stale
        ]
        self._flush_index()
        return StoredCatalog(
            roots=[(root.scope.value, root.path) for root in self._roots],
            follow_links=self.tree.follow_links,
            scorer=self.scorer,
            entries=entries,
            listings=listings,
            postings=[
                StoredPostings(
                    words=list(column),
                    counts=[len(slots) for slots in column.values()],
                    slots=b"".join(slots.tobytes() for slots in column.values()),
                )
                for column in (() if self.scorer == "fielded" else self._builder.postings())
            ],
        )

    def _save(self) -> bool:
        if self._cache_path is None:
            return False
        if self._snapshot is None:
            return False  # nothing validated yet: keep whatever file is there
        try:
            save_catalog(self._cache_path, self._stored())
        except OSError as exc:
            log.warning("catalog: could not write %s: %s", self._cache_path, exc)
            return False
        self._changed_since_save = False
        return True

    # -- refresh --------------------------------------------------------------------------

    def _refresh(self) -> bool:
        """Bring the catalog up to date with the tree; True if the result may have changed."""
        self.stats.refreshes += 1
        resync: set[int] = set()
        dirty_dirs: set[str] = set()
        dirty_paths: set[str] = set()
        touched: dict[str, set[str]] = {}
        if self._watcher is None:
            resync.update(range(len(self._roots)))
        else:
            for event in self._watcher.drain():
                self._note(event, resync, dirty_dirs, dirty_paths, touched)
            resync.update(i for i, s in enumerate(self._state) if not s.watched or s.resync)
        if resync:
            self.stats.resyncs += 1
        for index in resync:
            self._begin_resync(index)
        self._stale.update(d for d in dirty_dirs if d in self._listings)
        self._stale.update(p for p in dirty_paths if p in self._listings)
        self._real_roots = None
        self._recheck_links()
        patched: dict[str, tuple[set[str], set[str]]] = {}
        for directory, names in touched.items():
            if directory in self._listings and directory not in self._stale:
                delta = self._patch(directory, names)
                if delta is None:
                    self._stale.add(directory)
                else:
                    patched[directory] = delta
        reread = {
            (index, path)
            for path in dirty_paths
            for index in range(len(self._roots))
            if (index, path) in self._entries
        }
        changed = False
        walked = False
        claims_moved = False
        for index in range(len(self._roots)):
            state = self._state[index]
            if (
                claims_moved
                or state.force_validate
                or state.files is None
                or state.info is None
                or not state.reached.isdisjoint(self._stale)
            ):
                walked = True
                before = state.keys
                changed |= self._walk_root(index, reread)
                # Later roots skip what earlier ones claimed: if the claims moved, they walk too.
                claims_moved |= state.keys != before
            else:
                changed |= self._recheck_root(index, reread, patched)
        if walked:
            self._collect_listings()
        if self._linked or self._demoted:
            changed |= self._settle_links()
        if changed:
            self._changed_since_save = True
        return changed

    def _settle_links(self) -> bool:
        """Hard links, as the scanner treats them: of the entries sharing a ``(device, inode)``,
        the first by root and relative path keeps its document; the others hold only a
        ``duplicate_link`` diagnostic. An entry no longer shadowed is read again."""
        groups: dict[tuple[int, int], list[tuple[int, str]]] = {}
        for key in self._linked:
            signature = self._entries[key].signature
            if signature is not None:
                groups.setdefault((signature[0], signature[1]), []).append(key)
        shadowed: dict[tuple[int, str], str] = {}
        for keys in groups.values():
            if len(keys) > 1:
                keys.sort(key=lambda k: (k[0], self._entries[k].relative_path))
                shadowed.update((key, keys[0][1]) for key in keys[1:])
        changed = False
        for key in self._demoted - shadowed.keys():
            self._demoted.discard(key)
            entry = self._entries[key]
            topic = TopicFile(key[0], self._roots[key[0]].scope, key[1], entry.relative_path)
            changed |= self._read(topic, entry)
        for key, first in shadowed.items():
            entry = self._entries[key]
            wanted = (stored_diagnostic(duplicate_link_diagnostic(key[1], first)),)
            if key in self._demoted and entry.diagnostics == wanted:
                continue
            self._release(key, keep_slot=False)
            self._entries[key] = CachedFile(
                root_index=entry.root_index,
                path=entry.path,
                relative_path=entry.relative_path,
                signature=entry.signature,
                read_ns=entry.read_ns,
                nlink=entry.nlink,
                document=None,
                diagnostics=wanted,
                fields=None,
            )
            self._with_problems.add(key)
            self._linked.add(key)
            self._demoted.add(key)
            changed = True
        return changed

    def _roots_now(self) -> tuple[str, ...]:
        """The resolved roots, computed at most once per refresh."""
        if self._real_roots is None:
            self._real_roots = real_roots(self.tree)
        return self._real_roots

    def _recheck_links(self) -> None:
        """Mark for listing again every directory whose unfollowed symlinks now resolve
        differently (or whose roots moved): such a change raises no event in the directory."""
        for directory in self._link_dirs:
            listing = self._listings.get(directory)
            if listing is None or directory in self._stale:
                continue
            if listing.roots != self._roots_now() or any(
                link_fingerprint(os.path.join(directory, name)) != fingerprint
                for name, fingerprint in listing.links
            ):
                self._stale.add(directory)

    def _patch(self, directory: str, names: set[str]) -> tuple[set[str], set[str]] | None:
        """Update a leaf listing for entries events named: (removed, added) topic paths.

        ``None`` when the directory must be listed again instead: it holds more than
        topic files, or a named entry is now a directory, a symlink or unreadable.
        """
        listing = self._listings[directory]
        if not listing.leaf or listing.has_symlink or listing.wd is None:
            return None
        now = self._clock()
        try:
            info = os.stat(directory)
        except OSError:
            return None
        topics: set[str] = set()
        for name in names:
            try:
                mode = os.lstat(os.path.join(directory, name)).st_mode
            except FileNotFoundError:
                continue
            except OSError:
                return None
            if stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
                return None
            if stat.S_ISREG(mode) and name.endswith(".md") and name != INDEX_FILENAME:
                topics.add(name)
        before = {item.name for item in listing.items if item.name in names}
        kept = [item for item in listing.items if item.name not in names]
        kept.extend(
            ListedEntry(TOPIC, name, os.path.join(directory, name)) for name in sorted(topics)
        )
        signature = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
        patched = _Listing(directory, tuple(kept), None, signature, now, False, listing.wd)
        self._listings[directory] = patched
        return (
            {os.path.join(directory, n) for n in before - topics},
            {os.path.join(directory, n) for n in topics - before},
        )

    def _note(
        self,
        event: catalog_watch.WatchEvent,
        resync: set[int],
        dirty_dirs: set[str],
        dirty_paths: set[str],
        touched: dict[str, set[str]],
    ) -> None:
        mask = event.mask
        if mask & catalog_watch.IN_Q_OVERFLOW:
            self.stats.overflows += 1
            log.info("catalog: inotify queue overflowed; re-validating every root")
            resync.update(range(len(self._roots)))
            return
        for index, child in self._wd_chain.get(event.wd, ()):
            if not event.name or event.name == child:
                resync.add(index)
        for directory in self._wd_dirs.get(event.wd, ()):
            if event.name:
                dirty_paths.add(os.path.join(directory, event.name))
                if mask & catalog_watch.IN_ISDIR:
                    dirty_dirs.add(directory)
                elif mask & _ENTRY_EVENTS:
                    touched.setdefault(directory, set()).add(event.name)
                elif not mask & _CONTENT_EVENTS:
                    dirty_dirs.add(directory)
            else:
                dirty_dirs.add(directory)
                if mask & _GONE_EVENTS:
                    dirty_dirs.add(os.path.dirname(directory))
                    resync.update(i for i, r in enumerate(self._roots) if r.path == directory)
        if mask & catalog_watch.IN_IGNORED:
            for directory in self._wd_dirs.pop(event.wd, set()):
                listing = self._listings.get(directory)
                if listing is not None and listing.wd == event.wd:
                    listing.wd = None
            for index, _ in self._wd_chain.pop(event.wd, set()):
                resync.add(index)

    def _begin_resync(self, index: int) -> None:
        state = self._state[index]
        state.info = None
        state.resync = False
        self._stale.update(state.reached)
        self._stale.add(self._roots[index].path)
        state.watched = self._watch_chain(index)
        state.force_validate = True

    def _watch_chain(self, index: int) -> bool:
        """(Re)watch every ancestor of a root; False if the root cannot be trusted to inotify."""
        state = self._state[index]
        for wd in state.chain:
            roles = self._wd_chain.get(wd)
            if roles is not None:
                for role in [r for r in roles if r[0] == index]:
                    roles.discard(role)
                if not roles:
                    del self._wd_chain[wd]
                    self._forget_wd(wd)
        state.chain = []
        if self._watcher is None:
            return False
        path = self._roots[index].path
        existing = path
        while not os.path.lexists(existing):
            parent = os.path.dirname(existing)
            if parent == existing:
                break
            existing = parent
        fstype = catalog_watch.filesystem_type(existing)
        if fstype not in catalog_watch.LOCAL_FILESYSTEMS:
            return False
        for directory, child in _ancestors(path):
            if os.path.islink(directory):
                return False
            try:
                wd = self._watcher.add(directory)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    break  # a missing ancestor: its parent's watch sees it appear
                self._watch_refused(exc)
                return False
            self._wd_chain.setdefault(wd, set()).add((index, child))
            state.chain.append(wd)
        return not os.path.islink(path)

    def _watch_refused(self, exc: OSError) -> None:
        if catalog_watch.is_watch_limit(exc) and not self._warned_limit:
            self._warned_limit = True
            log.warning(
                "catalog: inotify refused a watch (%s); raise fs.inotify.max_user_watches. "
                "Affected roots are re-validated by stat on every recall",
                exc.strerror,
            )

    def _forget_wd(self, wd: int) -> None:
        if wd in self._wd_dirs or wd in self._wd_chain or self._watcher is None:
            return
        self._watcher.remove(wd)

    def _walk_root(self, index: int, reread: set[tuple[int, str]]) -> bool:
        """List the root again (from cached listings where still valid) and sync its files."""
        state = self._state[index]
        force, state.force_validate = state.force_validate, False
        old_files = state.files
        self._revalidate_dirs = set()
        files, problems = self._walk(index)
        changed = old_files is None or files != old_files
        changed |= problems != state.listing_diagnostics
        state.files = files
        state.listing_diagnostics = problems
        keep = {topic.path for topic in files}
        if old_files is None:
            gone = [k for k in self._entries if k[0] == index and k[1] not in keep]
        else:
            gone = [(index, t.path) for t in old_files if t.path not in keep]
        for key in gone:
            changed |= self._drop(key)
        revalidate = self._revalidate_dirs
        for topic in files:
            key = (index, topic.path)
            entry = self._entries.get(key)
            if entry is None or key in reread:
                changed |= self._read(topic, entry)
            elif force or entry.nlink > 1 or os.path.dirname(topic.path) in revalidate:
                changed |= self._validate(topic, entry)
        return changed

    def _recheck_root(
        self,
        index: int,
        reread: set[tuple[int, str]],
        patched: dict[str, tuple[set[str], set[str]]],
    ) -> bool:
        """No listing of this root needs a walk: apply patched leaves and named changes."""
        state = self._state[index]
        files = state.files
        assert files is not None
        changed = False
        scope = self._roots[index].scope
        for directory in state.reached.intersection(patched):
            removed, added = patched[directory]
            prefix = state.prefixes[directory]
            for path in removed:
                relative = prefix + os.path.basename(path)
                position = bisect.bisect_left(files, relative, key=_relative)
                if position < len(files) and files[position].path == path:
                    del files[position]
                changed |= self._drop((index, path))
            for path in added:
                topic = TopicFile(index, scope, path, prefix + os.path.basename(path))
                bisect.insort(files, topic, key=_relative)
                changed |= self._read(topic, self._entries.get((index, path)))
        for key in [k for k in reread if k[0] == index]:
            entry = self._entries.get(key)
            if entry is not None:
                topic = TopicFile(index, scope, key[1], entry.relative_path)
                changed |= self._read(topic, entry)
        for key in [k for k in self._linked if k[0] == index]:
            entry = self._entries[key]
            changed |= self._validate(TopicFile(index, scope, key[1], entry.relative_path), entry)
        return changed

    def _walk(self, index: int) -> tuple[list[TopicFile], list[Diagnostic]]:
        """:func:`~memrecall.sources.scanner.list_topic_files` for one root, from the listings."""
        root = self._roots[index]
        state = self._state[index]
        problems: list[Diagnostic] = []
        state.reached = set()
        state.prefixes = {}
        state.keys = set()
        if state.info is None:
            state.info = _root_info(root)
        if isinstance(state.info, Diagnostic):
            problems.append(state.info)
            return [], problems
        claimed: dict[tuple[int, int], int] = {}
        for earlier in range(index - 1, -1, -1):
            claimed.update(dict.fromkeys(self._state[earlier].keys, earlier))
        owner = claimed.get(state.info)
        if owner is not None:
            problems.append(overlap_diagnostic(root.path, self._roots[owner]))
            return [], problems
        found: list[TopicFile] = []
        visited = state.keys
        visited.add(state.info)
        pending = [(root.path, "")]
        while pending:
            directory, prefix = pending.pop()
            state.reached.add(directory)
            state.prefixes[directory] = prefix
            listing = self._listing(directory, index)
            if listing.error is not None:
                problems.append(listing.error)
                continue
            for item in listing.items:
                if item.kind == DIR:
                    assert item.key is not None
                    if item.key in visited:
                        problems.append(loop_diagnostic(item.path))
                        continue
                    owner = claimed.get(item.key)
                    if owner is not None:
                        problems.append(overlap_diagnostic(item.path, self._roots[owner]))
                        continue
                    visited.add(item.key)
                    pending.append((item.path, prefix + item.name + "/"))
                elif item.kind == TOPIC:
                    found.append(TopicFile(index, root.scope, item.path, prefix + item.name))
                else:
                    assert item.diagnostic is not None
                    problems.append(_diagnostic(item.diagnostic))
        found.sort(key=_relative)
        return found, problems

    def _listing(self, directory: str, index: int) -> _Listing:
        cached = self._listings.get(directory)
        if cached is not None and directory not in self._stale:
            return cached
        state = self._state[index]
        now = self._clock()
        wd: int | None = None
        refused = False
        if state.watched and self._watcher is not None:
            try:
                wd = self._watcher.add(directory)
            except OSError as exc:
                refused = True
                self._watch_refused(exc)
        listing: _Listing | None = None
        if (
            cached is not None
            and cached.signature is not None
            and cached.error is None
            and not cached.has_symlink
            and not cached.links
        ):
            try:
                info = os.stat(directory)
            except OSError:
                info = None
            if (
                info is not None
                and (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
                == cached.signature
                and not recent(cached.signature[2], cached.signature[3], cached.listed_ns)
            ):
                listing = cached
        if listing is None:
            self.stats.listings += 1
            pacing.checkpoint()  # once per directory listed: the loop may need the GIL
            listing = list_directory(
                directory, now, follow_links=self.tree.follow_links, roots=self._roots_now()
            )
        continuous = cached is not None and wd is not None and cached.wd == wd
        if not continuous:
            self._revalidate_dirs.add(directory)
        if (refused and listing.error is None) or listing.has_symlink:
            state.watched = False  # re-validated by stat until a resync can watch it again
            state.resync = True
        if cached is not None and cached.wd is not None and cached.wd != wd:
            self._unwatch_dir(directory, cached.wd)
        listing.wd = wd
        if wd is not None:
            self._wd_dirs.setdefault(wd, set()).add(directory)
        self._listings[directory] = listing
        if listing.links:
            self._link_dirs.add(directory)
        else:
            self._link_dirs.discard(directory)
        self._stale.discard(directory)
        return listing

    def _unwatch_dir(self, directory: str, wd: int) -> None:
        roles = self._wd_dirs.get(wd)
        if roles is None:
            return
        roles.discard(directory)
        if not roles:
            del self._wd_dirs[wd]
            self._forget_wd(wd)

    def _collect_listings(self) -> None:
        reached: set[str] = set()
        for state in self._state:
            reached |= state.reached
        for directory in [d for d in self._listings if d not in reached]:
            listing = self._listings.pop(directory)
            self._link_dirs.discard(directory)
            self._stale.discard(directory)
            if listing.wd is not None:
                self._unwatch_dir(directory, listing.wd)

    # -- entries --------------------------------------------------------------------------

    @staticmethod
    def _order_key(entry: CachedFile) -> OrderKey:
        document = entry.document
        assert document is not None
        return (
            _SCOPE_RANK[document.scope],
            -document.mtime,
            document.relative_path,
            entry.root_index,
            entry.slot,
        )

    def _validate(self, topic: TopicFile, entry: CachedFile) -> bool:
        self.stats.stats += 1
        if self.stats.stats % 256 == 0:
            pacing.checkpoint()
        try:
            info = os.stat(topic.path)
        except OSError:
            return self._read(topic, entry)
        if _trusted(entry, info):
            return False
        return self._read(topic, entry)

    def _read(self, topic: TopicFile, old: CachedFile | None) -> bool:
        """Read ``topic`` again; True if its document or diagnostics changed."""
        self.stats.reads += 1
        pacing.checkpoint()  # once per file read: the loop may need the GIL
        seen = self._clock()
        try:
            info = os.stat(topic.path)
            signature: Signature | None = signature_of(info)
            nlink = info.st_nlink
        except OSError:
            signature, nlink = None, 1
        document, problems = read_topic_file(topic)
        diagnostics = tuple(stored_diagnostic(d) for d in problems)
        key = (topic.root_index, topic.path)
        if self._loaded_keys and old is not None:
            self._reread_keys.add(key)
        if (
            old is not None
            and old.document == document
            and old.diagnostics == diagnostics
            and old.relative_path == topic.relative_path
        ):
            old.signature, old.read_ns, old.nlink = signature, seen, nlink
            if nlink > 1:
                self._linked.add(key)
            else:
                self._linked.discard(key)
            return False
        slot = -1
        if old is not None:
            slot = self._release(key, keep_slot=document is not None)
        entry = CachedFile(
            root_index=topic.root_index,
            path=topic.path,
            relative_path=topic.relative_path,
            signature=signature,
            read_ns=seen,
            nlink=nlink,
            document=document,
            diagnostics=diagnostics,
            fields=None,
        )
        if document is not None:
            if self.scorer == "fielded":
                entry.features = DocumentFeatures.of(document, checkpoint=pacing.checkpoint)
            else:
                entry.fields = field_texts(DocumentFields.of(document))
        self._entries[key] = entry
        if diagnostics:
            self._with_problems.add(key)
        if nlink > 1:
            self._linked.add(key)
        if document is not None:
            entry.slot = slot if slot >= 0 else self._allocate()
            self._index_slot(entry.slot, entry.fields, entry.features)
            self._docs[entry.slot] = document
            self._map_slot(entry.slot, document, add=True)
            self._reorder(self._order_key(entry), add=True)
        return True

    def _drop(self, key: tuple[int, str]) -> bool:
        """Forget a file that is no longer listed; True if there was one."""
        if key not in self._entries:
            return False
        self._release(key, keep_slot=False)
        return True

    def _release(self, key: tuple[int, str], *, keep_slot: bool) -> int:
        """Remove an entry; returns its slot when kept for the entry replacing it, else -1."""
        entry = self._entries.pop(key)
        self._with_problems.discard(key)
        self._linked.discard(key)
        self._demoted.discard(key)
        if entry.slot < 0:
            return -1
        self._reorder(self._order_key(entry), add=False)
        assert entry.document is not None
        self._map_slot(entry.slot, entry.document, add=False)
        self._docs[entry.slot] = None
        if keep_slot:
            return entry.slot
        self._index_slot(entry.slot, None, None)
        return -1

    def _reorder(self, key: OrderKey, *, add: bool) -> None:
        """Queue a change to the recall order; :meth:`_sorted_order` applies the batch."""
        if add:
            if key in self._order_del:
                self._order_del.discard(key)
            else:
                self._order_add.add(key)
        elif key in self._order_add:
            self._order_add.discard(key)
        else:
            self._order_del.add(key)

    def _sorted_order(self) -> list[OrderKey]:
        """The recall order with queued changes applied (bulk changes re-sort once)."""
        gone, new = self._order_del, self._order_add
        self._order = apply(self._order, gone, new)
        if self.scorer == "fielded":
            recency = recency_key
            self._recency = apply(self._recency, set(map(recency, gone)), set(map(recency, new)))
        self._order_add, self._order_del = set(), set()
        return self._order

    def _map_slot(self, slot: int, document: MemoryDocument, *, add: bool) -> None:
        """Keep the type and path maps handed to published indexes (copy on write)."""
        if self._maps_shared:
            self._by_type = {kind: set(members) for kind, members in self._by_type.items()}
            self._by_path = dict(self._by_path)
            self._maps_shared = False
        group = self._by_path.get(document.path, ())
        if add:
            self._by_type[document.type].add(slot)
            self._by_path[document.path] = (*group, slot)
        else:
            self._by_type[document.type].discard(slot)
            rest = tuple(s for s in group if s != slot)
            if rest:
                self._by_path[document.path] = rest
            else:
                del self._by_path[document.path]

    def _index_slot(
        self, slot: int, fields: FieldTexts | None, features: DocumentFeatures | None
    ) -> None:
        """Index ``slot`` with this document data (``None``: not at all).

        The ``fielded`` pool changes at once (its published views are copy on
        write); the word index's change is queued for the next flush.
        """
        if features is None:
            self._pool.remove(slot)
        else:
            self._pool.add(slot, features)
        before = self._pending[slot][0] if slot in self._pending else self._fields[slot]
        self._pending[slot] = (before, fields)
        self._fields[slot] = fields

    def _allocate(self) -> int:
        if self._free:
            return self._free.pop()
        self._docs.append(None)
        self._fields.append(None)
        return len(self._docs) - 1

    def _flush_index(self) -> None:
        if not self._pending:
            return
        if self.scorer != "fielded":
            self._builder.apply(self._pending)
        # A slot freed in this batch is reusable only once the index no longer lists it.
        self._free.extend(slot for slot, (_, after) in self._pending.items() if after is None)
        self._pending = {}

    # -- publication ----------------------------------------------------------------------

    def _publish(self) -> Snapshot:
        self._flush_index()
        slots = list(map(SLOT, self._sorted_order()))
        documents = cast("tuple[MemoryDocument, ...]", tuple(map(self._docs.__getitem__, slots)))
        diagnostics: list[Diagnostic] = []
        for state in self._state:
            diagnostics.extend(state.listing_diagnostics)
        problem_entries = sorted(
            (self._entries[key] for key in self._with_problems),
            key=lambda e: (e.root_index, e.relative_path),
        )
        for entry in problem_entries:
            diagnostics.extend(_diagnostic(d) for d in entry.diagnostics)
        self._maps_shared = True
        if self.scorer == "fielded":
            view = self._pool.view(slots, checkpoint=pacing.checkpoint)
            recency = list(map(SLOT, self._recency))
            lookups = Lookups(slots, recency, self._by_path)
            return Snapshot(documents, view, tuple(diagnostics), order=lookups)
        index = CatalogIndex(
            documents,
            slots,
            list(self._fields),
            self._builder.freeze(),
            by_type=self._by_type,
            by_path=self._by_path,
        )
        return Snapshot(documents, index, tuple(diagnostics), preparer=index)
