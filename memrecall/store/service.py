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
service brings its :class:`~memrecall.store.retrieval.LiveView` of (user, visible scopes) up
to date by applying only the changes since its cursor
(:meth:`~memrecall.store.backend.Store.changes_since`), then asks it.
"""

from __future__ import annotations

import functools
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal, TypedDict, TypeVar, Unpack

import attrs
import trio

from memrecall.governance import (
    AcceptEdits,
    Candidate,
    CandidateOperation,
    CandidateStatus,
    MemorySettings,
    ProfileEntry,
)

from . import candidates as _candidates
from .backend import KEEP, ContentChange, ForgetResult, Keep, NewMemory, SaveOutcome, Store
from .candidates import AcceptOutcome, ProposeOutcome
from .contract_fields import ContractFields
from .keys import check_category, check_content, normalize_key
from .model import (
    AuditEvent,
    ChangedVia,
    ChangeType,
    GovernanceEvent,
    InvalidInput,
    MemoryRecord,
    MemoryScope,
    MemoryVersion,
    SourceType,
    Status,
    Tombstone,
    WorkspaceType,
)
from .projection import Projector, rebuild_projection
from .retrieval import Budget
from .search import SearchResult, SearchViews

__all__ = ["ContentEdits", "MemoryService", "SearchResult", "new_memory_id", "utc_now"]

T = TypeVar("T")
_log = logging.getLogger(__name__)

MAX_SEARCH_LIMIT = 50
MAX_QUERY_CHARS = 4000


def utc_now() -> datetime:
    """The real clock (tests inject their own)."""
    return datetime.now(UTC)


def new_memory_id() -> str:
    """A fresh random memory id (32 hex digits)."""
    return uuid.uuid4().hex


def _check_user(user_id: str) -> None:
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user_id: must be a non-empty string")


class ContentEdits(TypedDict, total=False):
    """What :meth:`MemoryService.update` and :meth:`~MemoryService.replace` may change.

    ``content`` / ``category``: ``None`` (or absent) keeps the current value;
    ``review_after`` / ``expires_at``: absent keeps it, ``None`` clears it;
    ``changed_via`` defaults to ``user_api``; ``contract_fields`` replaces the memory
    tools' side row in the same transaction.
    """

    content: str | None
    category: str | None
    review_after: datetime | Keep | None
    expires_at: datetime | Keep | None
    changed_via: ChangedVia
    request_id: str | None
    contract_fields: ContractFields | None


def _checked_fields(fields: ContractFields | None) -> ContractFields | None:
    if fields is not None and (not isinstance(fields.hits, int) or fields.hits < 0):
        raise InvalidInput("contract_fields.hits: must be an integer >= 0")
    return fields


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
        projector: Projector | None = rebuild_projection,
    ) -> None:
        self.store = store
        self.budget = budget or Budget()
        self._clock = clock
        self._ids = ids
        self._limiter = trio.CapacityLimiter(threads)
        self._search = SearchViews(cache_ttl, views)
        self._projector = projector
        self.projection_failures = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, **kwargs: object) -> MemoryService:
        """A service over the store ``path`` names: a ``postgresql://`` URI opens a
        :class:`~memrecall.store.postgres.PostgresStore`, anything else a
        :class:`~memrecall.store.sqlite.SQLiteStore` file (default
        :func:`~memrecall.store.sqlite.default_db_path`)."""
        from .postgres.target import open_store

        return cls(open_store(path), **kwargs)  # type: ignore[arg-type]

    async def _run(self, fn: Callable[[], T]) -> T:
        return await trio.to_thread.run_sync(fn, limiter=self._limiter)

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise InvalidInput("clock: must return timezone-aware times")
        return now

    def _forget_cached(self, user_id: str, memory_id: str | None = None) -> None:
        """Drop the user's cached results and ``memory_id`` from the user's views (all of
        the user's views when no id is given)."""
        self._search.drop(user_id, memory_id)

    async def _project(self, user_id: str) -> None:
        """Rebuild the user's profile projection after a committed write. A failure is
        counted (``projection_failures``) and logged by type only; it never undoes the write."""
        if self._projector is None:
            return
        try:
            now = self._now()
            await self._run(functools.partial(self._projector, self.store, user_id, now))
        except Exception as exc:
            self.projection_failures += 1
            _log.warning("profile projection failed: %s", type(exc).__name__)

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
        contract_fields: ContractFields | None = None,
    ) -> SaveOutcome:
        """Create a memory (revision 1), or succeed idempotently when the same scope and key
        already hold the same content and category (``created`` False; confirmation time
        refreshed). Different content raises ``KeyConflict`` with the existing id and
        revision: change it with :meth:`update` or :meth:`replace`. ``contract_fields`` (the
        memory tools' side row) is written in the same transaction."""
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
            contract_fields=_checked_fields(contract_fields),
        )
        now = self._now()
        outcome = await self._run(functools.partial(self.store.save, new, now))
        await self._project(user_id)
        return outcome

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
        record = await self._run(
            functools.partial(self.store.change, user_id, memory_id, expected_revision, change, now)
        )
        await self._project(user_id)
        return record

    async def update(
        self,
        user_id: str,
        memory_id: str,
        *,
        expected_revision: int,
        **edits: Unpack[ContentEdits],
    ) -> MemoryRecord:
        """Write a new revision (change type ``update``) with ``edits`` (:class:`ContentEdits`).
        A stale ``expected_revision`` raises ``RevisionConflict`` carrying
        ``current_revision``; nothing is written. ``contract_fields`` (the memory tools'
        side row) is written in the same transaction."""
        return await self._edit(ChangeType.UPDATE, user_id, memory_id, expected_revision, edits)

    async def replace(
        self,
        user_id: str,
        memory_id: str,
        *,
        expected_revision: int,
        **edits: Unpack[ContentEdits],
    ) -> MemoryRecord:
        """As :meth:`update`, recorded as an explicit replacement (change type ``replace``)."""
        return await self._edit(ChangeType.REPLACE, user_id, memory_id, expected_revision, edits)

    async def _edit(
        self,
        change_type: Literal[ChangeType.UPDATE, ChangeType.REPLACE],
        user_id: str,
        memory_id: str,
        expected_revision: int,
        edits: ContentEdits,
    ) -> MemoryRecord:
        change = ContentChange(
            change_type=change_type,
            content=edits.get("content"),
            category=edits.get("category"),
            review_after=edits.get("review_after", KEEP),
            expires_at=edits.get("expires_at", KEEP),
            changed_via=edits.get("changed_via", ChangedVia.USER_API),
            request_id=edits.get("request_id"),
            contract_fields=_checked_fields(edits.get("contract_fields")),
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
        return await self._set_status(user_id, memory_id, Status.SUPPRESSED, request_id)

    async def restore(
        self, user_id: str, memory_id: str, *, request_id: str | None = None
    ) -> MemoryRecord:
        """Make a suppressed memory active again."""
        return await self._set_status(user_id, memory_id, Status.ACTIVE, request_id)

    async def _set_status(
        self, user_id: str, memory_id: str, status: Status, request_id: str | None
    ) -> MemoryRecord:
        _check_user(user_id)
        now = self._now()
        record = await self._run(
            functools.partial(self.store.set_status, user_id, memory_id, status, now, request_id)
        )
        await self._project(user_id)
        return record

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
            result = await self._run(
                functools.partial(self.store.forget, user_id, memory_id, now, request_id)
            )
        finally:
            self._forget_cached(user_id, memory_id)
        await self._project(user_id)
        return result

    # ------------------------------------------------------------------ candidates (§8, §9)

    async def propose_candidate(
        self,
        user_id: str,
        scope: MemoryScope,
        key: str,
        content: str,
        category: str,
        *,
        operation: CandidateOperation = CandidateOperation.CREATE,
        target: MemoryRecord | None = None,
        source_conversation_id: str | None = None,
    ) -> ProposeOutcome:
        """Create a pending candidate (skipped when the same proposal was rejected before)."""
        _check_user(user_id)
        return await _candidates.propose(
            self,
            user_id,
            operation=operation,
            scope=scope,
            key=key,
            content=content,
            category=category,
            target=target,
            source_conversation_id=source_conversation_id,
        )

    async def get_candidate(self, user_id: str, candidate_id: str) -> Candidate:
        """One of the user's candidates. Raises ``NotFound``."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.get_candidate, user_id, candidate_id))

    async def list_candidates(
        self, user_id: str, *, status: CandidateStatus | None = None
    ) -> list[Candidate]:
        """The user's candidates (optionally of one status), oldest first."""
        _check_user(user_id)
        return await self._run(
            functools.partial(self.store.list_candidates, user_id, status=status)
        )

    async def accept_candidate(
        self, user_id: str, candidate_id: str, edits: AcceptEdits | None = None
    ) -> AcceptOutcome:
        """Accept a pending candidate, optionally edited (content, category; scope of a create).
        A target changed since the proposal rebases it instead (``rebased``; still pending)."""
        _check_user(user_id)
        return await _candidates.accept(self, user_id, candidate_id, edits or AcceptEdits())

    async def reject_candidate(self, user_id: str, candidate_id: str) -> Candidate:
        """Reject a pending candidate; only its fingerprint is kept."""
        _check_user(user_id)
        return await _candidates.reject(self, user_id, candidate_id)

    async def expire_candidates(self, now: datetime) -> int:
        """Expire every pending candidate due at ``now`` (all users); returns how many."""
        _check_time("now", now)
        return await _candidates.expire_due(self, now)

    # ------------------------------------------------------------------ settings, events

    async def get_settings(self, user_id: str) -> MemorySettings:
        """The user's stored memory settings (saved memory, auto extraction)."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.get_settings, user_id))

    async def set_settings(
        self,
        user_id: str,
        *,
        saved_memory_enabled: bool | None = None,
        auto_extract_enabled: bool | None = None,
    ) -> MemorySettings:
        """Change the user's memory settings (None leaves one as it is); returns the new ones."""
        current = await self.get_settings(user_id)
        new = MemorySettings(
            current.saved_memory_enabled if saved_memory_enabled is None else saved_memory_enabled,
            current.auto_extract_enabled if auto_extract_enabled is None else auto_extract_enabled,
        )
        now = self._now()
        await self._run(functools.partial(self.store.put_settings, user_id, new, now))
        self._forget_cached(user_id)
        return new

    async def record_events(self, events: Sequence[GovernanceEvent]) -> None:
        """Append governance audit events (e.g. ``memory.policy_denied``)."""
        now = self._now()
        await self._run(functools.partial(self.store.add_events, list(events), now))

    async def governance_events(self, user_id: str) -> list[GovernanceEvent]:
        """The user's governance audit events (denials, candidates, projections), oldest first."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.governance_events, user_id))

    async def mark_projectable(
        self, user_id: str, memory_id: str, projection: tuple[str, str] | None
    ) -> None:
        """Mark a memory as feeding profile field ``projection[0]`` with value ``[1]`` (None:
        unmark), then rebuild the projection."""
        _check_user(user_id)
        await self._run(
            functools.partial(self.store.set_projection_mark, user_id, memory_id, projection)
        )
        await self._project(user_id)

    async def set_profile_setting(self, user_id: str, field: str, value: str | None) -> None:
        """Set (None: clear) an explicit profile setting; it always beats a projection."""
        _check_user(user_id)
        await self._run(functools.partial(self.store.set_profile_setting, user_id, field, value))
        await self._project(user_id)

    async def profile(self, user_id: str) -> dict[str, ProfileEntry]:
        """The stored, memory-derived profile projection by field."""
        _check_user(user_id)
        return await self._run(functools.partial(self.store.get_projection, user_id))

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
        :attr:`budget` (``limit`` may lower the hit count, up to 50). How: :mod:`.search`.
        """
        _check_user(user_id)
        if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query: a string of at most {MAX_QUERY_CHARS} characters")
        count = self.budget.limit if limit is None else limit
        if not 1 <= count <= MAX_SEARCH_LIMIT:
            raise InvalidInput(f"limit: 1 to {MAX_SEARCH_LIMIT}")
        revision = await self.memory_revision(user_id)
        return await self._search.search(
            self.store,
            self._run,
            user_id,
            workspace,
            query,
            category=category,
            budget=attrs.evolve(self.budget, limit=count),
            revision=revision,
            now=self._now(),
        )

    def close(self) -> None:
        """Close the backend (synchronous, so it also works during cancellation)."""
        self.store.close()
        self._search.clear()
