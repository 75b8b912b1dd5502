"""Linux inotify through ctypes: the catalog's change feed.

:class:`Watcher` is a thin, non-blocking wrapper: add a watch on a directory,
drain every queued event, remove a watch, close. It never blocks and never
reads a file. Where inotify is unavailable (not Linux, no libc symbol, the
instance limit reached), :func:`open_watcher` returns ``None`` and the catalog
falls back to re-validating the tree by listing and ``stat`` on every recall.

:func:`filesystem_type` names the file system holding a path (from
``/proc/self/mountinfo``) so the catalog only trusts inotify on local file
systems, where every change made through the kernel produces an event.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
import sys

import attrs

__all__ = [
    "IN_ATTRIB",
    "IN_CLOSE_WRITE",
    "IN_CREATE",
    "IN_DELETE",
    "IN_DELETE_SELF",
    "IN_IGNORED",
    "IN_ISDIR",
    "IN_MODIFY",
    "IN_MOVED_FROM",
    "IN_MOVED_TO",
    "IN_MOVE_SELF",
    "IN_Q_OVERFLOW",
    "IN_UNMOUNT",
    "LOCAL_FILESYSTEMS",
    "WATCH_MASK",
    "WatchError",
    "WatchEvent",
    "Watcher",
    "filesystem_type",
    "is_watch_limit",
    "open_watcher",
]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000

WATCH_MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
"""Everything that can change a listing or a file's content, mode or times; never reads."""

LOCAL_FILESYSTEMS = frozenset(
    {
        "bcachefs",
        "btrfs",
        "ext2",
        "ext3",
        "ext4",
        "f2fs",
        "jfs",
        "nilfs2",
        "overlay",
        "ramfs",
        "reiserfs",
        "tmpfs",
        "xfs",
        "zfs",
    }
)
"""File systems whose every change goes through this kernel, so inotify sees it.

Network and FUSE file systems can change behind the kernel's back; roots on
them are re-validated by listing and ``stat`` on every recall instead.
"""

_EVENT = struct.Struct("iIII")
_READ_SIZE = 1 << 16


class WatchError(OSError):
    """``inotify_add_watch`` failed; ``errno`` says why."""


@attrs.frozen
class WatchEvent:
    """One inotify event: the watch it came from, its mask and the child name ('' for self)."""

    wd: int
    mask: int
    name: str


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        for symbol in ("inotify_init1", "inotify_add_watch", "inotify_rm_watch"):
            getattr(libc, symbol)
    except (OSError, AttributeError):
        return None
    libc.inotify_init1.argtypes = [ctypes.c_int]
    libc.inotify_init1.restype = ctypes.c_int
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    libc.inotify_add_watch.restype = ctypes.c_int
    libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.inotify_rm_watch.restype = ctypes.c_int
    return libc


class Watcher:
    """One inotify instance (non-blocking, close-on-exec)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc = libc
        self._fd = fd

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._fd < 0

    def add(self, path: str, *, only_dir: bool = True, follow: bool = False) -> int:
        """Watch a directory; returns the watch descriptor (the same one for the same inode)."""
        mask = WATCH_MASK | (IN_ONLYDIR if only_dir else 0) | (0 if follow else IN_DONT_FOLLOW)
        wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask))
        if wd < 0:
            code = ctypes.get_errno()
            raise WatchError(code, os.strerror(code), path)
        return wd

    def remove(self, wd: int) -> None:
        """Stop watching; a descriptor the kernel already dropped is ignored."""
        self._libc.inotify_rm_watch(self._fd, wd)

    def drain(self) -> list[WatchEvent]:
        """Every event queued so far, in order; never blocks."""
        events: list[WatchEvent] = []
        while True:
            try:
                data = os.read(self._fd, _READ_SIZE)
            except BlockingIOError:
                return events
            except InterruptedError:
                continue
            if not data:
                return events
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                raw = data[offset : offset + length].split(b"\0", 1)[0]
                offset += length
                events.append(WatchEvent(wd, mask, os.fsdecode(raw)))

    def close(self) -> None:
        """Release the instance and every watch (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def open_watcher() -> Watcher | None:
    """A new inotify instance, or ``None`` where inotify cannot be used."""
    libc = _libc()
    if libc is None:
        return None
    fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
    if fd < 0:
        return None
    return Watcher(libc, fd)


def _unescape_mount(field: str) -> str:
    # mountinfo escapes space, tab, newline and backslash as \ooo octal.
    out = []
    i = 0
    while i < len(field):
        code = field[i + 1 : i + 4]
        if field[i] == "\\" and len(code) == 3 and code.isdigit():
            out.append(chr(int(code, 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def filesystem_type(path: str, mountinfo: str = "/proc/self/mountinfo") -> str | None:
    """The type of the file system holding ``path`` (longest mount point prefix), if known."""
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    real = os.path.realpath(path)
    best: tuple[int, str] | None = None
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        rest = tail.split()
        if not sep or len(fields) < 5 or not rest:
            continue
        mount_point = _unescape_mount(fields[4])
        inside = mount_point in (real, "/") or real.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= best[0]):
            best = (len(mount_point), rest[0])
    return None if best is None else best[1]


def is_watch_limit(exc: OSError) -> bool:
    """True when the kernel refused a watch for lack of resources (not a path problem)."""
    return exc.errno in (errno.ENOSPC, errno.ENOMEM)
