"""The schema: forward migrations, and every statement that forget runs.

``MIGRATIONS`` is an append-only list of steps; :func:`migrate` applies the missing ones in
the caller's transaction and refuses a file written by a newer memrecall.
"""

from __future__ import annotations

import sqlite3
from typing import Final

from ..model import (
    StoreError,
)

__all__ = ["FORGET_STATEMENTS", "MIGRATIONS", "SCHEMA_VERSION", "SOLE_SOURCE_FIELDS", "migrate"]

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    # version 1
    (
        """CREATE TABLE memories (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'workspace')),
            workspace_type TEXT CHECK (workspace_type IN ('learning', 'teaching', 'research')),
            memory_key TEXT NOT NULL,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            source_type TEXT NOT NULL CHECK (source_type IN ('explicit', 'confirmed')),
            status TEXT NOT NULL CHECK (status IN ('active', 'suppressed')),
            revision INTEGER NOT NULL CHECK (revision >= 1),
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_confirmed_at TEXT,
            review_after TEXT,
            expires_at TEXT,
            CHECK ((scope_type = 'global' AND workspace_type IS NULL)
                OR (scope_type = 'workspace' AND workspace_type IS NOT NULL))
        )""",
        """CREATE UNIQUE INDEX memories_unique_key
            ON memories (user_id, scope_type, COALESCE(workspace_type, ''), memory_key)""",
        """CREATE TABLE memory_versions (
            version_id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL REFERENCES memories (memory_id) ON DELETE CASCADE,
            revision INTEGER NOT NULL,
            content TEXT NOT NULL,
            category TEXT NOT NULL,
            scope_type TEXT NOT NULL,
            workspace_type TEXT,
            change_type TEXT NOT NULL,
            changed_via TEXT NOT NULL,
            source_candidate_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (memory_id, revision)
        )""",
        """CREATE TABLE memory_revisions (
            user_id TEXT PRIMARY KEY,
            revision INTEGER NOT NULL
        )""",
        """CREATE TABLE memory_audit (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL,
            user_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            scope_type TEXT NOT NULL,
            workspace_type TEXT,
            revision INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            request_id TEXT,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX memory_audit_user ON memory_audit (user_id, event_id)",
        """CREATE TABLE memory_tombstones (
            memory_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            deleted_at TEXT NOT NULL,
            final_revision INTEGER NOT NULL
        )""",
    ),
    # version 2: governance (candidates, rejections, settings, projections, events)
    (
        """CREATE TABLE core_memory_candidates (
            candidate_id TEXT PRIMARY KEY,
            user_id TEXT NOT NULL,
            operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'replace')),
            target_memory_id TEXT,
            expected_revision INTEGER,
            scope_type TEXT NOT NULL CHECK (scope_type IN ('global', 'workspace')),
            workspace_type TEXT CHECK (workspace_type IN ('learning', 'teaching', 'research')),
            memory_key TEXT NOT NULL,
            content TEXT,
            category TEXT NOT NULL,
            source_conversation_id TEXT,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'accepted', 'rejected', 'expired')),
            resulting_memory_id TEXT,
            rejected_fingerprint TEXT,
            created_at TEXT NOT NULL,
            decided_at TEXT,
            expires_at TEXT NOT NULL,
            CHECK ((status = 'pending') = (content IS NOT NULL)),
            CHECK ((operation = 'create') = (target_memory_id IS NULL))
        )""",
        """CREATE INDEX core_memory_candidates_user
            ON core_memory_candidates (user_id, status, created_at)""",
        """CREATE INDEX core_memory_candidates_due
            ON core_memory_candidates (status, expires_at)""",
        """CREATE TABLE memory_rejections (
            user_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            memory_id TEXT,
            created_at TEXT NOT NULL,
            PRIMARY KEY (user_id, fingerprint)
        )""",
        """CREATE TABLE memory_settings (
            user_id TEXT PRIMARY KEY,
            saved_memory_enabled INTEGER NOT NULL,
            auto_extract_enabled INTEGER NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE memory_projection_marks (
            memory_id TEXT PRIMARY KEY REFERENCES memories (memory_id) ON DELETE CASCADE,
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL
        )""",
        """CREATE TABLE profile_settings (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (user_id, field)
        )""",
        """CREATE TABLE profile_projections (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (user_id, field)
        )""",
        """CREATE TABLE profile_projection_sources (
            user_id TEXT NOT NULL,
            field TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            PRIMARY KEY (user_id, field, memory_id)
        )""",
        "CREATE INDEX profile_projection_sources_memory ON profile_projection_sources (memory_id)",
        """CREATE TABLE governance_events (
            event_id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id TEXT NOT NULL,
            event_type TEXT NOT NULL,
            memory_id TEXT,
            candidate_id TEXT,
            details TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX governance_events_user ON governance_events (user_id, event_id)",
    ),
    # version 3: the memory tools' fields (memrecall/store/contract_fields.py, docs/tools.md)
    (
        """CREATE TABLE contract_fields (
            memory_id TEXT PRIMARY KEY REFERENCES memories (memory_id) ON DELETE CASCADE,
            title TEXT,
            tags_json TEXT,
            source TEXT,
            scope TEXT,
            hits INTEGER NOT NULL DEFAULT 0 CHECK (hits >= 0)
        )""",
    ),
    # version 4: the projection reads a user's marks without visiting the user's memories
    ("CREATE INDEX memory_projection_marks_user ON memory_projection_marks (user_id, memory_id)",),
)
"""Forward migrations: ``MIGRATIONS[n]`` takes the schema from version ``n`` to ``n + 1``.
Append only; never edit a released step."""

SCHEMA_VERSION: Final = len(MIGRATIONS)

SOLE_SOURCE_FIELDS = """SELECT field FROM profile_projection_sources s
    WHERE s.memory_id = ?1 AND NOT EXISTS (SELECT 1 FROM profile_projection_sources o
        WHERE o.user_id = s.user_id AND o.field = s.field AND o.memory_id <> ?1)
    ORDER BY field"""

FORGET_STATEMENTS: Final[tuple[str, ...]] = (
    # a projection entry whose only source is this memory goes; shared ones are rebuilt
    """DELETE FROM profile_projections WHERE EXISTS (
        SELECT 1 FROM profile_projection_sources s WHERE s.memory_id = ?1
            AND s.user_id = profile_projections.user_id AND s.field = profile_projections.field)
        AND NOT EXISTS (
        SELECT 1 FROM profile_projection_sources s WHERE s.memory_id <> ?1
            AND s.user_id = profile_projections.user_id AND s.field = profile_projections.field)""",
    "DELETE FROM profile_projection_sources WHERE memory_id = ?1",
    "DELETE FROM memory_projection_marks WHERE memory_id = ?1",
    "DELETE FROM core_memory_candidates WHERE ?1 IN (target_memory_id, resulting_memory_id)",
    "DELETE FROM memory_rejections WHERE memory_id = ?1",
    "DELETE FROM contract_fields WHERE memory_id = ?",
    "DELETE FROM memory_versions WHERE memory_id = ?",
    "DELETE FROM memories WHERE memory_id = ?",
)
"""Every statement that removes content naming a memory (one ``?``: the memory_id). A table
that stores memory content (candidates, projections, a search index) adds its statement
here, so forget cannot miss it."""


def migrate(conn: sqlite3.Connection, name: str) -> None:
    """Bring the schema in ``conn`` (inside a write transaction) to ``len(MIGRATIONS)``.

    Raises ``StoreError`` when the file is newer than this code (``name`` is the file's
    name, for the message).
    """
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    current = 0 if row is None else int(row[0])
    target = len(MIGRATIONS)
    if current > target:
        raise StoreError(
            f"{name}: schema version {current} is newer than this memrecall "
            f"({target}); upgrade memrecall"
        )
    for step in MIGRATIONS[current:]:
        for statement in step:
            conn.execute(statement)
    if row is None:
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (target,))
    elif current != target:
        conn.execute("UPDATE schema_version SET version = ?", (target,))
