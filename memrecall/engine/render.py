"""Rendering the memory block that goes into the prompt.

Layout (our own wording, upstream's structure): a header, a usage note, then
per document a heading with its title and relative path, its age, its
description, its body cut at 1,200 UTF-16 units (with a note when cut), and a
staleness note when the memory is more than a day old.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Sequence

from memrecall.events.documents import MemoryDocument

from .scorer import MAX_BODY_CHARS
from .text import body_text, utf16_len, utf16_prefix

__all__ = [
    "HEADER",
    "MAX_FAST_DOCS",
    "MAX_PROMPT_DOCS",
    "age_days",
    "age_text",
    "render_block",
]

HEADER = "## Relevant memory"
MAX_PROMPT_DOCS = 5
"""Documents per delivered block (per delivery, not per turn)."""
MAX_FAST_DOCS = 2
"""Documents in the deterministic fast block."""

_USAGE_NOTE = (
    "These are saved memories. Use one only if it bears directly on the current request, "
    "and check any claim about files or functions before relying on it."
)
_EMPTY_BODY = "_No detailed entries yet._"
_TRUNCATED = "> NOTE: This memory was cut to fit the prompt budget."
_DAY = 86_400.0


def age_days(mtime: float, now: float) -> int:
    """Whole days since ``mtime`` (both unix seconds), floored, never negative."""
    return max(0, math.floor((now - mtime) / _DAY))


def age_text(days: int) -> str:
    """``today``, ``yesterday`` or ``N days ago``."""
    if days == 0:
        return "today"
    if days == 1:
        return "yesterday"
    return f"{days} days ago"


def _staleness(days: int) -> str:
    return (
        f"> NOTE: This memory is {days} days old. It records what was true when it was "
        "saved, not the current state; verify claims about code before stating them as fact."
    )


def _document_lines(document: MemoryDocument, now: float) -> list[str]:
    location = document.relative_path or posixpath.basename(document.path)
    days = age_days(document.mtime, now)
    body = body_text(document.body)
    if utf16_len(body) > MAX_BODY_CHARS:
        body = utf16_prefix(body, MAX_BODY_CHARS).rstrip() + "\n\n" + _TRUNCATED
    lines = [
        f"### {document.title} ({location})",
        f"Saved {age_text(days)}.",
        document.description,
        "",
        body or _EMPTY_BODY,
    ]
    if days > 1:
        lines += ["", _staleness(days)]
    lines.append("")
    return lines


def render_block(documents: Sequence[MemoryDocument], now: float) -> str:
    """The prompt block for ``documents`` at wall time ``now``; '' for no documents."""
    if not documents:
        return ""
    lines = [HEADER, "", _USAGE_NOTE, ""]
    for document in documents:
        lines += _document_lines(document, now)
    return "\n".join(lines)
