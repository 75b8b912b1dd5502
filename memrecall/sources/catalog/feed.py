"""The catalog's change feed: inotify watches and what their events mean for the tree.

:class:`ChangeFeed` owns the catalog's inotify instance
(:mod:`memrecall.sources.catalog.watch`) and knows which watch stands for
which listed directory, and which watches guard each root's chain of
ancestors (a root moved, deleted or replaced raises its events there).
:meth:`ChangeFeed.drain` turns the queued events into :class:`Changes`: the
roots to re-validate whole, the directories to list again, the paths to read
again, and the entries created or removed in leaf directories (which the
catalog can patch without listing). Where inotify is unavailable or off, the
feed is inactive and the catalog re-validates every root on each refresh.
"""

from __future__ import annotations

import errno
import logging
import os
import weakref
from collections.abc import Mapping, Sequence

import attrs

from memrecall.sources.catalog import watch as catalog_watch
from memrecall.sources.catalog.listing import Listing
from memrecall.sources.catalog.stats import CatalogStats
from memrecall.sources.scanner import Root

__all__ = ["ChangeFeed", "Changes"]

log = logging.getLogger("memrecall.catalog")

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


@attrs.define
class Changes:
    """What the queued events name (see :meth:`ChangeFeed.drain`)."""

    resync: set[int] = attrs.field(factory=set)
    """Roots (by index) to re-validate whole."""
    dirty_dirs: set[str] = attrs.field(factory=set)
    """Directories to list again."""
    dirty_paths: set[str] = attrs.field(factory=set)
    """Paths whose file (or directory) changed."""
    touched: dict[str, set[str]] = attrs.field(factory=dict)
    """Directory -> names of entries created, deleted or moved in it."""

    @property
    def empty(self) -> bool:
        """No event named anything."""
        return not (self.resync or self.dirty_dirs or self.dirty_paths or self.touched)


def _ancestors(path: str) -> list[tuple[str, str]]:
    """``(directory, child)`` pairs from ``/`` down to the root's parent."""
    pairs = []
    head, tail = os.path.split(path)
    while tail:
        pairs.append((head, tail))
        head, tail = os.path.split(head)
    pairs.reverse()
    return pairs


class ChangeFeed:
    """The inotify watches of one catalog (``watch=False``: none; see the module doc)."""

    def __init__(self, roots: Sequence[Root], stats: CatalogStats, *, watch: bool) -> None:
        self._roots = roots
        self._stats = stats
        self._watcher = catalog_watch.open_watcher() if watch else None
        if self._watcher is not None:
            # A catalog dropped without close() still gives its inotify instance back.
            weakref.finalize(self, self._watcher.close)
        self._warned_limit = False
        self._wd_dirs: dict[int, set[str]] = {}
        self._wd_chain: dict[int, set[tuple[int, str]]] = {}

    @property
    def active(self) -> bool:
        """Whether events arrive at all (inotify available, on, and not closed)."""
        return self._watcher is not None

    def reset(self) -> None:
        """Forget which watch stands for what (the catalog starts over)."""
        self._wd_dirs = {}
        self._wd_chain = {}

    def close(self) -> None:
        """Release the inotify instance (idempotent); the feed is inactive afterwards."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def drain(self, listings: Mapping[str, Listing]) -> Changes:
        """Read every queued event; a listing whose watch the kernel dropped loses its ``wd``."""
        changes = Changes()
        if self._watcher is not None:
            for event in self._watcher.drain():
                self._note(event, changes, listings)
        return changes

    def _note(
        self, event: catalog_watch.WatchEvent, changes: Changes, listings: Mapping[str, Listing]
    ) -> None:
        mask = event.mask
        if mask & catalog_watch.IN_Q_OVERFLOW:
            self._stats.overflows += 1
            log.info("catalog: inotify queue overflowed; re-validating every root")
            changes.resync.update(range(len(self._roots)))
            return
        for index, child in self._wd_chain.get(event.wd, ()):
            if not event.name or event.name == child:
                changes.resync.add(index)
        for directory in self._wd_dirs.get(event.wd, ()):
            if event.name:
                changes.dirty_paths.add(os.path.join(directory, event.name))
                if mask & catalog_watch.IN_ISDIR:
                    changes.dirty_dirs.add(directory)
                elif mask & _ENTRY_EVENTS:
                    changes.touched.setdefault(directory, set()).add(event.name)
                elif not mask & _CONTENT_EVENTS:
                    changes.dirty_dirs.add(directory)
            else:
                changes.dirty_dirs.add(directory)
                if mask & _GONE_EVENTS:
                    changes.dirty_dirs.add(os.path.dirname(directory))
                    changes.resync.update(
                        i for i, r in enumerate(self._roots) if r.path == directory
                    )
        if mask & catalog_watch.IN_IGNORED:
            for directory in self._wd_dirs.pop(event.wd, set()):
                listing = listings.get(directory)
                if listing is not None and listing.wd == event.wd:
                    listing.wd = None
            for index, _ in self._wd_chain.pop(event.wd, set()):
                changes.resync.add(index)

    def watch_chain(self, index: int, chain: list[int]) -> bool:
        """(Re)watch every ancestor of root ``index``, replacing the watches in ``chain``
        (updated in place); False if the root cannot be trusted to inotify."""
        for wd in chain:
            roles = self._wd_chain.get(wd)
            if roles is not None:
                for role in [r for r in roles if r[0] == index]:
                    roles.discard(role)
                if not roles:
                    del self._wd_chain[wd]
                    self._forget_wd(wd)
        chain.clear()
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
                self._refused(exc)
                return False
            self._wd_chain.setdefault(wd, set()).add((index, child))
            chain.append(wd)
        return not os.path.islink(path)

    def watch_dir(self, directory: str) -> tuple[int | None, bool]:
        """Watch ``directory`` before it is listed: ``(wd, refused)``; ``(None, False)``
        when the feed is inactive."""
        if self._watcher is None:
            return None, False
        try:
            return self._watcher.add(directory), False
        except OSError as exc:
            self._refused(exc)
            return None, True

    def listed(self, directory: str, wd: int) -> None:
        """``directory``'s listing now holds watch ``wd``."""
        self._wd_dirs.setdefault(wd, set()).add(directory)

    def unwatch_dir(self, directory: str, wd: int) -> None:
        """``directory``'s listing no longer holds ``wd`` (removed once nothing does)."""
        roles = self._wd_dirs.get(wd)
        if roles is None:
            return
        roles.discard(directory)
        if not roles:
            del self._wd_dirs[wd]
            self._forget_wd(wd)

    def _refused(self, exc: OSError) -> None:
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
