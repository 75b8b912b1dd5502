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

The parts: the listings and the refresh logic are here; every topic file's
entry and the scorer's index over the documents are kept by
:class:`~memrecall.sources.catalog.entries.CatalogEntries`; listing one
directory is :mod:`~memrecall.sources.catalog.listing`; the inotify watches
and what their events mean are :class:`~memrecall.sources.catalog.feed.ChangeFeed`
(over :mod:`~memrecall.sources.catalog.watch`); the recall order is
:mod:`~memrecall.sources.catalog.order`.

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
import gc
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Sequence

import attrs
import msgspec

from memrecall.sources import pacing
from memrecall.sources.cachefile import CorruptRecord
from memrecall.sources.catalog.entries import CatalogEntries
from memrecall.sources.catalog.feed import ChangeFeed, Changes
from memrecall.sources.catalog.listing import (
    DIR,
    SUSPECT_NS,
    TOPIC,
    list_directory,
    recent,
)
from memrecall.sources.catalog.listing import Listing as _Listing
from memrecall.sources.catalog.listing import diagnostic_of as _diagnostic
from memrecall.sources.catalog.passage_filler import Embedded, PassageFiller, ToEmbed
from memrecall.sources.catalog.quick import QuickContext, quick_start
from memrecall.sources.catalog.stats import CatalogStats
from memrecall.sources.catalog.store import (
    ListedEntry,
    LoadFailure,
    StoredCatalog,
    StoredListing,
    check_cache_target,
    entries_of,
    load_catalog,
    remove_stale_temporaries,
    save_catalog,
)
from memrecall.sources.scanner import (
    INDEX_FILENAME,
    Diagnostic,
    MemoryTree,
    Root,
    TopicFile,
    link_fingerprint,
    loop_diagnostic,
    overlap_diagnostic,
    real_roots,
    root_check,
)
from memrecall.sources.source import ScorerName, Snapshot
from memrecall.sources.turn_reader import background_passage_embedder, default_turns

__all__ = ["SUSPECT_NS", "CatalogSource", "CatalogStats"]

log = logging.getLogger("memrecall.catalog")


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


def _root_info(root: Root) -> tuple[int, int] | Diagnostic:
    """The scanner's check of a root: its (device, inode), or the diagnostic."""
    return root_check(root)


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
        self._feed = ChangeFeed(self._roots, self.stats, watch=watch)
        self.stats.mode = "inotify" if self._feed.active else "stat"
        self._snapshot: Snapshot | None = None
        self._reset()
        self._loaded = self._cache_path is None
        self._changed_since_save = False
        self._closed = False
        self._filler = PassageFiller(
            self._passages_to_embed, self._store_passages, background_passage_embedder
        )

    # -- public ---------------------------------------------------------------------------

    @property
    def cache_path(self) -> str | None:
        """The persisted catalog file, or ``None`` when persistence is off."""
        return self._cache_path

    def snapshot(self) -> Snapshot:
        """Documents, ranker and diagnostics as a full scan would give them now (the
        passages still to embed are embedded after it, in the background:
        :mod:`~memrecall.sources.catalog.passage_filler`)."""
        with self._lock, _collector_paused():
            snapshot = self._current(adopt=False)
            unembedded = self._unembedded()
        if unembedded:
            self._filler.wake()
        return snapshot

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until every passage the last snapshot left is embedded and published (the
        steady state: tests, tools); False if ``timeout`` (seconds) passed first."""
        return self._filler.settle(timeout)

    def _current(self, *, adopt: bool) -> Snapshot:
        """The body of :meth:`snapshot`, under the lock; ``adopt``: take over a quickly
        started file's entries even when nothing changed."""
        if not self._loaded:
            self._loaded = True
            stored = self._read_file()
            if stored is not None and self._start_quickly(stored):
                assert self._snapshot is not None
                if not adopt:
                    return self._snapshot
            elif stored is not None and self._load(stored):
                self._refresh()
                self._files.report_stale()
        changes = None
        if self._pending is not None:
            changes = self._feed.drain(self._listings)
            if not adopt and changes.empty and all(s.watched and not s.resync for s in self._state):
                assert self._snapshot is not None
                return self._snapshot  # nothing changed since the quick start
            self._complete_start()
        changed = self._refresh(changes)
        if changed or self._snapshot is None:
            self._publish()
        assert self._snapshot is not None
        return self._snapshot

    def _publish(self) -> None:
        self._snapshot = self._files.publish(
            d for state in self._state for d in state.listing_diagnostics
        )

    # -- passages (recall across languages) ---------------------------------------------

    def _unembedded(self) -> int:
        """How many passages are still to embed (a quickly started file's, as saved)."""
        if self._closed:
            return 0
        if self._pending is not None:
            return len(self._pending.unembedded)
        return self._files.unembedded

    def _passages_to_embed(self, limit: int) -> list[ToEmbed]:
        with self._lock, _collector_paused():
            if not self._unembedded():
                return []
            if self._pending is not None:
                self._current(adopt=True)
            # a large tree publishes less often: each publication passes over the pool
            return self._files.passages_to_embed(max(limit, len(self._files.entries) // 100))

    def _store_passages(self, embedded: Sequence[Embedded]) -> None:
        with self._lock, _collector_paused():
            if self._closed or not self._files.set_passages(embedded):
                return
            self.stats.embedded += sum(1 for item in embedded if item[2])
            self._changed_since_save = True
            if self._snapshot is not None:
                self._publish()

    def preload(self) -> None:
        """Load the cache file and validate it against the tree now (in a worker thread,
        when the engine opens), so the first recall finds the catalog ready, and with
        ``fielded`` read the turn model (:mod:`memrecall.engine.scoring.turn_model`) too.

        Paces itself like a scan worker. A failure is logged; the first recall
        then tries again.
        """
        with pacing.worker():
            try:
                if not self._closed:
                    self.snapshot()
                if self.scorer == "fielded":
                    default_turns()
            except Exception:
                log.exception("catalog: preloading failed; the first recall will retry")

    def save(self) -> bool:
        """Write the catalog file now (atomically); False when persistence is off or failed."""
        with self._lock:
            return self._save()

    def close(self) -> None:
        """Stop embedding passages, save if anything changed, and release the inotify
        instance (idempotent)."""
        self._filler.close()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._changed_since_save or self._damaged:
                self._save()
            self._feed.close()
            self.stats.mode = "stat"
            for state in self._state:
                state.watched = False

    # -- persistence ----------------------------------------------------------------------

    @property
    def _damaged(self) -> bool:
        """A document of the file this catalog was loaded from did not verify."""
        pending = None if self._pending is None else self._pending.stored
        return self._files.damaged or (pending is not None and pending.failed)

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
        self._feed.reset()
        self._files = CatalogEntries(
            self.scorer, self._clock, self.stats, [root.scope for root in self._roots]
        )
        self._pending: StoredCatalog | None = None
        """A quickly started file whose entries are not adopted yet."""
        self._snapshot = None

    def _read_file(self) -> StoredCatalog | None:
        """The catalog file if it verifies; ``None`` (and a log line) if not."""
        if self._cache_path is None:
            return None
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
            materialize=False,
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
            return None
        return result

    def _start_quickly(self, stored: StoredCatalog) -> bool:
        """Publish ``stored`` as it is if the tree is exactly as it describes
        (:mod:`~memrecall.sources.catalog.quick`); the entries are adopted later, when a
        change needs them (:meth:`_complete_start`). False (nothing kept) otherwise."""
        began = time.perf_counter()
        try:
            context = QuickContext(
                roots=self._roots,
                feed=self._feed,
                clock=self._clock,
                follow_links=self.tree.follow_links,
                real_roots=self._roots_now,
                checkpoint=pacing.checkpoint,
            )
            quick = quick_start(context, stored)
        except (ValueError, IndexError, KeyError, TypeError):
            quick = None  # the full start says what is wrong with the file
        if quick is None:
            self._feed.reset()
            return False
        for index, state in enumerate(self._state):
            state.info = quick.root_infos[index]
            state.chain = quick.chains[index]
            state.watched = True
            state.resync = False
        self._listings = quick.listings
        self._pending = stored
        self._snapshot = quick.snapshot
        files = len(stored.entries) if stored.columns is None else stored.columns.size
        self.stats.loaded = files
        self.stats.stats += files
        self.stats.reads += quick.read_again
        self.stats.stale_on_load = 0
        self.stats.quick_start = True
        log.info(
            "catalog: %d files from %s verified in %.0f ms; nothing changed",
            files,
            self._cache_path,
            (time.perf_counter() - began) * 1000,
        )
        return True

    def _complete_start(self) -> None:
        """Adopt the entries of a quick start: the walk that follows finds its listings
        current and its entries verified, and applies what changed since."""
        stored, self._pending = self._pending, None
        assert stored is not None
        entries_of(stored, pacing.checkpoint)
        self._files.adopt(stored)
        self._files.report_stale()

    def _load(self, result: StoredCatalog) -> bool:
        """Adopt a verified catalog file; False (and a log line) if it is inconsistent."""
        assert self._cache_path is not None
        began = time.perf_counter()
        try:
            entries_of(result, pacing.checkpoint)
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
            len(self._files.entries),
            self._cache_path,
            (time.perf_counter() - began) * 1000,
        )
        return True

    def _adopt(self, stored: StoredCatalog) -> None:
        """Take over a verified file's state; raises ValueError if it is inconsistent.

        Every listing is marked stale: the first refresh checks each against its
        directory, and every entry against its file, before any of it is used.
        """
        self._files.adopt(stored)
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

    def _stored(self) -> StoredCatalog:
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
        return msgspec.structs.replace(
            self._files.stored(),
            roots=[(root.scope.value, root.path) for root in self._roots],
            follow_links=self.tree.follow_links,
            scorer=self.scorer,
            listings=listings,
        )

    def _save(self) -> bool:
        if self._cache_path is None:
            return False
        if self._snapshot is None:
            return False  # nothing validated yet: keep whatever file is there
        if self._pending is not None and not self._damaged:
            return True  # quickly started and unchanged: the file is current
        try:
            if not self._damaged:
                written = save_catalog(self._cache_path, self._stored())
        except OSError as exc:
            log.warning("catalog: could not write %s: %s", self._cache_path, exc)
            return False
        except CorruptRecord as exc:
            log.warning("catalog: %s: a document does not verify (%s)", self._cache_path, exc)
        if self._damaged:
            # The file this catalog was loaded from is damaged: nothing is copied from
            # it, and the next process rebuilds from the tree.
            log.warning("catalog: %s is damaged; removed", self._cache_path)
            with contextlib.suppress(OSError):
                os.unlink(self._cache_path)
            return False
        self._files.read_documents_from(written)
        self._changed_since_save = False
        return True

    # -- refresh --------------------------------------------------------------------------

    def _refresh(self, changes: Changes | None = None) -> bool:
        """Bring the catalog up to date with the tree (``changes``: the feed's events,
        drained already); True if the result may have changed."""
        self.stats.refreshes += 1
        if changes is None:
            changes = self._feed.drain(self._listings)
        resync, dirty_dirs, dirty_paths = changes.resync, changes.dirty_dirs, changes.dirty_paths
        if self._feed.active:
            resync.update(i for i, s in enumerate(self._state) if not s.watched or s.resync)
        else:
            resync.update(range(len(self._roots)))
        if resync:
            self.stats.resyncs += 1
        for index in resync:
            self._begin_resync(index)
        self._stale.update(d for d in dirty_dirs if d in self._listings)
        self._stale.update(p for p in dirty_paths if p in self._listings)
        self._real_roots = None
        self._recheck_links()
        patched: dict[str, tuple[set[str], set[str]]] = {}
        for directory, names in changes.touched.items():
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
            if (index, path) in self._files.entries
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
        if self._files.linked or self._files.demoted:
            changed |= self._files.settle_links(self._roots)
        if changed:
            self._changed_since_save = True
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

    def _begin_resync(self, index: int) -> None:
        state = self._state[index]
        state.info = None
        state.resync = False
        self._stale.update(state.reached)
        self._stale.add(self._roots[index].path)
        state.watched = self._feed.watch_chain(index, state.chain)
        state.force_validate = True

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
            gone = [k for k in self._files.entries if k[0] == index and k[1] not in keep]
        else:
            gone = [(index, t.path) for t in old_files if t.path not in keep]
        for key in gone:
            changed |= self._files.drop(key)
        changed |= self._files.sync(
            index, files, reread=reread, force=force, revalidate=self._revalidate_dirs
        )
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
                changed |= self._files.drop((index, path))
            for path in added:
                topic = TopicFile(index, scope, path, prefix + os.path.basename(path))
                bisect.insort(files, topic, key=_relative)
                changed |= self._files.read(topic, self._files.entries.get((index, path)))
        for key in [k for k in reread if k[0] == index]:
            entry = self._files.entries.get(key)
            if entry is not None:
                topic = TopicFile(index, scope, key[1], entry.relative_path)
                changed |= self._files.read(topic, entry)
        for key in [k for k in self._files.linked if k[0] == index]:
            entry = self._files.entries[key]
            topic = TopicFile(index, scope, key[1], entry.relative_path)
            changed |= self._files.validate(topic, entry)
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
        wd, refused = self._feed.watch_dir(directory) if state.watched else (None, False)
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
            self._feed.unwatch_dir(directory, cached.wd)
        listing.wd = wd
        if wd is not None:
            self._feed.listed(directory, wd)
        self._listings[directory] = listing
        if listing.links:
            self._link_dirs.add(directory)
        else:
            self._link_dirs.discard(directory)
        self._stale.discard(directory)
        return listing

    def _collect_listings(self) -> None:
        reached: set[str] = set()
        for state in self._state:
            reached |= state.reached
        for directory in [d for d in self._listings if d not in reached]:
            listing = self._listings.pop(directory)
            self._link_dirs.discard(directory)
            self._stale.discard(directory)
            if listing.wd is not None:
                self._feed.unwatch_dir(directory, listing.wd)
