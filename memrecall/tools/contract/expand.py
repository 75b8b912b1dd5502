"""``memory_expand``: L2 bodies for ids, unknown ids listed, hits counted."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from .records import StoreView

__all__ = ["ExpandResult", "ExpandedRecord", "expand"]


class ExpandedRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A found record with its body; ``hits`` is the count after this call."""

    id: str
    kind: str
    title: str
    body: str
    tags: tuple[str, ...]
    source: str
    scope: str
    hits: int


class ExpandResult(msgspec.Struct, frozen=True, kw_only=True):
    """Found records (request order), unknown ids, and the new hit count per found id.

    The integration persists ``hits``; ``text`` is what the model sees.
    """

    found: tuple[ExpandedRecord, ...]
    missing: tuple[str, ...]
    hits: dict[str, int]
    text: str


def expand(view: StoreView, ids: Sequence[str]) -> ExpandResult:
    """Bodies for the requested ids. A repeated id is answered (and counted) once."""
    by_id = {record.id: record for record in view.records}
    found: list[ExpandedRecord] = []
    missing: list[str] = []
    seen: set[str] = set()
    for wanted in ids:
        if wanted in seen:
            continue
        seen.add(wanted)
        record = by_id.get(wanted)
        if record is None:
            missing.append(wanted)
            continue
        found.append(
            ExpandedRecord(
                id=record.id,
                kind=record.kind,
                title=record.title,
                body=record.body,
                tags=record.tags,
                source=record.source,
                scope=record.scope,
                hits=record.hits + 1,
            )
        )
    blocks = [f"## {r.id} | {r.kind} | {r.title}\n{r.body}" for r in found]
    if missing:
        blocks.append("missing: " + ", ".join(missing))
    return ExpandResult(
        found=tuple(found),
        missing=tuple(missing),
        hits={r.id: r.hits for r in found},
        text="\n\n".join(blocks) if blocks else "nothing requested",
    )
