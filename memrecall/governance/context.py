"""The trusted execution context and the scopes it can see (seed 002 §5, §11, §12).

The runtime builds an :class:`ExecutionContext` for every tool call from its own session
state; the model never supplies any part of it. Tool arguments are parsed separately
(:mod:`memrecall.governance.tool_args`) and can only *narrow* what the context allows.

Scopes are two-level: ``global`` (visible from everywhere) and ``workspace`` of one
workspace type. A workspace agent sees ``global`` plus its own workspace type and never
another's; a session with no workspace route sees ``global`` only.
"""

from __future__ import annotations

import enum

import attrs

from memrecall.governance.scopes import ScopeType, WorkspaceType

__all__ = [
    "GLOBAL",
    "ExecutionContext",
    "MemorySettings",
    "Scope",
    "ScopeType",
    "SessionMode",
    "WorkspaceRoute",
    "WorkspaceType",
    "visible_scopes",
]


class SessionMode(enum.StrEnum):
    """The conversation's memory mode (§11)."""

    NORMAL = "normal"  # reads and writes, as the workspace policy allows
    NO_WRITE = "no_write"  # reads only: no create, update, forget
    ISOLATED = "isolated"  # neither reads nor writes; nothing memory-derived is injected


@attrs.frozen
class Scope:
    """A memory scope. Invariant: ``workspace_type`` is set iff ``scope_type`` is workspace."""

    scope_type: ScopeType
    workspace_type: WorkspaceType | None = None

    def __attrs_post_init__(self) -> None:
        if (self.scope_type is ScopeType.WORKSPACE) != (self.workspace_type is not None):
            raise ValueError(
                "a workspace scope needs a workspace_type and a global scope must not have one"
            )

    @classmethod
    def workspace(cls, workspace_type: WorkspaceType) -> Scope:
        """The workspace scope of ``workspace_type``."""
        return cls(ScopeType.WORKSPACE, workspace_type)


GLOBAL = Scope(ScopeType.GLOBAL)


@attrs.frozen
class WorkspaceRoute:
    """The workspace the session runs in, as routed by the application."""

    workspace_type: WorkspaceType
    workspace_id: str


@attrs.frozen
class MemorySettings:
    """The user's memory switches (§11)."""

    saved_memory_enabled: bool = True  # false: no memory reads or writes at all
    auto_extract_enabled: bool = True  # false: no model-inferred candidates; explicit saves stay


@attrs.frozen
class ExecutionContext:
    """Who is calling, from where, in which mode: injected by the runtime, never a tool argument.

    ``route`` is ``None`` for a session outside any workspace.
    """

    user_id: str
    route: WorkspaceRoute | None = None
    mode: SessionMode = SessionMode.NORMAL
    settings: MemorySettings = MemorySettings()

    def __attrs_post_init__(self) -> None:
        if not self.user_id:
            raise ValueError("an execution context needs a non-empty user_id")


def visible_scopes(ctx: ExecutionContext) -> frozenset[Scope]:
    """The scopes whose memories this context may see: global plus its own workspace.

    Isolation and the settings are not applied here (see :func:`~.policy.decide`); this is
    the visibility rule of §5 alone.
    """
    if ctx.route is None:
        return frozenset({GLOBAL})
    return frozenset({GLOBAL, Scope.workspace(ctx.route.workspace_type)})
