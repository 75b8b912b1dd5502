"""Writer processes for the multi-process and crash tests (run as ``python -m``).

``contend DB WORKER ROUNDS``: save the shared key (one process creates it), then ROUNDS
read-modify-write updates with ``expected_revision``, retrying on conflict. Prints one
JSON line: the revisions it wrote, its token, and the conflicts it saw.

``crash DB START``: write forever (new memories and updates); after each commit print
``ACK <memory_id> <revision> <content>`` and flush. The test kills it with SIGKILL.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

from memrecall.store import (
    ChangedVia,
    ChangeType,
    ContentChange,
    KeyConflict,
    MemoryScope,
    NewMemory,
    RevisionConflict,
    SourceType,
    SQLiteStore,
    Store,
)

SHARED_KEY = "shared_counter"


def _new(memory_id: str, key: str, content: str) -> NewMemory:
    return NewMemory(
        memory_id=memory_id,
        user_id="u1",
        scope=MemoryScope.global_(),
        key=key,
        content=content,
        category="test",
        source_type=SourceType.EXPLICIT,
        review_after=None,
        expires_at=None,
        changed_via=ChangedVia.USER_API,
    )


def contend(db: str, worker: str, rounds: int) -> None:
    """Race the other workers on one key (module docstring)."""
    store = SQLiteStore(db)
    try:
        out = store.save(_new(f"mem-{worker}", SHARED_KEY, "start"), datetime.now(UTC))
        saved = "created" if out.created else "same"
    except KeyConflict:
        saved = "conflict"
    (record,) = store.list_records("u1")
    wrote: list[int] = []
    conflicts = 0
    for n in range(rounds):
        token = f"[{worker}.{n}]"
        while True:
            current = store.get("u1", record.memory_id)
            change = ContentChange(ChangeType.UPDATE, content=current.content + token)
            try:
                done = store.change(
                    "u1", record.memory_id, current.revision, change, datetime.now(UTC)
                )
            except RevisionConflict as e:
                if e.current_revision <= current.revision:
                    raise SystemExit("a conflict must carry a newer revision") from e
                conflicts += 1
                continue
            wrote.append(done.revision)
            break
    store.close()
    print(
        json.dumps({"worker": worker, "saved": saved, "revisions": wrote, "conflicts": conflicts}),
        flush=True,
    )


def crash(db: str, start: int) -> None:
    """Write until killed, acknowledging each commit on stdout."""
    write_until_killed(SQLiteStore(db), start)


def write_until_killed(store: Store, start: int) -> None:
    """The crash writer's loop over any backend: new memories, and every third write an
    update of the last one; ``ACK <memory_id> <revision> <content>`` after each commit."""
    last: tuple[str, int] | None = None
    i = start
    while True:
        now = datetime.now(UTC)
        if last is not None and i % 3 == 0:
            content = f"update {i} " + "x" * (i % 50)
            rec = store.change(
                "u1", last[0], last[1], ContentChange(ChangeType.UPDATE, content=content), now
            )
        else:
            content = f"memory {i} " + "y" * (i % 70)
            rec = store.save(_new(f"crash-{i:06d}", f"key_{i}", content), now).record
        last = (rec.memory_id, rec.revision)
        print(f"ACK {rec.memory_id} {rec.revision} {content}", flush=True)
        i += 1


if __name__ == "__main__":
    if sys.argv[1] == "contend":
        contend(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "crash":
        crash(sys.argv[2], int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown mode {sys.argv[1]!r}")
