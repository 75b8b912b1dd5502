"""PostgreSQL under several processes, several connections each: no lost update, no
duplicate record, every conflict reported; a writer killed with SIGKILL (at random points,
and inside a transaction holding the user's lock) loses nothing it acknowledged, leaves
nothing half-written and blocks no one."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

from memrecall.store import ChangeType, ContentChange
from memrecall.store.postgres import PostgresStore

from .postgres_workers import SHARED_KEYS
from .test_processes import ROOT
from .workers import _new


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.postgres_workers", *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_processes_and_connections_racing_on_shared_keys(postgres_dsn: str) -> None:
    PostgresStore(postgres_dsn).close()  # schema first, so the workers race on data only
    workers, threads, rounds = 3, 3, 8
    procs = [
        spawn("contend", postgres_dsn, f"w{n}", str(threads), str(rounds)) for n in range(workers)
    ]
    for proc in procs:  # every process connected and waiting: start them together
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    reports: dict[str, Any] = {}
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.update(json.loads(out))
    assert len(reports) == workers * threads
    store = PostgresStore(postgres_dsn)
    records = {r.key: r for r in store.list_records("u1")}
    assert sorted(records) == sorted(SHARED_KEYS)  # no duplicate record for a key
    confirmations = 0
    for key, record in records.items():
        saves = [r["saved"][key] for r in reports.values()]
        assert saves.count("created") == 1
        confirmations += saves.count("same")
        written = sorted(rev for r in reports.values() for rev in r["revisions"][key])
        # every acknowledged update has its own revision: none overwrote another
        assert written == list(range(2, 2 + len(written)))
        assert record.revision == 1 + len(written)
        tokens = [t for r in reports.values() for t in r["tokens"][key]]
        assert len(tokens) == len(written)
        for token in tokens:  # no lost update: every token is in the final content, once
            assert record.content.count(token) == 1
        history = store.history("u1", record.memory_id)
        assert [v.revision for v in history] == list(range(1, 2 + len(written)))
    updates = sum(record.revision - 1 for record in records.values())
    assert updates == workers * threads * rounds
    # every write advanced memory_revision once: creates, confirmations, updates
    assert store.memory_revision("u1") == len(SHARED_KEYS) + confirmations + updates
    # the writers did collide, and each collision came back as a RevisionConflict
    assert sum(r["conflicts"] for r in reports.values()) > 0
    store.close()


def test_killed_writer_loses_nothing_acknowledged(postgres_dsn: str) -> None:
    PostgresStore(postgres_dsn).close()
    rng = random.Random(1919)
    acked: dict[str, tuple[int, str]] = {}
    start = 0
    for _ in range(3):
        proc = spawn("crash", postgres_dsn, str(start))
        assert proc.stdout is not None
        stop_after = rng.randint(1, 30)
        seen = 0
        for line in proc.stdout:
            _, memory_id, number, content = line.rstrip("\n").split(" ", 3)
            acked[memory_id] = (int(number), content)
            seen += 1
            if seen >= stop_after:
                proc.send_signal(signal.SIGKILL)
                break
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, err
        start += seen + 1000
    store = PostgresStore(postgres_dsn)
    for memory_id, (revision, content) in acked.items():
        record = store.get("u1", memory_id)
        assert record.revision >= revision
        versions = {v.revision: v.content for v in store.history("u1", memory_id)}
        assert versions[revision] == content
    for record in store.list_records("u1", limit=10_000):  # nothing half-written
        history = store.history("u1", record.memory_id)
        assert [v.revision for v in history] == list(range(1, record.revision + 1))
        assert history[-1].content == record.content
    store.close()


def test_writer_killed_inside_its_transaction(postgres_dsn: str) -> None:
    store = PostgresStore(postgres_dsn)
    rec = store.save(_new("held", "held_key", "before the kill"), datetime.now(UTC)).record
    revision_before = store.memory_revision("u1")
    proc = spawn("hold", postgres_dsn, rec.memory_id)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "IN-TX"  # rows written, lock held, no commit
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    # the server rolled the dead session back: nothing of the update is visible
    assert store.get("u1", rec.memory_id) == rec
    assert [v.content for v in store.history("u1", rec.memory_id)] == ["before the kill"]
    assert store.memory_revision("u1") == revision_before
    # and released the user's lock: the same user's next write goes through
    after = store.change(
        "u1",
        rec.memory_id,
        1,
        ContentChange(ChangeType.UPDATE, content="after the kill"),
        datetime.now(UTC),
    )
    assert after.revision == 2
    assert store.memory_revision("u1") == revision_before + 1
    store.close()
