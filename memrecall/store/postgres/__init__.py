"""The PostgreSQL backend (psycopg 3 and psycopg_pool), for several processes and hosts.

The statements every SQL backend shares are written once in
:mod:`memrecall.store.sqlcommon`; this package holds what is PostgreSQL's own, in the same
shape as :mod:`memrecall.store.sqlite`:

* ``connection``: the pool, write transactions under the user's row lock, snapshot reads,
  the scrub (the connection and locking policy), the connection wrapper that runs the
  shared ``?`` statements, and PostgreSQL's side of the shared layer's hooks;
* ``schema``: forward migrations (the SQLite steps in PostgreSQL's types) and the
  statements forget runs;
* ``rows``: how times are stored, upserts, the user lock, the advance of memory_revision
  (stamped on each audit row as ``seq``);
* ``reads``: the change cursor (memory_revision and ``seq``);
* ``store``: :class:`PostgresStore`, which joins them with the shared parts;
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
