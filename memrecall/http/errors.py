"""How every failure becomes an HTTP answer: a status and an :class:`~.schemas.ErrorOut` body.

Bad input is always a 4xx with a message that says what to fix and never repeats what was
sent; a 5xx means a bug. The table (also in docs/api.md):

| raised | status | ``error`` |
| --- | --- | --- |
| missing or wrong bearer token | 401 | ``unauthorized`` |
| body over :data:`~memrecall.http.app.MAX_BODY_BYTES` | 413 | ``body_too_large`` |
| body that is not JSON | 400 | ``malformed_json`` |
| JSON of the wrong shape, bad query | 422 / 400 | ``invalid_body`` / ``invalid_query`` |
| the store refuses a value (``InvalidInput``) | 422 | ``invalid_input`` |
| no such memory / candidate / version (or another user's) | 404 | ``not_found`` |
| stale ``expected_revision`` | 409 | ``revision_conflict`` (+ ``current_revision``) |
| the key holds other content (create) | 409 | ``key_conflict`` (+ id, current revision) |
| candidate already decided | 409 | ``candidate_decided`` (+ ``status``) |
| policy refusal (secret, workspace rule) | 403 | ``policy_denied`` (+ reason, secret kind) |
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from memrecall.governance import DenyReason
from memrecall.governance.candidates import InvalidTransition
from memrecall.store import InvalidInput, KeyConflict, NotFound, RevisionConflict, StoreError
from memrecall.store.model import CandidateConflict

from .management import Contended, Refused
from .schemas import ErrorOut

__all__ = ["EXCEPTION_HANDLERS", "ApiError", "error_response", "json_response"]

_ENCODER = msgspec.json.Encoder()


def json_response(
    body: object, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """A JSON response encoded with msgspec."""
    return Response(_ENCODER.encode(body), status, headers, media_type="application/json")


def error_response(
    status: int, body: ErrorOut, headers: Mapping[str, str] | None = None
) -> Response:
    """An error answer."""
    return json_response(body, status, headers)


class ApiError(Exception):
    """An answer decided by the HTTP layer itself (bad query, unauthorised, ...)."""

    def __init__(
        self, status: int, error: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = ErrorOut(error, message)
        self.headers = headers


async def _api_error(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return error_response(exc.status, exc.body, exc.headers)


async def _http_exception(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    codes = {404: "not_found", 405: "method_not_allowed"}
    error = codes.get(exc.status_code, "http_error")
    return error_response(exc.status_code, ErrorOut(error, str(exc.detail)), exc.headers)


async def _decode_error(_: Request, exc: Exception) -> Response:
    if isinstance(exc, msgspec.ValidationError):
        return error_response(422, ErrorOut("invalid_body", f"invalid body: {exc}"))
    return error_response(400, ErrorOut("malformed_json", "the body is not a JSON document"))


async def _store_error(_: Request, exc: Exception) -> Response:
    match exc:
        case NotFound():
            return error_response(404, ErrorOut("not_found", "no such item"))
        case RevisionConflict():
            message = "expected_revision is stale: read the memory again"
            body = ErrorOut(
                "revision_conflict",
                message,
                memory_id=exc.memory_id,
                current_revision=exc.current_revision,
            )
            return error_response(409, body)
        case KeyConflict():
            message = "this scope already holds the key with other content: update it by id"
            body = ErrorOut(
                "key_conflict",
                message,
                memory_id=exc.memory_id,
                current_revision=exc.current_revision,
            )
            return error_response(409, body)
        case CandidateConflict():
            body = ErrorOut(
                "candidate_decided", "the candidate was already decided", status=exc.status
            )
            return error_response(409, body)
        case Contended():
            return error_response(409, ErrorOut("contended", str(exc)))
        case InvalidInput():
            return error_response(422, ErrorOut("invalid_input", str(exc)))
    return error_response(409, ErrorOut("conflict", type(exc).__name__))


async def _refused(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refused)
    r = exc.refusal
    if r.reason is DenyReason.NOT_OWNER:
        return error_response(404, ErrorOut("not_found", "no such item"))
    if r.reason is DenyReason.BAD_ARGUMENTS:
        return error_response(400, ErrorOut("bad_arguments", r.message, reason=r.reason.value))
    body = ErrorOut(
        "policy_denied",
        r.message,
        reason=r.reason.value,
        secret_kind=None if r.secret_kind is None else r.secret_kind.value,
    )
    return error_response(403, body)


async def _transition(_: Request, exc: Exception) -> Response:
    return error_response(409, ErrorOut("candidate_decided", "the candidate cannot be decided now"))


EXCEPTION_HANDLERS = {
    ApiError: _api_error,
    HTTPException: _http_exception,
    msgspec.DecodeError: _decode_error,
    StoreError: _store_error,
    Refused: _refused,
    InvalidTransition: _transition,
}
