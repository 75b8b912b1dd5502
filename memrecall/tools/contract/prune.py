"""``memory_prune``: a plan that merges duplicates, then evicts the least valuable records.

1. **Merge**: records with the same scope, kind and title become one: the
   newest (``updated_at``, then the later one in the view) is kept, hits are
   added, tags are the ordered union (newest first, at most 12).
2. **Evict**: while the store is over its byte cap, drop the record with the
   lowest ``pruneScore = decay(age) x (1 + hits)``, where
   ``decay(age) = 0.5 ** (age_days / pruneHalfLifeDays)`` and age is counted
   from ``updated_at`` to ``now`` (ties: the older, then the smaller id, first).

The plan is the same with or without ``dry_run``; only an explicit ``False``
marks it for execution, which the integration carries out as forgets (the
absorbed records of a merge too). This core never changes anything.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from .constants import TAGS_MAX, ScoreConfig
from .records import MemoryRecord, StoreView, record_bytes

__all__ = ["Eviction", "Merge", "PrunePlan", "is_dry_run", "plan_prune", "prune_score"]

_DAY = 86_400.0


class Merge(msgspec.Struct, frozen=True, kw_only=True):
    """Records folded into ``kept``; ``record`` is the kept record as it will be after merging."""

    kept: str
    absorbed: tuple[str, ...]
    record: MemoryRecord


class Eviction(msgspec.Struct, frozen=True, kw_only=True):
    """A record to forget, with the score that put it first in line and its size."""

    id: str
    prune_score: float
    bytes: int


class PrunePlan(msgspec.Struct, frozen=True, kw_only=True):
    """What ``memory_prune`` would do (``dry_run``) or is to do."""

    dry_run: bool
    merges: tuple[Merge, ...]
    evictions: tuple[Eviction, ...]
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int
    max_bytes: int
    text: str


def is_dry_run(value: object) -> bool:
    """Only the boolean ``False`` turns the dry run off (``"false"``, ``0`` and ``None`` do not)."""
    return value is not False


def prune_score(record: MemoryRecord, now: float, config: ScoreConfig) -> float:
    """``decay(age) x (1 + hits)``; a record from the future counts as age 0."""
    age_days = max(0.0, now - record.updated_at) / _DAY
    return float(0.5 ** (age_days / config.prune_half_life_days) * (1 + record.hits))


def _merge_groups(records: tuple[MemoryRecord, ...]) -> tuple[list[MemoryRecord], list[Merge]]:
    groups: dict[tuple[str, str, str], list[tuple[int, MemoryRecord]]] = {}
    for position, record in enumerate(records):
        groups.setdefault((record.scope, record.kind, record.title), []).append((position, record))
    survivors: list[tuple[int, MemoryRecord]] = []
    merges: list[Merge] = []
    for members in groups.values():
        if len(members) == 1:
            survivors.append(members[0])
            continue
        newest_first = sorted(members, key=lambda m: (m[1].updated_at, m[0]), reverse=True)
        position, kept = newest_first[0]
        tags: dict[str, None] = {}
        for _, member in newest_first:
            tags.update(dict.fromkeys(member.tags))
        merged = msgspec.structs.replace(
            kept,
            hits=sum(m.hits for _, m in members),
            tags=tuple(tags)[:TAGS_MAX],
            created_at=min(m.created_at for _, m in members),
        )
        survivors.append((position, merged))
        merges.append(
            Merge(kept=kept.id, absorbed=tuple(m.id for _, m in newest_first[1:]), record=merged)
        )
    survivors.sort(key=lambda m: m[0])
    return [record for _, record in survivors], merges


def plan_prune(
    view: StoreView,
    *,
    now: float,
    dry_run: object = True,
    config: ScoreConfig | None = None,
    sizes: Mapping[str, int] | None = None,
) -> PrunePlan:
    """The merge-then-evict plan for ``view`` at time ``now`` (see the module docstring).

    ``sizes`` overrides :func:`record_bytes` per id for stores that measure
    differently; a merged record is always re-measured.
    """
    cfg = config or ScoreConfig()

    def size(record: MemoryRecord, merged: bool = False) -> int:
        if sizes is not None and not merged and record.id in sizes:
            return sizes[record.id]
        return record_bytes(record)

    before = sum(size(r) for r in view.records)
    survivors, merges = _merge_groups(view.records)
    merged_ids = {m.kept for m in merges}
    sized = [(r, size(r, r.id in merged_ids)) for r in survivors]
    used = sum(b for _, b in sized)
    order = sorted(sized, key=lambda rb: (prune_score(rb[0], now, cfg), rb[0].updated_at, rb[0].id))
    evictions: list[Eviction] = []
    for record, nbytes in order:
        if used <= view.max_bytes:
            break
        evictions.append(
            Eviction(id=record.id, prune_score=prune_score(record, now, cfg), bytes=nbytes)
        )
        used -= nbytes
    dry = is_dry_run(dry_run)
    lines = [
        f"{'dry run: would' if dry else 'will'} merge {len(merges)} group(s) and evict "
        f"{len(evictions)} record(s); bytes {before} -> {used} (cap {view.max_bytes})"
    ]
    lines += [f"merge {', '.join(m.absorbed)} into {m.kept}" for m in merges]
    lines += [f"evict {e.id} (pruneScore {e.prune_score:.4f})" for e in evictions]
    return PrunePlan(
        dry_run=dry,
        merges=tuple(merges),
        evictions=tuple(evictions),
        records_before=len(view.records),
        records_after=len(survivors) - len(evictions),
        bytes_before=before,
        bytes_after=used,
        max_bytes=view.max_bytes,
        text="\n".join(lines),
    )
