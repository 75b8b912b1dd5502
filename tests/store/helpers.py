"""Shared test helpers for the store: a manual clock and record builders."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from memrecall.store import ChangedVia, MemoryScope, NewMemory, SourceType, WorkspaceType

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
GLOBAL = MemoryScope.global_()
LEARNING = MemoryScope.of_workspace(WorkspaceType.LEARNING)
TEACHING = MemoryScope.of_workspace(WorkspaceType.TEACHING)
RESEARCH = MemoryScope.of_workspace(WorkspaceType.RESEARCH)


class ManualClock:
    """A clock that moves only when told to."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        """Move forward and return the new time."""
        self.now += timedelta(seconds=seconds)
        return self.now


_ids = itertools.count()


def new_memory(
    user_id: str = "u1",
    scope: MemoryScope = GLOBAL,
    key: str = "editor",
    content: str = "prefers vim",
    category: str = "preference",
    *,
    memory_id: str | None = None,
    review_after: datetime | None = None,
    expires_at: datetime | None = None,
) -> NewMemory:
    """A NewMemory with a fresh id (keys are expected already normalised)."""
    return NewMemory(
        memory_id=memory_id or f"m{next(_ids):06d}",
        user_id=user_id,
        scope=scope,
        key=key,
        content=content,
        category=category,
        source_type=SourceType.EXPLICIT,
        review_after=review_after,
        expires_at=expires_at,
        changed_via=ChangedVia.USER_API,
    )
