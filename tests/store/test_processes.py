"""Several processes on one database: no lost update, no duplicate record, conflicts
reported; and a writer killed with SIGKILL at random points loses nothing it acknowledged."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from memrecall.store import SQLiteStore

from .workers import SHARED_KEY

ROOT = Path(__file__).resolve().parents[2]


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.workers", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_processes_racing_on_one_key(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    SQLiteStore(db).close()  # schema first, so the workers race on data only
    workers, rounds = 4, 12
    procs = [spawn("contend", db, f"w{n}", str(rounds)) for n in range(workers)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    store = SQLiteStore(db)
    (record,) = store.list_records("u1")  # no duplicate record for the key
    assert record.key == SHARED_KEY
    saves = [r["saved"] for r in reports]
    assert saves.count("created") == 1
    written = sorted(rev for r in reports for rev in r["revisions"])
    # every acknowledged update has its own revision: none overwrote another
    assert written == list(range(2, 2 + workers * rounds))
    assert record.revision == 1 + workers * rounds
    for r in reports:  # no lost update: every token is in the final content, once
        for n in range(rounds):
            assert record.content.count(f"[{r['worker']}.{n}]") == 1
    history = store.history("u1", record.memory_id)
    assert [v.revision for v in history] == list(range(1, 2 + workers * rounds))
    # an idempotent save (same content) is a confirmation: it advances memory_revision too
    assert store.memory_revision("u1") == 1 + workers * rounds + saves.count("same")
    store.close()


def test_killed_writer_loses_nothing_acknowledged(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    SQLiteStore(db).close()
    rng = random.Random(1313)
    acked: dict[str, tuple[int, str]] = {}
    start = 0
    for _ in range(4):
        proc = spawn("crash", db, str(start))
        assert proc.stdout is not None
        stop_after = rng.randint(1, 40)
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
        conn = sqlite3.connect(db)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()
    store = SQLiteStore(db)
    for memory_id, (revision, content) in acked.items():
        record = store.get("u1", memory_id)
        assert record.revision >= revision
        versions = {v.revision: v.content for v in store.history("u1", memory_id)}
        assert versions[revision] == content
    store.close()
