"""``memrecall memory migrate``: copy a SQLite store into an empty PostgreSQL store, verified.

Every table is copied row for row (ids, revisions, audit event ids and times kept) in one
PostgreSQL transaction, which commits only after the copy checks out: the row count of
every table, each memory's revision and content hash, each version's content hash, and
each user's memory_revision agree on both sides. Any difference rolls the whole copy back.
The audit rows get their change-cursor ``seq`` (the PostgreSQL-only column) numbered per
user in event order, which never exceeds the user's memory_revision (every audited write
advanced it once).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import psycopg
from psycopg import sql

from ..model import StoreError
from ..sqlcommon.rows import content_hash
from ..sqlite import SQLiteStore
from ..sqlite.rows import dt as sqlite_time
from . import schema
from .connection import describe

__all__ = ["COPIED_TABLES", "CopyReport", "copy_sqlite_to_postgres"]

COPIED_TABLES: tuple[str, ...] = (
    "memories",
    "memory_versions",
    "memory_revisions",
    "memory_audit",
    "memory_tombstones",
    "core_memory_candidates",
    "memory_rejections",
    "memory_settings",
    "memory_projection_marks",
    "profile_settings",
    "profile_projections",
    "profile_projection_sources",
    "governance_events",
    "contract_fields",
)
"""Every table of the schema, parents before the tables that reference them."""

_IDENTITY = (
    ("memory_versions", "version_id"),
    ("memory_audit", "event_id"),
    ("governance_events", "event_id"),
)


@attrs.frozen
class CopyReport:
    """What was copied and checked: rows per table, users, memories, versions."""

    rows: dict[str, int]
    users: int
    memories: int
    versions: int


def _pg_columns(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str]]:
    return [
        (str(name), str(kind))
        for name, kind in conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table,),
        )
    ]


def _converter(kind: str) -> Any:
    if kind == "timestamp with time zone":
        return lambda v: None if v is None else sqlite_time(v)
    if kind == "boolean":
        return lambda v: None if v is None else bool(v)
    return lambda v: v


def _source_rows(src: sqlite3.Connection, table: str, columns: Sequence[str]) -> Iterable[Any]:
    names = [c for c in columns if c != "seq"]
    select = ", ".join(names)
    if table == "memory_audit":  # the cursor column, numbered per user in event order
        select += ", ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY event_id) AS seq"
    return src.execute(f"SELECT {select} FROM {table}")


def _copy_table(src: sqlite3.Connection, dst: psycopg.Connection[Any], table: str) -> int:
    columns = _pg_columns(dst, table)
    names = [c for c, _ in columns if c != "seq"] + (["seq"] if table == "memory_audit" else [])
    kinds = dict(columns)
    convert = [_converter(kinds[c]) for c in names]
    count = 0
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in names)
    )
    with dst.cursor() as cur, cur.copy(statement) as copy:
        for row in _source_rows(src, table, names):
            copy.write_row([f(v) for f, v in zip(convert, row, strict=True)])
            count += 1
    return count


def _fingerprints(rows: Iterable[Sequence[Any]]) -> set[tuple[str, int, str]]:
    return {(str(m), int(r), content_hash(str(c))) for m, r, c in rows}


def _verify(src: sqlite3.Connection, dst: psycopg.Connection[Any]) -> CopyReport:
    rows: dict[str, int] = {}
    for table in COPIED_TABLES:
        (want,) = src.execute(f"SELECT count(*) FROM {table}").fetchone()
        got = dst.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(table)))
        have = got.fetchone()
        if have is None or int(have[0]) != int(want):
            raise StoreError(f"migrate: {table}: {want} rows in the source, {have} copied")
        rows[table] = int(want)
    for table in ("memories", "memory_versions"):
        query = f"SELECT memory_id, revision, content FROM {table}"
        if _fingerprints(src.execute(query)) != _fingerprints(dst.execute(query)):
            raise StoreError(f"migrate: {table}: revisions or content differ after the copy")
    revisions = "SELECT user_id, revision FROM memory_revisions"
    want_rev = {(str(u), int(r)) for u, r in src.execute(revisions)}
    if want_rev != {(str(u), int(r)) for u, r in dst.execute(revisions)}:
        raise StoreError("migrate: memory_revision differs after the copy")
    ahead = dst.execute(
        "SELECT count(*) FROM (SELECT user_id, max(seq) AS top FROM memory_audit "
        "GROUP BY user_id) a LEFT JOIN memory_revisions r USING (user_id) "
        "WHERE r.revision IS NULL OR a.top > r.revision"
    ).fetchone()
    if ahead is None or int(ahead[0]) != 0:
        raise StoreError("migrate: audit rows ahead of memory_revision in the source")
    return CopyReport(
        rows=rows,
        users=len(want_rev),
        memories=rows["memories"],
        versions=rows["memory_versions"],
    )


def copy_sqlite_to_postgres(source: str | os.PathLike[str], dsn: str) -> CopyReport:
    """Copy the SQLite store ``source`` into the (empty) PostgreSQL store ``dsn``.

    The source is migrated forward first (as opening it would); the target's schema is
    created if missing and must hold no rows. Raises ``StoreError`` when the source is
    missing, the target is not empty, or the copy does not verify (nothing is kept then).
    """
    path = Path(source)
    if not path.is_file():
        raise StoreError(f"migrate: {path.name}: no such SQLite file")
    SQLiteStore(path).close()
    from .store import PostgresStore

    PostgresStore(dsn, scrub_on_forget=False).close()  # creates or migrates the schema
    src = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        with psycopg.connect(dsn) as dst, dst.transaction():
            dst.execute(
                sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
                    sql.SQL(", ").join(sql.Identifier(t) for t in COPIED_TABLES)
                )
            )
            for table in COPIED_TABLES:
                row = dst.execute(
                    sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table))
                ).fetchone()
                if row is not None and row[0]:
                    raise StoreError(f"migrate: {describe(dsn)} is not empty ({table})")
            version = dst.execute("SELECT version FROM schema_version").fetchone()
            if version is None or int(version[0]) != schema.SCHEMA_VERSION:
                raise StoreError(f"migrate: {describe(dsn)}: unexpected schema version")
            for table in COPIED_TABLES:
                _copy_table(src, dst, table)
            for table, column in _IDENTITY:
                dst.execute(
                    sql.SQL(
                        "SELECT setval(pg_get_serial_sequence({t}, {c}), "
                        "COALESCE((SELECT max({ci}) FROM {ti}), 0) + 1, false)"
                    ).format(
                        t=sql.Literal(table),
                        c=sql.Literal(column),
                        ci=sql.Identifier(column),
                        ti=sql.Identifier(table),
                    )
                )
            return _verify(src, dst)
    except psycopg.Error as exc:
        raise StoreError(
            f"migrate: {describe(dsn)}: {type(exc).__name__} (sqlstate {exc.sqlstate})"
        ) from exc
    finally:
        src.close()


def migrate_command(source: str, target: str, *, as_json: bool) -> int:
    """``memrecall memory migrate --from PATH --to URI``: copy, verify, report. Exit 0 when
    the copy committed verified, 2 otherwise (nothing kept)."""
    import json
    import sys

    from .target import is_postgres_dsn

    if not is_postgres_dsn(target):
        message = "--to must be a postgresql:// URI"
        report = None
    else:
        try:
            report = copy_sqlite_to_postgres(source, target)
            message = ""
        except StoreError as exc:
            report, message = None, str(exc)
    if report is None:
        print(f"memrecall memory migrate: {message}", file=sys.stderr)
        if as_json:
            print(json.dumps({"error": "migrate_failed", "message": message}))
        return 2
    if as_json:
        print(json.dumps({"target": describe(target), **attrs.asdict(report)}, sort_keys=True))
    else:
        print(
            f"copied {report.memories} memories ({report.versions} versions, "
            f"{report.users} users) into {describe(target)}; verified row counts of "
            f"{len(report.rows)} tables, revisions, content hashes and memory_revision"
        )
    return 0
