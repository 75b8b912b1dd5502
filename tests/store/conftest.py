"""Fixtures: every backend under test (SQLite and PostgreSQL), a clock.

PostgreSQL: :mod:`tests.store.pgserver` finds or starts the server; each store gets a
schema of its own. Without a server those tests skip, or fail under
``MEMRECALL_REQUIRE_POSTGRES=1`` (CI).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memrecall.store import MemoryService, SQLiteStore, Store
from memrecall.store.postgres import PostgresStore

from . import pgserver
from .helpers import ManualClock

BackendFactory = Callable[[Path], Store]

_postgres_dsn: list[str] = []
"""The session database's DSN, once :func:`postgres_database` has run."""


def _sqlite(path: Path) -> Store:
    return SQLiteStore(path / "memory.db", durable=False)


def _postgres(path: Path) -> Store:
    """A fresh schema in the session's database (the ``store`` fixture starts it first)."""
    (dsn,) = _postgres_dsn
    return PostgresStore(pgserver.fresh_schema(dsn), max_connections=4)


BACKENDS: dict[str, BackendFactory] = {"sqlite": _sqlite, "postgres": _postgres}
"""Backend name -> factory taking a fresh directory. The contract suite runs on each."""


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pgserver.Server]:
    """The PostgreSQL server of this test session (skips, or fails in CI, without one)."""
    try:
        with pgserver.server() as srv:
            yield srv
    except pgserver.Unavailable as exc:
        if pgserver.required():
            pytest.fail(f"PostgreSQL is required ({pgserver.REQUIRE_ENV}=1): {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture(scope="session")
def postgres_database(postgres_server: pgserver.Server) -> Iterator[str]:
    """A database of this session's own on the server (its DSN)."""
    with pgserver.database(postgres_server) as dsn:
        _postgres_dsn.append(dsn)
        yield dsn
        _postgres_dsn.clear()


@pytest.fixture
def postgres_dsn(postgres_database: str) -> str:
    """A DSN whose ``search_path`` is a fresh, empty schema of its own."""
    return pgserver.fresh_schema(postgres_database)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty backend of each kind."""
    if request.param == "postgres":
        request.getfixturevalue("postgres_database")
    backend = BACKENDS[request.param](tmp_path)
    yield backend
    backend.close()


@pytest.fixture
def clock() -> ManualClock:
    """A manual clock at T0."""
    return ManualClock()


@pytest.fixture
def service(store: Store, clock: ManualClock) -> Iterator[MemoryService]:
    """A service over each backend with the manual clock."""
    svc = MemoryService(store, clock=clock)
    yield svc
    svc.close()
