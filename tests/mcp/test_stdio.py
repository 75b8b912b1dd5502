"""End to end: a real MCP client (the SDK's stdio_client + ClientSession) against
``python -m memrecall mcp`` over stdio, on a SQLite file in tmp_path."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memrecall.tools.contract import MEMORY_INSTRUCTIONS, TOOL_DESCRIPTIONS
from memrecall.tools.memory_tools import FORGET_DESCRIPTION

TOOLS = {**TOOL_DESCRIPTIONS, "memory_forget": FORGET_DESCRIPTION}


def db_bytes(directory: Path, pattern: str) -> bytes:
    """Every byte of the database files (main, -wal, -shm)."""
    return b"".join(p.read_bytes() for p in directory.glob(pattern))


GOOD: dict[str, Any] = {
    "kind": "lesson",
    "title": "adb needs the emulator booted first",
    "body": "Run adb wait-for-device before installing; the emulator takes 40 s to boot.",
    "tags": ["android", "adb"],
    "source": "session:abc",
}


def params(tmp_path: Path, *extra: str) -> StdioServerParameters:
    """Launch the CLI as a subprocess with a private home."""
    env = {
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "HOME": str(tmp_path),
    }
    args = ["-m", "memrecall", "mcp", "--db", str(tmp_path / "m.db"), "--user", "u1", *extra]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


@asynccontextmanager
async def session(tmp_path: Path, *extra: str) -> AsyncIterator[ClientSession]:
    """An initialised client session against a fresh server process."""
    with (tmp_path / "server.log").open("a") as errlog:
        async with (
            stdio_client(params(tmp_path, *extra), errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


def text(result: Any) -> str:
    """The text content of a tool result."""
    return "".join(block.text for block in result.content if block.type == "text")


def refusal(result: Any) -> dict[str, Any]:
    """The refusal of an error result."""
    assert result.is_error, text(result)
    payload: dict[str, Any] = json.loads(text(result))["refused"]
    return payload


async def test_initialize_lists_tools_and_the_instructions_prompt(tmp_path: Path) -> None:
    async with session(tmp_path) as client:
        listed = await client.list_tools()
        by_name = {tool.name: tool for tool in listed.tools}
        assert set(by_name) == set(TOOLS)
        for name, tool in by_name.items():
            assert tool.description == TOOLS[name]
            props = set(tool.input_schema.get("properties", {}))
            assert not props & {"user", "user_id", "workspace", "mode", "owner"}
        assert set(by_name["memory_remember"].input_schema["required"]) == {
            "kind",
            "title",
            "body",
            "tags",
            "source",
        }
        assert "dryRun" in by_name["memory_prune"].input_schema["properties"]
        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["memory_instructions"]
        got = await client.get_prompt("memory_instructions")
        assert MEMORY_INSTRUCTIONS.strip() in got.messages[0].content.text  # type: ignore[union-attr]


async def test_round_trip_remember_recall_expand_prune_forget(tmp_path: Path) -> None:
    async with session(tmp_path) as client:
        done = json.loads(text(await client.call_tool("memory_remember", GOOD)))
        assert done["records"] == 1
        recalled = text(await client.call_tool("memory_recall", {"query": "adb emulator"}))
        row = recalled.splitlines()[1].split("|")
        assert row[0].strip() == done["id"]
        assert GOOD["body"] not in recalled
        expanded = text(await client.call_tool("memory_expand", {"ids": [done["id"], "nope"]}))
        assert GOOD["body"] in expanded
        assert "nope" in expanded
        pruned = await client.call_tool("memory_prune", {})
        assert not pruned.is_error
        assert "dry run" in text(pruned)
        gone = json.loads(text(await client.call_tool("memory_forget", {"id": done["id"]})))
        assert gone == {"id": done["id"], "scrubbed": True, "records": 0}
        again = await client.call_tool("memory_recall", {"query": "adb emulator"})
        assert done["id"] not in text(again)
    data = db_bytes(tmp_path, "m.db*")
    assert b"wait-for-device" not in data


async def test_refusals_over_the_wire(tmp_path: Path) -> None:
    async with session(tmp_path, "--max-bytes", "4000") as client:
        bad = await client.call_tool(
            "memory_remember", {**GOOD, "kind": "rumour", "title": "x", "tags": []}
        )
        assert refusal(bad)["code"] == "invalid-kind"
        too_big = await client.call_tool("memory_remember", {**GOOD, "body": "y" * 500})
        assert refusal(too_big)["code"] == "record-too-large"
        secret = await client.call_tool(
            "memory_remember", {**GOOD, "body": "key AKIA" + "ABCDEFGHIJKLMNOP"}
        )
        assert refusal(secret)["code"] == "secret"
        missing = await client.call_tool("memory_forget", {"id": "0" * 32})
        assert refusal(missing)["code"] == "not-found"
        await client.call_tool("memory_recall", {"query": "adb"})
        # another process writes between this session's view and its next write
        async with session(tmp_path) as other:
            assert not (await other.call_tool("memory_remember", GOOD)).is_error
        changed = await client.call_tool("memory_remember", {**GOOD, "title": "a second title"})
        assert refusal(changed)["code"] == "store-changed-externally"
        retried = await client.call_tool("memory_remember", {**GOOD, "title": "a second title"})
        assert not retried.is_error


@pytest.mark.parametrize(
    ("mode", "code"), [("no_write", "session-no-write"), ("isolated", "session-isolated")]
)
async def test_modes_come_from_the_command_line(tmp_path: Path, mode: str, code: str) -> None:
    async with session(tmp_path, "--mode", mode) as client:
        written = await client.call_tool("memory_remember", GOOD)
        assert refusal(written)["code"] == code
        deleted = await client.call_tool("memory_prune", {"dryRun": False})
        assert refusal(deleted)["code"] == code
        read = await client.call_tool("memory_recall", {"query": "adb"})
        assert read.is_error == (mode == "isolated")


async def test_concurrent_calls_all_land(tmp_path: Path) -> None:
    titles = [f"concurrent lesson number {n}" for n in range(8)]
    results: list[Any] = []
    async with session(tmp_path) as client:

        async def one(title: str) -> None:
            results.append(await client.call_tool("memory_remember", {**GOOD, "title": title}))

        async with trio.open_nursery() as nursery:
            for title in titles:
                nursery.start_soon(one, title)
            nursery.start_soon(client.call_tool, "memory_recall", {"query": "lesson"})
        assert [r.is_error for r in results] == [False] * len(titles)
        listed = text(await client.call_tool("memory_recall", {"query": "concurrent", "limit": 50}))
        assert len(listed.splitlines()) == 1 + len(titles)


async def test_client_disconnecting_mid_call_leaves_the_db_intact(tmp_path: Path) -> None:
    async with session(tmp_path) as client:
        assert not (await client.call_tool("memory_remember", GOOD)).is_error
        async with trio.open_nursery() as nursery:
            nursery.start_soon(client.call_tool, "memory_prune", {"dryRun": False})
            # every client task is blocked: the request is on the wire, the answer not read
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    # the client closed the pipes mid-call; the server exited cleanly, the file is consistent
    assert "Traceback" not in (tmp_path / "server.log").read_text()
    with sqlite3.connect(tmp_path / "m.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone() == (1,)
    async with session(tmp_path) as client:
        recalled = text(await client.call_tool("memory_recall", {"query": "adb emulator"}))
        assert len(recalled.splitlines()) == 2
