"""No 5xx for bad input: Hypothesis sends malformed paths, queries and bodies to a real server.

The server runs in its own thread and trio run (``threaded_server``), so each example is
a plain synchronous request and one server serves every example of a test.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import ALICE_TOKEN, bearer, threaded_server

METHODS = st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"])
SEGMENTS = st.one_of(
    st.sampled_from(
        [
            "me",
            "core-memories",
            "memory-candidates",
            "memory-settings",
            "memories",
            "versions",
            "restore",
            "suppress",
            "accept",
            "reject",
            "1",
            "0",
            "-1",
            "99999999999999999999999",
            "%00",
            "%ff",
            "%2F",
            "..",
            ".",
            "%C3%A9",
            "%E4%B8%AD",
        ]
    ),
    st.text(
        alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="/?#%"),
        max_size=12,
    ),
)
ROUTES = st.sampled_from(
    [
        "/me/core-memories",
        "/me/core-memories/{id}",
        "/me/core-memories/{id}/suppress",
        "/me/core-memories/{id}/restore",
        "/me/core-memories/{id}/versions",
        "/me/core-memories/{id}/versions/{id}/restore",
        "/me/memory-candidates",
        "/me/memory-candidates/{id}/accept",
        "/me/memory-candidates/{id}/reject",
        "/me/memory-settings",
        "/me/memories",
        "/me/memories/{id}",
    ]
)
REAL_PATHS = st.builds(lambda route, seg: route.replace("{id}", seg or "x"), ROUTES, SEGMENTS)
PATHS = st.one_of(
    REAL_PATHS, st.lists(SEGMENTS, min_size=1, max_size=7).map(lambda s: "/" + "/".join(s))
)
QUERIES = st.dictionaries(
    st.sampled_from(["limit", "cursor", "status", "scope_type", "workspace_type", "x"]),
    st.text(max_size=20),
    max_size=3,
)
FIELDS = [
    "key",
    "content",
    "category",
    "expected_revision",
    "memory_key",
    "scope_type",
    "workspace_type",
    "saved_memory_enabled",
    "auto_extract_enabled",
    "review_after",
    "expires_at",
    "zzz",
]
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
OBJECTS = st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=5)
BODIES = st.one_of(
    st.binary(max_size=200),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    OBJECTS.map(lambda d: json.dumps(d).encode()),
    OBJECTS.map(lambda d: json.dumps(d).encode()[:-1]),  # truncated JSON
)
FUZZ = settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[httpx.Client]:
    """A synchronous client of alice against a threaded real server."""
    with (
        threaded_server(tmp_path) as server,
        httpx.Client(base_url=server.url, headers=bearer(ALICE_TOKEN)) as c,
    ):
        yield c


@FUZZ
@given(method=METHODS, path=PATHS, query=QUERIES, body=BODIES)
def test_no_input_gets_a_5xx(
    client: httpx.Client, method: str, path: str, query: dict[str, str], body: bytes
) -> None:
    parts = urlsplit(str(client.base_url))
    url = httpx.URL(
        scheme=parts.scheme, host=parts.hostname, port=parts.port, raw_path=path.encode()
    ).copy_merge_params(query)
    r = client.request(method, url, content=body)
    assert r.status_code < 500, (method, path, query, body, r.text)
    if r.status_code >= 400 and r.headers.get("content-type") == "application/json":
        assert r.json()["message"]


@FUZZ
@given(fields=OBJECTS)
def test_json_of_any_shape_on_real_ids_gets_no_5xx(
    client: httpx.Client, fields: dict[str, object]
) -> None:
    made = client.post("/me/core-memories", json={"key": "f", "content": "fz", "category": "x"})
    mid = made.json()["memory_id"]
    base = f"/me/core-memories/{mid}"
    for method, path in [
        ("POST", "/me/core-memories"),
        ("PATCH", base),
        ("POST", base + "/versions/1/restore"),
        ("POST", base + "/suppress"),
        ("PUT", "/me/memories"),
        ("PATCH", "/me/memory-settings"),
        ("POST", "/me/memory-candidates/none/accept"),
    ]:
        r = client.request(method, path, json=fields)
        assert r.status_code < 500, (method, path, fields, r.text)
