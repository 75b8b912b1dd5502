"""Fixtures: every backend under test (SQLite now; add a PostgreSQL factory here), a clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memrecall.store import MemoryService, SQLiteStore, Store

from .helpers import ManualClock

BackendFactory = Callable[[Path], Store]


def _sqlite(path: Path) -> Store:
    return SQLiteStore(path / "memory.db", durable=False)


BACKENDS: dict[str, BackendFactory] = {"sqlite": _sqlite}
"""Backend name -> factory taking a fresh directory. The contract suite runs on each."""


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty backend of each kind."""
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
