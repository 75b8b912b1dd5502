"""Selectors: who picks the best memories among the candidates.

A selector is anything with ``async def select(request) -> Sequence[str]``
returning the chosen absolute paths, best first. memrecall validates the
answer as upstream does: not a list, more than ``limit`` entries, or a path
that is not in the manifest is a failure, and a failure (or the 30 s ceiling)
falls back to the deterministic top five. An empty list is a valid answer:
nothing is relevant.

Built in: :class:`SimulatedSelector` (given latency and choice function) for
tests, simulations and the demo. "No selector" is ``selector=None`` on the
engine: the deterministic top five is the result and there is no fast phase.
A network selector uses :data:`SELECTOR_INSTRUCTIONS` and
:func:`selector_user_message` to build its request.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
import trio

from memrecall.events.documents import MemoryDocument

__all__ = [
    "SELECTOR_CEILING",
    "SELECTOR_INSTRUCTIONS",
    "Selector",
    "SelectorRequest",
    "SelectorResponseError",
    "SimulatedSelector",
    "selector_user_message",
    "validate_selection",
]

SELECTOR_CEILING = 30.0
"""Seconds a selector call may take before the plan falls back to the heuristic."""

SELECTOR_INSTRUCTIONS = """\
You choose which saved memories will help an assistant answer the user's next request.
You get the request, then a list of memories, one per line: its type, its file path, when it
was saved, and a short description. Reply with a JSON object {"selected_memories": [...]}
holding the file paths (copied exactly) of at most {limit} memories that will clearly help,
most helpful first. Be selective: when nothing clearly helps, return an empty list.
If recently used tools are listed, do not pick memories that only document how to call those
tools (API or usage notes, parameter schemas, field mappings, transcripts of guessed or failed
calls): the live tool definition is more accurate. Do pick lasting operational knowledge about
those tools: where credentials live, who owns them, how to escalate, known gotchas, warnings
and workarounds."""
"""System instruction for a model-based selector (memrecall's own wording)."""


@attrs.frozen
class SelectorRequest:
    """What a selector is asked: the query, the manifest, recent tools, and the limit."""

    query: str
    manifest: str
    candidates: tuple[MemoryDocument, ...]
    recent_tools: tuple[str, ...]
    limit: int

    @property
    def paths(self) -> tuple[str, ...]:
        """The paths the selector may return, in manifest order."""
        return tuple(d.path for d in self.candidates)


class Selector(Protocol):
    """Picks memories for a request; may be slow, may fail."""

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        """Return the chosen paths (absolute, from the manifest), best first."""
        ...


class SelectorResponseError(ValueError):
    """The selector's answer breaks the contract."""


def selector_user_message(request: SelectorRequest) -> str:
    """The user-role message for a model selector: query, manifest, then recent tools."""
    parts = [request.query.strip(), "", "Memories:", request.manifest]
    if request.recent_tools:
        parts += ["", "Recently used tools: " + ", ".join(request.recent_tools)]
    return "\n".join(parts)


def validate_selection(answer: object, request: SelectorRequest) -> tuple[MemoryDocument, ...]:
    """Map a selector's answer to documents, or raise :class:`SelectorResponseError`."""
    if not isinstance(answer, list | tuple):
        raise SelectorResponseError("the selector must return a list of paths")
    if len(answer) > request.limit:
        raise SelectorResponseError(f"the selector returned too many documents: {len(answer)}")
    by_path = {d.path: d for d in request.candidates}
    chosen: dict[str, MemoryDocument] = {}
    for path in answer:
        if not isinstance(path, str) or path not in by_path:
            raise SelectorResponseError("the selector returned a path that is not a candidate")
        chosen.setdefault(path, by_path[path])
    return tuple(chosen.values())


Choice = Callable[[SelectorRequest], Sequence[str]]


def _first(request: SelectorRequest) -> Sequence[str]:
    return request.paths[: request.limit]


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
