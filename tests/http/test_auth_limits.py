"""Authentication, isolation, body limits, malformed input, the OpenAPI document."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import trio

from memrecall.http import MAX_BODY_BYTES, TokenError, TokenTable
from memrecall.http.openapi import OPERATIONS

from .conftest import ALICE_TOKEN, Server, bearer, start_server


async def test_missing_or_wrong_token_is_401(server: Server) -> None:
    for headers in ({}, bearer("wrong-token-0123456789"), {"Authorization": ALICE_TOKEN}):
        r = await server.anonymous.get("/me/core-memories", headers=headers)
        assert r.status_code == 401
        assert r.headers["www-authenticate"] == "Bearer"
        assert r.json()["error"] == "unauthorized"
    r = await server.anonymous.put(
        "/me/memories", json={"memory_key": "k", "content": "c", "category": "x"}
    )
    assert r.status_code == 401
    assert (await server.alice.get("/me/memories")).json() == {"memories": []}


async def test_another_users_memory_is_404_everywhere(server: Server) -> None:
    r = await server.alice.post(
        "/me/core-memories", json={"key": "k", "content": "mine", "category": "x"}
    )
    mid = r.json()["memory_id"]
    url = f"/me/core-memories/{mid}"
    answers = [
        await server.bob.get(url),
        await server.bob.patch(url, json={"content": "his", "expected_revision": 1}),
        await server.bob.delete(url),
        await server.bob.post(url + "/suppress"),
        await server.bob.post(url + "/restore"),
        await server.bob.get(url + "/versions"),
        await server.bob.post(url + "/versions/1/restore", json={"expected_revision": 1}),
    ]
    never = [
        await server.bob.get("/me/core-memories/0123456789abcdef0123456789abcdef"),
    ]
    assert [a.status_code for a in answers] == [404] * len(answers)
    # the same answer as for an id that never existed: no existence leak
    assert {a.json()["message"] for a in answers + never} == {"no such item"}
    kept = (await server.alice.get(url)).json()
    assert (kept["content"], kept["status"], kept["revision"]) == ("mine", "active", 1)


async def test_oversized_bodies_are_413(server: Server) -> None:
    big = b'{"key": "k", "content": "' + b"x" * MAX_BODY_BYTES + b'", "category": "x"}'
    r = await server.alice.post(
        "/me/core-memories", content=big, headers={"content-type": "application/json"}
    )
    assert (r.status_code, r.json()["error"]) == (413, "body_too_large")

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(MAX_BODY_BYTES // 4096 + 2):
            yield b"x" * 4096

    r = await server.alice.put("/me/memories", content=chunks())  # no Content-Length
    assert r.status_code == 413
    assert (await server.alice.get("/me/memories")).json() == {"memories": []}


async def test_a_content_of_the_largest_size_fits(server: Server) -> None:
    content = "\u4e2d" * 8000  # 8000 characters, 24000 bytes in UTF-8
    r = await server.alice.post(
        "/me/core-memories", json={"key": "k", "content": content, "category": "x"}
    )
    assert r.status_code == 201
    too_long = await server.alice.post(
        "/me/core-memories", json={"key": "j", "content": content + "x", "category": "x"}
    )
    assert too_long.status_code == 422


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/me/core-memories", b"{not json", 400),
        ("POST", "/me/core-memories", b"", 400),
        ("POST", "/me/core-memories", b"[]", 422),
        ("POST", "/me/core-memories", b'{"key": "k", "content": "c"}', 422),
        (
            "POST",
            "/me/core-memories",
            b'{"key": "k", "content": "c", "category": "x", "z": 1}',
            422,
        ),
        ("POST", "/me/core-memories", b'{"key": "!!!", "content": "c", "category": "x"}', 422),
        ("POST", "/me/core-memories", b'{"key": "k", "content": "a\\u0000", "category": "x"}', 422),
        ("PATCH", "/me/core-memories/x", b'{"expected_revision": 0, "content": "c"}', 422),
        ("PATCH", "/me/core-memories/x", b'{"expected_revision": "1", "content": "c"}', 422),
        ("PATCH", "/me/core-memories/x", b'{"expected_revision": 1}', 422),
        ("PUT", "/me/memories", b'{"memory_key": 5, "content": "c", "category": "x"}', 422),
        ("GET", "/me/core-memories?scope_type=nowhere", b"", 400),
        ("GET", "/me/memory-candidates?status=maybe", b"", 400),
        ("GET", "/me/core-memories/x/versions?cursor=abc", b"", 400),
        ("POST", "/me/core-memories/x/versions/abc/restore", b"{}", 404),
        ("DELETE", "/me/core-memories", b"", 405),
        ("GET", "/me/nothing-here", b"", 404),
    ],
)
async def test_malformed_input_is_a_clear_4xx(
    server: Server, method: str, path: str, body: bytes, status: int
) -> None:
    r = await server.alice.request(method, path, content=body)
    assert r.status_code == status, r.text
    assert r.json()["message"]


async def test_openapi_lists_exactly_the_served_routes(server: Server) -> None:
    doc = (await server.anonymous.get("/openapi.json")).json()
    assert doc["openapi"].startswith("3.")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    served = set()
    routes = server_routes(server)
    for path, methods in routes:
        served |= {(m, path) for m in methods if m != "HEAD"}
    assert documented == served
    assert {(o.method.upper(), o.path) for o in OPERATIONS} == served
    patch = doc["paths"]["/me/core-memories/{memory_id}"]["patch"]
    schema = doc["components"]["schemas"]["UpdateBody"]
    assert "expected_revision" in schema["required"]
    assert "409" in patch["responses"]


def server_routes(server: Server) -> list[tuple[str, set[str]]]:
    """The app's /me routes with their methods (from a fresh app: same table)."""
    from memrecall.http.routes import Api

    api = Api.__new__(Api)
    return [
        (r.path.replace("{revision:int}", "{revision}"), set(r.methods or ()))
        for r in Api.routes(api)
    ]


def test_token_table_keeps_only_hashes_and_checks_specs(tmp_path: Path) -> None:
    table = TokenTable.from_specs([f"{ALICE_TOKEN}=alice"])
    assert ALICE_TOKEN not in repr(table)
    assert all(ALICE_TOKEN.encode() not in digest for digest, _ in table.entries)
    assert table.user_for(ALICE_TOKEN) == "alice"
    assert table.user_for(ALICE_TOKEN + "x") is None
    assert table.user_for("") is None
    for bad in ([], ["short=alice"], [f"{ALICE_TOKEN}="], [ALICE_TOKEN], [f"{ALICE_TOKEN}=a b"]):
        with pytest.raises(TokenError):
            TokenTable.from_specs(bad)
    with pytest.raises(TokenError, match="twice"):
        TokenTable.from_specs([f"{ALICE_TOKEN}=alice", f"{ALICE_TOKEN}=bob"])
    f = tmp_path / "tokens"
    f.write_text(f"# users\n\n{ALICE_TOKEN}=alice\n", encoding="utf-8")
    assert TokenTable.from_file(f).user_for(ALICE_TOKEN) == "alice"
    f.write_text("# users\nshort=alice\n", encoding="utf-8")
    with pytest.raises(TokenError, match="line 2") as info:
        TokenTable.from_file(f)
    assert "short" not in str(info.value)


async def test_a_smaller_body_limit_is_honoured(tmp_path: Path, nursery: trio.Nursery) -> None:
    url, service = await start_server(tmp_path, nursery, max_body_bytes=64)
    async with httpx.AsyncClient(base_url=url, headers=bearer(ALICE_TOKEN)) as client:
        body = {"key": "k", "content": "x" * 64, "category": "x"}
        assert (await client.post("/me/core-memories", json=body)).status_code == 413
        small = {"key": "k", "content": "x", "category": "x"}
        assert (await client.post("/me/core-memories", json=small)).status_code == 201
    service.close()
