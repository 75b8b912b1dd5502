"""Parse one topic file in the upstream memory format.

The rules are those of Qwen Code / Claude Code memory directories, reproduced
literally so an existing directory works unchanged:

1. CRLF becomes LF first.
2. The text must be ``---\\n``, the frontmatter (lazily, up to the first
   ``\\n---``), ``\\n---``, an optional ``\\n``, then the body. Otherwise the
   file is not a memory topic.
3. A key's value comes from the first line starting with ``key:``, followed by
   spaces/tabs and at least one character; it is trimmed. No YAML: quotes stay.
4. ``type`` must be exactly one of the four memory types.
5. title = ``name``, else ``title``, else the type; description = ``description``
   or empty; body = the rest, trimmed.
6. ``supersedes`` (this project's addition, ignored upstream): the relative path
   or name of the memory this one replaces, or empty.
"""

from __future__ import annotations

import enum
import re

import attrs

from memrecall.engine.scoring.text import js_trim
from memrecall.events.documents import MemoryType

__all__ = ["ParseFailure", "ParsedTopic", "parse_topic"]

_DOCUMENT = re.compile(r"---\n(.*?)\n---\n?(.*)", re.DOTALL)
_TYPES = frozenset(t.value for t in MemoryType)


class ParseFailure(enum.StrEnum):
    """Why a text is not a memory topic."""

    NO_FRONTMATTER = "no_frontmatter"
    MISSING_TYPE = "missing_type"
    UNKNOWN_TYPE = "unknown_type"


@attrs.frozen
class ParsedTopic:
    """The fields of a topic file; the scanner adds scope, paths and mtime."""

    type: MemoryType
    title: str
    description: str
    body: str
    supersedes: str = ""


# JavaScript's line terminators (``^``/``$`` in multiline mode), so values match upstream
# exactly; its whitespace is :func:`~memrecall.engine.scoring.text.js_trim`'s.
_LINE_END = "\n\r\u2028\u2029"


_KEYS = {
    key: re.compile(rf"(?:^|(?<=[{_LINE_END}])){key}:[ \t]*([^{_LINE_END}]+)(?=[{_LINE_END}]|\Z)")
    for key in ("name", "title", "description", "type", "supersedes")
}


def _value(frontmatter: str, key: str) -> str:
    match = _KEYS[key].search(frontmatter)
    return js_trim(match.group(1)) if match else ""


def parse_topic(text: str) -> ParsedTopic | ParseFailure:
    """Parse a decoded topic file; return the fields or why it is not a topic."""
    match = _DOCUMENT.fullmatch(text.replace("\r\n", "\n"))
    if match is None:
        return ParseFailure.NO_FRONTMATTER
    frontmatter, body = match.group(1), match.group(2)
    type_value = _value(frontmatter, "type")
    if not type_value:
        return ParseFailure.MISSING_TYPE
    if type_value not in _TYPES:
        return ParseFailure.UNKNOWN_TYPE
    memory_type = MemoryType(type_value)
    title = _value(frontmatter, "name") or _value(frontmatter, "title") or memory_type.value
    return ParsedTopic(
        type=memory_type,
        title=title,
        description=_value(frontmatter, "description"),
        body=js_trim(body),
        supersedes=_value(frontmatter, "supersedes"),
    )
