"""Governance rows: memory settings, governance events, projection marks, profile settings
and the stored profile projection."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from memrecall.governance import (
    MemorySettings,
    ProfileEntry,
)
from memrecall.governance.profile import ProfileSource, ProjectableMemory

from ..model import (
    GovernanceEvent,
    Status,
)
from .base import SQLBase


class GovernanceOps(SQLBase):
    """Settings, events and the profile projection of a store."""

    def get_settings(self, user_id: str) -> MemorySettings:
        """See :meth:`memrecall.store.backend.Store.get_settings`."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT saved_memory_enabled, auto_extract_enabled FROM memory_settings "
                "WHERE user_id = ?",
                (user_id,),
            ).fetchone()
        return MemorySettings() if row is None else MemorySettings(bool(row[0]), bool(row[1]))

    def put_settings(self, user_id: str, settings: MemorySettings, now: datetime) -> None:
        """See :meth:`memrecall.store.backend.Store.put_settings`."""
        with self._write(user_id) as conn:
            conn.execute(
                self._upsert(
                    "memory_settings",
                    ("user_id", "saved_memory_enabled", "auto_extract_enabled", "updated_at"),
                    ("user_id",),
                ),
                (
                    user_id,
                    settings.saved_memory_enabled,  # a flag (SQLite stores a bool as 0/1)
                    settings.auto_extract_enabled,
                    self._ts(now),
                ),
            )
            self._advance(conn, user_id)

    def add_events(self, events: Sequence[GovernanceEvent], now: datetime) -> None:
        """See :meth:`memrecall.store.backend.Store.add_events`."""
        with self._write(None) as conn:
            self._write_events(conn, events, now)

    def governance_events(self, user_id: str) -> list[GovernanceEvent]:
        """See :meth:`memrecall.store.backend.Store.governance_events`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT event_id, user_id, event_type, memory_id, candidate_id, details, "
                "created_at FROM governance_events WHERE user_id = ? ORDER BY event_id",
                (user_id,),
            ).fetchall()
        return [
            GovernanceEvent(
                event_type=row[2],
                user_id=row[1],
                details=json.loads(row[5]),
                memory_id=row[3],
                candidate_id=row[4],
                event_id=row[0],
                created_at=self._dt(row[6]),
            )
            for row in rows
        ]

    def set_projection_mark(
        self, user_id: str, memory_id: str, projection: tuple[str, str] | None
    ) -> None:
        """See :meth:`memrecall.store.backend.Store.set_projection_mark`."""
        with self._write(user_id) as conn:
            self._current_record(conn, user_id, memory_id)
            conn.execute("DELETE FROM memory_projection_marks WHERE memory_id = ?", (memory_id,))
            if projection is not None:
                conn.execute(
                    "INSERT INTO memory_projection_marks (memory_id, user_id, field, value) "
                    "VALUES (?, ?, ?, ?)",
                    (memory_id, user_id, projection[0], projection[1]),
                )

    def set_profile_setting(self, user_id: str, field: str, value: str | None) -> None:
        """See :meth:`memrecall.store.backend.Store.set_profile_setting`."""
        with self._write(user_id) as conn:
            conn.execute(
                "DELETE FROM profile_settings WHERE user_id = ? AND field = ?", (user_id, field)
            )
            if value is not None:
                conn.execute(
                    "INSERT INTO profile_settings (user_id, field, value) VALUES (?, ?, ?)",
                    (user_id, field, value),
                )

    def projection_inputs(self, user_id: str) -> tuple[list[ProjectableMemory], dict[str, str]]:
        """See :meth:`memrecall.store.backend.Store.projection_inputs`."""
        with self._read() as conn:
            rows = conn.execute(
                # driven by the marks (index on user_id, memory_id): the cost follows the
                # user's marked memories, not all of the user's memories (CROSS JOIN keeps
                # SQLite's loop order; PostgreSQL plans it as the inner join it is)
                "SELECT m.memory_id, m.category, m.content, m.status, p.field, p.value, "
                "m.updated_at, m.expires_at FROM memory_projection_marks p "
                "CROSS JOIN memories m WHERE m.memory_id = p.memory_id "
                "AND p.user_id = ? AND m.user_id = ? ORDER BY p.memory_id",
                (user_id, user_id),
            ).fetchall()
            settings = conn.execute(
                "SELECT field, value FROM profile_settings WHERE user_id = ?", (user_id,)
            ).fetchall()
        memories = [
            ProjectableMemory(
                memory_id=row[0],
                category=row[1],
                content=row[2],
                active=row[3] == Status.ACTIVE.value,
                projectable=True,
                projection=(row[4], row[5]),
                updated_at=self._dt(row[6]),
                expires_at=self._dt_opt(row[7]),
            )
            for row in rows
        ]
        return memories, {str(f): str(v) for f, v in settings}

    def get_projection(self, user_id: str) -> dict[str, ProfileEntry]:
        """See :meth:`memrecall.store.backend.Store.get_projection`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT field, value FROM profile_projections WHERE user_id = ? ORDER BY field",
                (user_id,),
            ).fetchall()
            sources = conn.execute(
                "SELECT field, memory_id FROM profile_projection_sources WHERE user_id = ? "
                "ORDER BY field, memory_id",
                (user_id,),
            ).fetchall()
        ids: dict[str, list[str]] = {}
        for field, memory_id in sources:
            ids.setdefault(field, []).append(memory_id)
        return {f: ProfileEntry(v, ProfileSource.MEMORY, tuple(ids.get(f, ()))) for f, v in rows}

    def put_projection(
        self,
        user_id: str,
        entries: dict[str, ProfileEntry],
        now: datetime,
        events: Sequence[GovernanceEvent] = (),
    ) -> None:
        """See :meth:`memrecall.store.backend.Store.put_projection`."""
        with self._write(user_id) as conn:
            conn.execute("DELETE FROM profile_projections WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM profile_projection_sources WHERE user_id = ?", (user_id,))
            for field, entry in entries.items():
                conn.execute(
                    "INSERT INTO profile_projections (user_id, field, value, updated_at) "
                    "VALUES (?, ?, ?, ?)",
                    (user_id, field, entry.value, self._ts(now)),
                )
                conn.executemany(
                    "INSERT INTO profile_projection_sources (user_id, field, memory_id) "
                    "VALUES (?, ?, ?)",
                    [(user_id, field, m) for m in entry.memory_ids],
                )
            self._write_events(conn, events, now)
