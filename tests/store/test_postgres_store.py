"""PostgreSQL-specific guarantees: atomic writes, schema versions and migrations, the
change cursor under concurrent writers, DSN handling and messages without secrets."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from memrecall.store import (
    ChangeType,
    ContentChange,
    MemoryRecord,
    RevisionConflict,
    SQLiteStore,
    StoreError,
)
from memrecall.store.postgres import PostgresStore, is_postgres_dsn, open_store
from memrecall.store.postgres import schema as pg_schema
from memrecall.store.postgres.connection import describe
from memrecall.store.sqlite import MIGRATIONS as SQLITE_MIGRATIONS

from . import pgserver
from .helpers import GLOBAL, LEARNING, T0, new_memory


def test_write_is_all_or_nothing(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Version row, current row and memory_revision commit together or not at all."""
    store = PostgresStore(postgres_dsn)
    rec = store.save(new_memory(content="before"), T0).record

    def boom(*args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(PostgresStore, "_audit", staticmethod(boom))  # the last step
    with pytest.raises(RuntimeError):
        store.change("u1", rec.memory_id, 1, ContentChange(ChangeType.UPDATE, content="x"), T0)
    with pytest.raises(RuntimeError):
        store.save(new_memory(key="other"), T0)
    monkeypatch.undo()
    assert store.get("u1", rec.memory_id) == rec
    assert [v.content for v in store.history("u1", rec.memory_id)] == ["before"]
    assert store.memory_revision("u1") == 1
    assert len(store.list_records("u1")) == 1
    store.close()


def test_schema_mirrors_the_sqlite_steps() -> None:
    """Migrations shared in meaning: the same steps, the same tables created in each."""
    assert len(pg_schema.MIGRATIONS) == len(SQLITE_MIGRATIONS)

    def tables(step: tuple[str, ...]) -> list[str]:
        return [s.split()[2] for s in step if s.lstrip().startswith("CREATE TABLE")]

    for pg_step, sqlite_step in zip(pg_schema.MIGRATIONS, SQLITE_MIGRATIONS, strict=True):
        assert tables(pg_step) == tables(sqlite_step)


def test_reopen_keeps_data_and_schema_version(postgres_dsn: str) -> None:
    first = PostgresStore(postgres_dsn)
    rec = first.save(new_memory(), T0).record
    first.close()
    again = PostgresStore(postgres_dsn)
    assert again.schema_version() == pg_schema.SCHEMA_VERSION
    assert again.get("u1", rec.memory_id) == rec
    again.close()


def test_newer_schema_is_refused(postgres_dsn: str) -> None:
    PostgresStore(postgres_dsn).close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 999")
    with pytest.raises(StoreError, match="newer"):
        PostgresStore(postgres_dsn)


def test_migrations_run_forward(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PostgresStore(postgres_dsn).close()
    step = ("CREATE TABLE later_feature (x INTEGER)",)
    monkeypatch.setattr(pg_schema, "MIGRATIONS", (*pg_schema.MIGRATIONS, step))
    store = PostgresStore(postgres_dsn)
    assert store.schema_version() == pg_schema.SCHEMA_VERSION + 1
    store.close()
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM later_feature").fetchone() == (0,)


def test_concurrent_openers_migrate_once(postgres_dsn: str) -> None:
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            stores.append(PostgresStore(postgres_dsn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert {s.schema_version() for s in stores} == {pg_schema.SCHEMA_VERSION}
    for s in stores:
        s.close()


def test_change_cursor_misses_nothing_under_concurrent_writers(postgres_dsn: str) -> None:
    """An index following ``changes_since`` while writers commit in parallel ends equal to
    a fresh snapshot (the cursor never skips a commit that lands behind it)."""
    store = PostgresStore(postgres_dsn, max_connections=6)
    writers, per_writer = 4, 15
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(per_writer):
                rec = store.save(new_memory(key=f"w{n}_{i}", content=f"v{n}.{i}"), T0).record
                if i % 3 == 0:
                    store.change(
                        "u1", rec.memory_id, 1, ContentChange(ChangeType.UPDATE, content="x"), T0
                    )
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    view: dict[str, MemoryRecord] = {}
    first = store.changes_since("u1", (GLOBAL,), None)
    view.update({r.memory_id: r for r in first.records})
    cursor = first.cursor
    last_round = False
    while not last_round:
        last_round = not any(t.is_alive() for t in threads)  # one more poll after the end
        got = store.changes_since("u1", (GLOBAL,), cursor)
        assert got.cursor >= cursor
        cursor = got.cursor
        for memory_id in got.removed:
            view.pop(memory_id, None)
        view.update({r.memory_id: r for r in got.records})
    assert errors == []
    _, records = store.snapshot("u1", (GLOBAL,))
    assert view == {r.memory_id: r for r in records}
    assert len(view) == writers * per_writer
    store.close()


def test_revision_conflict_leaves_the_row(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    rec = store.save(new_memory(scope=LEARNING), T0).record
    store.change("u1", rec.memory_id, 1, ContentChange(ChangeType.UPDATE, content="v2"), T0)
    with pytest.raises(RevisionConflict):
        store.change("u1", rec.memory_id, 1, ContentChange(ChangeType.UPDATE, content="v3"), T0)
    assert store.get("u1", rec.memory_id).content == "v2"
    store.close()


def test_messages_carry_no_password(postgres_database: str) -> None:
    dsn = pgserver.as_uri(postgres_database)
    password = str(psycopg.conninfo.conninfo_to_dict(postgres_database)["password"])
    assert password not in describe(dsn)
    wrong = dsn.replace(password, "not-the-password")
    with pytest.raises(StoreError) as info:
        PostgresStore(wrong, connect_timeout_s=3)
    assert "not-the-password" not in str(info.value)
    assert password not in str(info.value)


def test_db_values_open_the_right_backend(postgres_dsn: str, tmp_path: Path) -> None:
    uri = pgserver.as_uri(postgres_dsn)
    assert is_postgres_dsn(uri)
    assert is_postgres_dsn("postgres://h/db")
    assert not is_postgres_dsn(str(tmp_path / "m.db"))
    assert not is_postgres_dsn(tmp_path / "postgresql:")
    pg = open_store(uri)
    assert isinstance(pg, PostgresStore)
    pg.close()
    lite = open_store(str(tmp_path / "m.db"))
    assert isinstance(lite, SQLiteStore)
    lite.close()


def test_database_errors_name_no_content(postgres_dsn: str) -> None:
    """A failure inside the database surfaces as ``StoreError`` with the class and SQLSTATE
    only (the driver's message and detail can quote the row), and writes nothing."""
    store = PostgresStore(postgres_dsn)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(
            "ALTER TABLE memory_versions ADD CONSTRAINT no_marker "
            "CHECK (content NOT LIKE '%Zanzibar%')"
        )
    with pytest.raises(StoreError) as info:
        store.save(new_memory(content="Zanzibar quokka under the stairs"), T0)
    assert "CheckViolation" in str(info.value)
    assert "23514" in str(info.value)
    assert "Zanzibar" not in str(info.value)
    assert store.list_records("u1") == []
    assert store.memory_revision("u1") == 0
    store.close()
