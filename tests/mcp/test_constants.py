"""``memrecall mcp --constants FILE`` / ``MEMRECALL_CONSTANTS``: the recall constants a real
stdio client gets, echoed in the header; a bad file is a usage error before serving."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memrecall.tools.constants_file import dump_constants
from memrecall.tools.contract import Match, ScoreConfig, judge_match

from .test_stdio import GOOD, text

CONSTANTS = {
    "scaleA": 0.0111,
    "scaleB": 0.4444,
    "weakThreshold": 0.0123,
    "strongThreshold": 0.9,
    "graphBonusCap": 0.0055,
    "contentTokenMin": 3,
    "gateMargin": 1.5,
    "calibrationRecords": 1,
    "calibrationDate": "2026-12-01",
}


def home(tmp_path: Path) -> dict[str, str]:
    """A private home for the server process."""
    return {
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "HOME": str(tmp_path),
    }


def command(tmp_path: Path, *extra: str) -> list[str]:
    """``python -m memrecall mcp`` on a database in tmp_path."""
    return ["-m", "memrecall", "mcp", "--db", str(tmp_path / "m.db"), "--user", "u1", *extra]


@asynccontextmanager
async def client_with(
    tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """An initialised client against a server started with ``extra`` and ``env``."""
    params = StdioServerParameters(
        command=sys.executable,
        args=command(tmp_path, *extra),
        env={**home(tmp_path), **(env or {})},
    )
    with (tmp_path / "server.log").open("a") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


def constants_file(tmp_path: Path) -> Path:
    """The test's constants, written as memrecall calibrate --contract writes them."""
    path = tmp_path / "constants.json"
    path.write_bytes(dump_constants(CONSTANTS, {"corpus": "test"}))
    return path


async def remember_and_recall(client: ClientSession, query: str) -> tuple[str, list[str]]:
    """Remember GOOD and a second record; the recall header and the first row's cells."""
    assert not (await client.call_tool("memory_remember", GOOD)).is_error
    other = {**GOOD, "title": "postgres ledger migration order", "tags": ["db"]}
    assert not (await client.call_tool("memory_remember", other)).is_error
    header, first, *_ = text(await client.call_tool("memory_recall", {"query": query})).splitlines()
    return header, [cell.strip() for cell in first.split("|")]


def assert_uses_the_file(header: str, row: list[str]) -> None:
    """The header echoes every constant of the file, and match follows them."""
    for echoed in (
        "strong≥0.9,weak≥0.0123",
        "clip((f-0.0111)/(0.4444-0.0111))",
        "graph≤0.0055",
        "recalibrate(1@2026-12-01)",  # 2 records against the 1 the constants were fitted at
    ):
        assert echoed in header
    tokens = re.search(r"gate qTok=(\d+)[<≥]3:", header)
    assert tokens is not None
    rel, match = float(row[6]), row[8]
    loaded = ScoreConfig(
        strong_threshold=0.9, weak_threshold=0.0123, content_token_min=3, gate_margin=1.5
    )
    assert match == judge_match(rel, int(tokens.group(1)), loaded)
    # the seed's defaults would have judged this row differently
    assert judge_match(rel, int(tokens.group(1)), ScoreConfig()) is not Match(match)


async def test_the_constants_flag_sets_match_and_the_header(tmp_path: Path) -> None:
    path = constants_file(tmp_path)
    async with client_with(tmp_path, "--constants", str(path)) as client:
        header, row = await remember_and_recall(client, "adb emulator booted first")
    assert row[8] == "weak"
    assert_uses_the_file(header, row)


async def test_the_environment_names_the_file_and_the_flag_wins(tmp_path: Path) -> None:
    path = constants_file(tmp_path)
    async with client_with(tmp_path, env={"MEMRECALL_CONSTANTS": str(path)}) as client:
        header, row = await remember_and_recall(client, "adb emulator booted first")
    assert_uses_the_file(header, row)
    (tmp_path / "m.db").unlink()
    bad_env = {"MEMRECALL_CONSTANTS": str(tmp_path / "absent.json")}
    async with client_with(tmp_path, "--constants", str(path), env=bad_env) as client:
        header, row = await remember_and_recall(client, "adb emulator booted first")
    assert_uses_the_file(header, row)


@pytest.mark.parametrize(
    ("content", "origin", "needle"),
    [
        ('{"score": {"strongThreshold": 0.01, "weakThreshold": 0.5}}', "flag", "weakThreshold"),
        ('{"score": {"gateMarjin": 2}}', "flag", "gateMarjin"),
        ("not json", "env", "invalid JSON"),
        (None, "env", "cannot read"),
    ],
)
def test_a_bad_constants_file_is_a_usage_error(
    tmp_path: Path, content: str | None, origin: str, needle: str
) -> None:
    path = tmp_path / "c.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    extra = ["--constants", str(path)] if origin == "flag" else []
    env = {**home(tmp_path)}
    if origin == "env":
        env["MEMRECALL_CONSTANTS"] = str(path)
    done = subprocess.run(
        [sys.executable, *command(tmp_path, *extra)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line
    label = "--constants" if origin == "flag" else "MEMRECALL_CONSTANTS"
    assert line.startswith(f"memrecall mcp: {label} {path}: ")
    assert needle in line
    assert not (tmp_path / "m.db").exists()  # refused before opening the store


def test_the_calibrated_file_format_is_what_the_server_loads() -> None:
    # the constants above are exactly the keys calibrate --contract writes
    from memrecall.tooling.matcheval import FITTED_KEYS

    assert tuple(CONSTANTS) == FITTED_KEYS
    assert json.loads(dump_constants(CONSTANTS))["score"] == CONSTANTS


@pytest.mark.parametrize("db", ["directory", "postgresql://u:p@127.0.0.1:1/nowhere"])
def test_a_store_that_cannot_be_opened_is_one_line_not_a_traceback(tmp_path: Path, db: str) -> None:
    where = str(tmp_path) if db == "directory" else db  # a directory is no database file
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "mcp", "--db", where, "--user", "u1"],
        env=home(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("memrecall mcp: cannot open the store: ")
    assert done.stderr.count("\n") == 1
