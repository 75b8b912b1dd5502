"""Cache files: the one way memrecall reads and writes anything it persists.

Every cache file is framed the same way: a magic line naming its kind, a fixed
header (format version, payload length, CRC-32 of the payload), then the
payload. :func:`unframe` checks all four and says what is wrong instead of
returning data it could not verify. :func:`code_fingerprint` digests the
package version and the source of the modules a payload depends on, so a
payload written by other code is recognised and rebuilt, never trusted.

Writing (:func:`atomic_write`) goes to a temporary name beside the target
(mode 0600) and renames it into place; a failed write removes its temporary.
One left by a killed process is removed by the next start
(:func:`remove_stale_temporaries`, once it is :data:`STALE_TEMPORARY_S` old, so
a concurrent writer's file is left alone). A path holding anything but a
regular file (a FIFO, a device, a directory) is never opened for reading and
never replaced (:func:`check_cache_target`, :func:`read_cache_file`,
:class:`NotARegularFile`); reading opens non-blocking, so even a FIFO that
appears between the check and the open cannot hang the engine.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import os
import stat
import struct
import sys
import tempfile
import time
import weakref
import zlib
from array import array
from collections.abc import Callable, Sequence
from typing import Final

import attrs

import memrecall

__all__ = [
    "PRUNE_AFTER_S",
    "STALE_TEMPORARY_S",
    "CorruptRecord",
    "Framed",
    "NotARegularFile",
    "Records",
    "Unframed",
    "atomic_write",
    "check_cache_target",
    "code_fingerprint",
    "frame",
    "prune_cache_dir",
    "read_cache_file",
    "read_cache_head",
    "remove_stale_temporaries",
    "unframe",
]

HEADER: Final = struct.Struct("<IQI")
"""Format version, payload length, CRC-32 of the payload."""

PRUNE_AFTER_S: Final = 30 * 24 * 3600
"""Default-directory cache files untouched this long belong to trees that are gone or idle."""

STALE_TEMPORARY_S: Final = 3600
"""A temporary cache file untouched this long was left by a killed writer (a write takes
seconds); younger ones may belong to another process writing right now."""

TEMPORARY_PREFIXES: Final = (".catalog-", ".features-", ".embeddings-")


def code_fingerprint(modules: Sequence[str]) -> str:
    """A digest of the package version, this machine's byte order, and the source of
    ``modules`` (dotted names; found, not imported)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(memrecall.__version__.encode())
    digest.update(f"{sys.byteorder} {array('I').itemsize}".encode())
    for name in modules:
        digest.update(_source_of(name) or b"?" + name.encode())
    return digest.hexdigest()


def _source_of(name: str) -> bytes | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    try:
        with open(spec.origin, "rb") as source:
            return source.read()
    except OSError:
        return None


def frame(magic: bytes, version: int, payload: bytes) -> list[bytes]:
    """The parts of a cache file holding ``payload`` (write them in order)."""
    return [magic, HEADER.pack(version, len(payload), zlib.crc32(payload)), payload]


@attrs.frozen
class Framed:
    """A verified payload (a view into the file's bytes)."""

    payload: memoryview


@attrs.frozen
class Unframed:
    """Why a file's frame did not verify: ``not a cache file``, ``foreign version``,
    ``truncated`` or ``corrupt`` (the reason), with a detail."""

    reason: str
    detail: str


def _header(data: bytes, magic: bytes, version: int) -> tuple[int, int] | Unframed:
    """The payload length and CRC-32 a cache file's first bytes announce, or what is wrong."""
    if not data.startswith(magic):
        return Unframed("not a cache file", "bad magic bytes")
    if len(data) < len(magic) + HEADER.size:
        return Unframed("truncated", f"{len(data)} bytes, shorter than the header")
    found, length, digest = HEADER.unpack_from(data, len(magic))
    if found != version:
        return Unframed("foreign version", f"format {found}, expected {version}")
    return length, digest


def _verified(payload: memoryview, length: int, digest: int) -> Framed | Unframed:
    if len(payload) != length:
        return Unframed("truncated", f"payload is {len(payload)} bytes, header says {length}")
    if zlib.crc32(payload) != digest:
        return Unframed("corrupt", "checksum mismatch")
    return Framed(payload)


def unframe(data: bytes, magic: bytes, version: int) -> Framed | Unframed:
    """Check the magic line, version, length and checksum of a cache file's bytes."""
    header = _header(data, magic, version)
    if isinstance(header, Unframed):
        return header
    return _verified(memoryview(data)[len(magic) + HEADER.size :], *header)


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
    fd, _ = _open_regular(path)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _open_regular(path: str) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file at ``path`` (opened non-blocking, so a
    FIFO cannot hang it) and its ``fstat``; :class:`NotARegularFile` for anything else."""
    check_cache_target(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):  # swapped in after the check
        os.close(fd)
        raise NotARegularFile(errno.EINVAL, f"{_kind(info.st_mode)} is at the cache path", path)
    return fd, info


class Records:
    """The records after a cache file's payload, read on demand (:func:`read_cache_head`).

    Holds the file open (its descriptor is closed when the last reference goes),
    so a file replaced since by an atomic write still reads as it was. Each
    record is read with one ``pread`` and checked against its CRC-32.
    """

    __slots__ = ("__weakref__", "_base", "_fd", "size")

    def __init__(self, fd: int, base: int, size: int) -> None:
        self._fd = fd
        self._base = base
        self.size = size
        """Bytes after the payload."""
        weakref.finalize(self, os.close, fd)

    def read(self, offset: int, length: int, digest: int) -> bytes:
        """The record at ``offset`` (from the end of the payload); raises
        :class:`CorruptRecord` when it is out of bounds, short or fails its checksum."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptRecord(f"record at {offset} (+{length}) is outside the file")
        data = os.pread(self._fd, length, self._base + offset)
        if len(data) != length or zlib.crc32(data) != digest:
            raise CorruptRecord(f"record at {offset} (+{length}) does not verify")
        return data

    def read_all(self) -> bytes:
        """Every byte after the payload (unchecked: records are checked one by one)."""
        data = os.pread(self._fd, self.size, self._base)
        if len(data) != self.size:
            raise CorruptRecord("the records are shorter than when the file was opened")
        return data


class CorruptRecord(ValueError):
    """A record after a cache file's payload could not be read back as written."""


def read_cache_head(path: str, magic: bytes, version: int) -> tuple[Framed, Records] | Unframed:
    """Read and verify a cache file's frame and payload, not the records after it.

    For files written as ``frame(...)`` followed by records: the verified payload
    and the :class:`Records` that follow it, or why the payload did not verify.
    The same errors as :func:`read_cache_file` for a missing, unreadable or
    irregular file.
    """
    fd, info = _open_regular(path)
    try:
        start = len(magic) + HEADER.size
        header = _header(os.pread(fd, start, 0), magic, version)
        if isinstance(header, Unframed):
            return header
        length, digest = header
        base = start + length
        if info.st_size < base:
            return Unframed("truncated", f"file is {info.st_size} bytes, header says {base}+")
        framed = _verified(memoryview(os.pread(fd, length, start)), length, digest)
        if isinstance(framed, Unframed):
            return framed
        return framed, Records(os.dup(fd), base, info.st_size - base)
    finally:
        os.close(fd)


def atomic_write(
    path: str, parts: Sequence[bytes | memoryview], *, prefix: str, reopen: bool = False
) -> int | None:
    """Write ``parts`` to ``path`` through a temporary file (``prefix``...``.tmp``, mode 0600)
    renamed into place. Refuses a path holding a non-regular file; a failed write
    removes its temporary and raises.

    With ``reopen``, returns a read-only descriptor of the file written (opened
    before the rename, so it is this file whatever replaces it later); the caller
    closes it. Otherwise ``None``.
    """
    if not prefix.startswith(TEMPORARY_PREFIXES):
        raise ValueError(f"temporary prefix {prefix!r} is not one the cleanup knows")
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, mode=0o700, exist_ok=True)
    check_cache_target(path)
    handle, temporary = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                out.write(part)
        reader = os.open(temporary, os.O_RDONLY | os.O_CLOEXEC) if reopen else None
        try:
            os.replace(temporary, path)
        except BaseException:
            if reader is not None:
                os.close(reader)
            raise
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return reader


def _is_temporary(name: str) -> bool:
    # ``.catalog-*.tmp`` and ``.features-*.tmp``, and ``.features-XXXXXXXX`` from older versions.
    return name.startswith(TEMPORARY_PREFIXES) and (
        name.endswith(".tmp") or (name.startswith(".features-") and len(name) == 18)
    )


def _is_cache_file(name: str) -> bool:
    return name.startswith("catalog-") and name.endswith((".bin", ".bin.features"))


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


def prune_cache_dir(directory: str, *, now: float | None = None) -> list[str]:
    """Remove stale catalog (and older feature) files, and stale temporaries, from
    ``directory``; returns them."""
    now = time.time() if now is None else now
    rules = [(_is_cache_file, float(PRUNE_AFTER_S)), (_is_temporary, float(STALE_TEMPORARY_S))]
    return _remove_old(directory, rules, now)
