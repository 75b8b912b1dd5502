"""The short-TTL query cache of seed 002 §16.

The key holds everything a result depends on: user, workspace, the visible scopes, the
normalised query, the category filter, the limit, the user's ``memory_revision`` and the
retrieval version. Any write advances ``memory_revision``, so an entry written before it is
never looked up again. Time-driven changes (an expiry, a review coming due) are covered by
each entry's ``valid_until``. Callers decide visibility *before* building the key (the
scopes are part of it), so one workspace's results are never served to another.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta

import attrs

from .retrieval import SearchHit

__all__ = ["CacheKey", "CacheStatistics", "QueryCache"]


@attrs.frozen
class CacheKey:
    """Everything a cached result depends on."""

    user_id: str
    workspace: str | None
    visible_scopes: tuple[str, ...]
    query: str
    category: str | None
    limit: int
    memory_revision: int
    retrieval_version: str


@attrs.frozen
class CacheStatistics:
    """Counters since the cache was made."""

    hits: int
    misses: int
    entries: int


class QueryCache:
    """An LRU of at most ``max_entries`` results, each kept at most ``ttl``."""

    def __init__(self, ttl: timedelta = timedelta(seconds=60), max_entries: int = 1024) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: OrderedDict[CacheKey, tuple[datetime, tuple[SearchHit, ...]]] = OrderedDict()
        self._hits = 0
        self._misses = 0

    def get(self, key: CacheKey, now: datetime) -> tuple[SearchHit, ...] | None:
        """The cached hits, or None when absent or no longer valid at ``now``."""
        entry = self._entries.get(key)
        if entry is None or entry[0] <= now:
            if entry is not None:
                del self._entries[key]
            self._misses += 1
            return None
        self._entries.move_to_end(key)
        self._hits += 1
        return entry[1]

    def put(
        self,
        key: CacheKey,
        hits: tuple[SearchHit, ...],
        now: datetime,
        valid_until: datetime | None = None,
    ) -> None:
        """Keep ``hits`` until ``now + ttl`` or ``valid_until``, whichever comes first."""
        until = now + self.ttl
        if valid_until is not None:
            until = min(until, valid_until)
        self._entries[key] = (until, hits)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def drop_user(self, user_id: str) -> None:
        """Forget every entry of one user (used by forget: no copy of the text stays)."""
        for key in [k for k in self._entries if k.user_id == user_id]:
            del self._entries[key]

    def statistics(self) -> CacheStatistics:
        """Hit and miss counters and the current size."""
        return CacheStatistics(self._hits, self._misses, len(self._entries))
