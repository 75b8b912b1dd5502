"""The catalog file: a msgspec (MessagePack) image of a catalog, checked before it is used.

The file is framed, written and read by :mod:`memrecall.sources.cachefile`
(magic line, format version, payload length, CRC-32; atomic writes; stale
temporaries removed; never a non-regular file). :func:`load_catalog` returns a
:class:`LoadFailure` instead of data for a missing, foreign, truncated,
corrupt or mismatched file (the caller reports it and rebuilds from the tree);
it never returns data it could not verify. A file that loads is still only a
hint: the catalog re-validates every entry against the tree before use.

The payload also carries a fingerprint of the code that produced it (the
package version and the source of every module that parses, normalises,
analyses or indexes), so a cache written by another version of the parser or
scorer is rejected rather than trusted. A ``fielded`` catalog keeps its pool
as a :class:`~memrecall.engine.scoring.pool_image.PoolImage`, so one file holds
everything a new process needs, and the documents and their analyses stay
encoded until they are used: a new process decodes the entries (what the
first validation needs), the vocabulary and the postings of its query's
terms, and the documents it recalls, not the whole tree.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
from collections.abc import Callable
from typing import Any, Final

import attrs
import msgspec

from memrecall.engine.scoring.catalog_index import FieldTexts
from memrecall.engine.scoring.pool_image import PoolImage
from memrecall.sources import cachefile
from memrecall.sources.cachefile import (
    PRUNE_AFTER_S,
    STALE_TEMPORARY_S,
    NotARegularFile,
    check_cache_target,
    prune_cache_dir,
    read_cache_file,
    read_cache_head,
    remove_stale_temporaries,
)
from memrecall.sources.catalog.cached import (
    ENTRY_CHUNK,
    CachedFile,
    EntryColumns,
    EntryView,
    StoredDiagnostic,
    from_columns,
    to_columns,
)
from memrecall.sources.catalog.documents import (
    DocumentIndex,
    StoredDocuments,
    TruncatedDocuments,
    write_records,
)
from memrecall.sources.turn_reader import passage_mode

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "PRUNE_AFTER_S",
    "STALE_TEMPORARY_S",
    "CacheLocation",
    "CachedFile",
    "ListedEntry",
    "LoadFailure",
    "NotARegularFile",
    "StoredCatalog",
    "StoredDiagnostic",
    "StoredListing",
    "StoredPostings",
    "check_cache_target",
    "code_fingerprint",
    "default_cache_dir",
    "default_cache_path",
    "entries_of",
    "load_catalog",
    "prune_cache_dir",
    "read_cache_file",
    "remove_stale_temporaries",
    "save_catalog",
]

MAGIC: Final = b"memrecall-catalog\n"
FORMAT_VERSION: Final = 6


class ListedEntry(msgspec.Struct, array_like=True, gc=False, frozen=True):
    """One classified directory entry (``kind``: 0 directory, 1 topic file, 2 problem).

    ``key`` is a directory's ``(st_dev, st_ino)``; ``diagnostic`` a problem's.
    """

    kind: int
    name: str
    path: str
    key: tuple[int, int] | None = None
    diagnostic: StoredDiagnostic | None = None


class StoredPostings(msgspec.Struct, array_like=True):
    """One column of the word index: each word's slot count, and all slots in one blob."""

    words: list[str]
    counts: list[int]
    slots: bytes


class StoredListing(msgspec.Struct, array_like=True):
    """One directory listing and the directory's signature when it was taken."""

    path: str
    signature: tuple[int, int, int, int]
    listed_ns: int
    items: tuple[ListedEntry, ...]


class StoredCatalog(msgspec.Struct):
    """The whole catalog: roots, entries, listings, the documents by slot and the
    scorer's index: ``pool`` for ``fielded``, ``fields`` and ``postings`` (the word
    index) for ``reference``.

    The documents go into a file as ``documents`` (each encoded, ``None`` for a free
    slot) and come out of one as ``stored`` (read from the file on demand).
    """

    roots: list[tuple[str, str]]
    entries: list[CachedFile]
    listings: list[StoredListing]
    documents: list[bytes | None] = msgspec.field(default_factory=list)
    stored: StoredDocuments | None = None
    columns: EntryView | None = None
    """The entries as the file holds them (checked), when loaded without making them
    (``load_catalog(materialize=False)``; :func:`entries_of` makes them)."""
    read_again: dict[int, int] = msgspec.field(default_factory=dict)
    """Entry -> a later read time: files a quick start read again and found unchanged."""
    fields: list[FieldTexts | None] = msgspec.field(default_factory=list)
    """Per slot, what the word index holds of the document (``reference`` only)."""
    postings: list[StoredPostings] = msgspec.field(default_factory=list)
    pool: PoolImage | None = None
    recency: list[int] = msgspec.field(default_factory=list)
    """The documents' slots in recency order (mtime first; ``fielded`` only)."""
    fingerprint: str = ""
    follow_links: bool = False
    scorer: str = "reference"
    unembedded: list[int] = msgspec.field(default_factory=list)
    """Slots whose document's passage was still to be embedded when the file was written
    (``fielded`` with a passage embedder: :mod:`~memrecall.sources.catalog.passage_filler`)."""


class CacheLocation(enum.Enum):
    """Where to keep the catalog file when no path is given."""

    DEFAULT = "default"
    """:func:`default_cache_path` for the tree's roots."""


@attrs.frozen
class LoadFailure:
    """Why a catalog file was not used: ``missing``, ``unreadable``, ``not a regular
    file``, ``not a catalog file``, ``foreign version``, ``truncated``, ``corrupt``,
    ``other code``, ``other tree`` or ``other scorer``."""

    reason: str
    detail: str = ""


FINGERPRINTED: Final = tuple(
    f"memrecall.{name}"
    for name in (
        "sources.frontmatter",
        "sources.scanner",
        "engine.scoring.text",
        "engine.scoring.tokens",
        "engine.scoring.analysis",
        "engine.scoring.reference",
        "engine.scoring.features",
        "engine.scoring.passages",
        "engine.scoring.record_dates",
        "engine.scoring.pool",
        "engine.scoring.pool_image",
        "engine.scoring.fielded",
        "engine.scoring.catalog_index",
        "sources.catalog.entries",
        "sources.catalog.feed",
        "sources.catalog.listing",
        "sources.catalog.source",
        "sources.catalog.store",
        "sources.catalog.cached",
        "sources.catalog.documents",
    )
)
"""The modules whose source a catalog file depends on (parsing, normalising, analysis, indexing)."""


def code_fingerprint() -> str:
    """A digest of the package version and of the source of :data:`FINGERPRINTED`, and
    whether documents carry passage embeddings
    (:func:`~memrecall.sources.turn_reader.passage_mode`)."""
    return f"{_code_digest()}/{passage_mode(background=True)}"


@functools.cache
def _code_digest() -> str:
    return cachefile.code_fingerprint(FINGERPRINTED)


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/memrecall`` (a relative ``XDG_CACHE_HOME`` is ignored), else
    ``~/.cache/memrecall``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memrecall")


def default_cache_path(roots: list[tuple[str, str]]) -> str:
    """``<default_cache_dir()>/catalog-<hash of the roots>.bin``."""
    key = hashlib.blake2b(msgspec.json.encode(roots), digest_size=12).hexdigest()
    return os.path.join(default_cache_dir(), f"catalog-{key}.bin")


class _CatalogFile(msgspec.Struct):
    """:class:`StoredCatalog` as the file's payload holds it: the entries by column,
    and where each document is in the records after the payload."""

    roots: list[tuple[str, str]]
    entries: EntryColumns
    listings: list[StoredListing]
    documents: DocumentIndex
    fields: list[FieldTexts | None] = msgspec.field(default_factory=list)
    postings: list[StoredPostings] = msgspec.field(default_factory=list)
    pool: PoolImage | None = None
    recency: list[int] = msgspec.field(default_factory=list)
    """The documents' slots in recency order (mtime first; ``fielded`` only)."""
    fingerprint: str = ""
    follow_links: bool = False
    scorer: str = "reference"
    unembedded: list[int] = msgspec.field(default_factory=list)
    """Slots whose document's passage was still to be embedded when the file was written
    (``fielded`` with a passage embedder: :mod:`~memrecall.sources.catalog.passage_filler`)."""


DECODE_CHUNK: Final = ENTRY_CHUNK
"""Entries made between two pacing checkpoints when a catalog file is loaded."""

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(_CatalogFile)


_SHARED = (
    "roots",
    "listings",
    "fields",
    "postings",
    "pool",
    "recency",
    "follow_links",
    "scorer",
    "unembedded",
)
"""The fields :class:`StoredCatalog` and the file's payload hold alike."""


def _shared_fields(catalog: StoredCatalog | _CatalogFile) -> dict[str, Any]:
    return {name: getattr(catalog, name) for name in _SHARED}


def _no_pause() -> None:
    """The default checkpoint of :func:`load_catalog`: returns at once."""


def save_catalog(path: str, catalog: StoredCatalog) -> StoredDocuments:
    """Write ``catalog`` to ``path`` atomically (temporary file + rename): the framed
    payload, then the documents. Returns the documents as the new file stores them
    (by the same slots), so a catalog can read the new file instead of the old one."""
    documents = catalog.documents
    if catalog.stored is not None and not documents:  # a loaded catalog, saved again
        stored = catalog.stored
        documents = [stored.record(s) if stored.has(s) else None for s in range(len(stored))]
    index, records = write_records(documents)
    payload = _CatalogFile(
        **_shared_fields(catalog),
        entries=to_columns(catalog.entries),
        documents=index,
        fingerprint=code_fingerprint(),
    )
    head = cachefile.frame(MAGIC, FORMAT_VERSION, _encoder.encode(payload))
    fd = cachefile.atomic_write(path, [*head, *records], prefix=".catalog-", reopen=True)
    assert fd is not None
    written = cachefile.Records(fd, sum(map(len, head)), sum(map(len, records)))
    directory = os.path.dirname(path) or "."
    if os.path.abspath(directory) == os.path.abspath(default_cache_dir()):
        prune_cache_dir(directory)
    return StoredDocuments(written, index)


def load_catalog(
    path: str,
    roots: list[tuple[str, str]],
    *,
    follow_links: bool = False,
    scorer: str = "reference",
    checkpoint: Callable[[], None] = _no_pause,
    materialize: bool = True,
) -> StoredCatalog | LoadFailure:
    """Read and verify a catalog file written for ``roots``; see :class:`LoadFailure`.

    The entries are made a few hundred at a time with a call to ``checkpoint``
    between batches (a worker passes its pacer's), so loading a large file
    never holds the interpreter for long at a stretch; with ``materialize=False``
    they are only checked, and left to :func:`entries_of`.
    """
    try:
        head = read_cache_head(path, MAGIC, FORMAT_VERSION)
    except FileNotFoundError:
        return LoadFailure("missing")
    except NotARegularFile as exc:
        return LoadFailure("not a regular file", exc.strerror or "")
    except OSError as exc:
        return LoadFailure("unreadable", exc.strerror or type(exc).__name__)
    if isinstance(head, cachefile.Unframed):
        reason = "not a catalog file" if head.reason == "not a cache file" else head.reason
        return LoadFailure(reason, head.detail)
    framed, records = head
    payload = framed.payload
    checkpoint()
    try:
        lazy = _decoder.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return LoadFailure("corrupt", str(exc))
    if lazy.fingerprint != code_fingerprint():
        return LoadFailure("other code", "written by another version of memrecall")
    if [tuple(r) for r in lazy.roots] != [tuple(r) for r in roots]:
        return LoadFailure("other tree", "written for other memory roots")
    if lazy.follow_links != follow_links:
        return LoadFailure("other tree", "written with another symlink policy")
    if lazy.scorer != scorer:
        return LoadFailure("other scorer", f"written for the {lazy.scorer} scorer")
    try:
        view = EntryView(lazy.entries)
        entries = from_columns(view, checkpoint) if materialize else []
        stored = StoredDocuments(records, lazy.documents)
    except TruncatedDocuments as exc:
        return LoadFailure("truncated", str(exc))
    except ValueError as exc:
        return LoadFailure("corrupt", str(exc))
    checkpoint()
    return StoredCatalog(
        **_shared_fields(lazy),
        entries=entries,
        stored=stored,
        columns=None if materialize else view,
        fingerprint=lazy.fingerprint,
    )


def entries_of(
    catalog: StoredCatalog, checkpoint: Callable[[], None] = _no_pause
) -> list[CachedFile]:
    """``catalog``'s entries, made from its columns the first time (with the read times a
    quick start moved on applied), then kept in ``catalog.entries``."""
    if catalog.columns is not None and not catalog.entries:
        entries = from_columns(catalog.columns, checkpoint)
        for i, read_ns in catalog.read_again.items():
            entries[i].read_ns = read_ns
        catalog.entries = entries
        catalog.columns = None
    return catalog.entries
