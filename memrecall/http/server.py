"""Serving the app with Hypercorn's trio worker, inside the caller's trio run.

``hypercorn.trio.serve`` runs every connection as a trio task, and Starlette reaches trio
through anyio, so the handlers ``await`` the trio :class:`~memrecall.store.MemoryService`
directly: one event loop, no thread hop, no second loop (docs/decisions.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve

__all__ = ["bind_address", "serve"]

_log = logging.getLogger("memrecall.http")


def bind_address(host: str, port: int) -> str:
    """Hypercorn's bind string (IPv6 literals in brackets)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


async def serve(
    app: Callable[..., Awaitable[None]],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    shutdown_trigger: Callable[[], Awaitable[Any]] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` until cancelled (or ``shutdown_trigger`` returns); ``task_status``
    receives the base URL once the socket is bound (port 0 picks a free one)."""
    config = Config()
    config.bind = [bind_address(host, port)]
    config.accesslog = None  # paths can carry a legacy memory_key: never logged
    config.errorlog = _log
    config.graceful_timeout = 2.0

    async def started(task_status: trio.TaskStatus[list[str]]) -> None:
        await hypercorn_serve(
            app,
            config,
            shutdown_trigger=shutdown_trigger,
            task_status=task_status,
        )

    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(started)
        task_status.started(binds[0])
