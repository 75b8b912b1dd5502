"""What a runtime tells memrecall, and what a plan's own workers report back.

Runtime inputs (:data:`RuntimeEvent`) are the design card's events: a user
query, a tool result, the end of a model turn, reset, abort and shutdown.
Completions (:data:`Completion`) are produced inside memrecall when a scan, a
selector call or the initial-wait timer finishes. A plan consumes both kinds
through one channel, and the event log records both, so a log can be folded
through the pure state machine again without running anything.
"""

from __future__ import annotations

import enum
import hashlib

import msgspec

from .documents import MemoryDocument

__all__ = [
    "Abort",
    "Completion",
    "InitialDeadline",
    "PlanEvent",
    "Reset",
    "RuntimeEvent",
    "ScanCompleted",
    "ScanFailed",
    "SelectorFailed",
    "SelectorFailure",
    "SelectorSucceeded",
    "Shutdown",
    "ToolResult",
    "TurnEnd",
    "UserQuery",
    "text_digest",
]


def text_digest(text: str) -> str:
    """A short, stable digest of ``text`` (SHA-256, first 16 hex digits).

    Effects and completions carry the digest of the query a recall ran for and
    of the manifest a selector saw, so an event log can prove provenance
    without telemetry ever holding the text itself.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class _Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """Base of every event; the tag field is ``kind``."""


class UserQuery(_Event, frozen=True, tag="user_query"):
    """A new user turn. Starts a plan and cancels the pending one (``new_query``)."""

    query_id: str
    text: str
    recent_tools: tuple[str, ...] = ()


class ToolResult(_Event, frozen=True, tag="tool_result"):
    """Tool output is about to go back to the model: a zero-wait delivery point."""


class TurnEnd(_Event, frozen=True, tag="turn_end"):
    """The model finished a turn. Without tool requests nothing can be delivered later."""

    tools_requested: bool


class Reset(_Event, frozen=True, tag="reset"):
    """The conversation was cleared: cancel, and forget what was surfaced."""


class Abort(_Event, frozen=True, tag="abort"):
    """The caller cancelled the turn."""


class Shutdown(_Event, frozen=True, tag="shutdown"):
    """The runtime is closing."""


RuntimeEvent = UserQuery | ToolResult | TurnEnd | Reset | Abort | Shutdown


class ScanCompleted(_Event, frozen=True, tag="scan_completed"):
    """The scan and the deterministic ranking finished.

    ``fallback`` is the noise-filtered lexical top five (the selector-failure
    fallback and, with no selector, the result). ``fast`` is the fast result
    (at most two of the fallback's first two: those the scorer judges strong
    enough). ``candidates`` counts the documents that made it into the manifest.

    ``query_digest`` is the :func:`text_digest` of the text the recall actually
    ran with (the plan rejects a result whose digest is not its own query's);
    ``ids`` are the manifest ids the selector will see, in order, and
    ``manifest_digest`` the digest of the manifest text: together they say
    what the selector saw, so a replay reproduces its view.
    """

    docs_scanned: int
    fallback: tuple[MemoryDocument, ...]
    fast: tuple[MemoryDocument, ...]
    candidates: int
    query_digest: str = ""
    ids: tuple[str, ...] = ()
    manifest_digest: str = ""


class ScanFailed(_Event, frozen=True, tag="scan_failed"):
    """The scan could not run at all (not a bad file: those are diagnostics)."""

    reason: str


class SelectorSucceeded(_Event, frozen=True, tag="selector_succeeded"):
    """The selector answered validly; an empty tuple means "nothing relevant"."""

    selected: tuple[MemoryDocument, ...]


class SelectorFailure(enum.StrEnum):
    """Why a selector call did not produce a usable answer."""

    ERROR = "error"
    INVALID = "invalid"
    TIMEOUT = "timeout"
    HTTP_ERROR = "http_error"
    UNREACHABLE = "unreachable"


class SelectorFailed(_Event, frozen=True, tag="selector_failed"):
    """The selector raised, answered invalidly, or hit the 30 s ceiling.

    ``http_error`` and ``unreachable`` come from a network selector's typed
    errors (:mod:`memrecall.actors.selector`); any other exception is ``error``.
    """

    failure: SelectorFailure


class InitialDeadline(_Event, frozen=True, tag="initial_deadline"):
    """The 100 ms initial wait ran out."""


Completion = ScanCompleted | ScanFailed | SelectorSucceeded | SelectorFailed | InitialDeadline

PlanEvent = RuntimeEvent | Completion
