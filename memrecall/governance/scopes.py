"""The one definition of scope and workspace kinds, shared by governance and the store.

Pure enums and nothing else, so :mod:`memrecall.store` can import them without
pulling any I/O into :mod:`memrecall.governance`; both packages compare these same
members by identity (``is``).
"""

from __future__ import annotations

import enum

__all__ = ["ScopeType", "WorkspaceType"]


class WorkspaceType(enum.StrEnum):
    """The kinds of workspace a memory can be scoped to (seed 002 §5)."""

    LEARNING = "learning"
    TEACHING = "teaching"
    RESEARCH = "research"


class ScopeType(enum.StrEnum):
    """A memory's scope level: everywhere, or in one kind of workspace."""

    GLOBAL = "global"
    WORKSPACE = "workspace"
