"""Writer processes for the PostgreSQL multi-process and crash tests (run as ``python -m``).

``contend DSN WORKER THREADS ROUNDS``: one store (a pool of THREADS connections) and
THREADS threads. Prints ``READY`` and waits for a line on stdin (so every process starts
together). Each thread saves both shared keys (one writer in all creates each), then makes
ROUNDS read-modify-write updates with ``expected_revision``, alternating keys, retrying on
conflict. Prints one JSON line: per thread, what its saves did, the revisions it wrote per
key, its tokens and the conflicts it saw.

``crash DSN START``: write forever (new memories and updates); after each commit print
``ACK <memory_id> <revision> <content>``. The test kills it with SIGKILL.

``hold DSN MEMORY_ID``: start an update of MEMORY_ID and, inside its transaction (the
user's lock held, version and current rows written, the audit row not yet), print
``IN-TX`` and wait on stdin forever. The test kills it there.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import UTC, datetime
from typing import Any

from memrecall.store import (
    ChangeType,
    ContentChange,
    KeyConflict,
    RevisionConflict,
)
from memrecall.store.postgres import PostgresStore

from .workers import _new, write_until_killed

SHARED_KEYS = ("shared_a", "shared_b")


def _thread(store: PostgresStore, name: str, rounds: int, out: dict[str, Any]) -> None:
    saved: dict[str, str] = {}
    for key in SHARED_KEYS:
        try:
            done = store.save(_new(f"mem-{key}-{name}", key, "start"), datetime.now(UTC))
            saved[key] = "created" if done.created else "same"
        except KeyConflict:
            saved[key] = "conflict"
    ids = {r.key: r.memory_id for r in store.list_records("u1")}
    wrote: dict[str, list[int]] = {key: [] for key in SHARED_KEYS}
    tokens: dict[str, list[str]] = {key: [] for key in SHARED_KEYS}
    conflicts = 0
    for n in range(rounds):
        key = SHARED_KEYS[n % len(SHARED_KEYS)]
        token = f"[{name}.{n}]"
        while True:
            current = store.get("u1", ids[key])
            change = ContentChange(ChangeType.UPDATE, content=current.content + token)
            try:
                done_rec = store.change(
                    "u1", current.memory_id, current.revision, change, datetime.now(UTC)
                )
            except RevisionConflict as e:
                if e.current_revision <= current.revision:
                    raise SystemExit("a conflict must carry a newer revision") from e
                conflicts += 1
                continue
            wrote[key].append(done_rec.revision)
            tokens[key].append(token)
            break
    out[name] = {"saved": saved, "revisions": wrote, "tokens": tokens, "conflicts": conflicts}


def contend(dsn: str, worker: str, threads: int, rounds: int) -> None:
    """Race the other workers' threads on the shared keys (module docstring)."""
    store = PostgresStore(dsn, min_connections=threads, max_connections=threads)
    print("READY", flush=True)
    sys.stdin.readline()
    out: dict[str, Any] = {}
    errors: list[BaseException] = []

    def run(name: str) -> None:
        try:
            _thread(store, name, rounds, out)
        except BaseException as exc:  # reported by the exit status below
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(f"{worker}t{t}",)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    store.close()
    if errors:
        raise errors[0]
    print(json.dumps(out), flush=True)


def crash(dsn: str, start: int) -> None:
    """Write until killed, acknowledging each commit on stdout (the SQLite worker's loop)."""
    write_until_killed(PostgresStore(dsn), start)


def hold(dsn: str, memory_id: str) -> None:
    """Stop inside an update's transaction until killed (module docstring)."""
    store = PostgresStore(dsn)

    def stop_here(*args: object) -> None:
        print("IN-TX", flush=True)
        sys.stdin.readline()
        raise SystemExit("stdin closed before the kill")

    store._audit = stop_here  # type: ignore[method-assign,assignment]  # a write's last step
    current = store.get("u1", memory_id)
    store.change(
        "u1",
        memory_id,
        current.revision,
        ContentChange(ChangeType.UPDATE, content="half-written update"),
        datetime.now(UTC),
    )


if __name__ == "__main__":
    if sys.argv[1] == "contend":
        contend(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif sys.argv[1] == "crash":
        crash(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "hold":
        hold(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]!r}")
