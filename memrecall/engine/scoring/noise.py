"""The active-tool noise filter.

While the assistant is using a tool, a memory that merely documents that
tool's API (schemas, field mappings, guessed or failed call transcripts) is
noise: the live tool definition is authoritative. Durable knowledge about the
tool (credentials, owners, escalation paths, gotchas, warnings, workarounds)
still helps. A document is noise iff its haystack mentions an alias of an
active tool, contains no durable marker, and contains at least one usage marker.

The predicate is derived once per recall (:func:`active_tool_filter`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memrecall.engine.scoring.text import body_text
from memrecall.events.documents import MemoryDocument

__all__ = ["DURABLE_MARKERS", "USAGE_MARKERS", "active_tool_filter", "tool_aliases"]

USAGE_MARKERS = (
    "api docs",
    "api documentation",
    "failed call",
    "failed tool call",
    "failed tool-call",
    "field mapping",
    "field mappings",
    "guessed call",
    "guessed tool",
    "mcp tool",
    "parameter schema",
    "parameter schemas",
    "tool schema",
    "tool schemas",
    "tool usage",
    "usage reference",
)

DURABLE_MARKERS = (
    "credential",
    "credentials",
    "escalation",
    "gotcha",
    "gotchas",
    "known issue",
    "known issues",
    "owner",
    "ownership",
    "warning",
    "warnings",
    "workaround",
    "workarounds",
)


def tool_aliases(tool_name: str) -> list[str]:
    """The names a memory might use for a tool: full, last ``::`` part, MCP short forms."""
    name = tool_name.strip().lower()
    aliases = [name]
    if "::" in name:
        aliases.append(name.split("::")[-1])
    if name.startswith("mcp__"):
        parts = name.split("__")
        if len(parts) >= 3:
            aliases.append("__".join(parts[2:]))
            aliases.append(parts[-1])
    return [alias for alias in dict.fromkeys(aliases) if alias]


def _haystack(document: MemoryDocument) -> str:
    return " ".join((document.title, document.description, body_text(document.body))).lower()


def active_tool_filter(recent_tools: Iterable[str]) -> Callable[[MemoryDocument], bool]:
    """A predicate that is True for documents that are noise while these tools are active."""
    aliases = list(dict.fromkeys(a for tool in recent_tools for a in tool_aliases(tool)))
    if not aliases:
        return lambda document: False

    def is_noise(document: MemoryDocument) -> bool:
        haystack = _haystack(document)
        if not any(alias in haystack for alias in aliases):
            return False
        if any(marker in haystack for marker in DURABLE_MARKERS):
            return False
        return any(marker in haystack for marker in USAGE_MARKERS)

    return is_noise
