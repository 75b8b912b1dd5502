"""Memory documents as plain data.

A document is what the scanner read from one topic file. It is data only: the
parser lives in :mod:`memrecall.sources.frontmatter`, the scanner in
:mod:`memrecall.sources.scanner`. Documents travel inside internal events and
effects (and so inside event logs), which is why they are msgspec Structs.
"""

from __future__ import annotations

import enum

import msgspec

__all__ = ["MemoryDocument", "MemoryType", "Scope"]


class Scope(enum.StrEnum):
    """Which root a document came from. Project documents shadow user ones."""

    PROJECT = "project"
    USER = "user"


class MemoryType(enum.StrEnum):
    """The four memory types of the upstream format (`type:` in the frontmatter)."""

    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"


class MemoryDocument(msgspec.Struct, frozen=True, kw_only=True):
    """One parsed topic file.

    ``path`` is absolute and is the document's identity (two scopes may hold the
    same ``relative_path``). ``mtime`` is the file's modification time in unix
    seconds. ``body`` is trimmed; the legacy placeholder body is kept verbatim
    here and treated as empty by the scorer and the renderer. ``supersedes`` is
    the frontmatter's ``supersedes:`` value (another memory's relative path or
    name, as the user wrote it; empty when none): the explicit link that makes
    that memory an older version of this one (docs/decisions.md, issue 18).
    """

    scope: Scope
    path: str
    relative_path: str
    type: MemoryType
    title: str
    description: str
    body: str
    mtime: float
    supersedes: str = ""
