"""A Hypothesis state machine drives the formal and legacy endpoints against a plain model.

Each run serves a fresh database (``threaded_server``) and applies random creates, updates
at a right or stale revision, suppress/restore, version restores, forgets, and legacy PUT /
DELETE, from alice (and bob probing alice's ids). After every step the API's listing, the
legacy listing and each memory's versions must equal the model.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path

import httpx
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memrecall.store import normalize_key

from .conftest import ALICE_TOKEN, BOB_TOKEN, bearer, threaded_server

KEYS = st.sampled_from(["editor", "Editor", "theme", "tea-time", "lang"])
TEXTS = st.sampled_from(["vim", "emacs", "dark", "green tea", "python", "rust"])
SCOPES = st.sampled_from([("global", None), ("workspace", "research"), ("workspace", "learning")])


class Memory:
    """The model's view of one memory."""

    def __init__(self, key: str, scope: tuple[str, str | None], content: str) -> None:
        self.key = key
        self.scope = scope
        self.versions = [content]
        self.status = "active"

    @property
    def revision(self) -> int:
        return len(self.versions)


class ApiMachine(RuleBasedStateMachine):
    """Random management calls; the model says what the API must answer."""

    def __init__(self) -> None:
        super().__init__()
        self.stack = ExitStack()
        tmp = Path(self.stack.enter_context(tempfile.TemporaryDirectory()))
        server = self.stack.enter_context(threaded_server(tmp))
        self.alice = self.stack.enter_context(
            httpx.Client(base_url=server.url, headers=bearer(ALICE_TOKEN))
        )
        self.bob = self.stack.enter_context(
            httpx.Client(base_url=server.url, headers=bearer(BOB_TOKEN))
        )
        self.model: dict[str, Memory] = {}

    def teardown(self) -> None:
        self.stack.close()

    def _find(self, key: str, scope: tuple[str, str | None]) -> str | None:
        norm = normalize_key(key)
        for mid, m in self.model.items():
            if m.key == norm and m.scope == scope:
                return mid
        return None

    @rule(key=KEYS, content=TEXTS, scope=SCOPES)
    def create(self, key: str, content: str, scope: tuple[str, str | None]) -> None:
        body: dict[str, object] = {"key": key, "content": content, "category": "c"}
        body["scope_type"] = scope[0]
        if scope[1]:
            body["workspace_type"] = scope[1]
        r = self.alice.post("/me/core-memories", json=body)
        existing = self._find(key, scope)
        if existing is None:
            assert r.status_code == 201
            self.model[r.json()["memory_id"]] = Memory(normalize_key(key), scope, content)
        elif self.model[existing].versions[-1] == content:
            assert r.status_code == 200
        else:
            assert r.status_code == 409
            assert r.json()["current_revision"] == self.model[existing].revision

    @precondition(lambda self: self.model)
    @rule(data=st.data(), content=TEXTS, stale=st.booleans())
    def update(self, data: st.DataObject, content: str, stale: bool) -> None:
        mid = data.draw(st.sampled_from(list(self.model)))  # creation order: ids are random
        m = self.model[mid]
        expected = m.revision - 1 if stale and m.revision > 1 else m.revision
        r = self.alice.patch(
            f"/me/core-memories/{mid}", json={"content": content, "expected_revision": expected}
        )
        if expected != m.revision:
            assert (r.status_code, r.json()["current_revision"]) == (409, m.revision)
        else:
            assert r.status_code == 200
            m.versions.append(content)
            assert r.json()["revision"] == m.revision

    @precondition(lambda self: self.model)
    @rule(data=st.data(), suppress=st.booleans())
    def toggle(self, data: st.DataObject, suppress: bool) -> None:
        mid = data.draw(st.sampled_from(list(self.model)))  # creation order: ids are random
        action = "suppress" if suppress else "restore"
        r = self.alice.post(f"/me/core-memories/{mid}/{action}")
        assert r.status_code == 200
        self.model[mid].status = "suppressed" if suppress else "active"

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def restore_version(self, data: st.DataObject) -> None:
        mid = data.draw(st.sampled_from(list(self.model)))  # creation order: ids are random
        m = self.model[mid]
        revision = data.draw(st.integers(1, m.revision))
        r = self.alice.post(
            f"/me/core-memories/{mid}/versions/{revision}/restore",
            json={"expected_revision": m.revision},
        )
        assert r.status_code == 200
        m.versions.append(m.versions[revision - 1])

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        mid = data.draw(st.sampled_from(list(self.model)))  # creation order: ids are random
        assert self.bob.delete(f"/me/core-memories/{mid}").status_code == 404
        assert self.alice.delete(f"/me/core-memories/{mid}").status_code == 200
        del self.model[mid]
        assert self.alice.get(f"/me/core-memories/{mid}").status_code == 404

    @rule(key=KEYS, content=TEXTS)
    def legacy_put(self, key: str, content: str) -> None:
        r = self.alice.put(
            "/me/memories", json={"memory_key": key, "content": content, "category": "c"}
        )
        assert r.status_code == 200
        mid = self._find(key, ("global", None))
        if mid is None:
            listed = self.alice.get("/me/core-memories", params={"scope_type": "global"})
            known = set(self.model)
            new = [x for x in listed.json()["items"] if x["memory_id"] not in known]
            assert len(new) == 1
            self.model[new[0]["memory_id"]] = Memory(normalize_key(key), ("global", None), content)
        else:
            m = self.model[mid]
            if m.versions[-1] != content:
                m.versions.append(content)
            m.status = "active"

    @rule(key=KEYS)
    def legacy_delete(self, key: str) -> None:
        r = self.alice.delete(f"/me/memories/{key}")
        mid = self._find(key, ("global", None))
        if mid is None:
            assert r.status_code == 404
        else:
            assert r.status_code == 200
            del self.model[mid]

    @invariant()
    def api_equals_model(self) -> None:
        items = self.alice.get("/me/core-memories", params={"limit": 200}).json()["items"]
        seen = {
            x["memory_id"]: (
                x["key"],
                (x["scope_type"], x["workspace_type"]),
                x["content"],
                x["revision"],
                x["status"],
            )
            for x in items
        }
        assert seen == {
            mid: (m.key, m.scope, m.versions[-1], m.revision, m.status)
            for mid, m in self.model.items()
        }
        legacy = self.alice.get("/me/memories").json()["memories"]
        assert sorted((x["memory_key"], x["content"]) for x in legacy) == sorted(
            (m.key, m.versions[-1])
            for m in self.model.values()
            if m.scope == ("global", None) and m.status == "active"
        )
        assert self.bob.get("/me/core-memories").json()["items"] == []

    @invariant()
    def versions_are_every_revision_in_order(self) -> None:
        for mid, m in self.model.items():
            page = self.alice.get(f"/me/core-memories/{mid}/versions", params={"limit": 200})
            got = [(v["revision"], v["content"]) for v in page.json()["items"]]
            assert got == list(enumerate(m.versions, start=1))


ApiMachine.TestCase.settings = settings(max_examples=20, stateful_step_count=20, deadline=None)
TestApi = ApiMachine.TestCase
