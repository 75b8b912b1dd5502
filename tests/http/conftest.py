"""A real server on loopback for every HTTP test: SQLite in tmp_path, Hypercorn on port 0."""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import attrs
import httpx
import pytest
import trio

from memrecall.governance import ExecutionContext
from memrecall.http import TokenTable, build_app, serve
from memrecall.store import MemoryService, SQLiteStore
from memrecall.store.governed import GovernedMemory

ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-0123456789abc"
T = TypeVar("T")


@attrs.frozen
class Server:
    """A running server, a client for alice and one for bob, and the service behind them."""

    url: str
    alice: httpx.AsyncClient
    bob: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    service: MemoryService

    @property
    def governed(self) -> GovernedMemory:
        """The governed face over the same service (to make candidates as an agent would)."""
        return GovernedMemory(self.service)

    @staticmethod
    def ctx(user: str = "alice") -> ExecutionContext:
        """An agent context for ``user``."""
        return ExecutionContext(user)


async def start_server(
    tmp_path: Path, nursery: trio.Nursery, **app_options: object
) -> tuple[str, MemoryService]:
    """Serve a fresh database on loopback; returns the base URL and the service."""
    service = MemoryService(SQLiteStore(tmp_path / "memory.db"))
    tokens = TokenTable.from_specs([f"{ALICE_TOKEN}=alice", f"{BOB_TOKEN}=bob"])
    app = build_app(service, tokens, **app_options)  # type: ignore[arg-type]
    url: str = await nursery.start(functools.partial(serve, app, host="127.0.0.1", port=0))
    return url, service


def bearer(token: str) -> dict[str, str]:
    """The Authorization header for ``token``."""
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def server(tmp_path: Path, nursery: trio.Nursery) -> AsyncIterator[Server]:
    """A running server with two users."""
    url, service = await start_server(tmp_path, nursery)
    async with (
        httpx.AsyncClient(base_url=url, headers=bearer(ALICE_TOKEN)) as alice,
        httpx.AsyncClient(base_url=url, headers=bearer(BOB_TOKEN)) as bob,
        httpx.AsyncClient(base_url=url) as anonymous,
    ):
        yield Server(url, alice, bob, anonymous, service)
    service.close()


@attrs.frozen
class ThreadedServer:
    """A server running in its own thread: its URL, its service, and ``call`` to run an
    async function in the server's trio run (e.g. an agent proposing a candidate)."""

    url: str
    service: MemoryService
    token: trio.lowlevel.TrioToken

    def call(self, fn: Callable[..., Awaitable[T]], *args: object) -> T:
        """Run ``fn(*args)`` in the server's trio run and return its result."""
        return trio.from_thread.run(fn, *args, trio_token=self.token)


@contextmanager
def threaded_server(
    tmp_path: Path, make_service: Callable[[Path], MemoryService] | None = None
) -> Iterator[ThreadedServer]:
    """A real server in its own thread and trio run, for synchronous clients (Hypothesis
    bodies, curl). Stops and closes the service on exit."""
    service = (make_service or (lambda p: MemoryService(SQLiteStore(p / "memory.db"))))(tmp_path)
    tokens = TokenTable.from_specs([f"{ALICE_TOKEN}=alice", f"{BOB_TOKEN}=bob"])
    ready = threading.Event()
    box: dict[str, object] = {}

    async def main() -> None:
        stop = trio.Event()
        box["stop"] = stop
        box["token"] = trio.lowlevel.current_trio_token()
        async with trio.open_nursery() as nursery:
            box["url"] = await nursery.start(
                functools.partial(serve, build_app(service, tokens), host="127.0.0.1", port=0)
            )
            ready.set()
            await stop.wait()
            nursery.cancel_scope.cancel()

    thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
    thread.start()
    ready.wait(timeout=30)
    token = box["token"]
    assert isinstance(token, trio.lowlevel.TrioToken)
    try:
        yield ThreadedServer(str(box["url"]), service, token)
    finally:
        stop = box["stop"]
        assert isinstance(stop, trio.Event)
        token.run_sync_soon(stop.set)
        thread.join(timeout=30)
        service.close()
