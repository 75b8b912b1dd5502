"""The memory service: the async (trio) face every caller uses.

It checks and normalises input (:mod:`memrecall.store.keys`), reads the clock, makes ids,
and runs each backend call in a worker thread (``trio.to_thread.run_sync`` under a
:class:`trio.CapacityLimiter`), so database work never blocks the trio loop. A cancelled
call waits for its thread to finish: a write either happened or did not, never half.
Connection policy is the backend's (one writer connection behind a lock, a small pool of
readers for SQLite; see :mod:`memrecall.store.sqlite`). Nothing here knows SQL.

Search (seed 002 §10, §16): visibility is computed from the caller's workspace first; the
cache key then holds user, workspace, visible scopes, normalised query, category, limit,
``memory_revision`` and :data:`~memrecall.store.retrieval.RETRIEVAL_VERSION`. On a miss the
service reuses a prepared :class:`~memrecall.store.retrieval.RetrievalView` of the same
``memory_revision`` or builds one from a consistent snapshot.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

import attrs
import trio

from .backend import KEEP, ContentChange, ForgetResult, Keep, NewMemory, SaveOutcome, Store
from .cache import CacheKey, QueryCache
from .keys import check_category, check_content, normalize_key
from .model import (
    AuditEvent,
    ChangedVia,
    ChangeType,
    InvalidInput,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    SourceType,
    Status,
    Tombstone,
    WorkspaceType,
    visible_scopes,
)
from .retrieval import RETRIEVAL_VERSION, Budget, RetrievalView, SearchHit, normalize_query

__all__ = ["MemoryService", "SearchResult", "new_memory_id", "utc_now"]

T = TypeVar("T")

MAX_SEARCH_LIMIT = 50
MAX_QUERY_CHARS = 4000


def utc_now() -> datetime:
    """The real clock (tests inject their own)."""
    return datetime.now(UTC)


def new_memory_id() -> str:
    """A fresh random memory id (32 hex digits)."""
    return uuid.uuid4().hex


@attrs.frozen
class SearchResult:
    """A search's hits, the ``memory_revision`` they reflect, and whether the cache answered."""

    hits: tuple[SearchHit, ...]
    memory_revision: int
    cached: bool


def _check_user(user_id: str) -> None:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user_id: must be a non-empty string")


def _check_time(name: str, value: datetime | Keep | None) -> None:
    if isinstance(value, datetime) and value.tzinfo is None:
        raise InvalidInput(f"{name}: must be timezone-aware")


class MemoryService:
    """User-owned, scoped, revisioned, forgettable memory (docs/store.md).

    ``user_id`` is always the caller's trusted identity (injected by the tool runtime, never
    taken from a model). Every method raises :class:`~memrecall.store.model.StoreError`
    subclasses on purpose: ``InvalidInput``, ``NotFound``, ``RevisionConflict``,
    ``KeyConflict``.
    """

    def __init__(
        self,
        store: Store,
        *,
        clock: Callable[[], datetime] = utc_now,
        ids: Callable[[], str] = new_memory_id,
        budget: Budget | None = None,
        cache_ttl: timedelta = timedelta(seconds=60),
        threads: int = 4,
        views: int = 16,
    ) -> None:
        self.store = store
        self.budget = budget or Budget()
        self._clock = clock
        self._ids = ids
        self._limiter = trio.CapacityLimiter(threads)
        self._cache = QueryCache(cache_ttl)
        self._views: OrderedDict[tuple[str, tuple[str, ...]], RetrievalView] = OrderedDict()
        self._max_views = views

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, **kwargs: object) -> MemoryService:
        """A service over a :class:`~memrecall.store.sqlite.SQLiteStore` at ``path``
        (default :func:`~memrecall.store.sqlite.default_db_path`)."""
        from .sqlite import SQLiteStore, default_db_path

        store = SQLiteStore(default_db_path() if path is None else path)
        return cls(store, **kwargs)  # type: ignore[arg-type]

    async def _run(self, fn: Callable[[], T]) -> T:
        return await trio.to_thread.run_sync(fn, limiter=self._limiter)

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise InvalidInput("clock: must return timezone-aware times")
        return now

    def _forget_cached(self, user_id: str) -> None:
        self._cache.drop_user(user_id)
        for view_key in [k for k in self._views if k[0] == user_id]:
            del self._views[view_key]

    # ------------------------------------------------------------------ writes

    async def save(
        self,
        user_id: str,
        scope: MemoryScope,
        key: str,
        content: str,
        category: str,
        *,
        source_type: SourceType = SourceType.EXPLICIT,
        review_after: datetime | None = None,
        expires_at: datetime | None = None,
        changed_via: ChangedVia = ChangedVia.USER_API,
        request_id: str | None = None,
    ) -> SaveOutcome:
        """Create a memory (revision 1), or succeed idempotently when the same scope and key
        already hold the same content and category (``created`` False; confirmation time
        refreshed). Different content raises ``KeyConflict`` with the existing id and
        revision: change it with :meth:`update` or :meth:`replace`."""
        _check_user(user_id)
        normalized = normalize_key(key)
        check_content(content)
        check_category(category)
        _check_time("review_after", review_after)
        _check_time("expires_at", expires_at)
        new = NewMemory(
            memory_id=self._ids(),
            user_id=user_id,
            scope=scope,
            key=normalized,
            content=content,
            category=category,
            source_type=source_type,
            review_after=review_after,
            expires_at=expires_at,
            changed_via=changed_via,
            request_id=request_id,
        )
        now = self._now()
        return await self._run(functools.partial(self.store.save, new, now))

    async def _change(
        self, user_id: str, memory_id: str, expected_revision: int, change: ContentChange
    ) -> MemoryRecord:
        _check_user(user_id)
        if change.content is not None:
            check_content(change.content)
        if change.category is not None:
            check_category(change.category)
        _check_time("review_after", change.review_after)
        _check_time("expires_at", change.expires_at)
        now = self._now()
        return await self._run(
            functools.partial(self.store.change, user_id, memory_id, expected_revision, change, now)
        )

    async def update(
        self,
        user_id: str,
        memory_id: str,
        *,
        expected_revision: int,
        content: str | None = None,
        category: str | None = None,
        review_after: datetime | Keep | None = KEEP,
        expires_at: datetime | Keep | None = KEEP,
        changed_via: ChangedVia = ChangedVia.USER_API,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """Write a new revision (change type ``update``). A stale ``expected_revision`` raises
        ``RevisionConflict`` carrying ``current_revision``; nothing is written."""
        change = ContentChange(
            change_type=ChangeType.UPDATE,
            content=content,
            category=category,
            review_after=review_after,
            expires_at=expires_at,
            changed_via=changed_via,
            request_id=request_id,
        )
        return await self._change(user_id, memory_id, expected_revision, change)

    async def replace(
        self,
        user_id: str,
        memory_id: str,
        *,
        expected_revision: int,
        content: str | None = None,
        category: str | None = None,
        review_after: datetime | Keep | None = KEEP,
        expires_at: datetime | Keep | None = KEEP,
        changed_via: ChangedVia = ChangedVia.USER_API,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """As :meth:`update`, recorded as an explicit replacement (change type ``replace``)."""
        change = ContentChange(
            change_type=ChangeType.REPLACE,
            content=content,
            category=category,
            review_after=review_after,
            expires_at=expires_at,
            changed_via=changed_via,
            request_id=request_id,
        )
        return await self._change(user_id, memory_id, expected_revision, change)

    async def restore_version(
        self,
        user_id: str,
        memory_id: str,
        revision: int,
        *,
        expected_revision: int,
        changed_via: ChangedVia = ChangedVia.USER_API,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """Copy version ``revision``'s content and category as a new revision."""
        _check_user(user_id)
        now = self._now()
        return await self._run(
            functools.partial(
                self.store.restore_version,
                user_id,
                memory_id,
                revision=revision,
                expected_revision=expected_revision,
                changed_via=changed_via,
                now=now,
                request_id=request_id,
            )
        )

    async def suppress(
        self, user_id: str, memory_id: str, *, request_id: str | None = None
    ) -> MemoryRecord:
        """Hide a memory from retrieval (restorable; content and history kept)."""
        _check_user(user_id)
        now = self._now()
        return await self._run(
            functools.partial(
                self.store.set_status, user_id, memory_id, Status.SUPPRESSED, now, request_id
            )
        )

    async def restore(
        self, user_id: str, memory_id: str, *, request_id: str | None = None
    ) -> MemoryRecord:
        """Make a suppressed memory active again."""
        _check_user(user_id)
        now = self._now()
        return await self._run(
            functools.partial(
                self.store.set_status, user_id, memory_id, Status.ACTIVE, now, request_id
            )
        )

    async def confirm(
        self,
        user_id: str,
        memory_id: str,
        *,
        review_after: datetime | Keep | None = KEEP,
        request_id: str | None = None,
    ) -> MemoryRecord:
        """Reconfirm a memory: a due review ends; optionally schedule the next one."""
        _check_user(user_id)
        _check_time("review_after", review_after)
        now = self._now()
        return await self._run(
            functools.partial(self.store.confirm, user_id, memory_id, now, review_after, request_id)
        )

    async def forget(
        self, user_id: str, memory_id: str, *, request_id: str | None = None
    ) -> ForgetResult:
        """Delete a memory for good: current and historical content, cached copies in this
        service, then scrub the database files. Leaves only the tombstone."""
        _check_user(user_id)
        now = self._now()
        try:
            return await self._run(
                functools.partial(self.store.forget, user_id, memory_id, now, request_id)
            )
        finally:
            self._forget_cached(user_id)

    # ------------------------------------------------------------------ reads

    async def get(self, user_id: str, memory_id: str) -> MemoryRecord:
        """The current record (any status). Raises ``NotFound``."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.get, user_id, memory_id))

    async def list_records(
        self,
        user_id: str,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        status: Status | None = None,
        after: str | None = None,
        limit: int = 100,
    ) -> list[MemoryRecord]:
        """A management page of the user's records ordered by ``memory_id`` (after ``after``)."""
        _check_user(user_id)
        if not 1 <= limit <= 1000:
            raise InvalidInput("limit: 1 to 1000")
        return await self._run(
            functools.partial(
                self.store.list_records,
                user_id,
                scopes=scopes,
                status=status,
                after=after,
                limit=limit,
            )
        )

    async def history(self, user_id: str, memory_id: str) -> list[MemoryVersion]:
        """Every version, oldest first (management API only, never agent tools)."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.history, user_id, memory_id))

    async def audit(self, user_id: str, memory_id: str | None = None) -> list[AuditEvent]:
        """The user's audit events (or one memory's), oldest first."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.audit_events, user_id, memory_id))

    async def tombstone(self, user_id: str, memory_id: str) -> Tombstone | None:
        """The tombstone of a forgotten memory, if any."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.tombstone, user_id, memory_id))

    async def memory_revision(self, user_id: str) -> int:
        """The user's memory_revision (advances on every write)."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.memory_revision, user_id))

    async def search(
        self,
        user_id: str,
        workspace: WorkspaceType | None,
        query: str,
        *,
        category: str | None = None,
        limit: int | None = None,
    ) -> SearchResult:
        """Retrieve the user's memories visible from ``workspace`` (None: global only).

        Active, unexpired records only; exact key first; nothing for no match; budgets from
        :attr:`budget` (``limit`` may lower the hit count, up to 50).
        """
        _check_user(user_id)
        if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query: a string of at most {MAX_QUERY_CHARS} characters")
        count = self.budget.limit if limit is None else limit
        if not 1 <= count <= MAX_SEARCH_LIMIT:
            raise InvalidInput(f"limit: 1 to {MAX_SEARCH_LIMIT}")
        # permission first: the visible scopes are fixed before any cache lookup
        scopes = visible_scopes(workspace)
        labels = tuple(s.label for s in scopes)
        normalized = normalize_query(query)
        wanted = None if category is None else category

        def key_at(revision: int) -> CacheKey:
            return CacheKey(
                user_id=user_id,
                workspace=None if workspace is None else workspace.value,
                visible_scopes=labels,
                query=normalized,
                category=wanted,
                limit=count,
                memory_revision=revision,
                retrieval_version=RETRIEVAL_VERSION,
            )

        revision = await self.memory_revision(user_id)
        now = self._now()
        cached = self._cache.get(key_at(revision), now)
        if cached is not None:
            return SearchResult(cached, revision, cached=True)
        view = self._views.get((user_id, labels))
        if view is None or view.memory_revision != revision:
            view = await self._run(functools.partial(self._build_view, user_id, scopes))
            self._views[(user_id, labels)] = view
            while len(self._views) > self._max_views:
                self._views.popitem(last=False)
        self._views.move_to_end((user_id, labels))
        budget = attrs.evolve(self.budget, limit=count)
        hits = tuple(view.search(normalized, now, category=wanted, budget=budget))
        self._cache.put(key_at(view.memory_revision), hits, now, view.valid_until(now))
        return SearchResult(hits, view.memory_revision, cached=False)

    def _build_view(self, user_id: str, scopes: Sequence[MemoryScope]) -> RetrievalView:
        revision, records = self.store.snapshot(user_id, scopes)
        return RetrievalView(revision, records)

    def close(self) -> None:
        """Close the backend (synchronous, so it also works during cancellation)."""
        self.store.close()
        self._cache = QueryCache(self._cache.ttl)
        self._views.clear()
