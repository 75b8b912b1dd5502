"""``memrecall serve``: the management API over HTTP for the users its tokens name.

This module imports nothing heavy; the server's modules load only when ``serve`` runs.
"""

from __future__ import annotations

import argparse
import signal
import sqlite3
import sys
from pathlib import Path

from memrecall.argtypes import non_negative_int, nonempty_path

__all__ = ["add_parser", "port_number", "positive_seconds", "run"]


def port_number(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 to 65535)")
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds, more than 0 and at most an hour (``bench http --duration``)."""
    try:
        value = float(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0 and at most 3600")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve`` on the main CLI's subcommands."""
    serve = sub.add_parser(
        "serve",
        help="serve the memory management API over HTTP (docs/api.md)",
        description=(
            "Serve the management API (/me/core-memories, /me/memory-candidates, "
            "/me/memory-settings, legacy /me/memories, /openapi.json). Each bearer token "
            "authenticates one user; tokens are kept only as SHA-256 hashes. Prefer "
            "--token-file: a --token value is visible to other local users in the process list."
        ),
    )
    serve.add_argument(
        "--db",
        type=nonempty_path,
        default=None,
        help="database file or postgresql:// URI (default: XDG data file)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=port_number, default=8765, help="port (default 8765; 0: any free port)"
    )
    tokens = serve.add_mutually_exclusive_group(required=True)
    tokens.add_argument(
        "--token",
        action="append",
        metavar="TOKEN=USER_ID",
        help="a bearer token and the user it authenticates (repeatable)",
    )
    tokens.add_argument(
        "--token-file",
        type=nonempty_path,
        metavar="FILE",
        help="one TOKEN=USER_ID per line (# comments)",
    )
    serve.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Open the store, bind, print the URL, serve until SIGINT/SIGTERM."""
    import trio

    from memrecall.store import MemoryService, StoreError, default_db_path, is_postgres_dsn

    from .app import build_app
    from .auth import TokenError, TokenTable
    from .server import serve

    try:
        table = (
            TokenTable.from_file(args.token_file)
            if args.token_file
            else TokenTable.from_specs(args.token)
        )
    except TokenError as exc:
        print(f"memrecall serve: {exc}", file=sys.stderr)
        return 2
    try:
        if is_postgres_dsn(args.db):
            service = MemoryService.open(args.db)
        else:
            path = Path(args.db) if args.db else default_db_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            service = MemoryService.open(path)
    except (StoreError, OSError, sqlite3.Error) as exc:
        print(f"memrecall serve: cannot open the store: {exc}", file=sys.stderr)
        return 2

    async def stop_on_signal() -> None:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                return

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(
                lambda task_status: serve(
                    build_app(service, table),
                    host=args.host,
                    port=args.port,
                    shutdown_trigger=stop_on_signal,
                    task_status=task_status,
                )
            )
            print(f"memrecall serve: listening on {url}", flush=True)

    try:
        trio.run(main)
    except OSError as exc:
        print(f"memrecall serve: cannot listen: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        service.close()
    return 0
