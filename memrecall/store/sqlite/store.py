"""``SQLiteStore``: the shared parts of the store (:mod:`memrecall.store.sqlcommon`) over
SQLite's connections, joined into one ``Store``."""

from __future__ import annotations

from ..sqlcommon.candidates import CandidateOps
from ..sqlcommon.contract import ContractFieldOps
from ..sqlcommon.governance import GovernanceOps
from .reads import MemoryReads

__all__ = ["SQLiteStore"]


class SQLiteStore(CandidateOps, MemoryReads, GovernanceOps, ContractFieldOps):
    """A :class:`~memrecall.store.backend.Store` in one SQLite file.

    Connection policy: :mod:`memrecall.store.sqlite.connection`; schema and migrations:
    :mod:`~memrecall.store.sqlite.schema`. ``path`` is created (with its parent directory)
    if missing and migrated forward; a file from a newer version is refused.
    """
