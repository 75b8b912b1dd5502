"""Selectors: who picks the best memories among the candidates.

A selector is anything with ``async def select(request) -> Sequence[str]``
returning the chosen manifest ids (:attr:`SelectorRequest.ids`), best first.
The manifest names documents by id (``project/deploy/runbook.md``), never by
absolute path; an in-process selector may also answer with a candidate's
``path``. memrecall validates the answer as upstream does: not a list, more
than ``limit`` entries, or an entry that names no candidate is a failure, and
a failure (or the 30 s ceiling) falls back to the deterministic top five. One
bad entry discards the whole answer (see docs/decisions.md). An empty list is a
valid answer: nothing is relevant.

A selector reports why it failed by raising :class:`SelectorTimeoutError`,
:class:`SelectorHTTPError`, :class:`SelectorUnreachableError` or
:class:`SelectorResponseError`; telemetry records the matching
:class:`~memrecall.events.telemetry.SelectorOutcome` (any other exception is
``error``).

Built in: :class:`SimulatedSelector` (given latency and choice function) for
tests, simulations and the demo; :class:`memrecall.selectors.OpenAICompatibleSelector`
for any chat-completions endpoint. "No selector" is ``selector=None`` on the
engine: the deterministic top five is the result and there is no fast phase.
A network selector uses :func:`selector_instructions` and
:func:`selector_user_message` to build its request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
import trio

from memrecall.engine.scoring.candidates import manifest_id
from memrecall.events.documents import MemoryDocument

__all__ = [
    "SELECTOR_CEILING",
    "SELECTOR_INSTRUCTIONS",
    "Selector",
    "SelectorError",
    "SelectorHTTPError",
    "SelectorRequest",
    "SelectorResponseError",
    "SelectorTimeoutError",
    "SelectorUnreachableError",
    "SimulatedSelector",
    "selector_instructions",
    "selector_user_message",
    "validate_selection",
]

SELECTOR_CEILING = 30.0
"""Seconds a selector call may take before the plan falls back to the heuristic."""

SELECTOR_INSTRUCTIONS = """\
You choose which saved memories will help an assistant answer the user's next request.
You get the request, then a list of memories, one per line: its type, its file path, when it
was saved, and a short description. Reply with a JSON object {{"selected_memories": [...]}}
holding the file paths (copied exactly) of at most {limit} memories that will clearly help,
most helpful first. Be selective: when nothing clearly helps, return an empty list.
If recently used tools are listed, do not pick memories that only document how to call those
tools (API or usage notes, parameter schemas, field mappings, transcripts of guessed or failed
calls): the live tool definition is more accurate. Do pick lasting operational knowledge about
those tools: where credentials live, who owns them, how to escalate, known gotchas, warnings
and workarounds."""
"""System instruction for a model-based selector (memrecall's own wording).

A :meth:`str.format` template with one field, ``{limit}``; the JSON braces are
doubled, so ``SELECTOR_INSTRUCTIONS.format(limit=5)`` gives the instruction
(:func:`selector_instructions` does exactly that).
"""


def selector_instructions(limit: int) -> str:
    """The system instruction for at most ``limit`` picks."""
    return SELECTOR_INSTRUCTIONS.format(limit=limit)


@attrs.frozen
class SelectorRequest:
    """What a selector is asked: the query, the manifest, recent tools, and the limit."""

    query: str
    manifest: str
    candidates: tuple[MemoryDocument, ...]
    recent_tools: tuple[str, ...]
    limit: int
    ids: tuple[str, ...] = attrs.field()
    """The manifest ids of ``candidates`` (same order): what a selector answers with."""

    @ids.default
    def _ids_default(self) -> tuple[str, ...]:
        return tuple(manifest_id(d, i) for i, d in enumerate(self.candidates, start=1))

    @property
    def paths(self) -> tuple[str, ...]:
        """The candidates' absolute paths, in manifest order (in-process use only)."""
        return tuple(d.path for d in self.candidates)


class Selector(Protocol):
    """Picks memories for a request; may be slow, may fail."""

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        """Return the chosen manifest ids (or candidates' paths), best first."""
        ...


class SelectorError(Exception):
    """Base of the typed selector failures (each maps to one telemetry outcome)."""


class SelectorResponseError(SelectorError, ValueError):
    """The selector's answer breaks the contract (outcome ``invalid_answer``)."""


class SelectorTimeoutError(SelectorError, TimeoutError):
    """The selector's own time limit ran out (outcome ``timeout``)."""


class SelectorUnreachableError(SelectorError, ConnectionError):
    """No connection to the selector's endpoint could be made (outcome ``unreachable``)."""


class SelectorHTTPError(SelectorError):
    """The endpoint answered with a non-success HTTP status (outcome ``http_error``)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"the selector endpoint answered HTTP {status}")
        self.status = status


def selector_user_message(request: SelectorRequest) -> str:
    """The user-role message for a model selector: query, manifest, then recent tools."""
    parts = [request.query.strip(), "", "Memories:", request.manifest]
    if request.recent_tools:
        parts += ["", "Recently used tools: " + ", ".join(request.recent_tools)]
    return "\n".join(parts)


def validate_selection(answer: object, request: SelectorRequest) -> tuple[MemoryDocument, ...]:
    """Map a selector's answer to documents, or raise :class:`SelectorResponseError`.

    Each entry is a manifest id or a candidate's absolute path; a repeated
    entry counts once. The whole answer is rejected if it is not a list, has
    more than ``limit`` entries, or any entry names no candidate.
    """
    if not isinstance(answer, list | tuple):
        raise SelectorResponseError("the selector must return a list of manifest ids")
    if len(answer) > request.limit:
        raise SelectorResponseError(f"the selector returned too many documents: {len(answer)}")
    by_key = {d.path: d for d in request.candidates}
    by_key.update(zip(request.ids, request.candidates, strict=True))
    chosen: dict[str, MemoryDocument] = {}
    for key in answer:
        if not isinstance(key, str) or key not in by_key:
            raise SelectorResponseError("the selector named a document that is not a candidate")
        document = by_key[key]
        chosen.setdefault(document.path, document)
    return tuple(chosen.values())


Choice = Callable[[SelectorRequest], Sequence[str]]


def _first(request: SelectorRequest) -> Sequence[str]:
    return request.ids[: request.limit]


@attrs.define
class SimulatedSelector:
    """A selector with a given latency (seconds on trio's clock) and choice function.

    ``latency`` may be a number or a function of the request; ``choose`` maps a
    request to paths (default: the first ``limit`` candidates). If ``fail`` is
    set, the call raises it after the latency instead.
    """

    latency: float | Callable[[SelectorRequest], float] = 0.0
    choose: Choice = _first
    fail: Exception | None = None
    calls: int = 0

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        """Wait ``latency``, then answer (or raise ``fail``)."""
        self.calls += 1
        delay = self.latency(request) if callable(self.latency) else self.latency
        await trio.sleep(delay)
        if self.fail is not None:
            raise self.fail
        return self.choose(request)
