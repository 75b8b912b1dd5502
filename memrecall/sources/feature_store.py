"""A persisted cache of the ``fielded`` scorer's per-document features.

Analysing a document (:meth:`~memrecall.engine.scoring.fielded.DocumentFeatures.of`)
is the expensive half of building a ``fielded`` index, and it depends only on
the document's text and mtime. This store keeps the features of every
document seen, keyed by a digest of exactly those inputs, so a new process
does not analyse an unchanged memory again.

The file is msgpack: a header naming the format and the analysis version, a
checksum of the payload, and the payload. A file that cannot be decoded, was
written by another analysis version, or whose payload does not match its
checksum is reported (a log line) and ignored: the features are recomputed,
never trusted. Entries are content-addressed, so a stale entry can only go
unused, never answer for a changed document. The user's memory files are
never written; the store lives next to the catalog's cache file.

A path holding anything but a regular file (a FIFO, a device, a directory) is
reported and the store runs in memory only: it is never opened (so it cannot
block) and never replaced. A write goes to a temporary file that is removed
if the write fails; one left by a killed process is removed by the next load
(:func:`~memrecall.sources.catalog.store.remove_stale_temporaries`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from memrecall import __version__
from memrecall.engine.scoring.fielded import DocumentFeatures
from memrecall.events.documents import MemoryDocument
from memrecall.sources import pacing
from memrecall.sources.catalog.store import (
    NotARegularFile,
    check_cache_target,
    read_cache_file,
    remove_stale_temporaries,
)

__all__ = ["FeatureStore", "analysis_version", "feature_key"]

log = logging.getLogger("memrecall.features")

_ANALYSIS_MODULES = ("analysis.py", "ranking.py", "text.py", "frontmatter.py")


@functools.cache
def analysis_version() -> str:
    """The package version and a digest of the analysis code's source.

    Written into the file; a file from other code is ignored, since the analysis may differ.
    """
    digest = hashlib.blake2b(digest_size=8)
    here = Path(__file__).parent
    for name in _ANALYSIS_MODULES:
        try:
            digest.update((here / name).read_bytes())
        except OSError:
            digest.update(b"?" + name.encode())
    return f"fielded-1/{__version__}/{digest.hexdigest()}"


_FORMAT = "memrecall.features"


class _File(msgspec.Struct, frozen=True):
    format: str
    version: str
    checksum: str
    payload: bytes


_payload_decoder = msgspec.msgpack.Decoder(dict[str, DocumentFeatures])
_file_decoder = msgspec.msgpack.Decoder(_File)


def feature_key(document: MemoryDocument) -> str:
    """A digest of everything the features depend on: title, description, body, mtime."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (document.title, document.description, document.body, repr(document.mtime)):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _checksum(payload: bytes) -> str:
    return hashlib.blake2b(payload, digest_size=16).hexdigest()


class FeatureStore:
    """Features by document digest, loaded from and saved to ``path`` (``None``: memory only)."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else Path(path)
        self._entries: dict[str, DocumentFeatures] = {}
        self._loaded = self.path is None
        self._dirty = False

    def features(self, documents: Sequence[MemoryDocument]) -> list[DocumentFeatures]:
        """The features of each document, analysing only those not stored yet."""
        if not self._loaded:
            self._load()
        out = []
        for document in documents:
            key = feature_key(document)
            found = self._entries.get(key)
            if found is None:
                found = self._entries[key] = DocumentFeatures.of(
                    document, checkpoint=pacing.checkpoint
                )
                self._dirty = True
            out.append(found)
        return out

    def save(self, current: Iterable[MemoryDocument]) -> bool:
        """Keep only the entries of ``current`` and write the store if it changed.

        Returns False if there is no path, nothing changed, or writing failed.
        """
        if self.path is None:
            return False
        keep = {feature_key(d) for d in current}
        if keep != self._entries.keys():
            self._entries = {k: v for k, v in self._entries.items() if k in keep}
            self._dirty = True
        if not self._dirty:
            return False
        payload = msgspec.msgpack.encode(self._entries)
        data = msgspec.msgpack.encode(
            _File(_FORMAT, analysis_version(), _checksum(payload), payload)
        )
        temporary: str | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            check_cache_target(str(self.path))
            handle, temporary = tempfile.mkstemp(
                dir=self.path.parent, prefix=".features-", suffix=".tmp"
            )
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, self.path)
        except BaseException as exc:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temporary)
            if not isinstance(exc, OSError):
                raise
            log.warning("features: could not write the store: %s", exc.strerror or exc)
            return False
        self._dirty = False
        return True

    def _load(self) -> None:
        self._loaded = True
        assert self.path is not None
        remove_stale_temporaries(str(self.path.parent))
        try:
            data = read_cache_file(str(self.path))
        except FileNotFoundError:
            return
        except NotARegularFile as exc:
            log.warning("features: %s; running without a features file", exc.strerror)
            self.path = None
            return
        except OSError as exc:
            log.warning("features: cannot read %s: %s; analysing afresh", self.path, exc)
            return
        problem = None
        try:
            stored = _file_decoder.decode(data)
            entries = _payload_decoder.decode(stored.payload)
        except msgspec.DecodeError as exc:
            problem = str(exc)
        else:
            if stored.format != _FORMAT:
                problem = f"not a features file ({stored.format!r})"
            elif stored.version != analysis_version():
                problem = f"written by {stored.version!r}"
            elif _checksum(stored.payload) != stored.checksum:
                problem = "payload does not match its checksum"
        if problem is not None:
            log.warning("features: ignoring %s (%s); analysing afresh", self.path, problem)
            return
        self._entries = entries
