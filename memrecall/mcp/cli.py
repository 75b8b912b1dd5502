"""``memrecall mcp``: serve the memory tools over MCP (stdio) for one trusted user."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

import trio

from memrecall.argtypes import positive_int
from memrecall.governance import ExecutionContext, SessionMode
from memrecall.store import MemoryService, SQLiteStore, default_db_path
from memrecall.tools.contract import ValidRemember, validate_remember
from memrecall.tools.memory_tools import DEFAULT_MAX_BYTES, MemoryTools, ToolSession

__all__ = ["add_parser", "run"]

ENV_PREFIX = "MEMRECALL_"


def _env(name: str) -> str | None:
    return os.environ.get(ENV_PREFIX + name) or None


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``mcp`` on the main CLI's subcommands."""
    mcp = sub.add_parser(
        "mcp",
        help="serve the memory tools over the Model Context Protocol (stdio)",
        description=(
            "Serve memory_remember/recall/expand/prune/forget over MCP on stdin/stdout. "
            "Identity and mode come from here (or MEMRECALL_DB, MEMRECALL_USER, "
            "MEMRECALL_SCOPE, MEMRECALL_MODE), never from tool arguments."
        ),
    )
    mcp.add_argument("--db", type=Path, default=None, help="database file (default: XDG data)")
    mcp.add_argument("--user", default=None, help="the trusted user id every call acts for")
    mcp.add_argument(
        "--scope", default=None, help="the session's project scope, project:<name> (optional)"
    )
    mcp.add_argument(
        "--mode", choices=[m.value for m in SessionMode], default=None, help="default: normal"
    )
    mcp.add_argument(
        "--max-bytes",
        type=positive_int,
        default=None,
        help=f"store byte cap (default {DEFAULT_MAX_BYTES})",
    )
    mcp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Resolve the session from arguments and environment, then serve until EOF."""
    user = args.user or _env("USER_ID") or _env("USER")
    if not user:
        print("memrecall mcp: --user (or MEMRECALL_USER) is required", file=sys.stderr)
        return 2
    mode = SessionMode(args.mode or _env("MODE") or SessionMode.NORMAL.value)
    project = args.scope or _env("SCOPE")
    if project is not None:
        probe = validate_remember(
            kind="fact",
            title="scope probe",
            body="x",
            tags=["x"],
            source="session:x",
            scope=project,
        )
        if not isinstance(probe, ValidRemember) or not probe.scope.startswith("project:"):
            print("memrecall mcp: --scope must be project:<name>", file=sys.stderr)
            return 2
        project = probe.scope
    try:
        max_bytes = args.max_bytes or positive_int(_env("MAX_BYTES") or str(DEFAULT_MAX_BYTES))
    except argparse.ArgumentTypeError as err:
        print(f"memrecall mcp: MEMRECALL_MAX_BYTES: {err}", file=sys.stderr)
        return 2
    db = args.db or (Path(p) if (p := _env("DB")) else default_db_path())
    db.parent.mkdir(parents=True, exist_ok=True)
    service = MemoryService(SQLiteStore(db))
    session = ToolSession(ExecutionContext(user, mode=mode), project=project, max_bytes=max_bytes)
    from .server import serve_stdio  # the MCP SDK is imported only to serve

    try:
        trio.run(functools.partial(serve_stdio, MemoryTools(service, session)))
    finally:
        service.close()
    return 0
