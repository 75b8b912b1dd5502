"""An MCP server exposing the five memory tools and the memory instructions (docs/mcp.md).

Built on the official MCP Python SDK's ``MCPServer`` (the v2 name of FastMCP). The SDK is
written against anyio, so it runs unchanged under trio, the backend the store's service uses:
``trio.run(serve_stdio, ...)`` needs no bridge. Tool results are the contract's text; a
refusal is a tool result with ``isError`` set whose text is the refusal as JSON.

Streamable HTTP (:func:`serve_http`) serves the SDK's ASGI app (its session manager is
anyio code, run from the app's lifespan) with Hypercorn's trio worker, inside the same trio
run as the store: no uvicorn, no asyncio loop (docs/mcp.md, docs/decisions.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import trio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from memrecall.tools.contract import MEMORY_INSTRUCTIONS, TOOL_DESCRIPTIONS, Refusal
from memrecall.tools.memory_tools import FORGET_DESCRIPTION, MemoryTools

__all__ = [
    "HTTP_PATH",
    "INSTRUCTIONS_PROMPT",
    "SERVER_NAME",
    "build_server",
    "http_app",
    "serve_http",
    "serve_stdio",
]

SERVER_NAME = "memrecall"
INSTRUCTIONS_PROMPT = "memory_instructions"
"""The name of the MCP prompt carrying :data:`MEMORY_INSTRUCTIONS`."""
HTTP_PATH = "/mcp"
"""Where the streamable HTTP endpoint answers."""


def _refused(refusal: Refusal) -> CallToolResult:
    """A tool error result whose text is ``{"refused": {code, field, message, ...}}``."""
    fields = {k: v for k, v in msgspec.structs.asdict(refusal).items() if v is not None}
    body = msgspec.json.encode({"refused": fields}).decode()
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def _json(value: Any) -> str | CallToolResult:
    return msgspec.json.encode(value).decode()


def build_server(tools: MemoryTools) -> MCPServer[Any]:
    """An MCP server whose tools act for ``tools``' trusted session (no identity argument)."""
    # WARNING: the SDK logs every HTTP session id and request at INFO otherwise
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME, instructions=MEMORY_INSTRUCTIONS, log_level="WARNING"
    )

    async def memory_remember(  # noqa: PLR0917 (the tool's own arguments)
        kind: str,
        title: str,
        body: str,
        tags: list[str],
        source: str,
        scope: str | None = None,
    ) -> str | CallToolResult:
        done = await tools.remember(
            kind=kind, title=title, body=body, tags=tags, source=source, scope=scope
        )
        if isinstance(done, Refusal):
            return _refused(done)
        return _json(done)

    async def memory_recall(
        query: str, limit: int | None = None, scope: str | None = None
    ) -> str | CallToolResult:
        result = await tools.recall(query, limit=limit, scope=scope)
        if isinstance(result, Refusal):
            return _refused(result)
        return result.text

    async def memory_expand(ids: list[str]) -> str | CallToolResult:
        result = await tools.expand(ids)
        if isinstance(result, Refusal):
            return _refused(result)
        return result.text

    async def memory_prune(dryRun: bool = True) -> str | CallToolResult:
        plan = await tools.prune(dry_run=dryRun)
        if isinstance(plan, Refusal):
            return _refused(plan)
        return plan.text

    async def memory_forget(id: str) -> str | CallToolResult:
        done = await tools.forget(id)
        if isinstance(done, Refusal):
            return _refused(done)
        return _json(done)

    for fn in (memory_remember, memory_recall, memory_expand, memory_prune):
        server.add_tool(
            fn,
            name=fn.__name__,
            description=TOOL_DESCRIPTIONS[fn.__name__],
            structured_output=False,
        )
    server.add_tool(
        memory_forget, name="memory_forget", description=FORGET_DESCRIPTION, structured_output=False
    )

    @server.prompt(
        name=INSTRUCTIONS_PROMPT,
        description="When to recall, when to remember and how to choose a scope.",
    )
    def memory_instructions() -> str:
        return MEMORY_INSTRUCTIONS

    return server


async def serve_stdio(tools: MemoryTools) -> None:
    """Serve ``tools`` over stdin/stdout until the client closes the stream."""
    await build_server(tools).run_stdio_async()


def http_app(tools: MemoryTools, host: str) -> Callable[..., Awaitable[None]]:
    """The SDK's streamable HTTP ASGI app for ``tools`` at :data:`HTTP_PATH`.

    ``host`` is where it is served: on a loopback address the SDK turns on its DNS-rebinding
    protection (only ``127.0.0.1``/``localhost``/``[::1]`` Host headers are accepted).
    """
    app: Callable[..., Awaitable[None]] = build_server(tools).streamable_http_app(
        streamable_http_path=HTTP_PATH, host=host
    )
    return app


async def serve_http(
    tools: MemoryTools,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``tools`` over streamable HTTP with Hypercorn's trio worker until cancelled.

    ``task_status`` receives the endpoint URL once the socket is bound (port 0: a free one).
    """
    from hypercorn.config import Config
    from hypercorn.trio import serve

    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("memrecall.mcp.http")
    config.graceful_timeout = 2.0
    app = http_app(tools, host)

    async def bound(task_status: trio.TaskStatus[list[str]]) -> None:
        await serve(app, config, task_status=task_status)

    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(bound)
        task_status.started(binds[0] + HTTP_PATH)
