"""The ASGI application: the routes, the error table, the body limit, the OpenAPI document.

:func:`build_app` returns a plain ASGI callable (Starlette inside a body-limit layer). It
holds no event loop of its own: served by Hypercorn's trio worker
(:mod:`memrecall.http.server`), every handler runs in the same trio run as the
:class:`~memrecall.store.MemoryService`.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memrecall.governance import DEFAULT_POLICY, PolicyDocument
from memrecall.store import MemoryService
from memrecall.store.governed import GovernedMemory

from .auth import TokenTable
from .errors import EXCEPTION_HANDLERS, error_response, json_response
from .management import Management
from .openapi import openapi_document
from .page import page_routes
from .routes import Api
from .schemas import ErrorOut

__all__ = ["MAX_BODY_BYTES", "BodyLimit", "build_app"]

MAX_BODY_BYTES = 128 * 1024
"""The largest request body accepted (a memory's content is at most 8000 characters)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """Reads an HTTP request's body up to ``limit`` bytes before the app sees it; more is a
    413 (at once when Content-Length says so). The app then reads the buffered body."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = ErrorOut("body_too_large", f"the request body is over {self.limit} bytes")
        response = error_response(413, body, {"Connection": "close"})
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """ASGI entry point."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                await self._too_large(scope, receive, send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._too_large(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def build_app(
    service: MemoryService,
    tokens: TokenTable,
    *,
    policy: PolicyDocument = DEFAULT_POLICY,
    max_body_bytes: int = MAX_BODY_BYTES,
    request_ids: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> BodyLimit:
    """The management API over ``service`` for the users in ``tokens``."""
    management = Management(GovernedMemory(service, policy), request_ids=request_ids)
    api = Api(management, tokens)
    document = openapi_document()

    async def openapi(_: Request) -> Response:
        return json_response(document)

    async def health(_: Request) -> Response:
        return json_response({"ok": True})

    routes = [
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/healthz", health, methods=["GET"]),
        *api.routes(),
        *page_routes(),
    ]
    app = Starlette(routes=routes, exception_handlers=EXCEPTION_HANDLERS)
    return BodyLimit(app, max_body_bytes)
