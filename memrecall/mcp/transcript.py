"""Capture a real MCP session for docs/mcp.md: ``python -m memrecall.mcp.transcript``.

Starts the stdio server (the same ``MemoryTools`` and ``serve_stdio`` as ``memrecall mcp``)
in a child process on a fresh database in a temporary directory, drives it with the SDK's
stdio client (remember, recall, expand, prune dry run, forget) and prints each request and
the server's text answer as Markdown. Memory ids are random, so they are printed as
``<id1>``, ``<id2>``...; everything else is what the server sent.

The child's clock is pinned to :data:`CAPTURE_TIME`: a record's size is its JSON encoding,
which holds its creation time as a float, and the digits of a wall-clock time vary in
number (``...600.1`` vs ``...600.123456``), so ``bytes_used`` would change from one capture
to the next.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

__all__ = ["CAPTURE_TIME", "capture", "serve_pinned"]

CAPTURE_TIME = datetime(2026, 11, 2, 9, 30, 15, 250_000, tzinfo=UTC)
"""The time the captured server's clock always reads."""

STEPS: list[tuple[str, dict[str, Any]]] = [
    (
        "memory_remember",
        {
            "kind": "lesson",
            "title": "adb needs the emulator booted first",
            "body": "Run adb wait-for-device before installing; the emulator takes 40 s to boot.",
            "tags": ["android", "adb"],
            "source": "session:demo",
            "scope": "project:app",
        },
    ),
    ("memory_remember", {"kind": "fact", "title": "x", "body": "b", "tags": [], "source": ""}),
    ("memory_recall", {"query": "adb emulator", "scope": "project:app"}),
    ("memory_expand", {"ids": ["<id1>", "unknown-id"]}),
    ("memory_prune", {}),
    ("memory_forget", {"id": "<id1>"}),
]


async def capture(directory: Path) -> str:
    """Run the scripted session against a server on ``directory``; the Markdown transcript."""
    env = {"XDG_DATA_HOME": str(directory / "data"), "XDG_CACHE_HOME": str(directory / "cache")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memrecall.mcp.transcript", "--serve", str(directory / "m.db"), "demo"],
        env=env,
    )
    ids: dict[str, str] = {}
    lines: list[str] = []

    def mask(text: str) -> str:
        for real, name in ids.items():
            text = text.replace(real, name)
        return text

    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        init = await client.initialize()
        tools = await client.list_tools()
        lines.append(
            f"server: {init.server_info.name}; tools: " + ", ".join(t.name for t in tools.tools)
        )
        for name, arguments in STEPS:
            real_args = json.loads(
                re.sub(
                    r"<id\d+>",
                    lambda m: {v: k for k, v in ids.items()}[m.group(0)],
                    json.dumps(arguments),
                )
            )
            result = await client.call_tool(name, real_args)
            text = "".join(b.text for b in result.content if b.type == "text")
            if name == "memory_remember" and not result.is_error:
                ids[json.loads(text)["id"]] = f"<id{len(ids) + 1}>"
            flag = " (isError)" if result.is_error else ""
            lines += [
                "",
                f"→ {name} {json.dumps(arguments, ensure_ascii=False)}",
                f"← {name}{flag}:",
                "```text",
                mask(text),
                "```",
            ]
    return "\n".join(lines)


def serve_pinned(db: Path, user: str) -> None:
    """Serve the memory tools on stdio for ``user`` over ``db``, every clock at
    :data:`CAPTURE_TIME` (what :func:`capture` talks to)."""
    from memrecall.governance import ExecutionContext
    from memrecall.store import MemoryService, SQLiteStore
    from memrecall.tools.memory_tools import MemoryTools, ToolSession

    from .server import serve_stdio

    def clock() -> datetime:
        return CAPTURE_TIME

    service = MemoryService(SQLiteStore(db), clock=clock)
    tools = MemoryTools(service, ToolSession(ExecutionContext(user)), clock=clock)
    try:
        trio.run(functools.partial(serve_stdio, tools))
    finally:
        service.close()


def main() -> None:
    """Print the transcript of one scripted session (``--serve DB USER``: be its server)."""
    if sys.argv[1:2] == ["--serve"]:
        serve_pinned(Path(sys.argv[2]), sys.argv[3])
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(trio.run(capture, Path(tmp)))


if __name__ == "__main__":
    main()
