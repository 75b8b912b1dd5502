"""The SQLite backend (stdlib :mod:`sqlite3`), the embedded default.

The statements every SQL backend shares (memory writes and reads, candidates, governance
rows, the memory tools' side rows) are written once in :mod:`memrecall.store.sqlcommon`;
this package holds what is SQLite's own, one small module per concern:

* ``connection``: pragmas, the writer lock, the reader pool (the connection policy), the
  scrub, and SQLite's side of the shared layer's hooks;
* ``schema``: forward migrations and the statements forget runs;
* ``rows``: how times are stored, the whole-row upsert, the advance of memory_revision;
* ``reads``: the change cursor (the user's last audit ``event_id``);
* ``store``: :class:`SQLiteStore`, which joins them with the shared parts.

Forget scrubs the files: after the deleting transaction commits, the writer runs
``PRAGMA wal_checkpoint(TRUNCATE)``, which copies the zeroed pages into the main file and
truncates the log. Content is not indexed with FTS5 (its secure-delete option needs SQLite
3.44), so nothing else holds a copy.
"""

from __future__ import annotations

from ..sqlcommon.rows import content_hash as content_hash
from .connection import default_db_path as default_db_path
from .schema import FORGET_STATEMENTS as FORGET_STATEMENTS
from .schema import MIGRATIONS as MIGRATIONS
from .schema import SCHEMA_VERSION as SCHEMA_VERSION
from .store import SQLiteStore as SQLiteStore

__all__ = [
    "FORGET_STATEMENTS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "SQLiteStore",
    "content_hash",
    "default_db_path",
]
