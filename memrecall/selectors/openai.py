"""A selector that asks any OpenAI-compatible chat-completions endpoint.

One ``POST {base_url}/chat/completions`` per recall, with the system
instruction (:func:`~memrecall.actors.selector.selector_instructions`), the
user message (:func:`~memrecall.actors.selector.selector_user_message`: the
query, the manifest of ids, recent tools) and ``response_format`` JSON. The
reply's ``choices[0].message.content`` must be a JSON object
``{"selected_memories": [...]}``; the list is what :meth:`select` returns, and
the plan validates it as for any selector.

Runs on httpx, whose async client works under trio and asyncio alike. What can
go wrong is raised as the typed selector errors, so telemetry records the
cause (``timeout``, ``http_error``, ``unreachable``, ``invalid_answer``).

* Time: the whole call (connect, send, wait, read, retries) is bounded by
  ``timeout`` seconds, and never more than the plan's 30 s ceiling.
* Cancellation: the request runs inside its own client (unless you pass one),
  and leaving it closes the connection, so a cancelled plan really hangs up.
  The TLS context is built once per selector (the first call), not per call.
* Retries: only a failed *connect* is retried (nothing was sent, so the
  endpoint cannot have seen the request), at most ``retries`` times, within
  the time limit. A timeout, an HTTP error or a bad answer is never retried.
* Secrets: the API key goes only into the ``Authorization`` header; it is not
  in ``repr``, logs or exceptions. Logs carry statuses, counts and durations,
  never the query, the manifest or the answer.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import ssl
import time
from collections.abc import Mapping
from typing import Any

import anyio
import attrs
import httpcore  # noqa: F401  httpx imports it when its first client is made, inside a call's time limit
import httpx

from memrecall.actors.selector import (
    SELECTOR_CEILING,
    SelectorError,
    SelectorHTTPError,
    SelectorRequest,
    SelectorResponseError,
    SelectorTimeoutError,
    SelectorUnreachableError,
    selector_instructions,
    selector_user_message,
)

__all__ = ["DEFAULT_TIMEOUT", "OpenAICompatibleSelector", "chat_request_body", "parse_reply"]

log = logging.getLogger("memrecall.selectors.openai")

DEFAULT_TIMEOUT = 10.0
"""Seconds a call may take by default (the plan's ceiling is 30 s)."""

ANSWER_FIELD = "selected_memories"

_RETRY_PAUSE = 0.05
"""Seconds between connect attempts (times the attempt number)."""


def chat_request_body(
    request: SelectorRequest, model: str, *, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The JSON body of the chat-completions request for ``request``.

    Only the query, the manifest (ids, types, dates, descriptions) and the
    recent tools' names go out: never an absolute path or a document body.
    """
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": selector_instructions(request.limit)},
            {"role": "user", "content": selector_user_message(request)},
        ],
        "response_format": {"type": "json_object"},
        "temperature": 0,
    }
    if extra:
        body.update(extra)
    return body


def _strip_fence(text: str) -> str:
    """Some local models wrap JSON in a Markdown code fence: take what is inside."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and "\n" in stripped:
        return stripped[:-3].partition("\n")[2]  # drop the opening line (```json)
    return stripped


def parse_reply(payload: bytes) -> list[str]:
    """The ``selected_memories`` list of a chat-completions reply.

    Raises :class:`~memrecall.actors.selector.SelectorResponseError` for
    anything else.

    The list's entries are checked by the plan's validation (ids of the
    manifest, at most ``limit``); here only the envelope is.
    """
    try:
        reply = json.loads(payload)
        content = reply["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise SelectorResponseError("the reply is not a chat completion") from None
    if not isinstance(content, str):
        raise SelectorResponseError("the reply's message has no text content")
    try:
        answer = json.loads(_strip_fence(content))
    except ValueError:
        raise SelectorResponseError("the model's answer is not JSON") from None
    if not isinstance(answer, dict) or not isinstance(answer.get(ANSWER_FIELD), list):
        raise SelectorResponseError(f"the model's answer has no {ANSWER_FIELD} list")
    selected = answer[ANSWER_FIELD]
    if not all(isinstance(entry, str) for entry in selected):
        raise SelectorResponseError(f"the model's {ANSWER_FIELD} holds a non-string entry")
    return list(selected)


@functools.cache
def _default_tls() -> ssl.SSLContext:
    """httpx's default TLS context (the CA bundle it ships), built once per process."""
    return httpx.create_ssl_context()


def _check_timeout(_instance: object, _attribute: object, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"timeout must be a number of seconds, not {type(value).__name__}")
    if not 0 < value <= SELECTOR_CEILING or math.isnan(value):
        raise ValueError(f"timeout must be in (0, {SELECTOR_CEILING:g}] seconds, got {value!r}")


def _check_retries(_instance: object, _attribute: object, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2:
        raise ValueError(f"retries must be 0, 1 or 2, got {value!r}")


def _check_text(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{attribute.name} must be a non-empty string")


@attrs.define(eq=False)
class OpenAICompatibleSelector:
    """Picks memories by asking a chat-completions endpoint (OpenAI, vLLM, llama.cpp, Ollama...).

    ``base_url`` is the API root that ``/chat/completions`` is appended to
    (``https://api.openai.com/v1``, ``http://localhost:8000/v1``). ``api_key``
    (optional) is sent as a bearer token. ``timeout`` bounds the whole call in
    seconds (at most 30). ``retries`` (0 to 2) is how often a failed connect
    is retried. ``client`` lets you share an ``httpx.AsyncClient`` (you then
    own it and close it; a cancelled call still abandons its connection).
    ``extra_body`` is merged into the request body (e.g. ``{"max_tokens": 200}``).
    """

    base_url: str = attrs.field(validator=_check_text)
    model: str = attrs.field(validator=_check_text)
    api_key: str | None = attrs.field(default=None, repr=False)
    timeout: float = attrs.field(default=DEFAULT_TIMEOUT, validator=_check_timeout)
    retries: int = attrs.field(default=1, validator=_check_retries)
    client: httpx.AsyncClient | None = attrs.field(default=None, repr=False)
    extra_body: Mapping[str, Any] | None = attrs.field(default=None, repr=False)

    def _tls_context(self) -> ssl.SSLContext | bool:
        """The TLS context for an ``https`` endpoint, built once per process (building it
        reads the CA bundle: tens of ms, which a short ``timeout`` cannot spare); False for
        a plain ``http`` one, which has no TLS to verify."""
        if not self.url.lower().startswith("https:"):
            return False
        return _default_tls()

    @property
    def url(self) -> str:
        """Where requests go."""
        return self.base_url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    async def select(self, request: SelectorRequest) -> list[str]:
        """Ask the endpoint; return the ``selected_memories`` list (validated by the plan).

        Raises :class:`~memrecall.actors.selector.SelectorTimeoutError`,
        :class:`~memrecall.actors.selector.SelectorHTTPError`,
        :class:`~memrecall.actors.selector.SelectorUnreachableError` or
        :class:`~memrecall.actors.selector.SelectorResponseError`.
        """
        body = json.dumps(chat_request_body(request, self.model, extra=self.extra_body))
        started = time.monotonic()
        limit = min(self.timeout, SELECTOR_CEILING)
        try:
            with anyio.fail_after(limit):
                if self.client is not None:
                    payload = await self._post(self.client, body)
                else:
                    async with httpx.AsyncClient(
                        timeout=None, trust_env=False, verify=self._tls_context()
                    ) as client:
                        payload = await self._post(client, body)
        except TimeoutError:
            log.info("selector call timed out after %.0f ms", (time.monotonic() - started) * 1e3)
            raise SelectorTimeoutError(f"no answer within {limit:g} s") from None
        answer = parse_reply(payload)
        log.debug(
            "selector answered %d entries in %.0f ms",
            len(answer),
            (time.monotonic() - started) * 1e3,
        )
        return answer

    async def _post(self, client: httpx.AsyncClient, body: str) -> bytes:
        """One request, retrying only a failed connect; the reply's bytes on HTTP 2xx."""
        attempt = 0
        while True:
            try:
                response = await client.post(
                    self.url,
                    content=body.encode("utf-8"),
                    headers={**self._headers(), "Content-Type": "application/json"},
                )
            except httpx.ConnectError:
                # Nothing was sent: safe to try again, if the time limit allows.
                if attempt >= self.retries:
                    log.info("selector endpoint unreachable after %d attempts", attempt + 1)
                    raise SelectorUnreachableError(
                        "cannot connect to the selector endpoint"
                    ) from None
                attempt += 1
                await anyio.sleep(_RETRY_PAUSE * attempt)
                continue
            except httpx.TimeoutException:
                raise TimeoutError from None
            except httpx.HTTPError as exc:
                # Sent (or partly): never retried. The type only, no URL or body.
                raise SelectorError(f"the selector request failed ({type(exc).__name__})") from None
            if not 200 <= response.status_code < 300:
                log.info("selector endpoint answered HTTP %d", response.status_code)
                raise SelectorHTTPError(response.status_code)
            return response.content
