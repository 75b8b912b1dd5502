"""``memrecall memory migrate --from PATH --to postgresql://...``: a SQLite store copied
into PostgreSQL reads back the same through every ``Store`` read, keeps working there, and
a copy that does not verify leaves nothing behind."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from memrecall.store import (
    ContractFields,
    GovernanceEvent,
    MemoryService,
    SQLiteStore,
    Store,
)
from memrecall.store.cli import main
from memrecall.store.postgres import PostgresStore
from memrecall.store.postgres import copy as pg_copy

from . import pgserver
from .helpers import GLOBAL, LEARNING, TEACHING, ManualClock

USERS = ("alice", "bob")
SCOPES = (GLOBAL, LEARNING, TEACHING)


async def _fill(path: Path) -> None:
    """A store with every kind of row: versions, suppressed, forgotten, candidates,
    rejections, settings, profile, events, the tools' side rows."""
    clock = ManualClock()
    svc = MemoryService(SQLiteStore(path), clock=clock)
    for user in USERS:
        for n in range(4):
            clock.advance(1)
            saved = await svc.save(user, SCOPES[n % 3], f"topic_{n}", f"{user} fact {n}", "fact")
            if n % 2 == 0:
                clock.advance(1)
                await svc.update(user, saved.record.memory_id, expected_revision=1, content="v2")
        records = await svc.list_records(user)
        await svc.suppress(user, records[0].memory_id)
        await svc.forget(user, records[1].memory_id)
        await svc.mark_projectable(user, records[2].memory_id, ("editor", "vim"))
        await svc.set_profile_setting(user, "language", "en")
        pending = await svc.propose_candidate(user, GLOBAL, "proposed", "a proposal", "fact")
        rejected = await svc.propose_candidate(user, GLOBAL, "unwanted", "no thanks", "fact")
        assert pending.candidate is not None
        assert rejected.candidate is not None
        await svc.reject_candidate(user, rejected.candidate.candidate_id)
        accepted = await svc.propose_candidate(user, LEARNING, "accepted", "yes please", "fact")
        assert accepted.candidate is not None
        await svc.accept_candidate(user, accepted.candidate.candidate_id)
        await svc.set_settings(user, auto_extract_enabled=False)
        await svc.record_events([GovernanceEvent("memory.policy_denied", user, {"n": "1"})])
        svc.store.put_contract_fields(
            user, records[3].memory_id, ContractFields(title="t", tags=("a", "b"), hits=3)
        )
    svc.close()


def _everything(store: Store) -> dict[str, object]:
    """Every read of the protocol, for every user."""
    out: dict[str, object] = {}
    for user in USERS:
        records = store.list_records(user, limit=1000)
        out[user] = {
            "records": records,
            "history": {r.memory_id: store.history(user, r.memory_id) for r in records},
            "audit": store.audit_events(user),
            "memory_revision": store.memory_revision(user),
            "snapshot": store.snapshot(user, SCOPES)[1],
            "candidates": store.list_candidates(user),
            "settings": store.get_settings(user),
            "events": store.governance_events(user),
            "projection": store.get_projection(user),
            "inputs": store.projection_inputs(user),
            "contract": store.contract_fields(user),
            "tombstones": [
                store.tombstone(user, e.memory_id)
                for e in store.audit_events(user)
                if e.type.value == "deleted"
            ],
        }
    return out


async def test_migrate_copies_everything_and_verifies(
    tmp_path: Path, postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.db"
    await _fill(path)
    uri = pgserver.as_uri(postgres_dsn)
    assert main(["memory", "migrate", "--from", str(path), "--to", uri, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    lite = SQLiteStore(path)
    assert report["memories"] == sum(len(lite.list_records(u)) for u in USERS) > 0
    assert report["rows"]["memory_audit"] == sum(len(lite.audit_events(u)) for u in USERS)
    assert "@" not in report["target"]  # no credentials in the report
    pg = PostgresStore(postgres_dsn)
    assert _everything(pg) == _everything(lite)
    # the copy keeps working: a change cursor, new writes, new event ids after the old ones
    user = USERS[0]
    before = pg.changes_since(user, SCOPES, None)
    async_svc = MemoryService(pg)
    saved = await async_svc.save(user, GLOBAL, "after_move", "written in postgres", "fact")
    after = pg.changes_since(user, SCOPES, before.cursor)
    assert [r.memory_id for r in after.records] == [saved.record.memory_id]
    assert pg.memory_revision(user) == lite.memory_revision(user) + 1
    assert pg.audit_events(user)[-1].event_id > lite.audit_events(user)[-1].event_id
    async_svc.close()
    lite.close()
    # a second run refuses: the target is not empty
    assert main(["memory", "migrate", "--from", str(path), "--to", uri]) == 2
    assert "not empty" in capsys.readouterr().err


def test_migrate_keeps_nothing_when_the_copy_does_not_verify(
    tmp_path: Path, postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.db"
    import trio

    trio.run(_fill, path)
    real = pg_copy._copy_table

    def lossy(src: object, dst: psycopg.Connection[tuple[object, ...]], table: str) -> int:
        count = real(src, dst, table)  # type: ignore[arg-type]
        if table == "memory_versions":  # lose one row after the copy
            dst.execute(
                "DELETE FROM memory_versions WHERE revision = 2 AND ctid IN "
                "(SELECT ctid FROM memory_versions WHERE revision = 2 LIMIT 1)"
            )
        return count

    monkeypatch.setattr(pg_copy, "_copy_table", lossy)
    uri = pgserver.as_uri(postgres_dsn)
    assert main(["memory", "migrate", "--from", str(path), "--to", uri]) == 2
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM memory_versions").fetchone() == (0,)


def test_migrate_refuses_a_missing_source_or_a_non_postgres_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "memory",
                "migrate",
                "--from",
                str(tmp_path / "none.db"),
                "--to",
                "postgresql://127.0.0.1:1/x",
            ]
        )
        == 2
    )
    assert "no such SQLite file" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()
    assert (
        main(
            ["memory", "migrate", "--from", str(tmp_path / "a.db"), "--to", str(tmp_path / "b.db")]
        )
        == 2
    )
    assert "postgresql://" in capsys.readouterr().err
