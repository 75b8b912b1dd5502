"""The PostgreSQL backend (psycopg 3 and psycopg_pool), for several processes and hosts.

The same shape as :mod:`memrecall.store.sqlite`, one small module per concern:

* ``connection``: the pool, write transactions under the user's row lock, snapshot reads,
  the scrub (the connection and locking policy);
* ``schema``: forward migrations (the SQLite steps in PostgreSQL's types) and the
  statements forget runs;
* ``rows``: row conversions and shared statements (the user lock, memory_revision, events);
* ``memories`` / ``reads``: memory writes and reads;
* ``candidates``, ``governance``, ``contract``: candidates, settings/events/projection, the
  memory tools' side rows;
* ``store``: :class:`PostgresStore`, which joins them;
* ``target``: what a ``--db`` value opens; ``copy``: ``memrecall memory migrate``.

Forget deletes every row naming the memory, then rewrites the content tables with
``VACUUM (FULL)`` so the dead row versions leave the table files too (docs/store.md,
"Deployment", also for what the server's WAL and logs need).

psycopg is imported on first use of :class:`PostgresStore` (``from memrecall.store.postgres
import PostgresStore``), not with this package: :func:`open_store` and
:func:`is_postgres_dsn` cost a SQLite user nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .target import POSTGRES_SCHEMES as POSTGRES_SCHEMES
from .target import is_postgres_dsn as is_postgres_dsn
from .target import open_store as open_store

if TYPE_CHECKING:
    from .store import PostgresStore as PostgresStore

__all__ = ["POSTGRES_SCHEMES", "PostgresStore", "is_postgres_dsn", "open_store"]


def __getattr__(name: str) -> object:
    """Load :class:`PostgresStore` (and psycopg) on first use."""
    if name == "PostgresStore":
        from .store import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
