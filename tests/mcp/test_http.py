"""Streamable HTTP end to end: ``memrecall mcp --transport streamable-http`` in a child
process (Hypercorn's trio worker), driven by the SDK's streamable HTTP client; and the SDK's
DNS-rebinding protection on the loopback address."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import trio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from memrecall.governance import ExecutionContext
from memrecall.mcp.server import serve_http
from memrecall.store import MemoryService, SQLiteStore
from memrecall.tools.memory_tools import MemoryTools, ToolSession

from .test_constants import home
from .test_stdio import GOOD, TOOLS, text

ANNOUNCE = "memrecall mcp: streamable HTTP on "


@contextmanager
def http_server(tmp_path: Path, *extra: str) -> Iterator[str]:
    """Start the CLI on a free loopback port; yield the endpoint URL it announces on stderr."""
    args = ["-m", "memrecall", "mcp", "--db", str(tmp_path / "m.db"), "--user", "u1"]
    args += ["--transport", "streamable-http", "--port", "0", *extra]
    with subprocess.Popen(
        [sys.executable, *args],
        env=home(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stderr is not None
            line = process.stderr.readline()  # blocks until the socket is bound
            assert line.startswith(ANNOUNCE), line + process.stderr.read()
            yield line[len(ANNOUNCE) :].strip()
        finally:
            process.terminate()
            process.wait(timeout=30)
        # SIGTERM stops the server cleanly: the store is closed, the exit status is 0
        assert process.returncode == 0, process.stderr.read()


async def round_trip(url: str) -> tuple[list[str], str, str]:
    """initialize, list tools, remember, recall: (tool names, the remember answer, the recall)."""
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as client,
    ):
        init = await client.initialize()
        assert init.server_info.name == "memrecall"
        listed = await client.list_tools()
        done = text(await client.call_tool("memory_remember", GOOD))
        recalled = text(await client.call_tool("memory_recall", {"query": "adb emulator"}))
    return [tool.name for tool in listed.tools], done, recalled


def test_a_client_round_trips_over_streamable_http(tmp_path: Path) -> None:
    # The client runs on asyncio (anyio picks the loop): under trio the SDK's httpx2 client
    # leaves its SSE generators to the garbage collector, which trio reports as a warning.
    # The server is the trio process under test; a client on another loop also shows the two
    # interoperate.
    with http_server(tmp_path) as url:
        assert url.startswith("http://127.0.0.1:")  # loopback by default
        assert url.endswith("/mcp")
        names, done, recalled = anyio.run(round_trip, url, backend="asyncio")
    assert set(names) == set(TOOLS)
    remembered = json.loads(done)
    assert remembered["records"] == 1
    header, row = recalled.splitlines()
    assert header.startswith("rows=1/5")
    assert row.split(" | ")[0] == remembered["id"]
    assert GOOD["body"] not in recalled
    # what went over HTTP is in the database file
    with sqlite3.connect(tmp_path / "m.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone() == (1,)


async def test_a_foreign_host_header_is_refused_on_loopback(tmp_path: Path) -> None:
    service = MemoryService(SQLiteStore(tmp_path / "m.db"))
    try:
        tools = MemoryTools(service, ToolSession(ExecutionContext("u1")))
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_http, tools)
            hello = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
            headers = {"Accept": "application/json, text/event-stream"}
            async with httpx.AsyncClient() as http:
                ok = await http.post(url, json=hello, headers=headers)
                forged = await http.post(
                    url, json=hello, headers={**headers, "Host": "evil.example:80"}
                )
            nursery.cancel_scope.cancel()
        assert ok.status_code == 200
        assert forged.status_code in (403, 421)
    finally:
        service.close()
