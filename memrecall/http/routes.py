"""The endpoints of the management API (seed 002 §20.1; docs/api.md).

"me" is always the user the bearer token authenticates; no endpoint takes a user id.
Lists are paginated with ``limit`` (1 to :data:`~.schemas.MAX_LIMIT`, default 50) and an
opaque ``cursor`` (the ``next_cursor`` of the previous page; null when there is no more).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memrecall.governance import AcceptEdits, Candidate, CandidateStatus, ExecutionContext
from memrecall.store import KEEP, MemoryScope, ScopeType, Status, WorkspaceType

from .auth import TokenTable
from .errors import ApiError, json_response
from .management import Management, scope_of
from .schemas import (
    MAX_LIMIT,
    AcceptBody,
    CandidatePage,
    CreateBody,
    ExpectedRevisionBody,
    LegacyMemory,
    LegacyPage,
    MemoryPage,
    SettingsBody,
    UpdateBody,
    VersionPage,
    candidate_body,
    memory_body,
    settings_body,
    version_body,
)

__all__ = ["DEFAULT_LIMIT", "Api"]

DEFAULT_LIMIT = 50
_MAX_ID = 128
T = TypeVar("T")
B = TypeVar("B", bound=msgspec.Struct)


def _decode(request_body: bytes, kind: type[B], *, empty_ok: bool = False) -> B:
    if not request_body.strip() and empty_ok:
        request_body = b"{}"
    return msgspec.json.decode(request_body, type=kind)


def _query_enum(request: Request, name: str, kind: type[T], choices: Sequence[str]) -> T | None:
    text = request.query_params.get(name)
    if text is None or text == "":
        return None
    if text not in choices:
        raise ApiError(400, "invalid_query", f"{name}: one of {', '.join(choices)}")
    return kind(text)  # type: ignore[call-arg]


def _limit(request: Request) -> int:
    text = request.query_params.get("limit")
    if text is None:
        return DEFAULT_LIMIT
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_LIMIT:
        raise ApiError(400, "invalid_query", f"limit: a whole number from 1 to {MAX_LIMIT}")
    return int(text)


def _cursor(request: Request) -> str | None:
    text = request.query_params.get("cursor")
    if text is None or text == "":
        return None
    if len(text) > _MAX_ID:
        raise ApiError(400, "invalid_query", "cursor: not a cursor this server gave out")
    return text


def _path_id(request: Request, name: str) -> str:
    value = str(request.path_params[name])
    if not value or len(value) > _MAX_ID:
        raise ApiError(404, "not_found", "no such item")
    return value


def _page(items: list[T], limit: int, cursor_of: Callable[[T], str]) -> tuple[list[T], str | None]:
    """The first ``limit`` items and the cursor after them (None when nothing follows)."""
    if len(items) > limit:
        items = items[:limit]
        return items, cursor_of(items[-1])
    return items, None


def _after(items: list[T], cursor: str | None, cursor_of: Callable[[T], str]) -> list[T]:
    if cursor is None:
        return items
    return [item for item in items if cursor_of(item) > cursor]


def _candidate_cursor(c: Candidate) -> str:
    return f"{c.created_at.isoformat()}|{c.candidate_id}"


Handler = Callable[[Request, ExecutionContext], Awaitable[Response]]


class Api:
    """The endpoints, bound to one :class:`Management` and one :class:`TokenTable`."""

    def __init__(self, management: Management, tokens: TokenTable) -> None:
        self.m = management
        self.tokens = tokens

    def authenticate(self, request: Request) -> ExecutionContext:
        """The context of the bearer token's user; 401 otherwise."""
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        user = self.tokens.user_for(token.strip()) if scheme.lower() == "bearer" else None
        if user is None:
            raise ApiError(
                401,
                "unauthorized",
                "a valid bearer token is required",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return Management.context(user)

    def _wrap(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            ctx = self.authenticate(request)
            return await handler(request, ctx)

        endpoint.__name__ = handler.__name__
        endpoint.__doc__ = handler.__doc__
        return endpoint

    def routes(self) -> list[Route]:
        """Every ``/me`` route (method, path, handler)."""
        w = self._wrap
        mem = "/me/core-memories"
        one = mem + "/{memory_id}"
        cand = "/me/memory-candidates/{candidate_id}"
        return [
            Route(mem, w(self.list_memories), methods=["GET"]),
            Route(mem, w(self.create_memory), methods=["POST"]),
            Route(one, w(self.get_memory), methods=["GET"]),
            Route(one, w(self.update_memory), methods=["PATCH"]),
            Route(one, w(self.forget_memory), methods=["DELETE"]),
            Route(one + "/suppress", w(self.suppress_memory), methods=["POST"]),
            Route(one + "/restore", w(self.restore_memory), methods=["POST"]),
            Route(one + "/versions", w(self.list_versions), methods=["GET"]),
            Route(
                one + "/versions/{revision:int}/restore", w(self.restore_version), methods=["POST"]
            ),
            Route("/me/memory-candidates", w(self.list_candidates), methods=["GET"]),
            Route(cand + "/accept", w(self.accept_candidate), methods=["POST"]),
            Route(cand + "/reject", w(self.reject_candidate), methods=["POST"]),
            Route("/me/memory-settings", w(self.get_settings), methods=["GET"]),
            Route("/me/memory-settings", w(self.patch_settings), methods=["PATCH"]),
            Route("/me/memories", w(self.legacy_list), methods=["GET"]),
            Route("/me/memories", w(self.legacy_put), methods=["PUT"]),
            Route("/me/memories/{memory_key}", w(self.legacy_delete), methods=["DELETE"]),
        ]

    # ------------------------------------------------------------------ memories

    async def list_memories(self, request: Request, ctx: ExecutionContext) -> Response:
        """List my memories (optionally one scope or status), ordered by memory_id."""
        scope_type = _query_enum(request, "scope_type", ScopeType, [s.value for s in ScopeType])
        workspace = _query_enum(
            request, "workspace_type", WorkspaceType, [w.value for w in WorkspaceType]
        )
        status = _query_enum(request, "status", Status, [s.value for s in Status])
        limit, cursor = _limit(request), _cursor(request)
        scope: MemoryScope | None = None
        if scope_type is not None:
            try:
                scope = MemoryScope.from_scope(scope_of(scope_type, workspace))
            except ValueError as exc:
                raise ApiError(400, "invalid_query", str(exc)) from None
        elif workspace is not None:
            scope = MemoryScope.of_workspace(workspace)
        records = await self.m.list_memories(
            ctx, scope=scope, status=status, after=cursor, limit=limit + 1
        )
        items, next_cursor = _page(records, limit, lambda r: r.memory_id)
        return json_response(MemoryPage([memory_body(r) for r in items], next_cursor))

    async def create_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """Create a memory (201), or 200 when the key already holds the same content."""
        body = _decode(await request.body(), CreateBody)
        try:
            scope = MemoryScope.from_scope(scope_of(body.scope_type, body.workspace_type))
        except ValueError as exc:
            raise ApiError(422, "invalid_body", str(exc)) from None
        reply = await self.m.create(
            ctx,
            scope,
            body.key,
            body.content,
            body.category,
            review_after=body.review_after,
            expires_at=body.expires_at,
        )
        return json_response(memory_body(reply.record), 201 if reply.created else 200)

    async def get_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """One of my memories."""
        record = await self.m.get(ctx, _path_id(request, "memory_id"))
        return json_response(memory_body(record))

    async def update_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """Change content/category/times at expected_revision (409 with the current one)."""
        memory_id = _path_id(request, "memory_id")
        body = _decode(await request.body(), UpdateBody)
        unset = msgspec.UNSET
        if all(
            v is unset for v in (body.content, body.category, body.review_after, body.expires_at)
        ):
            raise ApiError(422, "invalid_body", "nothing to update: give content or category")
        record = await self.m.update(
            ctx,
            memory_id,
            expected_revision=body.expected_revision,
            content=None if isinstance(body.content, msgspec.UnsetType) else body.content,
            category=None if isinstance(body.category, msgspec.UnsetType) else body.category,
            review_after=KEEP
            if isinstance(body.review_after, msgspec.UnsetType)
            else body.review_after,
            expires_at=KEEP if isinstance(body.expires_at, msgspec.UnsetType) else body.expires_at,
        )
        return json_response(memory_body(record))

    async def forget_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """Forget a memory for good (cannot be undone)."""
        memory_id = _path_id(request, "memory_id")
        await self.m.forget(ctx, memory_id)
        return json_response({"memory_id": memory_id, "forgotten": True})

    async def suppress_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """Hide a memory from recall (restorable)."""
        record = await self.m.set_status(ctx, _path_id(request, "memory_id"), Status.SUPPRESSED)
        return json_response(memory_body(record))

    async def restore_memory(self, request: Request, ctx: ExecutionContext) -> Response:
        """Make a suppressed memory active again."""
        record = await self.m.set_status(ctx, _path_id(request, "memory_id"), Status.ACTIVE)
        return json_response(memory_body(record))

    async def list_versions(self, request: Request, ctx: ExecutionContext) -> Response:
        """A memory's versions, oldest first (cursor: the last revision seen)."""
        memory_id = _path_id(request, "memory_id")
        limit, cursor = _limit(request), _cursor(request)
        after = 0
        if cursor is not None:
            if not cursor.isascii() or not cursor.isdigit():
                raise ApiError(400, "invalid_query", "cursor: not a cursor this server gave out")
            after = int(cursor)
        versions = [v for v in await self.m.versions(ctx, memory_id) if v.revision > after]
        items, next_cursor = _page(versions, limit, lambda v: str(v.revision))
        return json_response(VersionPage([version_body(v) for v in items], next_cursor))

    async def restore_version(self, request: Request, ctx: ExecutionContext) -> Response:
        """Copy an old version as a new revision, at expected_revision."""
        memory_id = _path_id(request, "memory_id")
        revision = request.path_params["revision"]
        assert isinstance(revision, int)
        body = _decode(await request.body(), ExpectedRevisionBody)
        record = await self.m.restore_version(
            ctx, memory_id, revision, expected_revision=body.expected_revision
        )
        return json_response(memory_body(record))

    # ------------------------------------------------------------------ candidates

    async def list_candidates(self, request: Request, ctx: ExecutionContext) -> Response:
        """My candidates (default: pending), oldest first."""
        choices = [s.value for s in CandidateStatus] + ["all"]
        text = request.query_params.get("status") or CandidateStatus.PENDING.value
        if text not in choices:
            raise ApiError(400, "invalid_query", f"status: one of {', '.join(choices)}")
        status = None if text == "all" else CandidateStatus(text)
        limit, cursor = _limit(request), _cursor(request)
        candidates = await self.m.list_candidates(ctx, status)
        # oldest first; the cursor is "<created_at>|<id>", which sorts in the same order
        keyed = sorted(candidates, key=_candidate_cursor)
        items, next_cursor = _page(
            _after(keyed, cursor, _candidate_cursor), limit, _candidate_cursor
        )
        return json_response(CandidatePage([candidate_body(c) for c in items], next_cursor))

    async def accept_candidate(self, request: Request, ctx: ExecutionContext) -> Response:
        """Accept a candidate, optionally edited; 409 when its target changed (rebased)."""
        candidate_id = _path_id(request, "candidate_id")
        body = _decode(await request.body(), AcceptBody, empty_ok=True)
        scope = None
        if body.scope_type is not None:
            try:
                scope = scope_of(body.scope_type, body.workspace_type)
            except ValueError as exc:
                raise ApiError(422, "invalid_body", str(exc)) from None
        elif body.workspace_type is not None:
            raise ApiError(422, "invalid_body", "workspace_type needs scope_type workspace")
        edits = AcceptEdits(content=body.content, category=body.category, scope=scope)
        outcome = await self.m.accept(ctx, candidate_id, edits)
        reply: dict[str, object] = {
            "candidate": candidate_body(outcome.candidate),
            "memory": None if outcome.record is None else memory_body(outcome.record),
            "rebased": outcome.rebased,
        }
        if outcome.rebased:
            reply = {
                "error": "candidate_rebased",
                "message": "the memory changed since the proposal: review the candidate again",
                **reply,
            }
        return json_response(reply, 409 if outcome.rebased else 200)

    async def reject_candidate(self, request: Request, ctx: ExecutionContext) -> Response:
        """Reject a candidate (only its fingerprint is kept)."""
        candidate = await self.m.reject(ctx, _path_id(request, "candidate_id"))
        return json_response({"candidate": candidate_body(candidate)})

    # ------------------------------------------------------------------ settings

    async def get_settings(self, request: Request, ctx: ExecutionContext) -> Response:
        """My memory switches."""
        return json_response(settings_body(await self.m.settings(ctx)))

    async def patch_settings(self, request: Request, ctx: ExecutionContext) -> Response:
        """Change either switch."""
        body = _decode(await request.body(), SettingsBody)
        if body.saved_memory_enabled is None and body.auto_extract_enabled is None:
            raise ApiError(422, "invalid_body", "give saved_memory_enabled or auto_extract_enabled")
        settings = await self.m.set_settings(
            ctx, saved=body.saved_memory_enabled, auto_extract=body.auto_extract_enabled
        )
        return json_response(settings_body(settings))

    # ------------------------------------------------------------------ legacy (global)

    async def legacy_list(self, request: Request, ctx: ExecutionContext) -> Response:
        """Legacy: every active global memory as memory_key/content/category."""
        records = await self.m.legacy_list(ctx)
        items = [LegacyMemory(r.key, r.content, r.category) for r in records]
        return json_response(LegacyPage(items))

    async def legacy_put(self, request: Request, ctx: ExecutionContext) -> Response:
        """Legacy: create or replace the global memory under memory_key."""
        body = _decode(await request.body(), LegacyMemory)
        record = await self.m.legacy_put(ctx, body.memory_key, body.content, body.category)
        return json_response(LegacyMemory(record.key, record.content, record.category))

    async def legacy_delete(self, request: Request, ctx: ExecutionContext) -> Response:
        """Legacy: forget the global memory under memory_key."""
        key = str(request.path_params["memory_key"])
        if not key or len(key) > 512:
            raise ApiError(404, "not_found", "no such item")
        record = await self.m.legacy_delete(ctx, key)
        return json_response({"memory_key": record.key, "deleted": True})
