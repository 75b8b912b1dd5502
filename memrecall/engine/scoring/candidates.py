"""Candidates for the model selector, the fallback, the fast result, and the manifest.

Given the pool (scanned documents minus the session's surfaced ones):

1. drop active-tool noise (:mod:`memrecall.engine.scoring.noise`);
2. rank the rest lexically; the first 180 are the lexical share;
3. fill up to 200 with the most recent remaining documents, interleaved
   lexical/recent so a byte-cut manifest cannot lose the whole recency reserve;
4. fallback = lexical top 5 (the selector-failure result); fast = its top 2.

The manifest is one line per candidate, packed (not prefixed) into 25,000
UTF-8 bytes: a line that does not fit is skipped and later, shorter lines
still count. Only documents whose line made it in can be selected.
Descriptions are shown on one line (control characters and line breaks
escaped, :func:`~memrecall.engine.render.escape_controls`) and cut at 512
UTF-16 units.

The manifest never shows an absolute path. Each line names its document by a
manifest id: the scope, a slash and the path relative to the scope's root
(``project/deploy/runbook.md``), which tells the model what the file name
says and nothing about where the tree lives. A relative path that is not
clean (empty, absolute, with ``..`` or a backslash, with control characters,
starting with ``#``, or already taken by an earlier line) gets an opaque id instead
(``project/#7``). :attr:`Manifest.ids` maps ids back to documents.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
from collections.abc import Collection, Iterable, Sequence
from typing import Protocol, runtime_checkable

import attrs

from memrecall.engine.render import MAX_FAST_DOCS, MAX_PROMPT_DOCS, escape_controls
from memrecall.engine.scoring.noise import active_tool_filter
from memrecall.engine.scoring.text import utf16_prefix
from memrecall.events.documents import MemoryDocument

__all__ = [
    "MAX_CANDIDATES",
    "MAX_MANIFEST_BYTES",
    "MAX_MANIFEST_DESCRIPTION",
    "RECENT_RESERVE",
    "FastRanker",
    "Manifest",
    "PoolLookups",
    "PoolOrder",
    "Ranker",
    "RecallCandidates",
    "build_manifest",
    "interleave",
    "manifest_id",
    "manifest_line",
    "prepare_candidates",
]

MAX_CANDIDATES = 200
RECENT_RESERVE = 20
LEXICAL_SHARE = MAX_CANDIDATES - RECENT_RESERVE
MAX_MANIFEST_BYTES = 25_000
MAX_MANIFEST_DESCRIPTION = 512
"""Per-line description cut, in UTF-16 code units."""


class Ranker(Protocol):
    """What the candidate builder needs from a scorer index over the pool."""

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first."""
        ...


@runtime_checkable
class FastRanker(Protocol):
    """A ranker that also judges which documents are good enough for the fast result."""

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        """Indices of the best ``limit`` documents, best first."""
        ...

    def rank_and_fast(
        self, query: str, limit: int, *, exclude: Collection[int] = ()
    ) -> tuple[list[int], list[int]]:
        """``rank`` and the fast result (at most two, best first) from one pass."""
        ...


class PoolLookups(Protocol):
    """Per-pool lookups the candidate pass needs, computed once per pool."""

    @property
    def by_recency(self) -> Sequence[int]:
        """Pool indices, mtime descending, input order for ties."""
        ...

    def indices_of(self, path: str) -> Iterable[int]:
        """Pool indices of the documents at ``path``."""
        ...


@attrs.frozen
class PoolOrder:
    """:class:`PoolLookups` for a plain document sequence."""

    by_recency: tuple[int, ...]
    by_path: dict[str, tuple[int, ...]]

    def indices_of(self, path: str) -> Iterable[int]:
        """Pool indices of the documents at ``path``."""
        return self.by_path.get(path, ())

    @classmethod
    def of(cls, pool: Sequence[MemoryDocument]) -> PoolOrder:
        """Recency order (mtime descending, input order for ties) and each path's indices."""
        by_path: dict[str, tuple[int, ...]] = {}
        for index, document in enumerate(pool):
            by_path[document.path] = (*by_path.get(document.path, ()), index)
        order = sorted(range(len(pool)), key=lambda i: -pool[i].mtime)
        return cls(tuple(order), by_path)


def iso_mtime(mtime: float) -> str:
    """ISO-8601 UTC with milliseconds, like JavaScript's ``Date.toISOString``."""
    millis = int(mtime * 1000)
    moment = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=millis)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _clean_relative(relative: str) -> bool:
    """True if ``relative`` can be shown as is: relative, no ``..``, printable, one line."""
    if not relative or not relative.isprintable() or "\\" in relative:
        return False
    if relative.startswith("#"):
        return False  # would read as an opaque id
    if relative.startswith("/") or (len(relative) > 1 and relative[1] == ":"):
        return False
    return all(part not in ("", ".", "..") for part in relative.split("/"))


def manifest_id(document: MemoryDocument, position: int) -> str:
    """The id a manifest line gives ``document`` (the ``position``-th candidate, from 1).

    ``scope/relative/path.md`` when the relative path is clean, else the opaque
    ``scope/#position``. Never an absolute path.
    """
    relative = document.relative_path
    if _clean_relative(relative):
        return f"{document.scope.value}/{relative}"
    return f"{document.scope.value}/#{position}"


@functools.lru_cache(maxsize=65_536)
def manifest_line(document: MemoryDocument, key: str) -> str:
    """``- [type] key (ISO mtime): description`` (description cut to 512 units).

    ``key`` is the document's manifest id (:func:`manifest_id`). Always one
    line: control characters and line breaks in the description are escaped.
    A line depends only on the document and its id, so it is computed once.
    """
    line = f"- [{document.type.value}] {key} ({iso_mtime(document.mtime)})"
    if document.description:
        description = escape_controls(document.description)
        line += ": " + utf16_prefix(description, MAX_MANIFEST_DESCRIPTION)
    return line


@attrs.frozen
class Manifest:
    """The selector's view of the candidates: the text, who made it in, and their ids.

    ``ids[i]`` is the manifest id of ``included[i]``; ids are unique.
    """

    text: str
    included: tuple[MemoryDocument, ...]
    ids: tuple[str, ...] = ()

    @property
    def paths(self) -> frozenset[str]:
        """Absolute paths of the documents the selector may choose (never sent to it)."""
        return frozenset(d.path for d in self.included)


def build_manifest(
    candidates: Sequence[MemoryDocument], budget: int = MAX_MANIFEST_BYTES
) -> Manifest:
    """Pack candidate lines into ``budget`` UTF-8 bytes, skipping lines that do not fit."""
    lines: list[str] = []
    included: list[MemoryDocument] = []
    ids: list[str] = []
    taken: set[str] = set()
    total = 0
    for position, document in enumerate(candidates, start=1):
        key = manifest_id(document, position)
        if key in taken:
            key = f"{document.scope.value}/#{position}"
        line = manifest_line(document, key)
        cost = len(line.encode("utf-8")) + (1 if lines else 0)
        if total + cost > budget:
            continue
        total += cost
        lines.append(line)
        included.append(document)
        ids.append(key)
        taken.add(key)
    return Manifest("\n".join(lines), tuple(included), tuple(ids))


def interleave(
    lexical: Sequence[MemoryDocument], recent: Sequence[MemoryDocument]
) -> list[MemoryDocument]:
    """L0, R0, L1, R1, ... then the rest of whichever list is longer."""
    out: list[MemoryDocument] = []
    for i, document in enumerate(lexical):
        out.append(document)
        if i < len(recent):
            out.append(recent[i])
    out.extend(recent[len(lexical) :])
    return out


@attrs.frozen
class RecallCandidates:
    """Everything the deterministic pass of one recall produces."""

    docs_scanned: int
    fallback: tuple[MemoryDocument, ...]
    candidates: tuple[MemoryDocument, ...]
    manifest: Manifest
    fast: tuple[MemoryDocument, ...]
    """The deterministic fast result: the fallback's first two, or what the scorer
    judges strong among them (:class:`FastRanker`)."""


def prepare_candidates(
    query: str,
    pool: Sequence[MemoryDocument],
    ranker: Ranker,
    *,
    recent_tools: Sequence[str] = (),
    excluded_paths: Collection[str] = frozenset(),
    limit: int = MAX_PROMPT_DOCS,
    order: PoolLookups | None = None,
) -> RecallCandidates:
    """The candidate set, fallback, fast result and manifest for ``query`` over ``pool``.

    ``ranker`` indexes exactly ``pool`` (same order). Documents whose path is
    in ``excluded_paths`` (already surfaced this session) are left out first.
    ``order`` (per-pool lookups) saves a pass over the pool when a snapshot
    serves many recalls.
    """
    if order is None:
        order = PoolOrder.of(pool)
    surfaced = {i for path in frozenset(excluded_paths) for i in order.indices_of(path)}
    noisy: set[int] = set()
    if recent_tools:
        is_noise = active_tool_filter(recent_tools)
        noisy = {i for i, d in enumerate(pool) if i not in surfaced and is_noise(d)}
    out = surfaced | noisy
    wanted = max(LEXICAL_SHARE, limit)
    if isinstance(ranker, FastRanker):
        lexical, fast = ranker.rank_and_fast(query, wanted, exclude=out)
    else:
        lexical = ranker.rank(query, wanted, exclude=out)
        fast = lexical[:MAX_FAST_DOCS]
    lexical_share = lexical[:LEXICAL_SHARE]
    skip = out.union(lexical_share)
    want = MAX_CANDIDATES - len(lexical_share)
    unused = itertools.filterfalse(skip.__contains__, order.by_recency)
    recent = list(itertools.islice(unused, want))
    candidates = interleave([pool[i] for i in lexical_share], [pool[i] for i in recent])
    return RecallCandidates(
        docs_scanned=len(pool) - len(surfaced),
        fallback=tuple(pool[i] for i in lexical[:limit]),
        candidates=tuple(candidates),
        manifest=build_manifest(candidates),
        fast=tuple(pool[i] for i in fast[:MAX_FAST_DOCS]),
    )
