"""The user-profile projection (seed 002 §6): a small structured view derived from memories.

The profile is a derived cache, rebuilt from the records by :func:`build_profile` (never
edited in place, never a source of truth). A memory contributes only if it is

* **marked**: ``projectable`` and carrying a ``(field, value)`` projection;
* **short**: at most :data:`MAX_PROJECTABLE_CHARS` characters;
* **stable**: active and without an expiry date (time-bound facts are not a profile);
* **safe**: a ``preference``/``profile`` category, no secret-shaped text, and a value
  from the field's closed vocabulary (:data:`DEFAULT_PROFILE_FIELDS`), so nothing free-form
  reaches the prompt through the profile.

Explicit user settings always win over memories for the same field. When memories disagree
on a field the most recently updated one wins (ties: the larger memory id); the entry's
sources are the memories that agree with the winning value, so suppressing or forgetting a
memory removes an entry only when it was that entry's only source.

Because the service builds the projection after the memory write has committed, a failing
projection cannot roll the write back; :func:`build_profile` itself never raises on a bad
record, it skips and counts it.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime

import attrs

from memrecall.governance.sensitive import find_secrets

__all__ = [
    "DEFAULT_PROFILE_FIELDS",
    "MAX_PROJECTABLE_CHARS",
    "PROJECTABLE_CATEGORIES",
    "Profile",
    "ProfileEntry",
    "ProfileSource",
    "ProjectableMemory",
    "SkipReason",
    "build_profile",
    "projection_changes",
]

MAX_PROJECTABLE_CHARS = 200
PROJECTABLE_CATEGORIES = frozenset({"preference", "profile"})

DEFAULT_PROFILE_FIELDS: Mapping[str, frozenset[str]] = {
    "explanation_preference": frozenset({"example_first", "definition_first", "step_by_step"}),
    "answer_length": frozenset({"brief", "detailed"}),
    "tone": frozenset({"formal", "casual"}),
    "code_comments": frozenset({"minimal", "thorough"}),
}


@attrs.frozen
class ProjectableMemory:
    """The parts of a memory record the projection reads."""

    memory_id: str
    category: str
    content: str = attrs.field(repr=False)
    active: bool
    projectable: bool
    projection: tuple[str, str] | None
    updated_at: datetime
    expires_at: datetime | None = None


class ProfileSource(enum.StrEnum):
    """Where a profile entry's value came from."""

    SETTING = "setting"
    MEMORY = "memory"


@attrs.frozen
class ProfileEntry:
    """One profile field: its value, where it came from, and the memories behind it."""

    value: str
    source: ProfileSource
    memory_ids: tuple[str, ...] = ()


class SkipReason(enum.StrEnum):
    """Why a memory did not contribute to the profile."""

    NOT_PROJECTABLE = "not_projectable"
    INACTIVE = "inactive"
    NOT_STABLE = "not_stable"
    CATEGORY = "category"
    TOO_LONG = "too_long"
    SECRET = "secret"
    UNKNOWN_FIELD = "unknown_field"
    VALUE_NOT_ALLOWED = "value_not_allowed"
    SETTING_WINS = "setting_wins"
    OUTVOTED = "outvoted"


@attrs.frozen
class Profile:
    """The derived profile: ``entries`` by field, and counts of skipped memories by reason."""

    entries: Mapping[str, ProfileEntry]
    skipped: Mapping[SkipReason, int]


def _skip_reason(m: ProjectableMemory, fields: Mapping[str, frozenset[str]]) -> SkipReason | None:
    if not m.projectable or m.projection is None:
        return SkipReason.NOT_PROJECTABLE
    if not m.active:
        return SkipReason.INACTIVE
    if m.expires_at is not None:
        return SkipReason.NOT_STABLE
    if m.category.casefold() not in PROJECTABLE_CATEGORIES:
        return SkipReason.CATEGORY
    if len(m.content) > MAX_PROJECTABLE_CHARS:
        return SkipReason.TOO_LONG
    if find_secrets(m.content):
        return SkipReason.SECRET
    field, value = m.projection
    if field not in fields:
        return SkipReason.UNKNOWN_FIELD
    if value not in fields[field]:
        return SkipReason.VALUE_NOT_ALLOWED
    return None


def build_profile(
    memories: Iterable[ProjectableMemory],
    explicit_settings: Mapping[str, str],
    *,
    fields: Mapping[str, frozenset[str]] = DEFAULT_PROFILE_FIELDS,
) -> Profile:
    """Rebuild the profile from the user's memories and explicit settings (settings win)."""
    skipped: Counter[SkipReason] = Counter()
    claims: dict[str, list[ProjectableMemory]] = {}
    for m in memories:
        reason = _skip_reason(m, fields)
        if reason is None and m.projection is not None and m.projection[0] in explicit_settings:
            reason = SkipReason.SETTING_WINS
        if reason is not None:
            skipped[reason] += 1
            continue
        assert m.projection is not None
        claims.setdefault(m.projection[0], []).append(m)
    entries: dict[str, ProfileEntry] = {
        name: ProfileEntry(value, ProfileSource.SETTING)
        for name, value in explicit_settings.items()
    }
    for name, group in claims.items():
        winner = max(group, key=lambda m: (m.updated_at, m.memory_id))
        assert winner.projection is not None
        value = winner.projection[1]
        sources = sorted(m.memory_id for m in group if m.projection == (name, value))
        skipped[SkipReason.OUTVOTED] += len(group) - len(sources)
        entries[name] = ProfileEntry(value, ProfileSource.MEMORY, tuple(sources))
    return Profile(dict(sorted(entries.items())), dict(skipped))


def projection_changes(old: Profile, new: Profile) -> tuple[list[str], list[str]]:
    """Fields whose memory-derived entry appeared or changed, and fields whose one vanished.

    These drive the ``memory.projection_created`` / ``memory.projection_removed`` audit
    events; settings-only entries are not projections and are ignored.
    """

    def derived(p: Profile) -> dict[str, ProfileEntry]:
        return {k: e for k, e in p.entries.items() if e.source is ProfileSource.MEMORY}

    before, after = derived(old), derived(new)
    created = sorted(k for k, e in after.items() if before.get(k) != e)
    removed = sorted(k for k in before if k not in after)
    return created, removed
