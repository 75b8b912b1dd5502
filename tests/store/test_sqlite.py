"""SQLite-specific guarantees: atomic writes, forget scrubs the files, schema versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memrecall.store import (
    ChangeType,
    ContentChange,
    MemoryService,
    NotFound,
    SQLiteStore,
    StoreError,
    WorkspaceType,
    default_db_path,
)
from memrecall.store.sqlite import schema as sqlite_backend

from .helpers import GLOBAL, LEARNING, T0, ManualClock, new_memory

SECRET = "Zanzibar-quokka-7731 lives under the teal staircase"
SECRET_KEY = "quokka_hideout_zq91"


def db_bytes(path: Path) -> bytes:
    """Every byte of the database, its WAL and its shared-memory file."""
    out = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            out += part.read_bytes()
    return out


@pytest.fixture
def db(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "m.db", durable=False)


def test_default_path_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "memrecall" / "memory.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == tmp_path / "home" / ".local" / "share" / "memrecall" / "memory.db"


def test_connection_settings(db: SQLiteStore) -> None:
    conn = sqlite3.connect(db.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    for c in (db._writer,):
        assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert c.execute("PRAGMA secure_delete").fetchone()[0] == 1
        assert c.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000


def test_write_is_all_or_nothing(db: SQLiteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """§18.1: version row, current row and memory_revision commit together or not at all."""
    rec = db.save(new_memory(content="before"), T0).record

    def boom(*args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(SQLiteStore, "_audit", staticmethod(boom))  # the last step of a write
    with pytest.raises(RuntimeError):
        db.change("u1", rec.memory_id, 1, ContentChange(ChangeType.UPDATE, content="after"), T0)
    with pytest.raises(RuntimeError):
        db.save(new_memory(key="other"), T0)
    monkeypatch.undo()
    assert db.get("u1", rec.memory_id).content == "before"
    assert db.get("u1", rec.memory_id).revision == 1
    assert [v.content for v in db.history("u1", rec.memory_id)] == ["before"]
    assert db.memory_revision("u1") == 1
    assert len(db.list_records("u1")) == 1


def test_database_enforces_scope_pairing_and_uniqueness(db: SQLiteStore) -> None:
    db.save(new_memory(key="k"), T0)
    conn = sqlite3.connect(db.path)
    row = ("x", "u1", "global", "learning", "k2", "c", "cat", "explicit", "active", 1, "t", "t")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories (memory_id, user_id, scope_type, workspace_type, memory_key, "
            "content, category, source_type, status, revision, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row,
        )
    dup = ("y", "u1", "global", None, "k", "c", "cat", "explicit", "active", 1, "t", "t")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(
            "INSERT INTO memories (memory_id, user_id, scope_type, workspace_type, memory_key, "
            "content, category, source_type, status, revision, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            dup,
        )
    conn.close()


def test_reopen_keeps_data_and_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first = SQLiteStore(path)
    rec = first.save(new_memory(), T0).record
    first.close()
    again = SQLiteStore(path)
    assert again.schema_version() == sqlite_backend.SCHEMA_VERSION
    assert again.get("u1", rec.memory_id) == rec
    again.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE schema_version SET version = 999")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer"):
        SQLiteStore(path)


def test_migrations_run_forward_from_an_older_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    SQLiteStore(path).close()
    step = ("CREATE TABLE later_feature (x INTEGER)",)
    monkeypatch.setattr(sqlite_backend, "MIGRATIONS", (*sqlite_backend.MIGRATIONS, step))
    store = SQLiteStore(path)
    assert store.schema_version() == sqlite_backend.SCHEMA_VERSION + 1
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM later_feature").fetchone()[0] == 0
    conn.close()


async def test_forget_removes_every_byte(tmp_path: Path) -> None:
    """Forget is verifiable: content and key are absent from the db, -wal and -shm bytes,
    and no read path (get, history, list, search, audit) returns them."""
    path = tmp_path / "m.db"
    clock = ManualClock()
    svc = MemoryService(SQLiteStore(path), clock=clock)
    keep = await svc.save("u1", GLOBAL, "kept_note", "an unrelated quokka fact stays", "misc")
    saved = await svc.save("u1", LEARNING, SECRET_KEY, SECRET, "secret")
    mid = saved.record.memory_id
    long_text = SECRET + " " + "filler words " * 600  # spills into overflow pages
    clock.advance(1)
    rec = await svc.update("u1", mid, expected_revision=1, content=long_text)
    clock.advance(1)
    await svc.update("u1", mid, expected_revision=rec.revision, content=SECRET + " again")
    found = await svc.search("u1", WorkspaceType.LEARNING, "teal staircase quokka")
    assert mid in [h.memory_id for h in found.hits]
    raw = db_bytes(path)
    assert SECRET.encode() in raw
    assert SECRET_KEY.encode() in raw

    result = await svc.forget("u1", mid)
    assert result.scrubbed
    raw = db_bytes(path)
    assert SECRET.encode() not in raw
    assert b"Zanzibar" not in raw
    assert b"staircase" not in raw
    assert SECRET_KEY.encode() not in raw
    assert b"quokka_hideout" not in raw

    after = await svc.search("u1", WorkspaceType.LEARNING, "teal staircase quokka")
    assert [h.memory_id for h in after.hits] == [keep.record.memory_id]
    for query in (SECRET_KEY, "Zanzibar teal staircase", SECRET):
        assert mid not in [h.memory_id for h in (await svc.search("u1", None, query)).hits]
        learning = await svc.search("u1", WorkspaceType.LEARNING, query)
        assert mid not in [h.memory_id for h in learning.hits]
    assert (await svc.search("u1", WorkspaceType.LEARNING, "Zanzibar staircase")).hits == ()
    with pytest.raises(NotFound):
        await svc.get("u1", mid)
    with pytest.raises(NotFound):
        await svc.history("u1", mid)
    listed = await svc.list_records("u1")
    assert [r.memory_id for r in listed] == [keep.record.memory_id]
    assert all("Zanzibar" not in repr(e) for e in await svc.audit("u1"))
    tomb = await svc.tombstone("u1", mid)
    assert tomb is not None
    assert tomb.final_revision == 3
    svc.close()
    assert SECRET.encode() not in db_bytes(path)
