"""PostgreSQL forget removes every copy: no query returns the content, the table files no
longer hold it after forget's scrub (``VACUUM (FULL)``), and the server log never held it.
"""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from memrecall.store import MemoryService, NotFound, WorkspaceType
from memrecall.store.postgres import PostgresStore

from . import pgserver
from .helpers import GLOBAL, LEARNING, ManualClock


def _superuser(dsn: str) -> str:
    """``dsn`` without its search_path option (a plain session in the same database)."""
    parts = conninfo_to_dict(dsn)
    parts.pop("options", None)
    return make_conninfo(**{k: str(v) for k, v in parts.items()})


def _database_files(conn: psycopg.Connection[tuple[object, ...]]) -> list[Path]:
    """Every file of the current database's directory, after a checkpoint."""
    conn.execute("CHECKPOINT")
    row = conn.execute(
        "SELECT current_setting('data_directory'), oid FROM pg_database "
        "WHERE datname = current_database()"
    ).fetchone()
    assert row is not None
    base = Path(str(row[0])) / "base" / str(row[1])
    try:
        return [p for p in base.iterdir() if p.is_file()]
    except PermissionError:
        pytest.skip(f"cannot read the server's files under {base}")


def _holding(files: list[Path], marker: bytes) -> list[str]:
    return [p.name for p in files if p.exists() and marker in p.read_bytes()]


async def test_forget_removes_every_copy(postgres_dsn: str) -> None:
    marker = f"Quokka{uuid.uuid4().hex}"
    secret = f"{marker} lives under the teal staircase"
    secret_key = f"hideout_{uuid.uuid4().hex[:12]}"
    rng = random.Random(7)  # incompressible filler: stored out of line, uncompressed
    filler = " ".join(f"{rng.getrandbits(64):016x}" for _ in range(400))
    clock = ManualClock()
    store = PostgresStore(postgres_dsn)
    svc = MemoryService(store, clock=clock)
    keep = await svc.save("u1", GLOBAL, "kept_note", "an unrelated quokka fact stays", "misc")
    saved = await svc.save("u1", LEARNING, secret_key, secret, "secret")
    mid = saved.record.memory_id
    clock.advance(1)
    rec = await svc.update("u1", mid, expected_revision=1, content=secret + " " + filler)
    clock.advance(1)
    await svc.update("u1", mid, expected_revision=rec.revision, content=secret + " again")
    found = await svc.search("u1", WorkspaceType.LEARNING, "teal staircase quokka")
    assert mid in [h.memory_id for h in found.hits]

    with psycopg.connect(_superuser(postgres_dsn), autocommit=True) as admin:
        files = _database_files(admin)
        assert _holding(files, marker.encode())  # the check sees the content before forget
        assert _holding(files, secret_key.encode())

        result = await svc.forget("u1", mid)
        assert result.scrubbed

        files = _database_files(admin)
        assert _holding(files, marker.encode()) == []
        assert _holding(files, secret_key.encode()) == []
        # no row of any table of the store, read whole, mentions it
        schema = str(conninfo_to_dict(postgres_dsn)["options"]).split("=", 1)[1]
        tables = admin.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
        for (table,) in tables:
            hits = admin.execute(
                sql.SQL("SELECT count(*) FROM {}.{} t WHERE t::text LIKE %s").format(
                    sql.Identifier(schema), sql.Identifier(str(table))
                ),
                (f"%{marker}%",),
            ).fetchone()
            assert hits == (0,), table

    for query in (secret_key, "teal staircase quokka", secret):
        assert mid not in [h.memory_id for h in (await svc.search("u1", None, query)).hits]
        learning = await svc.search("u1", WorkspaceType.LEARNING, query)
        assert mid not in [h.memory_id for h in learning.hits]
    with pytest.raises(NotFound):
        await svc.get("u1", mid)
    with pytest.raises(NotFound):
        await svc.history("u1", mid)
    assert [r.memory_id for r in await svc.list_records("u1")] == [keep.record.memory_id]
    assert all(marker not in repr(e) for e in await svc.audit("u1"))
    changes = store.changes_since("u1", (GLOBAL, LEARNING), None)
    assert [r.memory_id for r in changes.records] == [keep.record.memory_id]
    svc.close()


def test_forget_reports_unscrubbed_while_a_snapshot_can_see_the_rows(postgres_dsn: str) -> None:
    """A reader holding an older snapshot keeps the dead rows alive: forget says so."""
    from .helpers import T0, new_memory

    store = PostgresStore(postgres_dsn)
    rec = store.save(new_memory(content="seen by an old snapshot"), T0).record
    with psycopg.connect(postgres_dsn) as reader:  # a transaction left open, snapshot taken
        reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        assert reader.execute("SELECT count(*) FROM memories").fetchone() == (1,)
        result = store.forget("u1", rec.memory_id, T0)
        assert not result.scrubbed
        reader.rollback()
    assert store.scrub()  # once nothing can see them, the next scrub removes them
    store.close()


def test_server_log_never_holds_content(
    postgres_server: pgserver.Server, postgres_dsn: str
) -> None:
    """The private server logs no statements, parameters or error details (.ci/postgres)."""
    log = postgres_server.log
    if log is None or not log.exists():
        pytest.skip("the server's log is not ours to read (external MEMRECALL_TEST_POSTGRES_DSN)")
    hidden = f"Hidden{uuid.uuid4().hex}"
    shown = f"Shown{uuid.uuid4().hex}"
    store = PostgresStore(postgres_dsn)
    store.close()
    insert = (
        "INSERT INTO memories (memory_id, user_id, scope_type, memory_key, content, category, "
        "source_type, status, revision, created_at, updated_at) "
        "VALUES ('x', 'u1', 'nowhere', 'k', %s, 'c', 'explicit', 'active', 1, now(), now())"
    )
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        # a failing write whose row (and statement) carry the content
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(insert, (hidden,))
        # control: the same failure with statement logging switched on does reach this log
        conn.execute("SET log_min_error_statement = error")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(insert.replace("%s", f"'{shown}'"))
    text = log.read_text(errors="replace")
    assert shown in text
    assert hidden not in text
