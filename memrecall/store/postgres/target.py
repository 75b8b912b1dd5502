"""What a ``--db`` value opens: a ``postgresql://`` (or ``postgres://``) URI opens a
:class:`~memrecall.store.postgres.PostgresStore`, anything else is a SQLite file.

This module imports no driver: psycopg is loaded only when a PostgreSQL store is opened.
"""

from __future__ import annotations

import os

from ..backend import Store

__all__ = ["POSTGRES_SCHEMES", "is_postgres_dsn", "open_store"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""The URI prefixes that name a PostgreSQL database."""


def is_postgres_dsn(db: str | os.PathLike[str] | None) -> bool:
    """Whether ``db`` (a ``--db`` value) names a PostgreSQL database."""
    return isinstance(db, str) and db.lower().startswith(POSTGRES_SCHEMES)


def open_store(db: str | os.PathLike[str] | None = None) -> Store:
    """Open the store ``db`` names (module docstring); None: the default SQLite file
    (:func:`~memrecall.store.sqlite.default_db_path`)."""
    if db is not None and is_postgres_dsn(db):
        from .store import PostgresStore

        return PostgresStore(str(db))
    from ..sqlite import SQLiteStore, default_db_path

    return SQLiteStore(default_db_path() if db is None else db)
