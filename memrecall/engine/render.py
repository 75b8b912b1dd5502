"""Rendering the memory block that goes into the prompt.

Layout (our own wording, upstream's structure): a header, a usage note, then
per document a heading with its title and relative path, its age, its
description, its body cut at 1,200 UTF-16 units (with a note when cut), and a
staleness note when the memory is more than a day old.

Everything taken from a memory file is bounded: the title is cut at
:data:`MAX_TITLE_CHARS`, the location at :data:`MAX_LOCATION_CHARS`, the
description at :data:`MAX_DESCRIPTION_CHARS` (cuts end in ``…``), the body at
1,200. Control characters, line and paragraph separators and undecodable
bytes in the title, location and description are shown as escapes
(``\\n``, ``\\x1b``, ``\\udcff``), so a file name or title cannot break the
heading line or forge another one. Hence a block of at most
:data:`MAX_PROMPT_DOCS` documents is at most :data:`MAX_BLOCK_CHARS` UTF-16
code units (and so at most that many characters). Only the rendering is
bounded; the files are never touched.
"""

from __future__ import annotations

import math
import posixpath
import unicodedata
from collections.abc import Sequence
from typing import Final

from memrecall.engine.scoring.reference import MAX_BODY_CHARS
from memrecall.engine.scoring.text import body_text, utf16_len, utf16_prefix
from memrecall.events.documents import MemoryDocument

__all__ = [
    "HEADER",
    "MAX_BLOCK_CHARS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_DOCUMENT_CHARS",
    "MAX_FAST_DOCS",
    "MAX_LOCATION_CHARS",
    "MAX_PROMPT_DOCS",
    "MAX_TITLE_CHARS",
    "age_days",
    "age_text",
    "display_text",
    "escape_controls",
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
_MAX_SHOWN_DAYS = 999_999
"""Ages are shown up to this many days (an mtime from a ``stat`` is at most ~2.2e5 days off)."""

MAX_TITLE_CHARS: Final = 200
"""The title in a heading, in UTF-16 code units, escapes included."""
MAX_LOCATION_CHARS: Final = 300
"""The relative path in a heading, in UTF-16 code units, escapes included."""
MAX_DESCRIPTION_CHARS: Final = 512
"""The description line, in UTF-16 code units, escapes included (the manifest's cut too)."""
_ELLIPSIS = "\u2026"
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


def escape_controls(text: str) -> str:
    """``text`` on one line: control characters, line and paragraph separators and lone
    surrogates (undecodable bytes of a file name) escaped (``\\n``, ``\\x1b``, ``\\udcff``)."""
    if text.isprintable():
        return text  # nothing to escape (the common case, checked at C speed)
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in _ESCAPED_CATEGORIES
        else ch
        for ch in text
    )


def display_text(text: str, limit: int) -> str:
    """``text`` as shown to a model: :func:`escape_controls`, then cut to at most ``limit``
    UTF-16 code units, ending in ``…`` when cut."""
    text = escape_controls(text)
    if utf16_len(text) <= limit:
        return text
    return utf16_prefix(text, limit - 1) + _ELLIPSIS


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
    title = display_text(document.title, MAX_TITLE_CHARS)
    location = display_text(location, MAX_LOCATION_CHARS)
    days = min(age_days(document.mtime, now), _MAX_SHOWN_DAYS)
    body = body_text(document.body)
    if utf16_len(body) > MAX_BODY_CHARS:
        body = utf16_prefix(body, MAX_BODY_CHARS).rstrip() + "\n\n" + _TRUNCATED
    lines = [
        f"### {title} ({location})",
        f"Saved {age_text(days)}.",
        display_text(document.description, MAX_DESCRIPTION_CHARS),
        "",
        body or _EMPTY_BODY,
    ]
    if days > 1:
        lines += ["", _staleness(days)]
    lines.append("")
    return lines


_HEAD_CHARS = len(HEADER) + 1 + len(_USAGE_NOTE) + 1
MAX_DOCUMENT_CHARS: Final = (
    len("### ") + MAX_TITLE_CHARS + len(" (") + MAX_LOCATION_CHARS + len(")")
    + len(f"Saved {age_text(_MAX_SHOWN_DAYS)}.")
    + MAX_DESCRIPTION_CHARS
    + MAX_BODY_CHARS + len("\n\n" + _TRUNCATED)
    + len(_staleness(_MAX_SHOWN_DAYS))
    + 8  # the newlines ending its (at most) eight lines
)  # fmt: skip
"""The most UTF-16 code units one document adds to a block (2,464)."""
MAX_BLOCK_CHARS: Final = _HEAD_CHARS + MAX_PROMPT_DOCS * MAX_DOCUMENT_CHARS
"""The most UTF-16 code units in a block of at most :data:`MAX_PROMPT_DOCS` documents
(12,490): header and usage note, then each document at :data:`MAX_DOCUMENT_CHARS`."""


def render_block(documents: Sequence[MemoryDocument], now: float) -> str:
    """The prompt block for ``documents`` at wall time ``now``; '' for no documents.

    At most :data:`MAX_BLOCK_CHARS` UTF-16 code units for up to :data:`MAX_PROMPT_DOCS`
    documents, whatever the files hold (see the module doc).
    """
    if not documents:
        return ""
    lines = [HEADER, "", _USAGE_NOTE, ""]
    for document in documents:
        lines += _document_lines(document, now)
    return "\n".join(lines)
