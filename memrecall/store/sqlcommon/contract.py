"""The memory tools' side rows (``contract_fields``, schema v3; docs/tools.md) and hit counts."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..contract_fields import ContractFields
from ..model import (
    InvalidInput,
)
from .base import Connection, SQLBase

__all__ = ["ContractFieldOps", "check_contract_fields", "write_contract_row"]


def check_contract_fields(fields: ContractFields) -> None:
    """Refuse a side row the table would refuse (before any transaction starts)."""
    if fields.hits < 0:
        raise InvalidInput("hits: must be >= 0")


def write_contract_row(conn: Connection, memory_id: str, fields: ContractFields) -> None:
    """Insert or replace one memory's side row, inside the caller's transaction."""
    tags = None if fields.tags is None else json.dumps(list(fields.tags), ensure_ascii=False)
    conn.execute(
        "INSERT INTO contract_fields (memory_id, title, tags_json, source, scope, hits) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (memory_id) DO UPDATE SET "
        "title = excluded.title, tags_json = excluded.tags_json, "
        "source = excluded.source, scope = excluded.scope, hits = excluded.hits",
        (memory_id, fields.title, tags, fields.source, fields.scope, fields.hits),
    )


class ContractFieldOps(SQLBase):
    """Side rows of the seed-003 memory tools."""

    def contract_fields(self, user_id: str) -> dict[str, ContractFields]:
        """See :meth:`memrecall.store.backend.Store.contract_fields`."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT f.memory_id, f.title, f.tags_json, f.source, f.scope, f.hits "
                "FROM contract_fields f JOIN memories m ON m.memory_id = f.memory_id "
                "WHERE m.user_id = ?",
                (user_id,),
            ).fetchall()
        return {
            row[0]: ContractFields(
                title=row[1],
                tags=None if row[2] is None else tuple(json.loads(row[2])),
                source=row[3],
                scope=row[4],
                hits=int(row[5]),
            )
            for row in rows
        }

    def put_contract_fields(self, user_id: str, memory_id: str, fields: ContractFields) -> None:
        """See :meth:`memrecall.store.backend.Store.put_contract_fields`."""
        check_contract_fields(fields)
        with self._write(user_id) as conn:
            self._current_record(conn, user_id, memory_id)
            write_contract_row(conn, memory_id, fields)

    def add_hits(self, user_id: str, memory_ids: Sequence[str]) -> dict[str, int]:
        """See :meth:`memrecall.store.backend.Store.add_hits`."""
        counts: dict[str, int] = {}
        with self._write(user_id) as conn:
            for memory_id in dict.fromkeys(memory_ids):
                owned = conn.execute(
                    "SELECT 1 FROM memories WHERE memory_id = ? AND user_id = ?",
                    (memory_id, user_id),
                ).fetchone()
                if owned is None:
                    continue
                rows = conn.execute(
                    "INSERT INTO contract_fields (memory_id, hits) VALUES (?, 1) "
                    "ON CONFLICT (memory_id) DO UPDATE SET hits = contract_fields.hits + 1 "
                    "RETURNING hits",
                    (memory_id,),
                ).fetchall()
                counts[memory_id] = int(rows[0][0]) if rows else 0
        return counts
