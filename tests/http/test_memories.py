"""The formal memory endpoints over real HTTP (seed 002 §20.1)."""

from __future__ import annotations

from typing import Any

from memrecall.store import AuditType

from .conftest import Server


async def _create(server: Server, **fields: Any) -> dict[str, Any]:
    body = {"key": "editor", "content": "uses vim", "category": "preference", **fields}
    r = await server.alice.post("/me/core-memories", json=body)
    assert r.status_code == 201, r.text
    data: dict[str, Any] = r.json()
    return data


async def test_create_get_and_list(server: Server) -> None:
    made = await _create(server, key="Preferred Editor")
    assert made["key"] == "preferred_editor"
    assert (made["revision"], made["status"], made["scope_type"]) == (1, "active", "global")
    r = await server.alice.get(f"/me/core-memories/{made['memory_id']}")
    assert r.json() == made
    listed = (await server.alice.get("/me/core-memories")).json()
    assert listed == {"items": [made], "next_cursor": None}
    again = await server.alice.post(
        "/me/core-memories",
        json={"key": "preferred editor", "content": "uses vim", "category": "preference"},
    )
    assert again.status_code == 200  # same content under the same key: idempotent
    assert again.json()["memory_id"] == made["memory_id"]


async def test_create_other_content_under_a_taken_key_is_a_key_conflict(server: Server) -> None:
    made = await _create(server)
    r = await server.alice.post(
        "/me/core-memories", json={"key": "editor", "content": "emacs", "category": "preference"}
    )
    assert r.status_code == 409
    assert r.json()["error"] == "key_conflict"
    assert (r.json()["memory_id"], r.json()["current_revision"]) == (made["memory_id"], 1)


async def test_update_requires_expected_revision_and_a_stale_one_is_409(server: Server) -> None:
    made = await _create(server)
    url = f"/me/core-memories/{made['memory_id']}"
    missing = await server.alice.patch(url, json={"content": "uses helix"})
    assert missing.status_code == 422
    assert "expected_revision" in missing.json()["message"]
    ok = await server.alice.patch(url, json={"content": "uses helix", "expected_revision": 1})
    assert ok.status_code == 200
    assert (ok.json()["revision"], ok.json()["content"]) == (2, "uses helix")
    stale = await server.alice.patch(url, json={"content": "uses nano", "expected_revision": 1})
    assert stale.status_code == 409
    assert stale.json()["error"] == "revision_conflict"
    assert stale.json()["current_revision"] == 2
    assert (await server.alice.get(url)).json()["content"] == "uses helix"


async def test_suppress_restore_keep_the_revision_and_hide_from_search(server: Server) -> None:
    made = await _create(server)
    url = f"/me/core-memories/{made['memory_id']}"
    r = await server.alice.post(url + "/suppress")
    assert (r.status_code, r.json()["status"], r.json()["revision"]) == (200, "suppressed", 1)
    hits = await server.service.search("alice", None, "vim")
    assert hits.hits == ()
    r = await server.alice.post(url + "/restore")
    assert (r.status_code, r.json()["status"]) == (200, "active")
    hits = await server.service.search("alice", None, "vim")
    assert [h.memory_id for h in hits.hits] == [made["memory_id"]]
    types = [e.type for e in await server.service.audit("alice", made["memory_id"])]
    assert types == [AuditType.CREATED, AuditType.SUPPRESSED, AuditType.RESTORED]


async def test_versions_and_restore_a_version(server: Server) -> None:
    made = await _create(server)
    url = f"/me/core-memories/{made['memory_id']}"
    await server.alice.patch(url, json={"content": "uses helix", "expected_revision": 1})
    versions = (await server.alice.get(url + "/versions")).json()
    assert [(v["revision"], v["content"]) for v in versions["items"]] == [
        (1, "uses vim"),
        (2, "uses helix"),
    ]
    assert versions["items"][0]["changed_via"] == "user_api"
    stale = await server.alice.post(url + "/versions/1/restore", json={"expected_revision": 1})
    assert (stale.status_code, stale.json()["current_revision"]) == (409, 2)
    r = await server.alice.post(url + "/versions/1/restore", json={"expected_revision": 2})
    assert (r.status_code, r.json()["revision"], r.json()["content"]) == (200, 3, "uses vim")
    gone = await server.alice.post(url + "/versions/9/restore", json={"expected_revision": 3})
    assert gone.status_code == 404
    paged = (await server.alice.get(url + "/versions", params={"limit": 2})).json()
    assert [v["revision"] for v in paged["items"]] == [1, 2]
    rest = await server.alice.get(url + "/versions", params={"cursor": paged["next_cursor"]})
    assert [v["revision"] for v in rest.json()["items"]] == [3]
    assert rest.json()["next_cursor"] is None


async def test_forget_is_final(server: Server) -> None:
    made = await _create(server)
    url = f"/me/core-memories/{made['memory_id']}"
    r = await server.alice.delete(url)
    assert (r.status_code, r.json()["forgotten"]) == (200, True)
    assert (await server.alice.get(url)).status_code == 404
    assert (await server.alice.get(url + "/versions")).status_code == 404
    assert (await server.alice.delete(url)).status_code == 404
    assert await server.service.tombstone("alice", made["memory_id"]) is not None


async def test_workspace_scope_and_filters(server: Server) -> None:
    g = await _create(server)
    w = await _create(server, scope_type="workspace", workspace_type="research")
    assert (w["scope_type"], w["workspace_type"]) == ("workspace", "research")
    only_ws = await server.alice.get(
        "/me/core-memories", params={"scope_type": "workspace", "workspace_type": "research"}
    )
    assert [m["memory_id"] for m in only_ws.json()["items"]] == [w["memory_id"]]
    only_global = await server.alice.get("/me/core-memories", params={"scope_type": "global"})
    assert [m["memory_id"] for m in only_global.json()["items"]] == [g["memory_id"]]
    bad = await server.alice.post(
        "/me/core-memories",
        json={"key": "k", "content": "c", "category": "x", "scope_type": "workspace"},
    )
    assert bad.status_code == 422


async def test_list_pagination_walks_every_record_once(server: Server) -> None:
    made = {(await _create(server, key=f"k{i}", content=f"c{i}"))["memory_id"] for i in range(7)}
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = (await server.alice.get("/me/core-memories", params=params)).json()
        seen += [m["memory_id"] for m in page["items"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert sorted(seen) == sorted(made)
    assert len(seen) == len(set(seen))
    for bad in ("0", "201", "x", "-1"):
        r = await server.alice.get("/me/core-memories", params={"limit": bad})
        assert r.status_code == 400


async def test_status_filter(server: Server) -> None:
    a = await _create(server, key="a")
    b = await _create(server, key="b", content="other")
    await server.alice.post(f"/me/core-memories/{a['memory_id']}/suppress")
    r = await server.alice.get("/me/core-memories", params={"status": "suppressed"})
    assert [m["memory_id"] for m in r.json()["items"]] == [a["memory_id"]]
    r = await server.alice.get("/me/core-memories", params={"status": "active"})
    assert [m["memory_id"] for m in r.json()["items"]] == [b["memory_id"]]


async def test_reads_are_audited_like_the_tools_without_content(server: Server) -> None:
    made = await _create(server, content="uses a very particular editor")
    await server.alice.get("/me/core-memories")
    await server.alice.get(f"/me/core-memories/{made['memory_id']}")
    await server.alice.get("/me/memories")
    events = [
        e for e in await server.service.governance_events("alice") if e.event_type == "memory.read"
    ]
    assert len(events) == 3
    assert {e.details["tool"] for e in events} == {"management_api"}
    assert all(e.details["memory_ids"] == made["memory_id"] for e in events)
    assert not any("particular" in str(e.details) for e in events)
