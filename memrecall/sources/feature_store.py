"""A persisted cache of the ``fielded`` scorer's per-document features.

Analysing a document (:meth:`~memrecall.engine.scoring.fielded.DocumentFeatures.of`)
is the expensive half of building a ``fielded`` index, and it depends only on
the document's text and mtime. This store keeps the features of every
document seen, keyed by a digest of exactly those inputs, so a new process
does not analyse an unchanged memory again.

The file is a cache file (:mod:`memrecall.sources.cachefile`: magic line,
version, length and checksum, atomic writes, stale temporaries removed, never
a non-regular file) whose payload names the analysis version (a digest of the
analysing modules' source) and holds the features by digest, decoded a chunk
at a time. A file that does not verify or was written by another analysis
version is reported (a log line) and ignored: the features are recomputed,
never trusted. Entries are content-addressed, so a stale entry can only go
unused, never answer for a changed document. The user's memory files are
never written. The engine's catalog keeps features in its own file; this
store serves sources ranked by :class:`~memrecall.sources.source.RankedSource`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from memrecall.engine.scoring.fielded import DocumentFeatures
from memrecall.events.documents import MemoryDocument
from memrecall.sources import cachefile, pacing
from memrecall.sources.cachefile import (
    NotARegularFile,
    read_cache_file,
    remove_stale_temporaries,
)
from memrecall.sources.turn_reader import passage_embedder, passage_mode

__all__ = ["FeatureStore", "analysis_version", "feature_key"]

log = logging.getLogger("memrecall.features")

_ANALYSIS_MODULES = tuple(
    f"memrecall.{name}"
    for name in (
        "engine.scoring.analysis",
        "engine.scoring.features",
        "engine.scoring.fielded",
        "engine.scoring.passages",
        "engine.scoring.record_dates",
        "engine.scoring.text",
        "engine.scoring.tokens",
        "sources.frontmatter",
    )
)


def analysis_version() -> str:
    """The package version, a digest of the analysis code's source, and whether documents
    carry passage embeddings (:func:`~memrecall.sources.turn_reader.passage_mode`).

    Written into the file; a file from other code is ignored, since the analysis may differ.
    """
    return f"fielded-2/{_code_digest()}/{passage_mode()}"


@functools.cache
def _code_digest() -> str:
    return cachefile.code_fingerprint(_ANALYSIS_MODULES)


_MAGIC = b"memrecall-features\n"
_FORMAT_VERSION = 2


class _Payload(msgspec.Struct, frozen=True):
    version: str
    entries: dict[str, msgspec.Raw]


_payload_decoder = msgspec.msgpack.Decoder(_Payload)
_features_decoder = msgspec.msgpack.Decoder(DocumentFeatures)
_encoder = msgspec.msgpack.Encoder()
_DECODE_CHUNK = 256
"""Entries decoded between two pacing checkpoints."""


def _decode_entries(raw: dict[str, msgspec.Raw]) -> dict[str, DocumentFeatures]:
    """Decode the stored features a chunk at a time, with a pacing checkpoint between chunks."""
    decode = _features_decoder.decode
    entries: dict[str, DocumentFeatures] = {}
    for n, (key, value) in enumerate(raw.items()):
        if n % _DECODE_CHUNK == 0:
            pacing.checkpoint()
        entries[key] = decode(value)
    return entries


def feature_key(document: MemoryDocument) -> str:
    """A digest of everything the features depend on: title, description, body, mtime."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (document.title, document.description, document.body, repr(document.mtime)):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


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
                    document, checkpoint=pacing.checkpoint, passage=passage_embedder()
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
        entries = {key: msgspec.Raw(_encoder.encode(f)) for key, f in self._entries.items()}
        payload = _encoder.encode(_Payload(analysis_version(), entries))
        try:
            cachefile.atomic_write(
                str(self.path),
                cachefile.frame(_MAGIC, _FORMAT_VERSION, payload),
                prefix=".features-",
            )
        except OSError as exc:
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
        entries: dict[str, DocumentFeatures] = {}
        framed = cachefile.unframe(data, _MAGIC, _FORMAT_VERSION)
        if isinstance(framed, cachefile.Unframed):
            problem = f"{framed.reason}: {framed.detail}"
        else:
            pacing.checkpoint()
            try:
                stored = _payload_decoder.decode(framed.payload)
                if stored.version != analysis_version():
                    problem = f"written by {stored.version!r}"
                else:
                    entries = _decode_entries(stored.entries)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                problem = str(exc)
        if problem is not None:
            log.warning("features: ignoring %s (%s); analysing afresh", self.path, problem)
            return
        self._entries = entries
