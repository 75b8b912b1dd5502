"""Capture a real MCP session for docs/mcp.md: ``python -m memrecall.mcp.transcript``.

Starts ``python -m memrecall mcp`` on a fresh database in a temporary directory, drives it
with the SDK's stdio client (remember, recall, expand, prune dry run, forget) and prints
each request and the server's text answer as Markdown. Memory ids are random, so they are
printed as ``<id1>``, ``<id2>``...; everything else is what the server sent.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import trio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

__all__ = ["capture"]

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
        args=["-m", "memrecall", "mcp", "--db", str(directory / "m.db"), "--user", "demo"],
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


def main() -> None:
    """Print the transcript of one scripted session."""
    with tempfile.TemporaryDirectory() as tmp:
        print(trio.run(capture, Path(tmp)))


if __name__ == "__main__":
    main()
