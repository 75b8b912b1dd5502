"""The model-facing tool arguments (seed 002 §12) and how they become an :class:`AccessRequest`.

The schemas have no ``user_id``, ``username``, workspace id or session field: those come
only from the :class:`~.context.ExecutionContext`. Unknown fields are rejected, not ignored,
so an argument that tries to name another user or workspace is a ``bad_arguments``
refusal. The one workspace-related argument, ``list_core_memories(workspace_type=...)``,
can only *narrow* a listing: naming a workspace other than the context's own is refused as
``scope_not_visible`` by :func:`~.policy.decide`.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import msgspec

from memrecall.governance.context import GLOBAL, ExecutionContext, Scope, ScopeType, WorkspaceType
from memrecall.governance.policy import (
    AccessRequest,
    DenyReason,
    Operation,
    Refusal,
    ToolName,
)
from memrecall.governance.sensitive import USER_ORIGINS, WriteOrigin

__all__ = [
    "TOOL_ARGUMENTS",
    "ForgetArgs",
    "ListArgs",
    "SaveArgs",
    "SearchArgs",
    "TargetRecord",
    "ToolArgs",
    "UpdateArgs",
    "access_request",
    "parse_tool_arguments",
]


class SearchArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``search_core_memories(query, category?, limit?)``."""

    query: str
    category: str | None = None
    limit: int | None = None


class ListArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``list_core_memories(scope?, workspace_type?)``."""

    scope: ScopeType | None = None
    workspace_type: WorkspaceType | None = None


class SaveArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``save_core_memory(memory_key, content, category, scope_type)``."""

    memory_key: str
    content: str
    category: str
    scope_type: ScopeType


class UpdateArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``update_core_memory(memory_id, content?, category?)``."""

    memory_id: str
    content: str | None = None
    category: str | None = None


class ForgetArgs(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``forget_core_memory(memory_id)``."""

    memory_id: str


ToolArgs = SearchArgs | ListArgs | SaveArgs | UpdateArgs | ForgetArgs

TOOL_ARGUMENTS: dict[ToolName, type[ToolArgs]] = {
    ToolName.SEARCH: SearchArgs,
    ToolName.LIST: ListArgs,
    ToolName.SAVE: SaveArgs,
    ToolName.UPDATE: UpdateArgs,
    ToolName.FORGET: ForgetArgs,
}

_OPERATIONS = {
    ToolName.SEARCH: Operation.READ,
    ToolName.LIST: Operation.READ,
    ToolName.UPDATE: Operation.UPDATE,
    ToolName.FORGET: Operation.FORGET,
}


@attrs.frozen
class TargetRecord:
    """What the service looked up for an ``update``/``forget`` by memory id: owner and scope."""

    memory_id: str
    owner_user_id: str
    scope: Scope


def parse_tool_arguments(tool: ToolName, arguments: Mapping[str, object]) -> ToolArgs | Refusal:
    """Validate a tool call's arguments: the typed arguments, or a ``bad_arguments`` refusal.

    The refusal message names the offending field, never its value.
    """
    schema = TOOL_ARGUMENTS.get(tool)
    operation = _OPERATIONS.get(tool, Operation.WRITE_EXPLICIT)
    if schema is None:
        return Refusal(operation, DenyReason.BAD_ARGUMENTS, f"{tool.value} is not an agent tool")
    try:
        return msgspec.convert(dict(arguments), type=schema, strict=True)
    except msgspec.ValidationError as exc:
        return Refusal(operation, DenyReason.BAD_ARGUMENTS, f"bad arguments: {exc}")


def _workspace_scope(ctx: ExecutionContext, operation: Operation) -> Scope | Refusal:
    if ctx.route is None:
        return Refusal(operation, DenyReason.NO_WORKSPACE, "this session has no workspace")
    return Scope.workspace(ctx.route.workspace_type)


def access_request(
    ctx: ExecutionContext,
    args: ToolArgs,
    *,
    origin: WriteOrigin = WriteOrigin.USER_EXPLICIT,
    target: TargetRecord | None = None,
) -> AccessRequest | Refusal:
    """The request a tool call amounts to: scopes resolved from the trusted route.

    ``origin`` is the runtime's knowledge of where the text came from; ``target`` is the
    record the service found for ``update``/``forget`` (required for those).
    """
    match args:
        case SearchArgs():
            return AccessRequest(Operation.READ, ToolName.SEARCH, category=args.category)
        case ListArgs():
            if args.scope is ScopeType.GLOBAL:
                if args.workspace_type is not None:
                    return Refusal(
                        Operation.READ,
                        DenyReason.BAD_ARGUMENTS,
                        "a global listing takes no workspace_type",
                    )
                return AccessRequest(Operation.READ, ToolName.LIST, scope=GLOBAL)
            if args.workspace_type is not None:
                scope: Scope | Refusal = Scope.workspace(args.workspace_type)
            elif args.scope is ScopeType.WORKSPACE:
                scope = _workspace_scope(ctx, Operation.READ)
            else:
                return AccessRequest(Operation.READ, ToolName.LIST)
            if isinstance(scope, Refusal):
                return scope
            return AccessRequest(Operation.READ, ToolName.LIST, scope=scope)
        case SaveArgs():
            operation = (
                Operation.WRITE_EXPLICIT if origin in USER_ORIGINS else Operation.WRITE_INFERRED
            )
            if args.scope_type is ScopeType.GLOBAL:
                scope = GLOBAL
            else:
                scope = _workspace_scope(ctx, operation)
                if isinstance(scope, Refusal):
                    return scope
            return AccessRequest(
                operation,
                ToolName.SAVE,
                scope=scope,
                origin=origin,
                key=args.memory_key,
                content=args.content,
                category=args.category,
            )
        case UpdateArgs() | ForgetArgs():
            tool = ToolName.UPDATE if isinstance(args, UpdateArgs) else ToolName.FORGET
            operation = _OPERATIONS[tool]
            if target is None or target.memory_id != args.memory_id:
                return Refusal(operation, DenyReason.BAD_ARGUMENTS, "no such memory")
            content = args.content if isinstance(args, UpdateArgs) else None
            category = args.category if isinstance(args, UpdateArgs) else None
            return AccessRequest(
                operation,
                tool,
                scope=target.scope,
                owner_user_id=target.owner_user_id,
                origin=origin,
                content=content,
                category=category,
            )
    raise AssertionError(f"unhandled tool arguments {type(args).__name__}")  # pragma: no cover
