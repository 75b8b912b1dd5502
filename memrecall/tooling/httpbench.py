"""``memrecall bench http``: the management API under concurrent load, on loopback.

A real server (:func:`memrecall.http.serve`, Hypercorn on trio, a fresh durable SQLite file
in a temporary directory) and ``clients`` concurrent HTTP clients (httpx, one connection
each) run in one process for ``duration`` seconds. Each client, seeded, repeats a mixed
workload against one user:

| share | request |
| ---: | --- |
| 30% | ``GET /me/core-memories?limit=50`` |
| 20% | ``GET /me/core-memories/{id}`` (one of its own) |
| 25% | ``PATCH /me/core-memories/{id}`` of its own memory, at the revision it last saw |
| 10% | ``PATCH`` of one of two memories every client edits (409s expected: they race) |
| 5% | ``POST /me/core-memories`` (a new memory) |
| 5% | ``GET /me/memories`` (legacy) |
| 5% | ``PUT /me/memories`` (legacy upsert of its own key) |

Then every memory that received an acknowledged write is read back with its versions:
*lost* counts acknowledged writes whose (revision, content) is not in the history (or, for
a legacy PUT, is not the final content); *skipped* counts memories whose revisions are not
exactly 1..N or whose N - 1 later revisions do not each match one acknowledged write. The
targets: 0 responses with a 5xx status, 0 lost, 0 skipped.

Clients and server share one trio thread (the store works in worker threads), so the
numbers are the whole stack on one core, not the server alone. Nothing is asserted here.
"""

from __future__ import annotations

import functools
import json
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import attrs
import httpx
import trio

from memrecall.http import TokenTable, build_app, serve
from memrecall.store import MemoryService, SQLiteStore
from memrecall.tooling.storebench import percentile
from memrecall.tooling.tables import markdown_table

__all__ = [
    "DEFAULT_CLIENTS",
    "DEFAULT_DURATION",
    "HttpBenchResult",
    "http_bench_main",
    "run_http_bench",
]

DEFAULT_CLIENTS = 8
DEFAULT_DURATION = 10.0
_TOKEN = "bench-token-0123456789abcdef"
_SHARED = 2


@attrs.frozen
class EndpointRow:
    """One endpoint's line of the table."""

    endpoint: str
    requests: int
    per_second: float
    p50_ms: float
    p99_ms: float
    conflicts: int
    server_errors: int


@attrs.frozen
class HttpBenchResult:
    """The table, the totals and the durability check."""

    clients: int
    duration_s: float
    rows: tuple[EndpointRow, ...]
    requests: int
    per_second: float
    server_errors: int
    transport_errors: int
    acknowledged_writes: int
    lost_writes: int
    skipped_revisions: int

    @property
    def ok(self) -> bool:
        """No 5xx, no transport error, nothing lost, nothing skipped."""
        return (
            not (self.server_errors or self.transport_errors or self.lost_writes)
            and not self.skipped_revisions
        )


@attrs.define
class _Log:
    latencies: dict[str, list[float]] = attrs.field(factory=lambda: defaultdict(list))
    conflicts: dict[str, int] = attrs.field(factory=lambda: defaultdict(int))
    server_errors: dict[str, int] = attrs.field(factory=lambda: defaultdict(int))
    transport_errors: int = 0
    # memory_id -> [(revision, content)] acknowledged by a 200/201
    acks: dict[str, list[tuple[int, str]]] = attrs.field(factory=lambda: defaultdict(list))
    # legacy key -> last acknowledged content (one writer per key)
    legacy: dict[str, str] = attrs.field(factory=dict)

    async def call(
        self, client: httpx.AsyncClient, name: str, method: str, url: str, **kw: Any
    ) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = await client.request(method, url, **kw)
        except httpx.HTTPError:
            self.transport_errors += 1
            return None
        self.latencies[name].append((time.perf_counter() - started) * 1000)
        if response.status_code >= 500:
            self.server_errors[name] += 1
        elif response.status_code == 409:
            self.conflicts[name] += 1
        return response

    def ack(self, response: httpx.Response | None) -> dict[str, Any] | None:
        if response is None or response.status_code not in (200, 201):
            return None
        body: dict[str, Any] = response.json()
        self.acks[body["memory_id"]].append((body["revision"], body["content"]))
        return body


async def _client(
    client: httpx.AsyncClient,
    log: _Log,
    *,
    number: int,
    seed: int,
    shared: list[str],
    deadline: float,
) -> None:
    rng = random.Random(seed * 1000 + number)
    own: dict[str, int] = {}  # memory_id -> revision last acknowledged
    seen_shared = dict.fromkeys(shared, 1)
    writes = 0

    async def create() -> None:
        nonlocal writes
        writes += 1
        body = {"key": f"c{number}-{writes}", "content": f"c{number} w{writes}", "category": "b"}
        made = log.ack(
            await log.call(client, "POST /me/core-memories", "POST", "/me/core-memories", json=body)
        )
        if made is not None:
            own[made["memory_id"]] = made["revision"]

    for _ in range(3):
        await create()
    while time.monotonic() < deadline:
        roll = rng.random()
        if roll < 0.30:
            await log.call(client, "GET /me/core-memories", "GET", "/me/core-memories?limit=50")
        elif roll < 0.50 and own:
            mid = rng.choice(sorted(own))
            await log.call(client, "GET /me/core-memories/{id}", "GET", f"/me/core-memories/{mid}")
        elif roll < 0.75 and own:
            mid = rng.choice(sorted(own))
            writes += 1
            body = {"content": f"c{number} w{writes}", "expected_revision": own[mid]}
            done = log.ack(
                await log.call(
                    client,
                    "PATCH /me/core-memories/{id}",
                    "PATCH",
                    f"/me/core-memories/{mid}",
                    json=body,
                )
            )
            if done is not None:
                own[mid] = done["revision"]
        elif roll < 0.85:
            mid = rng.choice(shared)
            writes += 1
            body = {"content": f"c{number} w{writes}", "expected_revision": seen_shared[mid]}
            r = await log.call(
                client, "PATCH (shared)", "PATCH", f"/me/core-memories/{mid}", json=body
            )
            done = log.ack(r)
            if done is not None:
                seen_shared[mid] = done["revision"]
            elif r is not None and r.status_code == 409:
                seen_shared[mid] = r.json()["current_revision"]
        elif roll < 0.90:
            await create()
        elif roll < 0.95:
            await log.call(client, "GET /me/memories", "GET", "/me/memories")
        else:
            writes += 1
            key = f"legacy-{number}"
            content = f"c{number} w{writes}"
            body = {"memory_key": key, "content": content, "category": "b"}
            r = await log.call(client, "PUT /me/memories", "PUT", "/me/memories", json=body)
            if r is not None and r.status_code == 200:
                log.legacy[r.json()["memory_key"]] = content


async def _verify(client: httpx.AsyncClient, log: _Log) -> tuple[int, int]:
    """(lost, skipped) after the run, from the server's own answers."""
    lost = skipped = 0
    for mid, acks in log.acks.items():
        versions: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {"limit": "200", **({"cursor": cursor} if cursor else {})}
            page = (await client.get(f"/me/core-memories/{mid}/versions", params=params)).json()
            versions += page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        history = {(v["revision"], v["content"]) for v in versions}
        lost += sum(1 for ack in set(acks) if ack not in history)
        revisions = [v["revision"] for v in versions]
        acked_revisions = sorted({rev for rev, _ in acks})
        if revisions != list(range(1, len(revisions) + 1)) or acked_revisions != revisions:
            skipped += 1
    legacy = {
        m["memory_key"]: m["content"] for m in (await client.get("/me/memories")).json()["memories"]
    }
    lost += sum(1 for key, content in log.legacy.items() if legacy.get(key) != content)
    return lost, skipped


async def run_http_bench(
    clients: int = DEFAULT_CLIENTS, duration: float = DEFAULT_DURATION, *, seed: int = 0
) -> HttpBenchResult:
    """Serve a fresh database, load it for ``duration`` seconds, check what was acknowledged."""
    with tempfile.TemporaryDirectory(prefix="memrecall-httpbench-") as tmp:
        service = MemoryService(SQLiteStore(Path(tmp) / "bench.db"))
        app = build_app(service, TokenTable.from_specs([f"{_TOKEN}=bench"]))
        log = _Log()
        headers = {"Authorization": f"Bearer {_TOKEN}"}
        limits = httpx.Limits(max_connections=1)
        try:
            async with trio.open_nursery() as nursery:
                url = await nursery.start(functools.partial(serve, app, port=0))
                async with httpx.AsyncClient(base_url=url, headers=headers) as admin:
                    shared = []
                    for i in range(_SHARED):
                        body = {"key": f"shared-{i}", "content": "shared v1", "category": "b"}
                        made = log.ack(await admin.post("/me/core-memories", json=body))
                        assert made is not None
                        shared.append(made["memory_id"])
                    started = time.monotonic()
                    deadline = started + duration
                    async with trio.open_nursery() as load:
                        for number in range(clients):
                            c = httpx.AsyncClient(
                                base_url=url, headers=headers, limits=limits, timeout=60
                            )
                            load.start_soon(
                                functools.partial(
                                    _run_one,
                                    c,
                                    log,
                                    number=number,
                                    seed=seed,
                                    shared=shared,
                                    deadline=deadline,
                                )
                            )
                    elapsed = time.monotonic() - started
                    lost, skipped = await _verify(admin, log)
                nursery.cancel_scope.cancel()
        finally:
            service.close()
    rows = []
    for name in sorted(log.latencies):
        values = log.latencies[name]
        rows.append(
            EndpointRow(
                name,
                len(values),
                len(values) / elapsed,
                percentile(values, 0.50),
                percentile(values, 0.99),
                log.conflicts[name],
                log.server_errors[name],
            )
        )
    total = sum(r.requests for r in rows)
    return HttpBenchResult(
        clients=clients,
        duration_s=round(elapsed, 3),
        rows=tuple(rows),
        requests=total,
        per_second=total / elapsed,
        server_errors=sum(log.server_errors.values()),
        transport_errors=log.transport_errors,
        acknowledged_writes=sum(len(a) for a in log.acks.values()) + len(log.legacy),
        lost_writes=lost,
        skipped_revisions=skipped,
    )


async def _run_one(
    client: httpx.AsyncClient,
    log: _Log,
    *,
    number: int,
    seed: int,
    shared: list[str],
    deadline: float,
) -> None:
    async with client:
        await _client(client, log, number=number, seed=seed, shared=shared, deadline=deadline)


def _as_json(result: HttpBenchResult) -> dict[str, Any]:
    data: dict[str, Any] = attrs.asdict(result)
    data["rows"] = [attrs.asdict(r) for r in result.rows]
    data["ok"] = result.ok
    return data


def http_bench_main(
    clients: int = DEFAULT_CLIENTS,
    duration: float = DEFAULT_DURATION,
    *,
    seed: int = 0,
    as_json: bool = False,
) -> int:
    """Run the bench and print the table (or one JSON object); 1 when a check failed."""
    result = trio.run(functools.partial(run_http_bench, clients, duration, seed=seed))
    if as_json:
        print(json.dumps(_as_json(result), sort_keys=True))
        return 0 if result.ok else 1
    header = ["endpoint", "requests", "req/s", "p50 ms", "p99 ms", "409", "5xx"]
    cells = [
        [
            r.endpoint,
            str(r.requests),
            f"{r.per_second:.0f}",
            f"{r.p50_ms:.1f}",
            f"{r.p99_ms:.1f}",
            str(r.conflicts),
            str(r.server_errors),
        ]
        for r in result.rows
    ]
    cells.append(
        [
            "all",
            str(result.requests),
            f"{result.per_second:.0f}",
            "",
            "",
            "",
            str(result.server_errors),
        ]
    )
    print(f"{result.clients} clients, {result.duration_s:.1f} s on loopback")
    print("\n".join(markdown_table(header, cells)))
    print(
        f"acknowledged writes {result.acknowledged_writes}, lost {result.lost_writes}, "
        f"revision gaps {result.skipped_revisions}, transport errors {result.transport_errors}"
        f" -> {'ok' if result.ok else 'FAILED'}"
    )
    return 0 if result.ok else 1
