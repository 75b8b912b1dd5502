"""The OpenAPI 3.1 document of the management API (served at ``GET /openapi.json``).

Built from one table (:data:`OPERATIONS`) and the msgspec Structs of :mod:`.schemas`, so the
schemas are the ones the server actually decodes with. A test checks that the table and the
app's routes name the same (method, path) pairs.
"""

from __future__ import annotations

from typing import Any

import attrs
import msgspec

from . import schemas as s

__all__ = ["OPERATIONS", "Operation", "openapi_document"]


@attrs.frozen
class Operation:
    """One documented endpoint."""

    method: str
    path: str
    summary: str
    body: type[msgspec.Struct] | None = None
    response: type[msgspec.Struct] | None = None
    ok: int = 200
    query: tuple[str, ...] = ()
    errors: tuple[int, ...] = ()


_PAGE = ("limit", "cursor")
_M = "/me/core-memories"
_ONE = _M + "/{memory_id}"
_C = "/me/memory-candidates"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "get",
        _M,
        "List my memories (paginated)",
        None,
        s.MemoryPage,
        query=("scope_type", "workspace_type", "status", *_PAGE),
    ),
    Operation(
        "post",
        _M,
        "Create a memory (201; 200 when the same content is there)",
        s.CreateBody,
        s.MemoryOut,
        201,
        errors=(403, 409, 422),
    ),
    Operation("get", _ONE, "One of my memories", None, s.MemoryOut, errors=(404,)),
    Operation(
        "patch",
        _ONE,
        "Update at expected_revision (409 with current_revision)",
        s.UpdateBody,
        s.MemoryOut,
        errors=(403, 404, 409, 422),
    ),
    Operation("delete", _ONE, "Forget a memory for good", None, None, errors=(404,)),
    Operation("post", _ONE + "/suppress", "Hide from recall", None, s.MemoryOut, errors=(404,)),
    Operation("post", _ONE + "/restore", "Undo a suppress", None, s.MemoryOut, errors=(404,)),
    Operation(
        "get",
        _ONE + "/versions",
        "Versions, oldest first (paginated)",
        None,
        s.VersionPage,
        query=_PAGE,
        errors=(404,),
    ),
    Operation(
        "post",
        _ONE + "/versions/{revision}/restore",
        "Copy a version as a new revision, at expected_revision",
        s.ExpectedRevisionBody,
        s.MemoryOut,
        errors=(403, 404, 409),
    ),
    Operation(
        "get",
        _C,
        "List my candidates (default pending; paginated)",
        None,
        s.CandidatePage,
        query=("status", *_PAGE),
    ),
    Operation(
        "post",
        _C + "/{candidate_id}/accept",
        "Accept, optionally editing content, category and (new memories) scope",
        s.AcceptBody,
        None,
        errors=(403, 404, 409, 422),
    ),
    Operation(
        "post",
        _C + "/{candidate_id}/reject",
        "Reject (only a fingerprint is kept)",
        None,
        None,
        errors=(404, 409),
    ),
    Operation("get", "/me/memory-settings", "My memory switches", None, s.SettingsOut),
    Operation(
        "patch",
        "/me/memory-settings",
        "Change either switch",
        s.SettingsBody,
        s.SettingsOut,
        errors=(422,),
    ),
    Operation("get", "/me/memories", "Legacy: active global memories", None, s.LegacyPage),
    Operation(
        "put",
        "/me/memories",
        "Legacy: create or replace a global memory",
        s.LegacyMemory,
        s.LegacyMemory,
        errors=(403, 409, 422),
    ),
    Operation(
        "delete",
        "/me/memories/{memory_key}",
        "Legacy: forget a global memory",
        None,
        None,
        errors=(404,),
    ),
)

_QUERY_SCHEMAS: dict[str, dict[str, Any]] = {
    "limit": {"type": "integer", "minimum": 1, "maximum": s.MAX_LIMIT, "default": 50},
    "cursor": {"type": "string", "description": "next_cursor of the previous page"},
    "scope_type": {"type": "string", "enum": ["global", "workspace"]},
    "workspace_type": {"type": "string", "enum": ["learning", "teaching", "research"]},
    "status": {"type": "string"},
}

_ERROR_TEXT = {
    400: "Malformed request",
    401: "Missing or wrong bearer token",
    403: "Refused by the memory policy",
    404: "No such item (or not yours)",
    409: "Conflict: stale revision, key taken, or already decided",
    413: "Body too large",
    422: "Invalid body",
}


def _ref(kind: type[msgspec.Struct]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{kind.__name__}"}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


def openapi_document() -> dict[str, Any]:
    """The whole document as a JSON-ready dict."""
    kinds = sorted(
        {k for op in OPERATIONS for k in (op.body, op.response) if k is not None} | {s.ErrorOut},
        key=lambda k: k.__name__,
    )
    _, components = msgspec.json.schema_components(
        kinds, ref_template="#/components/schemas/{name}"
    )
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        params: list[dict[str, Any]] = [
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": {"type": "integer" if name == "revision" else "string"},
            }
            for name in ("memory_id", "revision", "candidate_id", "memory_key")
            if "{" + name + "}" in op.path
        ]
        params += [
            {"name": q, "in": "query", "required": False, "schema": _QUERY_SCHEMAS[q]}
            for q in op.query
        ]
        ok_schema = _ref(op.response) if op.response else {"type": "object"}
        responses: dict[str, Any] = {str(op.ok): {"description": "OK", **_json(ok_schema)}}
        for code in sorted({400, 401, 413, *op.errors}):
            responses[str(code)] = {"description": _ERROR_TEXT[code], **_json(_ref(s.ErrorOut))}
        entry: dict[str, Any] = {
            "summary": op.summary,
            "operationId": f"{op.method}_{op.path}".replace("/", "_")
            .replace("{", "")
            .replace("}", "")
            .replace("-", "_"),
            "parameters": params,
            "responses": responses,
            "security": [{"bearer": []}],
        }
        if op.body is not None:
            entry["requestBody"] = {"required": op.body is not s.AcceptBody, **_json(_ref(op.body))}
        paths.setdefault(op.path, {})[op.method] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memrecall management API",
            "version": "1",
            "description": "See, correct, suppress and forget what is remembered (docs/api.md).",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
