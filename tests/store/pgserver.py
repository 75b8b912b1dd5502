"""The PostgreSQL server the store tests use, and a fresh schema per test.

Where the server comes from, in order:

1. ``MEMRECALL_TEST_POSTGRES_DSN`` (CI: ``source .ci/postgres start`` exports it, and
   ``MEMRECALL_TEST_POSTGRES_DIR``, the private cluster's directory);
2. else, when PostgreSQL's server binaries are installed, ``.ci/postgres start`` runs for
   this test session (never installing anything) and stops at its end;
3. else the PostgreSQL tests skip, unless ``MEMRECALL_REQUIRE_POSTGRES=1`` (CI), where
   they fail.

The session gets its own database (dropped at the end); each store a schema of its own
(``search_path`` in the DSN), so tests never see each other's rows.
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

ROOT = Path(__file__).resolve().parents[2]
DSN_ENV = "MEMRECALL_TEST_POSTGRES_DSN"
DIR_ENV = "MEMRECALL_TEST_POSTGRES_DIR"
REQUIRE_ENV = "MEMRECALL_REQUIRE_POSTGRES"


class Unavailable(Exception):
    """No PostgreSQL server for the tests (the message says why)."""


@attrs.frozen
class Server:
    """A reachable server: its DSN (a superuser's), and its directory when private."""

    dsn: str
    directory: Path | None

    @property
    def log(self) -> Path | None:
        """The server log of a private server (``.ci/postgres``)."""
        return None if self.directory is None else self.directory / "server.log"


def required() -> bool:
    """Whether a missing server fails the run instead of skipping (CI)."""
    return os.environ.get(REQUIRE_ENV, "") == "1"


def _binaries_present() -> bool:
    return any(Path("/usr/lib/postgresql").glob("*/bin/initdb")) or any(
        (Path(p) / "initdb").exists() for p in os.environ.get("PATH", "").split(os.pathsep)
    )


@contextmanager
def server() -> Iterator[Server]:
    """The session's server (module docstring); raises :class:`Unavailable`."""
    dsn = os.environ.get(DSN_ENV)
    if dsn:
        directory = os.environ.get(DIR_ENV)
        yield Server(dsn, Path(directory) if directory else None)
        return
    if not _binaries_present():
        raise Unavailable(f"no {DSN_ENV} and no PostgreSQL server binaries")
    env = {**os.environ, "MEMRECALL_PG_NO_INSTALL": "1"}
    env.pop("MEMRECALL_PG_DIR", None)
    done = subprocess.run(
        ["bash", str(ROOT / ".ci" / "postgres"), "start"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    found = dict(re.findall(r"^export (\w+)=(.*)$", done.stdout, re.MULTILINE))
    if done.returncode != 0 or DSN_ENV not in found:
        raise Unavailable(f".ci/postgres start failed: {done.stderr.strip()[-2000:]}")
    private = Path(found[DIR_ENV])
    try:
        yield Server(found[DSN_ENV], private)
    finally:
        subprocess.run(
            ["bash", str(ROOT / ".ci" / "postgres"), "stop", str(private)],
            capture_output=True,
            timeout=120,
            check=False,
        )


@contextmanager
def database(srv: Server) -> Iterator[str]:
    """A fresh database on ``srv`` for one test session (dropped afterwards); its DSN."""
    name = f"memrecall_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(srv.dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield make_conninfo(srv.dsn, dbname=name)
    finally:
        with psycopg.connect(srv.dsn, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


def fresh_schema(dsn: str) -> str:
    """Create a new empty schema in ``dsn``'s database; a DSN whose ``search_path`` is it."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
    return make_conninfo(dsn, options=f"-c search_path={name}")


def as_uri(dsn: str) -> str:
    """``dsn`` as a ``postgresql://`` URI (what ``--db`` takes), its options kept."""
    from urllib.parse import quote, urlencode

    parts = conninfo_to_dict(dsn)
    user = quote(str(parts.pop("user", "")), safe="")
    password = parts.pop("password", None)
    auth = user + (":" + quote(str(password), safe="") if password is not None else "")
    host = parts.pop("host", "localhost")
    port = parts.pop("port", "5432")
    dbname = quote(str(parts.pop("dbname", "")), safe="")
    query = urlencode({k: str(v) for k, v in parts.items()}, quote_via=quote)
    return f"postgresql://{auth}@{host}:{port}/{dbname}" + (f"?{query}" if query else "")
