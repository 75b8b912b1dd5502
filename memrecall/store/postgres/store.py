"""``PostgresStore``: the shared parts of the store (:mod:`memrecall.store.sqlcommon`) over
PostgreSQL's connections, joined into one ``Store``."""

from __future__ import annotations

from ..sqlcommon.candidates import CandidateOps
from ..sqlcommon.contract import ContractFieldOps
from ..sqlcommon.governance import GovernanceOps
from .reads import MemoryReads

__all__ = ["PostgresStore"]


class PostgresStore(CandidateOps, MemoryReads, GovernanceOps, ContractFieldOps):
    """A :class:`~memrecall.store.backend.Store` in a PostgreSQL database.

    ``dsn`` is a libpq connection string or ``postgresql://`` URI; the tables live in the
    first schema of the connection's ``search_path``. Connection and locking policy:
    :mod:`memrecall.store.postgres.connection`; schema and migrations:
    :mod:`~memrecall.store.postgres.schema`. The schema is created or migrated forward on
    open; a database from a newer version is refused.
    """
