"""The seed-003 memory tools over the store: remember, recall, expand, prune, and forget.

The contract itself is pure (:mod:`memrecall.tools.contract`); this module builds its
:class:`StoreView` from a :class:`~memrecall.store.MemoryService`, asks governance whether the
caller may act (:func:`memrecall.governance.decide` over a trusted
:class:`~memrecall.governance.ExecutionContext`), and carries out what the contract returns:
writes, hit counts and forgets. The field mapping is documented in docs/tools.md ("Mapping").

Identity, mode and the session's project come from :class:`ToolSession`, built by the runtime
(the MCP server's command line); no tool argument can name a user or a mode.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime

import attrs
import msgspec
import trio

from memrecall.governance import (
    DEFAULT_POLICY,
    GLOBAL,
    AccessRequest,
    ExecutionContext,
    Operation,
    Outcome,
    PolicyDocument,
    Scope,
    ToolName,
    WriteOrigin,
    decide,
    screen_write,
)
from memrecall.governance import Refusal as PolicyRefusal
from memrecall.store import (
    ChangedVia,
    InvalidInput,
    KeyConflict,
    MemoryScope,
    MemoryService,
    NotFound,
    WorkspaceType,
    normalize_key,
)
from memrecall.store import MemoryRecord as StoreRecord
from memrecall.store.contract_fields import ContractFields
from memrecall.store.service import utc_now

from .contract import (
    ExpandResult,
    MemoryRecord,
    PrunePlan,
    RecallResult,
    Refusal,
    RememberResult,
    ScoreConfig,
    StoreStamp,
    StoreView,
    ValidRemember,
    check_gates,
    expand,
    plan_prune,
    recall,
    record_bytes,
    validate_remember,
)
from .contract.records import GLOBAL_SCOPE
from .contract.validate import sanitize_scope_for_recall

__all__ = [
    "DEFAULT_MAX_BYTES",
    "FORGET_DESCRIPTION",
    "ForgetDone",
    "MemoryTools",
    "ToolSession",
    "store_key",
]

DEFAULT_MAX_BYTES = 1_000_000
"""The store's byte cap for the tools when none is configured (ours: about 1 MB of records)."""

FORGET_DESCRIPTION = (
    "Forget one memory for good by id (ids from memory_recall): its body, history and tool "
    "fields are deleted and the database files scrubbed. Irreversible."
)
"""The description of the fifth tool, memory_forget (not part of seed 003)."""

_KEY_MAX = 128
_HASHED_KEY_PREFIX = 100


class ForgetDone(msgspec.Struct, frozen=True, kw_only=True):
    """What memory_forget did: the id, whether the files were scrubbed, the records left."""

    id: str
    scrubbed: bool
    records: int


@attrs.frozen
class ToolSession:
    """The trusted session the tools act for (set by the runtime, never by the model).

    ``project`` is the session's project scope (``project:<name>``) or ``None``: recall without
    a scope then searches that project plus global, and no call may name another project.
    """

    context: ExecutionContext
    project: str | None = None
    max_bytes: int = DEFAULT_MAX_BYTES
    config: ScoreConfig = attrs.field(factory=ScoreConfig)
    policies: PolicyDocument = DEFAULT_POLICY
    origin: WriteOrigin = WriteOrigin.USER_EXPLICIT


def store_key(kind: str, title: str, scope: str) -> str:
    """The store key of a tool write: the kind and title, made unique per project scope.

    A global write whose normalised ``kind title`` fits is that text; otherwise (a project
    scope, or a long title) the first 100 characters plus a 12-hex hash of the full text and
    the scope, so two projects never share a key and the 128-character limit holds.
    """
    base = normalize_key(f"{kind} {title}")
    if scope == GLOBAL_SCOPE and len(base) <= _KEY_MAX:
        return base
    digest = hashlib.sha256(f"{base}\0{scope}".encode()).hexdigest()[:12]
    return f"{base[:_HASHED_KEY_PREFIX].rstrip('_')}_{digest}"


def _unix(value: datetime) -> float:
    return value.timestamp()


def _policy_refusal(refusal: PolicyRefusal) -> Refusal:
    return Refusal(
        code=refusal.reason.value.replace("_", "-"), field="session", message=refusal.message
    )


def _tool_record(record: StoreRecord, fields: ContractFields | None) -> MemoryRecord:
    """The contract's view of a store record (side row fields, else derived ones)."""
    fields = fields or ContractFields()
    scope = fields.scope
    if scope is None:
        scope = GLOBAL_SCOPE if record.scope.workspace is None else record.scope.label
    return MemoryRecord(
        id=record.memory_id,
        kind=record.category,
        title=fields.title if fields.title is not None else record.key,
        body=record.content,
        tags=fields.tags if fields.tags is not None else (),
        source=fields.source if fields.source is not None else f"store:{record.source_type}",
        scope=scope,
        hits=fields.hits,
        created_at=_unix(record.created_at),
        updated_at=_unix(record.updated_at),
    )


def _stamp(records: Sequence[MemoryRecord], revision: int) -> StoreStamp:
    """Which state of the store a view is: bytes of the records (hit counts excluded, so an
    expand elsewhere is not a change), newest update in ms, and the user's memory_revision."""
    size = sum(record_bytes(msgspec.structs.replace(r, hits=0)) for r in records)
    newest = max((r.updated_at for r in records), default=0.0)
    return StoreStamp(size=size, mtime_ms=round(newest * 1000.0, 3), revision=revision)


class MemoryTools:
    """The five memory tools of one trusted session over a :class:`MemoryService`.

    Every method returns the contract's result or a :class:`Refusal` (never raises for a
    refusal). ``remember``, executed prunes and ``forget`` run one at a time (a
    :class:`trio.Lock`), so this session's own writes never trip ``store-changed-externally``.
    """

    def __init__(
        self,
        service: MemoryService,
        session: ToolSession,
        *,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.service = service
        self.session = session
        self._clock = clock
        self._write_lock = trio.Lock()
        self._seen: StoreStamp | None = None
        """The stamp of the last view this session loaded: the writer's view of §3."""

    # ------------------------------------------------------------------ plumbing

    @property
    def user_id(self) -> str:
        """The trusted user every call acts for."""
        return self.session.context.user_id

    async def load_view(self) -> StoreView:
        """A snapshot of the user's live records (every scope this session can read)."""
        store = self.service.store
        now = self._clock()
        scopes = [MemoryScope.global_()]
        route = self.session.context.route
        if route is not None:
            scopes.append(MemoryScope.of_workspace(WorkspaceType(route.workspace_type.value)))
        snap = await trio.to_thread.run_sync(
            functools.partial(store.snapshot, self.user_id, scopes)
        )
        revision, live = snap
        fields = await trio.to_thread.run_sync(
            functools.partial(store.contract_fields, self.user_id)
        )
        records = tuple(
            _tool_record(r, fields.get(r.memory_id)) for r in live if not r.expired(now)
        )
        return StoreView(
            records=records, max_bytes=self.session.max_bytes, stamp=_stamp(records, revision)
        )

    def _allow(
        self,
        operation: Operation,
        tool: ToolName,
        *,
        scope: Scope | None = None,
        key: str | None = None,
        content: str | None = None,
        category: str | None = None,
    ) -> Refusal | None:
        request = AccessRequest(
            operation,
            tool,
            scope=scope,
            origin=self.session.origin,
            key=key,
            content=content,
            category=category,
        )
        decision = decide(self.session.context, self.session.policies, request)
        if isinstance(decision, PolicyRefusal):
            return _policy_refusal(decision)
        if decision.outcome is Outcome.CANDIDATE:
            return Refusal(
                code="candidate-only",
                field="session",
                message="this session may only propose memories; nothing was written",
            )
        return None

    def _project_refusal(self, scope: str | None) -> Refusal | None:
        project = self.session.project
        if project is None or scope is None or scope in (GLOBAL_SCOPE, project):
            return None
        return Refusal(
            code="scope-not-visible",
            field="scope",
            message=f"this session works in {project}: use that scope or omit it for global",
        )

    # ------------------------------------------------------------------ tools

    async def remember(
        self,
        *,
        kind: object,
        title: object,
        body: object,
        tags: object,
        source: object,
        scope: object = None,
    ) -> RememberResult | Refusal:
        """memory_remember: session mode, the six checks, the secret screen, both gates, write."""
        refusal = self._allow(Operation.WRITE_EXPLICIT, ToolName.SAVE, scope=GLOBAL)
        if refusal is not None:
            return refusal
        valid = validate_remember(
            kind=kind, title=title, body=body, tags=tags, source=source, scope=scope
        )
        if isinstance(valid, Refusal):
            return valid
        refusal = self._project_refusal(valid.scope)
        if refusal is not None:
            return refusal
        refusal = self._allow(
            Operation.WRITE_EXPLICIT,
            ToolName.SAVE,
            scope=GLOBAL,
            key=valid.title,
            content=valid.body,
            category=valid.kind,
        )
        if refusal is not None:
            return refusal
        found = screen_write(self.session.origin, *valid.tags, valid.source)
        if found is not None:
            return Refusal(code="secret", field="tags", message=found.message)
        async with self._write_lock:
            return await self._remember_locked(valid)

    async def _remember_locked(self, valid: ValidRemember) -> RememberResult | Refusal:
        view = await self.load_view()
        seen = self._seen if self._seen is not None else view.stamp
        self._seen = view.stamp
        now = _unix(self._clock())
        placeholder = valid.record("0" * 32, now)
        refusal = check_gates(
            placeholder, max_bytes=self.session.max_bytes, seen=seen, current=view.stamp
        )
        if refusal is not None:
            return refusal
        key = store_key(valid.kind, valid.title, valid.scope)
        scope = MemoryScope.global_()
        fields = ContractFields(
            title=valid.title, tags=valid.tags, source=valid.source, scope=valid.scope, hits=0
        )
        # the record and its side row are written in one transaction (either call)
        try:
            try:
                saved = await self.service.save(
                    self.user_id,
                    scope,
                    key,
                    valid.body,
                    valid.kind,
                    changed_via=ChangedVia.AGENT_TOOL,
                    contract_fields=fields,
                )
                memory_id = saved.record.memory_id
            except KeyConflict as conflict:
                # same kind, title and scope: the new body becomes the next revision
                memory_id = conflict.memory_id
                old = next((r for r in view.records if r.id == memory_id), None)
                if old is not None:
                    fields = attrs.evolve(
                        fields,
                        hits=old.hits,
                        tags=tuple(dict.fromkeys(valid.tags + old.tags))[:12],
                    )
                await self.service.update(
                    self.user_id,
                    memory_id,
                    expected_revision=conflict.current_revision,
                    content=valid.body,
                    changed_via=ChangedVia.AGENT_TOOL,
                    contract_fields=fields,
                )
        except InvalidInput as err:
            return Refusal(
                code="store-refused", field="body", message=f"{err}; nothing was written"
            )
        after = await self.load_view()
        self._seen = after.stamp
        return RememberResult(id=memory_id, records=len(after.records), bytes_used=after.bytes_used)

    async def recall(
        self, query: str, *, limit: int | None = None, scope: str | None = None
    ) -> RecallResult | Refusal:
        """memory_recall: L1 rows only (no bodies), scoped to ``scope`` (or the session's)."""
        refusal = self._allow(Operation.READ, ToolName.SEARCH)
        if refusal is not None:
            return refusal
        if scope is not None:
            refusal = self._project_refusal(sanitize_scope_for_recall(scope))
            if refusal is not None:
                return refusal
        view = await self.load_view()
        self._seen = view.stamp
        chosen = scope if scope is not None else self.session.project
        return recall(view, query, limit=limit, scope=chosen, config=self.session.config)

    async def expand(self, ids: Sequence[str]) -> ExpandResult | Refusal:
        """memory_expand: bodies of the found ids, the rest in ``missing``; hits persisted."""
        refusal = self._allow(Operation.READ, ToolName.SEARCH)
        if refusal is not None:
            return refusal
        view = await self.load_view()
        self._seen = view.stamp
        result = expand(view, ids)
        if result.found and self._allow(Operation.UPDATE, ToolName.UPDATE, scope=GLOBAL) is None:
            store = self.service.store
            ids_found = [r.id for r in result.found]
            await trio.to_thread.run_sync(
                functools.partial(store.add_hits, self.user_id, ids_found)
            )
        return result

    async def prune(self, *, dry_run: object = True) -> PrunePlan | Refusal:
        """memory_prune: a plan; carried out (merges, evictions as forgets) only for ``False``."""
        execute = dry_run is False
        if execute:
            refusal = self._allow(Operation.FORGET, ToolName.FORGET, scope=GLOBAL)
        else:
            refusal = self._allow(Operation.READ, ToolName.SEARCH)
        if refusal is not None:
            return refusal
        if not execute:
            view = await self.load_view()
            self._seen = view.stamp
            return plan_prune(
                view, now=_unix(self._clock()), dry_run=True, config=self.session.config
            )
        async with self._write_lock:
            view = await self.load_view()
            plan = plan_prune(
                view, now=_unix(self._clock()), dry_run=False, config=self.session.config
            )
            store = self.service.store
            for merge in plan.merges:
                kept = merge.record
                fields = ContractFields(
                    title=kept.title,
                    tags=kept.tags,
                    source=kept.source,
                    scope=kept.scope,
                    hits=kept.hits,
                )
                for absorbed in merge.absorbed:
                    await self._forget_quietly(absorbed)
                with contextlib.suppress(NotFound):
                    await trio.to_thread.run_sync(
                        functools.partial(store.put_contract_fields, self.user_id, kept.id, fields)
                    )
            for eviction in plan.evictions:
                await self._forget_quietly(eviction.id)
            self._seen = (await self.load_view()).stamp
            return plan

    async def _forget_quietly(self, memory_id: str) -> None:
        with contextlib.suppress(NotFound):  # already gone: another session pruned or forgot it
            await self.service.forget(self.user_id, memory_id)

    async def forget(self, memory_id: str) -> ForgetDone | Refusal:
        """memory_forget: delete one memory for good (body, history, tool fields, scrub)."""
        refusal = self._allow(Operation.FORGET, ToolName.FORGET, scope=GLOBAL)
        if refusal is not None:
            return refusal
        async with self._write_lock:
            try:
                done = await self.service.forget(self.user_id, memory_id)
            except NotFound:
                return Refusal(
                    code="not-found",
                    field="id",
                    message="no such memory (ids come from memory_recall); nothing was deleted",
                )
            view = await self.load_view()
            self._seen = view.stamp
        return ForgetDone(id=memory_id, scrubbed=done.scrubbed, records=len(view.records))
