"""The service's search machinery: the §16 query cache and the incremental views (§10).

:class:`SearchViews` holds one :class:`~memrecall.store.cache.QueryCache` and at most
``views`` :class:`~memrecall.store.retrieval.LiveView` values, one per (user, visible
scopes), least recently used dropped first. Visibility is computed from the caller's
workspace *before* the cache is consulted; the cache key then holds user, workspace,
visible scopes, normalised query, category, limit, ``memory_revision`` and
:data:`~memrecall.store.retrieval.RETRIEVAL_VERSION`. On a miss the view is brought up to
date by applying only the changes since its cursor
(:meth:`~memrecall.store.backend.Store.changes_since`, in a worker thread), then asked.
Views are serialised per key by a :class:`trio.Lock`.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

import attrs
import trio

from .backend import Store
from .cache import CacheKey, QueryCache
from .model import MemoryScope, WorkspaceType, visible_scopes
from .retrieval import RETRIEVAL_VERSION, Budget, LiveView, SearchHit, normalize_query

__all__ = ["SearchResult", "SearchViews"]


@attrs.frozen
class SearchResult:
    """A search's hits, the ``memory_revision`` they reflect, and whether the cache answered."""

    hits: tuple[SearchHit, ...]
    memory_revision: int
    cached: bool


class SearchViews:
    """The query cache and the live views of one service (module docstring)."""

    def __init__(self, cache_ttl: timedelta, views: int) -> None:
        self.cache = QueryCache(cache_ttl)
        self.views: OrderedDict[tuple[str, tuple[str, ...]], tuple[LiveView, trio.Lock]] = (
            OrderedDict()
        )
        self.max_views = views

    def drop(self, user_id: str, memory_id: str | None = None) -> None:
        """Drop the user's cached results; drop ``memory_id`` from the user's views (or the
        views themselves when no id is given, or a view is being refreshed right now)."""
        self.cache.drop_user(user_id)
        for view_key in [k for k in self.views if k[0] == user_id]:
            view, lock = self.views[view_key]
            if memory_id is None or lock.locked():
                del self.views[view_key]
            else:
                view.discard(memory_id)

    def clear(self) -> None:
        """Forget every cached result and view."""
        self.cache = QueryCache(self.cache.ttl)
        self.views.clear()

    async def search(
        self,
        store: Store,
        run: Callable[[Callable[[], None]], Awaitable[None]],
        user_id: str,
        workspace: WorkspaceType | None,
        query: str,
        *,
        category: str | None,
        budget: Budget,
        revision: int,
        now: datetime,
    ) -> SearchResult:
        """Answer from the cache, else from the (refreshed) view; ``revision`` is the user's
        memory_revision just read, ``run`` runs a function in a worker thread."""
        # permission first: the visible scopes are fixed before any cache lookup
        scopes = visible_scopes(workspace)
        labels = tuple(s.label for s in scopes)
        normalized = normalize_query(query)

        def key_at(at_revision: int) -> CacheKey:
            return CacheKey(
                user_id=user_id,
                workspace=None if workspace is None else workspace.value,
                visible_scopes=labels,
                query=normalized,
                category=category,
                limit=budget.limit,
                memory_revision=at_revision,
                retrieval_version=RETRIEVAL_VERSION,
            )

        cached = self.cache.get(key_at(revision), now)
        if cached is not None:
            return SearchResult(cached, revision, cached=True)
        view_key = (user_id, labels)
        entry = self.views.get(view_key)
        if entry is None:
            entry = (LiveView(), trio.Lock())
            self.views[view_key] = entry
            while len(self.views) > self.max_views:
                self.views.popitem(last=False)
        self.views.move_to_end(view_key)
        view, lock = entry
        async with lock:
            if view.memory_revision != revision:
                # only what changed since the view's cursor is read and analysed
                await run(functools.partial(_refresh, store, view, user_id, scopes))
            hits = tuple(view.search(normalized, now, category=category, budget=budget))
        self.cache.put(key_at(view.memory_revision), hits, now, view.valid_until(now))
        return SearchResult(hits, view.memory_revision, cached=False)


def _refresh(store: Store, view: LiveView, user_id: str, scopes: Sequence[MemoryScope]) -> None:
    changes = store.changes_since(user_id, scopes, view.cursor)
    view.apply(changes, view.prepare(changes))
