"""Effective memory permission: one function decides every operation (seed 002 §11, §15, §17).

    effective permission = workspace policy ∩ session mode ∩ tool scope ∩ identity

:func:`decide` takes the trusted :class:`~.context.ExecutionContext`, the policy document
and an :class:`AccessRequest` (what is being attempted, built by the runtime, never by the
model) and returns :class:`Allowed` or a :class:`Refusal`. It is pure and total: every
request gets exactly one answer, and the checks run in a fixed order, so the reason is
deterministic (the first failing check):

1. tool scope: the tool may perform the operation at all;
2. settings: ``saved_memory_enabled=false`` stops every read and write;
3. session mode: ``isolated`` stops everything, ``no_write`` everything but reads;
4. identity: a target record belongs to the context's user;
5. visibility: the scope is global or the context's own workspace;
6. origin: only the user's request or confirmation writes an active memory; model-inferred
   (and tool/web) text becomes a candidate, and only while ``auto_extract_enabled``;
7. workspace policy (data): allowed operations, writable scope types, denied categories,
   denied subject patterns;
8. content: secrets and untrusted remember-instructions (:mod:`.sensitive`).

The management API (the user acting on their own memories from a settings screen, not an
agent turn) is the one caller that session mode, settings, tool scope and visibility do not
bind; identity, the workspace content policy and secret screening still apply.

Workspace policies are data: :func:`decode_policy` reads a JSON document into a
:class:`PolicyDocument`; :data:`DEFAULT_POLICY_JSON` is the shipped one.
"""

from __future__ import annotations

import enum
import functools

import attrs
import msgspec
import regex

from memrecall.governance.context import (
    GLOBAL,
    ExecutionContext,
    MemorySettings,
    Scope,
    ScopeType,
    SessionMode,
    WorkspaceType,
    visible_scopes,
)
from memrecall.governance.sensitive import (
    USER_ORIGINS,
    SecretKind,
    WriteOrigin,
    screen_write,
)

__all__ = [
    "DEFAULT_POLICY",
    "DEFAULT_POLICY_JSON",
    "POLICY_DENIED",
    "TOOL_SCOPES",
    "WRITE_OPERATIONS",
    "AccessRequest",
    "Allowed",
    "Decision",
    "DenyReason",
    "Operation",
    "Outcome",
    "PolicyDeniedEvent",
    "PolicyDocument",
    "Refusal",
    "ToolName",
    "WorkspacePolicy",
    "decide",
    "decode_policy",
    "policy_denied_event",
    "policy_table",
]


class Operation(enum.StrEnum):
    """Every kind of memory operation a caller can attempt."""

    READ = "read"  # search, list, inject into a prompt
    WRITE_EXPLICIT = "write_explicit"  # save on the user's explicit request
    WRITE_INFERRED = "write_inferred"  # propose a memory the model inferred (candidate only)
    UPDATE = "update"  # change an existing memory by id
    FORGET = "forget"  # irreversible deletion
    SUPPRESS = "suppress"  # hide / restore (management)
    DECIDE_CANDIDATE = "decide_candidate"  # accept or reject a pending candidate


WRITE_OPERATIONS = frozenset(set(Operation) - {Operation.READ})
_CONTENT_OPERATIONS = frozenset(
    {
        Operation.WRITE_EXPLICIT,
        Operation.WRITE_INFERRED,
        Operation.UPDATE,
        Operation.DECIDE_CANDIDATE,
    }
)


_NEW_WRITES = frozenset({Operation.WRITE_EXPLICIT, Operation.WRITE_INFERRED})


class ToolName(enum.StrEnum):
    """The callers: the five agent tools of §12, and the user's management API."""

    SEARCH = "search_core_memories"
    LIST = "list_core_memories"
    SAVE = "save_core_memory"
    UPDATE = "update_core_memory"
    FORGET = "forget_core_memory"
    MANAGEMENT_API = "management_api"


TOOL_SCOPES: dict[ToolName, frozenset[Operation]] = {
    ToolName.SEARCH: frozenset({Operation.READ}),
    ToolName.LIST: frozenset({Operation.READ}),
    ToolName.SAVE: frozenset({Operation.WRITE_EXPLICIT, Operation.WRITE_INFERRED}),
    ToolName.UPDATE: frozenset({Operation.UPDATE}),
    ToolName.FORGET: frozenset({Operation.FORGET}),
    ToolName.MANAGEMENT_API: frozenset(Operation),
}


class Outcome(enum.StrEnum):
    """What an allowed operation may produce."""

    READ = "read"  # results from the allowed scopes
    ACTIVE = "active"  # an active memory may be written (after conflict classification)
    CANDIDATE = "candidate"  # only a pending candidate may be created
    CHANGE = "change"  # forget / suppress / decide on an existing record


class DenyReason(enum.StrEnum):
    """Why a request was refused (the audit event carries this, never the content)."""

    TOOL_SCOPE = "tool_scope"
    MEMORY_DISABLED = "memory_disabled"
    SESSION_ISOLATED = "session_isolated"
    SESSION_NO_WRITE = "session_no_write"
    NOT_OWNER = "not_owner"
    SCOPE_NOT_VISIBLE = "scope_not_visible"
    NO_WORKSPACE = "no_workspace"
    UNTRUSTED_ORIGIN = "untrusted_origin"
    AUTO_EXTRACT_DISABLED = "auto_extract_disabled"
    WORKSPACE_OPERATION = "workspace_operation"
    WORKSPACE_SCOPE = "workspace_scope"
    WORKSPACE_CATEGORY = "workspace_category"
    WORKSPACE_SUBJECT = "workspace_subject"
    SECRET = "secret"
    BAD_ARGUMENTS = "bad_arguments"


# --------------------------------------------------------------------------- policy data


class WorkspacePolicy(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What one workspace allows, as data.

    ``operations``: the operations the workspace permits at all. ``writable_scopes``: the
    scope types its writes may target (e.g. only ``workspace``). ``denied_categories``:
    categories refused on write (compared case-insensitively). ``denied_subject_patterns``:
    ``regex`` patterns, matched case-insensitively (``(?-i:...)`` turns that off locally, e.g.
    for a capitalised name) against the key and the content; any match refuses the write
    (how a teaching workspace refuses memories about students).
    """

    operations: frozenset[Operation] = frozenset(Operation)
    writable_scopes: frozenset[ScopeType] = frozenset(ScopeType)
    denied_categories: frozenset[str] = frozenset()
    denied_subject_patterns: tuple[str, ...] = ()
    note: str = ""


class PolicyDocument(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The memory policy of every workspace type, plus ``default`` for sessions outside one."""

    version: int
    default: WorkspacePolicy = WorkspacePolicy()
    workspaces: dict[WorkspaceType, WorkspacePolicy] = {}

    def for_workspace(self, workspace_type: WorkspaceType | None) -> WorkspacePolicy:
        """The policy that governs calls made from ``workspace_type`` (None: no workspace)."""
        if workspace_type is None:
            return self.default
        return self.workspaces.get(workspace_type, self.default)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.IGNORECASE)


def decode_policy(data: bytes | str) -> PolicyDocument:
    """Decode and validate a JSON policy document; a bad one raises ``ValueError`` naming where."""
    try:
        doc = msgspec.json.decode(data, type=PolicyDocument)
    except msgspec.ValidationError as exc:
        raise ValueError(f"invalid memory policy document: {exc}") from None
    named = [("default", doc.default), *((w.value, p) for w, p in doc.workspaces.items())]
    for name, policy in named:
        for i, pattern in enumerate(policy.denied_subject_patterns):
            try:
                _compiled(pattern)
            except regex.error as exc:
                raise ValueError(
                    f"invalid memory policy: {name}.denied_subject_patterns[{i}]: {exc}"
                ) from None
    return doc


DEFAULT_POLICY_JSON = r"""{
  "version": 1,
  "default": {"note": "sessions outside any workspace"},
  "workspaces": {
    "learning": {"note": "learning preferences, long-term learning goals, explanation style"},
    "teaching": {
      "note": "the teacher's own teaching preferences; never students or class data",
      "denied_categories": ["student", "student_record", "class_data", "grades"],
      "denied_subject_patterns": [
        "\\b(?:student|pupil|learner)s?\\s+(?:named\\s+|called\\s+)?(?-i:\\p{Lu}\\p{Ll}+)",
        "\\b(?-i:\\p{Lu}\\p{Ll}+)\\s+(?:in|from)\\s+(?:my\\s+)?(?:class|grade|period|form)\\s*\\w*",
        "\\b(?:student|pupil)(?:'s)?\\s+(?:id|number|grades?|marks?|scores?|iep|diagnosis)\\b",
        "\\b(?:grades?|marks?|scores?)\\s+(?:of|for)\\s+(?-i:\\p{Lu}\\p{Ll}+)",
        "学生\\p{Han}{0,4}(?:成绩|情况|病|家长|电话|学号)",
        "班级\\p{Han}{0,4}(?:名单|成绩|数据)"
      ]
    },
    "research": {
      "note": "the user's own research habits; project rules belong to the project profile",
      "denied_categories": ["project_rule", "project_instruction"]
    }
  }
}"""

DEFAULT_POLICY = decode_policy(DEFAULT_POLICY_JSON)

# --------------------------------------------------------------------------- decision


@attrs.frozen
class AccessRequest:
    """One attempted operation, assembled by the runtime from the tool call and the store.

    ``scope``: the target scope (for a read, the one scope asked for, or None for all
    visible ones). ``owner_user_id``: the owner of an existing target record (None for a
    new write or a read). ``origin``: where the written text came from. ``key``,
    ``content`` and ``category`` are screened for writes and never leave this module.
    """

    operation: Operation
    tool: ToolName
    scope: Scope | None = None
    owner_user_id: str | None = None
    origin: WriteOrigin = WriteOrigin.USER_EXPLICIT
    key: str | None = None
    content: str | None = attrs.field(default=None, repr=False)
    category: str | None = None


@attrs.frozen
class Allowed:
    """Permission granted: ``outcome`` says what may happen, ``scopes`` where."""

    operation: Operation
    outcome: Outcome
    scopes: frozenset[Scope]


@attrs.frozen
class Refusal:
    """A structured refusal: the reason enum, a message safe to show, the secret kind if any."""

    operation: Operation
    reason: DenyReason
    message: str
    secret_kind: SecretKind | None = None


Decision = Allowed | Refusal


def _readable_scopes(ctx: ExecutionContext, tool: ToolName) -> frozenset[Scope]:
    if tool is ToolName.MANAGEMENT_API:
        return frozenset({GLOBAL, *(Scope.workspace(w) for w in WorkspaceType)})
    return visible_scopes(ctx)


def _governing_policy(
    ctx: ExecutionContext, request: AccessRequest, policies: PolicyDocument
) -> WorkspacePolicy:
    if request.tool is ToolName.MANAGEMENT_API:
        scope = request.scope
        return policies.for_workspace(scope.workspace_type if scope else None)
    return policies.for_workspace(ctx.route.workspace_type if ctx.route else None)


def decide(ctx: ExecutionContext, policies: PolicyDocument, request: AccessRequest) -> Decision:
    """The effective permission for ``request`` in ``ctx``: :class:`Allowed` or :class:`Refusal`."""
    op = request.operation

    def refuse(reason: DenyReason, message: str, kind: SecretKind | None = None) -> Refusal:
        return Refusal(op, reason, message, kind)

    agent = request.tool is not ToolName.MANAGEMENT_API
    if op not in TOOL_SCOPES[request.tool]:
        return refuse(DenyReason.TOOL_SCOPE, f"{request.tool.value} cannot perform {op.value}")
    if agent and not ctx.settings.saved_memory_enabled:
        return refuse(DenyReason.MEMORY_DISABLED, "saved memory is turned off for this user")
    if agent and ctx.mode is SessionMode.ISOLATED:
        return refuse(DenyReason.SESSION_ISOLATED, "this session does not use memory")
    if agent and ctx.mode is SessionMode.NO_WRITE and op in WRITE_OPERATIONS:
        return refuse(DenyReason.SESSION_NO_WRITE, "this session may read memory but not change it")
    if request.owner_user_id is not None and request.owner_user_id != ctx.user_id:
        return refuse(DenyReason.NOT_OWNER, "no such memory")
    readable = _readable_scopes(ctx, request.tool)
    if request.scope is not None and request.scope not in readable:
        return refuse(DenyReason.SCOPE_NOT_VISIBLE, "that scope is not visible from here")
    if op is Operation.READ:
        scopes = readable if request.scope is None else frozenset({request.scope})
        return Allowed(op, Outcome.READ, scopes)
    if request.scope is None:
        return refuse(DenyReason.BAD_ARGUMENTS, f"{op.value} needs a target scope")

    user_origin = request.origin in USER_ORIGINS
    outcome = Outcome.CHANGE
    if op in (Operation.WRITE_EXPLICIT, Operation.UPDATE, Operation.WRITE_INFERRED):
        inferred = op is Operation.WRITE_INFERRED or not user_origin
        if op is Operation.WRITE_EXPLICIT and not user_origin:
            return refuse(
                DenyReason.UNTRUSTED_ORIGIN,
                "only the user's own request or confirmation saves a memory",
            )
        if inferred and not ctx.settings.auto_extract_enabled:
            return refuse(
                DenyReason.AUTO_EXTRACT_DISABLED, "memories are not inferred for this user"
            )
        outcome = Outcome.CANDIDATE if inferred else Outcome.ACTIVE
    elif not user_origin:
        return refuse(DenyReason.UNTRUSTED_ORIGIN, f"{op.value} needs the user's own request")

    policy = _governing_policy(ctx, request, policies)
    if op not in policy.operations:
        return refuse(DenyReason.WORKSPACE_OPERATION, f"this workspace does not allow {op.value}")
    if op in _CONTENT_OPERATIONS:
        if request.scope.scope_type not in policy.writable_scopes:
            return refuse(
                DenyReason.WORKSPACE_SCOPE,
                f"this workspace does not save {request.scope.scope_type.value} memories",
            )
        denied = {c.casefold() for c in policy.denied_categories}
        if request.category is not None and request.category.casefold() in denied:
            return refuse(
                DenyReason.WORKSPACE_CATEGORY,
                "this workspace does not keep memories of that category",
            )
        subject = f"{request.key or ''}\n{request.content or ''}"
        for pattern in policy.denied_subject_patterns:
            if _compiled(pattern).search(subject, timeout=1.0):
                return refuse(
                    DenyReason.WORKSPACE_SUBJECT,
                    "this workspace does not keep memories about that subject",
                )
        texts = [t for t in (request.key, request.content, request.category) if t]
        found = screen_write(request.origin, *texts)
        if found is not None:
            return refuse(DenyReason.SECRET, found.message, found.kind)
    return Allowed(op, outcome, frozenset({request.scope}))


# --------------------------------------------------------------------------- audit

POLICY_DENIED = "memory.policy_denied"


class PolicyDeniedEvent(msgspec.Struct, frozen=True, kw_only=True):
    """The payload of a ``memory.policy_denied`` audit event: ids and enums, never content.

    No key, no content and no content hash: a refused write may be a short secret, and a
    hash of a short secret can be brute-forced. The service adds the event id and the time.
    """

    event_type: str = POLICY_DENIED
    user_id: str
    workspace_type: WorkspaceType | None
    workspace_id: str | None
    session_mode: SessionMode
    tool: ToolName
    operation: Operation
    reason: DenyReason
    secret_kind: SecretKind | None = None
    scope_type: ScopeType | None = None
    target_workspace_type: WorkspaceType | None = None
    memory_id: str | None = None
    request_id: str | None = None


def policy_denied_event(
    ctx: ExecutionContext,
    request: AccessRequest,
    refusal: Refusal,
    *,
    memory_id: str | None = None,
    request_id: str | None = None,
) -> PolicyDeniedEvent:
    """The audit payload for ``refusal`` of ``request`` in ``ctx``."""
    route = ctx.route
    return PolicyDeniedEvent(
        user_id=ctx.user_id,
        workspace_type=route.workspace_type if route else None,
        workspace_id=route.workspace_id if route else None,
        session_mode=ctx.mode,
        tool=request.tool,
        operation=refusal.operation,
        reason=refusal.reason,
        secret_kind=refusal.secret_kind,
        scope_type=request.scope.scope_type if request.scope else None,
        target_workspace_type=request.scope.workspace_type if request.scope else None,
        memory_id=memory_id,
        request_id=request_id,
    )


# --------------------------------------------------------------------------- the table

_TABLE_TOOLS = {
    Operation.READ: ToolName.SEARCH,
    Operation.WRITE_EXPLICIT: ToolName.SAVE,
    Operation.WRITE_INFERRED: ToolName.SAVE,
    Operation.UPDATE: ToolName.UPDATE,
    Operation.FORGET: ToolName.FORGET,
    Operation.SUPPRESS: ToolName.MANAGEMENT_API,
    Operation.DECIDE_CANDIDATE: ToolName.MANAGEMENT_API,
}


def policy_table() -> str:
    """Operation × session mode × settings as Markdown (docs/governance.md embeds it verbatim).

    Each cell is :func:`decide` on an agent call with a global target, the user's own record,
    the default policy and harmless content: the write origin is the user's for every
    operation except ``write_inferred`` (model-inferred).
    """
    settings = [
        ("on/on", True, True),
        ("on/off", True, False),
        ("off/·", False, True),
    ]
    header = ["operation (caller)"]
    for mode in SessionMode:
        header.extend(f"{mode.value} {name}" for name, _, _ in settings)
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]

    for op in Operation:
        tool = _TABLE_TOOLS[op]
        origin = (
            WriteOrigin.MODEL_INFERRED
            if op is Operation.WRITE_INFERRED
            else WriteOrigin.USER_EXPLICIT
        )
        cells = [f"`{op.value}` ({tool.value})"]
        for mode in SessionMode:
            for _, saved, auto in settings:
                ctx = ExecutionContext("u", None, mode, MemorySettings(saved, auto))
                request = AccessRequest(
                    op,
                    tool,
                    scope=None if op is Operation.READ else GLOBAL,
                    owner_user_id=None if op in _NEW_WRITES else "u",
                    origin=origin,
                    key="k",
                    content="prefers examples",
                    category="preference",
                )
                result = decide(ctx, DEFAULT_POLICY, request)
                if isinstance(result, Allowed):
                    cells.append(result.outcome.value)
                else:
                    cells.append(f"✗ {result.reason.value}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
