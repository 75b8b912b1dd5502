"""The SQLite backend (stdlib :mod:`sqlite3`), the embedded default.

One small module per concern:

* ``connection``: pragmas, the writer lock, the reader pool (the connection policy);
* ``schema``: forward migrations and the statements forget runs;
* ``rows``: row conversions and shared statements (memory_revision, audit cursor, events);
* ``memories`` / ``reads``: memory writes and reads;
* ``candidates``, ``governance``, ``contract``: candidates, settings/events/projection, the
  memory tools' side rows;
* ``store``: :class:`SQLiteStore`, which joins them.

Forget scrubs the files: after the deleting transaction commits, the writer runs
``PRAGMA wal_checkpoint(TRUNCATE)``, which copies the zeroed pages into the main file and
truncates the log. Content is not indexed with FTS5 (its secure-delete option needs SQLite
3.44), so nothing else holds a copy.
"""

from __future__ import annotations

from .connection import default_db_path as default_db_path
from .rows import content_hash as content_hash
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
