"""The catalog file: a msgspec (MessagePack) image of a catalog, checked before it is used.

Layout: a magic line, then a fixed header (format version, payload length, the
CRC-32 of the payload), then the payload. :func:`load_catalog` returns
a :class:`LoadFailure` instead of data for a missing, foreign, truncated,
corrupt or mismatched file (the caller reports it and rebuilds from the tree);
it never returns data it could not verify. A file that loads is still only a
hint: the catalog re-validates every entry against the tree before use.

The payload also carries a fingerprint of the code that produced it (the
package version and the source of every module that parses, normalises or
indexes), so a cache written by another version of the parser is rejected
rather than trusted. Files are written to a temporary name beside the target
and renamed into place, so a crash never leaves a half-written cache behind;
a temporary left by a killed process is removed by the next start
(:func:`remove_stale_temporaries`, once it is :data:`STALE_TEMPORARY_S` old, so
a concurrent writer's file is left alone).

A cache path that holds anything but a regular file (a FIFO, a device, a
directory) is never opened for reading and never replaced
(:func:`read_cache_file`, :class:`NotARegularFile`): the caller reports it and
runs without the cache. Reading opens non-blocking, so even a FIFO that
appears between the check and the open cannot hang the engine.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import functools
import hashlib
import os
import stat
import struct
import sys
import tempfile
import time
import zlib
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import attrs
import msgspec

import memrecall
from memrecall.engine.scoring.catalog_index import FieldTexts
from memrecall.engine.scoring.fielded import DocumentFeatures
from memrecall.events.documents import MemoryDocument

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
    "load_catalog",
    "prune_cache_dir",
    "read_cache_file",
    "remove_stale_temporaries",
    "save_catalog",
]

MAGIC: Final = b"memrecall-catalog\n"
FORMAT_VERSION: Final = 4
_HEADER = struct.Struct("<IQI")

_FINGERPRINTED = (
    "frontmatter.py",
    "scanner.py",
    "scorer.py",
    "text.py",
    "catalog.py",
    "catalog_index.py",
    "catalog_store.py",
)

StoredDiagnostic = tuple[str, str, str, bool]
"""``(path, kind, detail, skipped)``."""


class CachedFile(msgspec.Struct, array_like=True, gc=False):
    """One topic file as the catalog knows it, in memory and in the file alike.

    ``signature`` is ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``
    taken just before the file was read at ``read_ns`` (wall clock); ``slot``
    is the document's place in the scorer's index (-1 without a document).
    A document carries what its catalog's scorer indexes: ``fields`` for the
    ``reference`` word index, ``features`` for the ``fielded`` pool.
    Instances form no reference cycles, so the garbage collector skips them.
    """

    root_index: int
    path: str
    relative_path: str
    signature: tuple[int, int, int, int, int] | None
    read_ns: int
    nlink: int
    document: MemoryDocument | None
    diagnostics: tuple[StoredDiagnostic, ...]
    fields: FieldTexts | None
    slot: int = -1
    features: DocumentFeatures | None = None
    """The ``fielded`` scorer's analysis of the document (catalogs of that scorer)."""


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
    """The whole catalog: roots, entries, listings and the word index postings."""

    roots: list[tuple[str, str]]
    entries: list[CachedFile]
    listings: list[StoredListing]
    postings: list[StoredPostings]
    fingerprint: str = ""
    follow_links: bool = False
    scorer: str = "reference"


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


@functools.cache
def code_fingerprint() -> str:
    """A digest of the package version and of the source of every module the cache depends on."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(memrecall.__version__.encode())
    digest.update(f"{sys.byteorder} {array('I').itemsize}".encode())
    here = Path(__file__).parent
    for name in _FINGERPRINTED:
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(b"?" + name.encode())
    return digest.hexdigest()


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


PRUNE_AFTER_S: Final = 30 * 24 * 3600
"""Default-directory catalog files untouched this long belong to trees that are gone or idle."""

STALE_TEMPORARY_S: Final = 3600
"""A temporary cache file untouched this long was left by a killed writer (a write takes
seconds); younger ones may belong to another process writing right now."""

_TEMPORARY_PREFIXES = (".catalog-", ".features-")


def _is_temporary(name: str) -> bool:
    # ``.catalog-*.tmp`` and ``.features-*.tmp``, and ``.features-XXXXXXXX`` from older versions.
    return name.startswith(_TEMPORARY_PREFIXES) and (
        name.endswith(".tmp") or (name.startswith(".features-") and len(name) == 18)
    )


def _remove_old(
    directory: str, rules: Sequence[tuple[Callable[[str], bool], float]], now: float
) -> list[str]:
    removed: list[str] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        limit = next((limit for matches, limit in rules if matches(name)), None)
        if limit is None:
            continue
        path = os.path.join(directory, name)
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > limit:
                os.unlink(path)
                removed.append(path)
    return removed


def remove_stale_temporaries(directory: str, *, now: float | None = None) -> list[str]:
    """Remove temporaries of interrupted cache writes older than :data:`STALE_TEMPORARY_S`
    from ``directory``; returns their paths. Only our own name patterns, only regular files."""
    now = time.time() if now is None else now
    return _remove_old(directory, [(_is_temporary, STALE_TEMPORARY_S)], now)


def _is_cache_file(name: str) -> bool:
    return name.startswith("catalog-") and name.endswith((".bin", ".bin.features"))


def prune_cache_dir(directory: str, *, now: float | None = None) -> list[str]:
    """Remove stale catalog and feature files, and stale temporaries, from ``directory``;
    returns them."""
    now = time.time() if now is None else now
    rules = [(_is_cache_file, float(PRUNE_AFTER_S)), (_is_temporary, float(STALE_TEMPORARY_S))]
    return _remove_old(directory, rules, now)


class NotARegularFile(OSError):
    """The cache path holds something other than a regular file (a FIFO, device, directory)."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_cache_target(path: str) -> None:
    """Raise :class:`NotARegularFile` if ``path`` exists and is not a regular file
    (a symlink to one is fine). Never opens it, so it never blocks."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ENOENT):
            return
        raise
    if not stat.S_ISREG(mode):
        raise NotARegularFile(errno.EINVAL, f"{_kind(mode)} is at the cache path", path)


def read_cache_file(path: str) -> bytes:
    """The bytes of the regular file at ``path``; never blocks on a FIFO or device.

    Raises :class:`NotARegularFile` for anything else, ``FileNotFoundError`` when absent.
    """
    check_cache_target(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped in after the check
            raise NotARegularFile(errno.EINVAL, f"{_kind(mode)} is at the cache path", path)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(StoredCatalog)


def save_catalog(path: str, catalog: StoredCatalog) -> None:
    """Write ``catalog`` to ``path`` atomically (temporary file + rename)."""
    catalog = msgspec.structs.replace(catalog, fingerprint=code_fingerprint())
    payload = _encoder.encode(catalog)
    digest = zlib.crc32(payload)
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o700, exist_ok=True)
    check_cache_target(path)
    handle, temporary = tempfile.mkstemp(prefix=".catalog-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC)
            out.write(_HEADER.pack(FORMAT_VERSION, len(payload), digest))
            out.write(payload)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if os.path.abspath(directory) == os.path.abspath(default_cache_dir()):
        prune_cache_dir(directory)


def load_catalog(
    path: str,
    roots: list[tuple[str, str]],
    *,
    follow_links: bool = False,
    scorer: str = "reference",
) -> StoredCatalog | LoadFailure:
    """Read and verify a catalog file written for ``roots``; see :class:`LoadFailure`."""
    try:
        data = read_cache_file(path)
    except FileNotFoundError:
        return LoadFailure("missing")
    except NotARegularFile as exc:
        return LoadFailure("not a regular file", exc.strerror or "")
    except OSError as exc:
        return LoadFailure("unreadable", exc.strerror or type(exc).__name__)
    if not data.startswith(MAGIC):
        return LoadFailure("not a catalog file", "bad magic bytes")
    start = len(MAGIC) + _HEADER.size
    if len(data) < start:
        return LoadFailure("truncated", f"{len(data)} bytes, shorter than the header")
    version, length, digest = _HEADER.unpack_from(data, len(MAGIC))
    if version != FORMAT_VERSION:
        return LoadFailure("foreign version", f"format {version}, expected {FORMAT_VERSION}")
    payload = data[start:]
    if len(payload) != length:
        return LoadFailure("truncated", f"payload is {len(payload)} bytes, header says {length}")
    if zlib.crc32(payload) != digest:
        return LoadFailure("corrupt", "checksum mismatch")
    try:
        catalog = _decoder.decode(payload)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return LoadFailure("corrupt", str(exc))
    if catalog.fingerprint != code_fingerprint():
        return LoadFailure("other code", "written by another version of memrecall")
    if [tuple(r) for r in catalog.roots] != [tuple(r) for r in roots]:
        return LoadFailure("other tree", "written for other memory roots")
    if catalog.follow_links != follow_links:
        return LoadFailure("other tree", "written with another symlink policy")
    if catalog.scorer != scorer:
        return LoadFailure("other scorer", f"written for the {catalog.scorer} scorer")
    return catalog
