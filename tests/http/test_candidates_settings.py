"""Candidates (accept with edits, reject) and the settings switches over real HTTP."""

from __future__ import annotations

from typing import Any

from memrecall.governance import ScopeType, WriteOrigin
from memrecall.store.governed import SaveResult

from .conftest import Server


async def _propose(
    server: Server, key: str = "editor", content: str = "likes vim", user: str = "alice"
) -> str:
    """An agent infers a memory: a pending candidate (what the inbox shows)."""
    result = await server.governed.save(
        server.ctx(user),
        key,
        content,
        "preference",
        ScopeType.GLOBAL,
        origin=WriteOrigin.MODEL_INFERRED,
    )
    assert isinstance(result, SaveResult)
    assert result.candidate is not None
    return result.candidate.candidate_id


async def test_inbox_lists_pending_candidates_with_content(server: Server) -> None:
    cid = await _propose(server)
    page = (await server.alice.get("/me/memory-candidates")).json()
    assert [(c["candidate_id"], c["content"], c["status"]) for c in page["items"]] == [
        (cid, "likes vim", "pending")
    ]
    assert (await server.bob.get("/me/memory-candidates")).json()["items"] == []


async def test_accept_with_edits_of_content_category_and_scope(server: Server) -> None:
    cid = await _propose(server)
    r = await server.alice.post(
        f"/me/memory-candidates/{cid}/accept",
        json={
            "content": "likes vim keys",
            "category": "tools",
            "scope_type": "workspace",
            "workspace_type": "learning",
        },
    )
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    memory = body["memory"]
    assert (memory["content"], memory["category"]) == ("likes vim keys", "tools")
    assert (memory["scope_type"], memory["workspace_type"]) == ("workspace", "learning")
    assert memory["source_type"] == "confirmed"
    assert body["candidate"]["status"] == "accepted"
    assert body["candidate"]["content"] is None  # a decided candidate holds no content
    again = await server.alice.post(f"/me/memory-candidates/{cid}/accept")
    assert (again.status_code, again.json()["error"]) == (409, "candidate_decided")


async def test_accept_without_a_body_takes_the_proposal(server: Server) -> None:
    cid = await _propose(server)
    r = await server.alice.post(f"/me/memory-candidates/{cid}/accept")
    assert r.status_code == 200
    assert r.json()["memory"]["content"] == "likes vim"


async def test_accept_of_a_secret_edit_is_refused_and_audited(server: Server) -> None:
    cid = await _propose(server)
    r = await server.alice.post(
        f"/me/memory-candidates/{cid}/accept",
        json={"content": "my password is Tr0ub4dor&3xyz"},
    )
    assert r.status_code == 403
    assert (r.json()["reason"], r.json()["secret_kind"]) == ("secret", "password")
    assert "Tr0ub4dor" not in r.text
    events = await server.service.governance_events("alice")
    denied = [e for e in events if e.event_type == "memory.policy_denied"]
    assert [e.details["tool"] for e in denied] == ["management_api"]
    pending = (await server.alice.get("/me/memory-candidates")).json()["items"]
    assert [c["candidate_id"] for c in pending] == [cid]


async def test_reject_keeps_nothing_but_the_fingerprint(server: Server) -> None:
    cid = await _propose(server)
    r = await server.alice.post(f"/me/memory-candidates/{cid}/reject")
    assert r.status_code == 200
    assert (r.json()["candidate"]["status"], r.json()["candidate"]["content"]) == (
        "rejected",
        None,
    )
    assert (await server.alice.get("/me/memory-candidates")).json()["items"] == []
    rejected = await server.alice.get("/me/memory-candidates", params={"status": "rejected"})
    assert [c["candidate_id"] for c in rejected.json()["items"]] == [cid]
    # the same proposal again is skipped: the user said no
    result = await server.governed.save(
        server.ctx(),
        "editor",
        "likes vim",
        "preference",
        ScopeType.GLOBAL,
        origin=WriteOrigin.MODEL_INFERRED,
    )
    assert isinstance(result, SaveResult)
    assert result.kind == "already_rejected"


async def test_another_users_candidate_is_not_found(server: Server) -> None:
    cid = await _propose(server)
    for action in ("accept", "reject"):
        r = await server.bob.post(f"/me/memory-candidates/{cid}/{action}")
        assert r.status_code == 404
    unknown = await server.alice.post("/me/memory-candidates/nope/reject")
    assert unknown.status_code == 404


async def test_candidate_pagination(server: Server) -> None:
    made = [await _propose(server, key=f"k{i}", content=f"likes thing {i}") for i in range(5)]
    first = (await server.alice.get("/me/memory-candidates", params={"limit": 2})).json()
    second = (
        await server.alice.get(
            "/me/memory-candidates", params={"limit": 2, "cursor": first["next_cursor"]}
        )
    ).json()
    third = (
        await server.alice.get(
            "/me/memory-candidates", params={"limit": 2, "cursor": second["next_cursor"]}
        )
    ).json()
    seen = [c["candidate_id"] for p in (first, second, third) for c in p["items"]]
    assert sorted(seen) == sorted(made)
    assert third["next_cursor"] is None


async def test_settings_get_and_patch(server: Server) -> None:
    r = await server.alice.get("/me/memory-settings")
    assert r.json() == {"saved_memory_enabled": True, "auto_extract_enabled": True}
    r = await server.alice.patch("/me/memory-settings", json={"auto_extract_enabled": False})
    assert r.json() == {"saved_memory_enabled": True, "auto_extract_enabled": False}
    assert (await server.service.get_settings("alice")).auto_extract_enabled is False
    assert (await server.bob.get("/me/memory-settings")).json()["auto_extract_enabled"] is True
    # the agent may no longer propose for alice
    result = await server.governed.save(
        server.ctx(),
        "k",
        "likes tea",
        "preference",
        ScopeType.GLOBAL,
        origin=WriteOrigin.MODEL_INFERRED,
    )
    assert not isinstance(result, SaveResult)
    for bad in ({}, {"saved_memory_enabled": 1}, {"saved_memory_enabled": "yes"}, {"x": True}):
        r = await server.alice.patch("/me/memory-settings", json=bad)
        assert r.status_code == 422, bad


async def test_saved_memory_off_stops_the_agent_not_the_manager(server: Server) -> None:
    await server.alice.patch("/me/memory-settings", json={"saved_memory_enabled": False})
    r = await server.alice.post(
        "/me/core-memories", json={"key": "k", "content": "likes tea", "category": "preference"}
    )
    assert r.status_code == 201  # the user may still manage their memories by hand
    result = await server.governed.search(server.ctx(), "tea")
    assert not hasattr(result, "hits")  # the agent reads nothing


async def test_a_changed_target_rebases_the_candidate_with_409(server: Server) -> None:
    made = await server.alice.post(
        "/me/core-memories", json={"key": "editor", "content": "likes vim", "category": "pref"}
    )
    mid = made.json()["memory_id"]
    cid = await _propose(server, content="likes vim and tmux")
    r = await server.alice.post(
        f"/me/memory-candidates/{cid}/accept",
        json={"scope_type": "workspace", "workspace_type": "research"},
    )
    assert (r.status_code, r.json()["error"]) == (422, "invalid_input")  # scope: new ones only
    await server.alice.patch(
        f"/me/core-memories/{mid}", json={"content": "likes helix", "expected_revision": 1}
    )
    r = await server.alice.post(f"/me/memory-candidates/{cid}/accept")
    assert r.status_code == 409
    body = r.json()
    assert (body["error"], body["rebased"]) == ("candidate_rebased", True)
    assert (body["candidate"]["status"], body["candidate"]["expected_revision"]) == ("pending", 2)
    current = (await server.alice.get(f"/me/core-memories/{mid}")).json()
    assert (current["content"], current["revision"]) == ("likes helix", 2)  # never overwritten
    assert body["memory"] in (None, current)
    r = await server.alice.post(f"/me/memory-candidates/{cid}/accept")
    assert r.status_code == 200
    assert (r.json()["memory"]["content"], r.json()["memory"]["revision"]) == (
        "likes vim and tmux",
        3,
    )
