"""``memrecall mcp``: serve the memory tools over MCP (stdio, or streamable HTTP) for one
trusted user, with the recall constants from a constants file when one is given."""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sqlite3
import sys
from pathlib import Path

import trio

from memrecall.argtypes import non_negative_int, positive_int
from memrecall.governance import ExecutionContext, SessionMode
from memrecall.store import (
    MemoryService,
    StoreError,
    default_db_path,
    is_postgres_dsn,
    open_store,
)
from memrecall.tools.constants_file import ConstantsFileError, load_constants
from memrecall.tools.contract import ScoreConfig, ValidRemember, validate_remember
from memrecall.tools.memory_tools import DEFAULT_MAX_BYTES, MemoryTools, ToolSession

__all__ = ["DEFAULT_HTTP_PORT", "LOOPBACK", "TRANSPORTS", "add_parser", "port_number", "run"]

ENV_PREFIX = "MEMRECALL_"
TRANSPORTS = ("stdio", "streamable-http")
LOOPBACK = "127.0.0.1"
DEFAULT_HTTP_PORT = 8765


def _env(name: str) -> str | None:
    return os.environ.get(ENV_PREFIX + name) or None


def port_number(text: str) -> int:
    """A TCP port, 0..65535 (0: the system picks a free one)."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be at most 65535, got {value}")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``mcp`` on the main CLI's subcommands."""
    mcp = sub.add_parser(
        "mcp",
        help="serve the memory tools over the Model Context Protocol (stdio)",
        description=(
            "Serve memory_remember/recall/expand/prune/forget over MCP on stdin/stdout "
            "(or streamable HTTP). Identity and mode come from here (or MEMRECALL_DB, "
            "MEMRECALL_USER, MEMRECALL_SCOPE, MEMRECALL_MODE, MEMRECALL_CONSTANTS), never "
            "from tool arguments."
        ),
    )
    mcp.add_argument(
        "--db", default=None, help="database file or postgresql:// URI (default: XDG data file)"
    )
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
    mcp.add_argument(
        "--constants",
        metavar="FILE",
        default=None,
        help="recall constants file (memrecall calibrate --contract --output FILE); "
        "default: MEMRECALL_CONSTANTS, else the seed's constants",
    )
    mcp.add_argument("--transport", choices=TRANSPORTS, default="stdio", help="default: stdio")
    mcp.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"streamable-http: address to bind (default {LOOPBACK}; there is no "
        "authentication, so anything else exposes the memories to that network)",
    )
    mcp.add_argument(
        "--port",
        type=port_number,
        default=DEFAULT_HTTP_PORT,
        help=f"streamable-http: port (default {DEFAULT_HTTP_PORT}; 0 picks a free one)",
    )
    mcp.set_defaults(func=run)


def _constants(args: argparse.Namespace) -> ScoreConfig | str:
    """The constants to recall with, or the error message (a usage error)."""
    path, origin = args.constants, "--constants"
    if path is None:
        path, origin = _env("CONSTANTS"), ENV_PREFIX + "CONSTANTS"
    if path is None:
        return ScoreConfig()
    try:
        return load_constants(path)
    except ConstantsFileError as err:
        return f"{origin} {path}: {err}"


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
    config = _constants(args)
    if isinstance(config, str):
        print(f"memrecall mcp: {config}", file=sys.stderr)
        return 2
    db = args.db or _env("DB") or str(default_db_path())
    if not is_postgres_dsn(db):
        Path(db).parent.mkdir(parents=True, exist_ok=True)
    try:
        service = MemoryService(open_store(db))
    except (StoreError, OSError, sqlite3.Error) as exc:
        print(f"memrecall mcp: cannot open the store: {exc}", file=sys.stderr)
        return 2
    session = ToolSession(
        ExecutionContext(user, mode=mode), project=project, max_bytes=max_bytes, config=config
    )
    tools = MemoryTools(service, session)
    try:
        if args.transport == "stdio":
            from .server import serve_stdio  # the MCP SDK is imported only to serve

            trio.run(functools.partial(serve_stdio, tools))
        else:
            trio.run(_serve_http, tools, args.host, args.port)
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
    return 0


async def _serve_http(tools: MemoryTools, host: str, port: int) -> None:
    """Serve over streamable HTTP until SIGINT or SIGTERM; say where on stderr once bound
    (port 0 picks one)."""
    from .server import serve_http

    if host not in (LOOPBACK, "localhost", "::1"):
        print(f"memrecall mcp: warning: serving on {host} without authentication", file=sys.stderr)
    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(functools.partial(serve_http, tools, host=host, port=port))
            print(f"memrecall mcp: streamable HTTP on {url}", file=sys.stderr, flush=True)
            async for _ in signals:  # SIGINT or SIGTERM: stop serving, close the store
                nursery.cancel_scope.cancel()
                break
