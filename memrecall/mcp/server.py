"""An MCP server exposing the five memory tools and the memory instructions (docs/mcp.md).

Built on the official MCP Python SDK's ``MCPServer`` (the v2 name of FastMCP). The SDK is
written against anyio, so it runs unchanged under trio, the backend the store's service uses:
``trio.run(serve_stdio, ...)`` needs no bridge. Tool results are the contract's text; a
refusal is a tool result with ``isError`` set whose text is the refusal as JSON.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from memrecall.tools.contract import MEMORY_INSTRUCTIONS, TOOL_DESCRIPTIONS, Refusal
from memrecall.tools.memory_tools import FORGET_DESCRIPTION, MemoryTools

__all__ = ["INSTRUCTIONS_PROMPT", "SERVER_NAME", "build_server", "serve_stdio"]

SERVER_NAME = "memrecall"
INSTRUCTIONS_PROMPT = "memory_instructions"
"""The name of the MCP prompt carrying :data:`MEMORY_INSTRUCTIONS`."""


def _refused(refusal: Refusal) -> CallToolResult:
    """A tool error result whose text is ``{"refused": {code, field, message, ...}}``."""
    fields = {k: v for k, v in msgspec.structs.asdict(refusal).items() if v is not None}
    body = msgspec.json.encode({"refused": fields}).decode()
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def _json(value: Any) -> str | CallToolResult:
    return msgspec.json.encode(value).decode()


def build_server(tools: MemoryTools) -> MCPServer[Any]:
    """An MCP server whose tools act for ``tools``' trusted session (no identity argument)."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME, instructions=MEMORY_INSTRUCTIONS)

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
