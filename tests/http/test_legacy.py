"""The legacy layer keeps the old client working (seed 002 §18.5, §20.1)."""

from __future__ import annotations

import trio

from .conftest import Server


async def _formal(server: Server, key: str, content: str, **scope: str) -> dict[str, object]:
    r = await server.alice.post(
        "/me/core-memories",
        json={"key": key, "content": content, "category": "preference", **scope},
    )
    assert r.status_code == 201
    data: dict[str, object] = r.json()
    return data


async def test_old_get_returns_only_global_with_the_old_fields(server: Server) -> None:
    await _formal(server, "editor", "uses vim")
    await _formal(server, "editor", "uses emacs", scope_type="workspace", workspace_type="research")
    hidden = await _formal(server, "theme", "dark")
    await server.alice.post(f"/me/core-memories/{hidden['memory_id']}/suppress")
    r = await server.alice.get("/me/memories")
    assert r.status_code == 200
    assert r.json() == {
        "memories": [{"memory_key": "editor", "content": "uses vim", "category": "preference"}]
    }


async def test_old_put_writes_global_and_overwrites_like_the_old_upsert(server: Server) -> None:
    body = {"memory_key": "editor", "content": "uses vim", "category": "preference"}
    r = await server.alice.put("/me/memories", json=body)
    assert (r.status_code, r.json()) == (200, body)
    r = await server.alice.put("/me/memories", json={**body, "content": "uses helix"})
    assert r.json()["content"] == "uses helix"
    formal = (await server.alice.get("/me/core-memories")).json()["items"]
    assert len(formal) == 1
    assert (formal[0]["scope_type"], formal[0]["revision"]) == ("global", 2)
    versions = await server.alice.get(f"/me/core-memories/{formal[0]['memory_id']}/versions")
    assert [v["content"] for v in versions.json()["items"]] == ["uses vim", "uses helix"]
    assert (await server.alice.put("/me/memories", json=body)).status_code == 200
    assert (await server.alice.get("/me/memories")).json()["memories"] == [body]


async def test_old_put_and_delete_never_touch_a_workspace_memory(server: Server) -> None:
    ws = await _formal(
        server, "editor", "uses emacs", scope_type="workspace", workspace_type="teaching"
    )
    body = {"memory_key": "editor", "content": "uses vim", "category": "preference"}
    await server.alice.put("/me/memories", json=body)
    r = await server.alice.delete("/me/memories/editor")
    assert r.status_code == 200
    assert (await server.alice.get("/me/memories")).json() == {"memories": []}
    kept = (await server.alice.get(f"/me/core-memories/{ws['memory_id']}")).json()
    assert (kept["content"], kept["revision"]) == ("uses emacs", 1)
    assert (await server.alice.delete("/me/memories/editor")).status_code == 404


async def test_old_delete_matches_the_key_as_the_store_normalises_it(server: Server) -> None:
    await server.alice.put(
        "/me/memories",
        json={"memory_key": "Preferred Editor", "content": "vim", "category": "preference"},
    )
    assert (await server.alice.delete("/me/memories/preferred-editor")).status_code == 200
    assert (await server.alice.get("/me/memories")).json() == {"memories": []}


async def test_old_put_on_a_suppressed_memory_shows_it_again(server: Server) -> None:
    made = await _formal(server, "editor", "uses vim")
    await server.alice.post(f"/me/core-memories/{made['memory_id']}/suppress")
    body = {"memory_key": "editor", "content": "uses vim", "category": "preference"}
    await server.alice.put("/me/memories", json=body)
    assert (await server.alice.get("/me/memories")).json()["memories"] == [body]


async def test_concurrent_old_puts_of_one_key_give_one_record(server: Server) -> None:
    results: list[int] = []

    async def put(i: int) -> None:
        r = await server.alice.put(
            "/me/memories",
            json={"memory_key": "editor", "content": f"uses editor {i}", "category": "tools"},
        )
        results.append(r.status_code)

    async with trio.open_nursery() as nursery:
        for i in range(6):
            nursery.start_soon(put, i)
    assert results == [200] * 6
    formal = (await server.alice.get("/me/core-memories")).json()["items"]
    assert len(formal) == 1
    versions = await server.service.history("alice", formal[0]["memory_id"])
    assert [v.revision for v in versions] == list(range(1, len(versions) + 1))
    assert len(versions) == 6  # every acknowledged write is a revision: none lost


async def test_legacy_is_per_user(server: Server) -> None:
    body = {"memory_key": "editor", "content": "uses vim", "category": "preference"}
    await server.alice.put("/me/memories", json=body)
    assert (await server.bob.get("/me/memories")).json() == {"memories": []}
    assert (await server.bob.delete("/me/memories/editor")).status_code == 404
    assert (await server.alice.get("/me/memories")).json()["memories"] == [body]


async def test_legacy_put_refuses_a_secret_without_echoing_it(server: Server) -> None:
    secret = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    r = await server.alice.put(
        "/me/memories", json={"memory_key": "key", "content": secret, "category": "tools"}
    )
    assert r.status_code == 403
    assert secret not in r.text
    assert (await server.alice.get("/me/memories")).json() == {"memories": []}
