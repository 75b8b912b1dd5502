"""The catalog's directory listings: a directory's entries as the scanner classifies them.

:func:`list_directory` runs the scanner's classification
(:func:`~memrecall.sources.scanner.classify_entry`) over one directory and
records the result (:class:`Listing`) instead of acting on it, with the
directory's signature taken before listing, so the catalog can reuse it until
the directory changes. The walk over listings stays with the catalog; the
decisions (what is a topic file, a directory, a problem; which links are
followed) are the scanner's, so catalog and scan agree.
"""

from __future__ import annotations

import os
from typing import Final

import attrs

from memrecall.sources.catalog.store import ListedEntry, StoredDiagnostic
from memrecall.sources.scanner import (
    Diagnostic,
    DiagnosticKind,
    EntryClass,
    classify_entry,
    link_fingerprint,
    listing_error,
)

__all__ = [
    "DIR",
    "PROBLEM",
    "SUSPECT_NS",
    "TOPIC",
    "Listing",
    "Signature",
    "diagnostic_of",
    "list_directory",
    "recent",
    "signature_of",
    "stored_diagnostic",
]

Signature = tuple[int, int, int, int, int]
"""``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``."""

DIR, TOPIC, PROBLEM = 0, 1, 2
""":class:`ListedEntry` kinds."""

SUSPECT_NS: Final = 2_000_000_000
"""A file or directory changed this close to the moment it was read is re-read next time."""


def diagnostic_of(stored: StoredDiagnostic) -> Diagnostic:
    """A stored diagnostic as the scanner's."""
    return Diagnostic(stored[0], DiagnosticKind(stored[1]), stored[2], stored[3])


def stored_diagnostic(diagnostic: Diagnostic) -> StoredDiagnostic:
    """A diagnostic as the catalog file stores it."""
    return (diagnostic.path, diagnostic.kind.value, diagnostic.detail, diagnostic.skipped)


def signature_of(info: os.stat_result) -> Signature:
    """A file's :data:`Signature` from its ``stat``."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def recent(mtime_ns: int, ctime_ns: int, seen_ns: int) -> bool:
    """Changed within :data:`SUSPECT_NS` of ``seen_ns`` (or in its future)."""
    return max(mtime_ns, ctime_ns) >= seen_ns - SUSPECT_NS


@attrs.define
class Listing:
    """A directory's classified entries in ``scandir`` order (or the error listing it)."""

    path: str
    items: tuple[ListedEntry, ...]
    error: Diagnostic | None
    signature: tuple[int, int, int, int] | None  # dev, ino, mtime_ns, ctime_ns before listing
    listed_ns: int
    has_symlink: bool  # a followed symlink (follow_links): the root is re-validated by stat
    wd: int | None = None
    links: tuple[tuple[str, tuple[str, int]], ...] = ()
    """Symlinks not followed: (name, :func:`link_fingerprint`) taken before classifying.
    Checked on every refresh, since a change at a link's target raises no event here."""
    roots: tuple[str, ...] = ()
    """The resolved roots the links were classified against."""
    _leaf: bool | None = attrs.field(init=False, default=None, eq=False, repr=False)

    @property
    def leaf(self) -> bool:
        """Only topic files: their order never shows in a scan, so the listing can be
        patched from events (worked out on first use: a new process checks thousands)."""
        if self._leaf is None:
            self._leaf = (
                self.error is None
                and not self.links
                and all(item.kind == TOPIC for item in self.items)
            )
        return self._leaf


def list_directory(
    directory: str, now_ns: int, *, follow_links: bool, roots: tuple[str, ...]
) -> Listing:
    """The scanner's listing loop for one directory, recorded instead of acted on."""
    try:
        info = os.stat(directory)
        signature: tuple[int, int, int, int] | None = (
            info.st_dev,
            info.st_ino,
            info.st_mtime_ns,
            info.st_ctime_ns,
        )
    except OSError:
        signature = None
    try:
        with os.scandir(directory) as entries:
            listing = list(entries)
    except OSError as exc:
        return Listing(directory, (), listing_error(directory, exc), None, now_ns, False)
    items: list[ListedEntry] = []
    has_symlink = False
    links: list[tuple[str, tuple[str, int]]] = []
    for entry in listing:
        try:
            is_link = entry.is_symlink()
        except OSError:
            is_link = False
        if is_link:
            if follow_links:
                has_symlink = True
            else:
                links.append((entry.name, link_fingerprint(entry.path)))
        kind, key, problem = classify_entry(entry, follow_links=follow_links, roots=roots)
        if kind is EntryClass.DIR:
            items.append(ListedEntry(DIR, entry.name, entry.path, key))
        elif kind is EntryClass.TOPIC:
            items.append(ListedEntry(TOPIC, entry.name, entry.path))
        elif problem is not None:
            items.append(
                ListedEntry(PROBLEM, entry.name, entry.path, None, stored_diagnostic(problem))
            )
    return Listing(
        directory,
        tuple(items),
        None,
        signature,
        now_ns,
        has_symlink,
        links=tuple(links),
        roots=roots if links else (),
    )
