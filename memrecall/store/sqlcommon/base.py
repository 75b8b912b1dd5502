"""What the shared store code asks of a backend: connections, and hooks for the differences.

A backend's base class (:class:`~memrecall.store.sqlite.connection.SQLiteBase`,
:class:`~memrecall.store.postgres.connection.PostgresBase`) implements :class:`SQLBase`:

* ``_read()``: one read transaction (one snapshot) for a whole method; ``_read_one()``: a
  read of a single statement (a backend may run it without an explicit transaction);
* ``_write(user_id)``: one write transaction; a backend that locks per user (PostgreSQL)
  takes ``user_id``'s lock first, a backend that serialises every write ignores it;
* the connections they yield take statements written with ``?`` for each positional
  parameter (SQLite's own style; the PostgreSQL wrapper translates it) and a sequence of
  values; a backend's own statements may use its own style;
* hooks for what really differs: how times are stored (``_ts`` / ``_dt``), a whole-row
  upsert (``_upsert``), the advance of memory_revision (``_advance``, whose value
  PostgreSQL stamps on the audit row as ``seq``), the statements forget runs, and what
  forget does after its transaction (``_forget_mark`` / ``_scrub_forgotten``).

Everything written once on top of these is here too: the current record, the user's
memory_revision, governance events and the audit row.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, Protocol

from ..model import AuditType, GovernanceEvent, MemoryRecord, NotFound
from .rows import AUDIT_COLUMNS, COLUMNS, content_hash, record_of, scope_args

__all__ = ["Connection", "Cursor", "Params", "SQLBase", "marks"]

Params = Sequence[Any] | Mapping[str, Any]
"""A statement's parameters: a sequence for ``?``; a mapping for a backend's own style."""


class Cursor(Protocol):
    """The part of a DB-API cursor the shared code uses."""

    def fetchone(self) -> Any:
        """The next row, or None."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""

    def __iter__(self) -> Iterator[Any]:
        """The remaining rows, one by one."""


class Connection(Protocol):
    """The part of a DB-API connection the shared code uses (``sqlite3.Connection`` as is)."""

    def execute(self, sql: str, parameters: Params = ..., /) -> Cursor:
        """Run one statement."""

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> object:
        """Run one statement once per parameter sequence."""


def marks(count: int) -> str:
    """``count`` placeholders, comma-separated (``?, ?, ?``)."""
    return ", ".join("?" * count)


class SQLBase(ABC):
    """The interface a backend's base class implements (module docstring), and the small
    statements every part of the store shares."""

    _SOLE_SOURCE_FIELDS: ClassVar[str]
    """Forget: the projection fields whose only source is the memory (``memory_param``)."""
    _FORGET_STATEMENTS: ClassVar[tuple[str, ...]]
    """Forget: every statement that removes content naming the memory."""

    # ------------------------------------------------------------------ transactions

    @abstractmethod
    def _read(self) -> AbstractContextManager[Connection]:
        """One read transaction: one consistent snapshot."""

    @abstractmethod
    def _read_one(self) -> AbstractContextManager[Connection]:
        """A read of a single statement."""

    @abstractmethod
    def _write(self, user_id: str | None) -> AbstractContextManager[Connection]:
        """One write transaction, for ``user_id``'s rows (None: no one user's)."""

    # ------------------------------------------------------------------ dialect hooks

    @abstractmethod
    def _ts(self, value: datetime) -> Any:
        """A time as the backend stores it (refuses a naive one)."""

    @abstractmethod
    def _dt(self, value: Any) -> datetime:
        """A stored time, read back (timezone-aware, UTC)."""

    @abstractmethod
    def _upsert(self, table: str, columns: Sequence[str], key: Sequence[str]) -> str:
        """An insert of one whole row (``?`` per column) that replaces the row with the
        same ``key``."""

    @abstractmethod
    def _advance(self, conn: Connection, user_id: str) -> int | None:
        """Advance the user's memory_revision by one (inside the write's transaction);
        the new value when the backend stamps it on the audit row (``seq``), else None."""

    @abstractmethod
    def _memory_param(self, memory_id: str) -> Params:
        """The parameters of the forget statements, for ``memory_id``."""

    @abstractmethod
    def _forget_mark(self, conn: Connection) -> int | None:
        """Inside forget's transaction: what :meth:`_scrub_forgotten` needs to know."""

    @abstractmethod
    def _scrub_forgotten(self, mark: int | None) -> bool:
        """After forget's transaction committed: scrub; True when the content is gone
        from the files too."""

    # ------------------------------------------------------------------ shared statements

    def _ts_opt(self, value: datetime | None) -> Any:
        return None if value is None else self._ts(value)

    def _dt_opt(self, value: Any) -> datetime | None:
        return None if value is None else self._dt(value)

    def _record_of(self, row: Sequence[Any]) -> MemoryRecord:
        return record_of(row, self._dt)

    def _current_record(self, conn: Connection, user_id: str, memory_id: str) -> MemoryRecord:
        """The user's current record; raises ``NotFound`` (``forgotten`` if tombstoned)."""
        row = conn.execute(
            f"SELECT {COLUMNS} FROM memories WHERE memory_id = ? AND user_id = ?",
            (memory_id, user_id),
        ).fetchone()
        if row is None:
            gone = conn.execute(
                "SELECT 1 FROM memory_tombstones WHERE memory_id = ? AND user_id = ?",
                (memory_id, user_id),
            ).fetchone()
            raise NotFound(memory_id, forgotten=gone is not None)
        return self._record_of(row)

    @staticmethod
    def _user_revision(conn: Connection, user_id: str) -> int:
        """The user's memory_revision (0 before the first write)."""
        row = conn.execute(
            "SELECT revision FROM memory_revisions WHERE user_id = ?", (user_id,)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def _write_events(
        self, conn: Connection, events: Sequence[GovernanceEvent], now: datetime
    ) -> None:
        """Append governance audit rows (ids, enums and details only)."""
        if not events:
            return
        conn.executemany(
            "INSERT INTO governance_events (user_id, event_type, memory_id, candidate_id, "
            "details, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (
                    e.user_id,
                    e.event_type,
                    e.memory_id,
                    e.candidate_id,
                    json.dumps(e.details, sort_keys=True),
                    self._ts(now),
                )
                for e in events
            ],
        )

    def _audit(
        self,
        conn: Connection,
        record: MemoryRecord,
        event: AuditType,
        now: datetime,
        request_id: str | None,
    ) -> None:
        """Advance the user's memory_revision and append the write's audit row (content
        hash only): every audited write advances memory_revision exactly once."""
        seq = self._advance(conn, record.user_id)
        values: list[Any] = [
            record.memory_id,
            record.user_id,
            event.value,
            *scope_args(record.scope),
            record.revision,
            content_hash(record.content),
            request_id,
            self._ts(now),
        ]
        columns = AUDIT_COLUMNS
        if seq is not None:
            columns += ", seq"
            values.append(seq)
        conn.execute(f"INSERT INTO memory_audit ({columns}) VALUES ({marks(len(values))})", values)
