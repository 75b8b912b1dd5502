"""The profile projection as a derived table (seed 002 §6), rebuilt after memory writes.

:func:`rebuild_projection` reads the user's projectable memories and explicit profile
settings, rebuilds the profile with :func:`memrecall.governance.build_profile`, and stores
the memory-derived entries (settings are never copied: they stay the source of truth and
always win). The service calls it *after* a write has committed, in its own transaction,
and swallows its failure: a failing projection never rolls a memory write back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from memrecall.governance import Profile, ProfileEntry, build_profile, projection_changes
from memrecall.governance.profile import ProfileSource

from .backend import Store
from .model import GovernanceEvent

__all__ = ["PROJECTION_CREATED", "PROJECTION_REMOVED", "Projector", "rebuild_projection"]

PROJECTION_CREATED = "memory.projection_created"
PROJECTION_REMOVED = "memory.projection_removed"

Projector = Callable[[Store, str, datetime], None]
"""``(store, user_id, now)``: rebuild one user's projection (runs in a worker thread)."""


def rebuild_projection(store: Store, user_id: str, now: datetime) -> None:
    """Rebuild ``user_id``'s stored profile projection; write created/removed events."""
    memories, settings = store.projection_inputs(user_id)
    profile = build_profile(memories, settings)
    derived: dict[str, ProfileEntry] = {
        field: entry
        for field, entry in profile.entries.items()
        if entry.source is ProfileSource.MEMORY
    }
    stored = store.get_projection(user_id)
    if stored == derived:
        return
    created, removed = projection_changes(Profile(stored, {}), Profile(derived, {}))
    events = [GovernanceEvent(PROJECTION_CREATED, user_id, {"field": f}) for f in created] + [
        GovernanceEvent(PROJECTION_REMOVED, user_id, {"field": f}) for f in removed
    ]
    store.put_projection(user_id, derived, now, events)
