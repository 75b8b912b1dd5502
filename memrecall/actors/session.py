"""The session actor (one per conversation) and the runtime's handle to it.

The session actor routes the runtime's events: a user query cancels the
pending plan (``new_query``) and starts a new plan actor; tool results, turn
ends, aborts, resets and shutdown go to the pending plan. It also owns the
session's surfaced set: once the runtime has received a document (in a fast
or a refined block) it is excluded from later recalls of the session until a
reset. The set changes only through messages
(:mod:`memrecall.events.surfaced`): plan actors send :class:`Surfaced` to the
session's channel as they hand a block over, and the session applies what is
pending, in order, before it routes the runtime's next call (and whenever
:attr:`Session.surfaced` is read). An observer with a ``surfaced`` method
(:class:`SurfacedObserver`; the event log is one) sees every change as it is
applied, the clearing of a reset included.

:class:`Session` is what a runtime holds. Its methods send an event to the
session actor and wait only for that event to be processed, except
:meth:`Session.user_query`, which also waits (at most 100 ms) for the plan's
initial delivery point.

One ``user_query`` at a time per session: a second call while the first is
still waiting for its initial delivery point raises :class:`SessionBusyError`
in the second caller (the first goes on undisturbed). A new turn normally
starts after the previous ``user_query`` returned, which is never refused.

The plan of a ``user_query`` runs in a copy of the caller's
:mod:`contextvars` context, so its selector and the telemetry sinks see the
``ContextVar`` values the runtime had set around the call; the call's
``correlation`` value reaches the sinks beside each of the plan's records.

Every public call checks its arguments in the caller's task before anything
reaches the actor (:mod:`.arguments`): a wrong type or value raises
``TypeError`` / ``ValueError`` there and nothing else notices. Should the
actor itself fail, only its session closes (the error is logged and handed
to the callers as the cause of ``SessionClosedError``); the engine and the
other sessions go on.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import math
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import attrs
import trio

from memrecall.engine.plan import PlanOptions
from memrecall.engine.scoring.text import utf16_len
from memrecall.events.inputs import (
    Abort,
    Reset,
    RuntimeEvent,
    Shutdown,
    ToolResult,
    TurnEnd,
    UserQuery,
)
from memrecall.events.surfaced import Surfaced, SurfacedChange, SurfacedCleared

from .arguments import check_bool, check_id, check_text, check_tool_names
from .plan import MemoryBlock, OneShot, PlanActor
from .settings import EngineSettings

__all__ = [
    "MAX_RECENT_TOOLS",
    "REQUEST_BUFFER",
    "Session",
    "SessionBusyError",
    "SessionClosedError",
    "SessionMisuseError",
    "SurfacedObserver",
]

log = logging.getLogger("memrecall.session")

MAX_RECENT_TOOLS = 20
"""At most this many recently used tool names are passed to a recall."""

REQUEST_BUFFER = 16
"""Requests queued for one session actor; a caller beyond that waits for room (backpressure)."""


class SessionMisuseError(RuntimeError):
    """The runtime called the session in an order that makes no sense."""


class SessionClosedError(RuntimeError):
    """The session (or its engine) was shut down."""


class SessionBusyError(SessionMisuseError):
    """``user_query`` was called while another ``user_query`` of the session was still waiting.

    Raised in the second caller; the first call goes on. Wait for the first
    call to return (or cancel it) before starting the next turn.
    """


@runtime_checkable
class SurfacedObserver(Protocol):
    """Sees every change of every session's surfaced set (the event log implements this)."""

    def surfaced(self, session_id: str, change: SurfacedChange) -> None:
        """``session_id`` applied ``change`` to its surfaced set."""
        ...


def _innermost(exc: Exception) -> Exception:
    """The one exception inside nested single-member groups (nurseries wrap errors)."""
    while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


@attrs.define(eq=False)
class _Request:
    event: RuntimeEvent
    reply: OneShot | None = None
    initial: OneShot | None = None
    done: trio.Event = attrs.field(factory=trio.Event)
    error: Exception | None = None
    started_at: float | None = None
    """When the caller asked (``user_query``): the 100 ms initial wait counts from here."""
    context: contextvars.Context | None = None
    """The caller's context (``user_query``): the plan's tasks run in a copy of it."""
    correlation: object = None
    """The caller's correlation value (``user_query``), passed to the sinks with each record."""
    abort_on_cancel: bool = False
    """Abort the plan if the caller is cancelled before its initial delivery point."""
    cancelled: bool = False
    """The caller was cancelled while waiting (checked once the plan has started)."""
    plan: PlanActor | None = None
    """The plan this request started (``user_query``)."""

    def abandon(self) -> None:
        """The caller gave up: abort its plan (now, or as soon as it starts)."""
        self.cancelled = True
        if self.plan is not None and not self.plan.done:
            self.plan.send(Abort())


class Session:
    """A conversation's handle to memrecall. Obtain one with ``await engine.open_session()``."""

    def __init__(self, session_id: str, settings: EngineSettings) -> None:
        self.session_id = session_id
        self._settings = settings
        self._send, self._receive = trio.open_memory_channel[_Request](REQUEST_BUFFER)
        self._surfaced: set[str] = set()
        # Invariant: _surfaced is what the runtime received since the last reset, once the
        # pending messages of _surfaced_inbox are applied (_apply_surfaced); nothing reads it
        # before that.
        self._surfaced_to, self._surfaced_inbox = trio.open_memory_channel[Surfaced](math.inf)
        observer = settings.observer
        self._surfaced_observer = observer if isinstance(observer, SurfacedObserver) else None
        self._plan: PlanActor | None = None
        self._queries = 0
        self._query_ids: set[str] = set()  # plan ids must be unique: "<session>/<query>"
        self._closed = False
        self._failure: Exception | None = None
        self._querying = False  # a user_query() is waiting for its initial delivery point

    # -- the runtime API ---------------------------------------------------------------

    async def user_query(
        self,
        text: str,
        *,
        recent_tools: Iterable[str] = (),
        query_id: str | None = None,
        correlation: object = None,
    ) -> MemoryBlock | None:
        """Start recall for a new user turn; return what to put before the first request.

        Returns within the bounded initial wait (at most 100 ms): the refined
        result if it settled in time, else the deterministic fast result if one
        was published, else ``None`` (send the request without memory).

        ``text`` must be a ``str`` (``TypeError`` otherwise; ``ValueError`` if it
        holds a lone surrogate), ``recent_tools`` an iterable of ``str`` (not a
        single ``str``), ``query_id`` ``None`` or a non-empty printable ``str``
        not used before in this session (``ValueError``). ``query_id`` names the
        plan (``<session id>/<query id>``) in the event log and in log lines; by
        default it is ``q1``, ``q2``, ... ``correlation`` is any value of yours
        (a trace span, a turn id): every telemetry record of this turn's plan
        reaches sinks that implement ``emit_correlated`` together with it; it is
        never stored anywhere.

        One call at a time per session: a call while another ``user_query`` of
        this session is still waiting raises :class:`SessionBusyError`.
        Cancelling the call does not cancel the plan (its refined result still
        goes at the next tool result); call :meth:`abort` for that.

        The wait counts from this call, so time spent waiting for the previous
        plan to be discarded is part of the 100 ms.
        """
        return await self.query_in_context(
            text,
            recent_tools=recent_tools,
            query_id=query_id,
            correlation=correlation,
            context=contextvars.copy_context(),
            abort_on_cancel=False,
        )

    async def query_in_context(
        self,
        text: str,
        *,
        recent_tools: Iterable[str],
        query_id: str | None,
        correlation: object,
        context: contextvars.Context,
        abort_on_cancel: bool,
    ) -> MemoryBlock | None:
        """:meth:`user_query` for a bridge from another event loop (:mod:`memrecall.aio`).

        ``context`` is the caller's (the plan runs in a copy of it);
        ``abort_on_cancel=True`` aborts the plan when this call is cancelled
        before its initial delivery point.
        """
        started_at = trio.current_time()
        check_text("text", text)
        names = check_tool_names("recent_tools", recent_tools)
        check_id("query_id", query_id)
        if query_id is not None and query_id in self._query_ids:
            raise ValueError(f"query_id {query_id!r} was already used in this session")
        if self._closed:
            raise SessionClosedError(self._closed_message())
        if self._querying:
            raise SessionBusyError(
                f"session {self.session_id}: user_query() while another user_query() is still "
                "waiting; wait for it to return (or cancel it) before starting the next turn"
            )
        tools = tuple(t.strip() for t in names if t.strip())[-MAX_RECENT_TOOLS:]
        self._queries += 1
        if query_id is None:
            query_id = f"q{self._queries}"
            while query_id in self._query_ids:  # the caller took it: never reuse a plan id
                query_id += "+"
        self._query_ids.add(query_id)
        event = UserQuery(query_id=query_id, text=text, recent_tools=tools)
        request = _Request(
            event,
            started_at=started_at,
            context=context,
            correlation=correlation,
            abort_on_cancel=abort_on_cancel,
        )
        self._querying = True
        try:
            await self._submit(request)
            assert request.initial is not None
            return await request.initial.wait()
        except trio.Cancelled:
            if abort_on_cancel:
                request.abandon()
            raise
        finally:
            self._querying = False

    async def tool_result(self) -> MemoryBlock | None:
        """A tool result is about to go back to the model: return what to append after it.

        Zero wait: returns the refined result if it has settled, else ``None``.
        """
        return await self._forward(ToolResult())

    async def turn_end(self, *, tools_requested: bool) -> None:
        """The model turn ended. Without tool requests the pending recall is discarded.

        ``tools_requested`` must be a ``bool`` (``TypeError`` otherwise).
        """
        check_bool("tools_requested", tools_requested)
        await self._forward(TurnEnd(tools_requested=tools_requested))

    async def abort(self) -> None:
        """The caller cancelled the turn: cancel the pending recall."""
        await self._forward(Abort())

    async def reset(self) -> None:
        """The conversation was cleared: cancel, and forget what was surfaced."""
        await self._forward(Reset())

    async def close(self) -> None:
        """Shut the session down; the pending recall ends with ``shutdown``. Idempotent."""
        if not self._closed:
            # Closed meanwhile (another close(), or the engine shut down) is fine.
            with contextlib.suppress(SessionClosedError):
                await self._forward(Shutdown())

    @property
    def closed(self) -> bool:
        """True once the session is shut down (every later call raises ``SessionClosedError``)."""
        return self._closed

    @property
    def surfaced(self) -> frozenset[str]:
        """Paths the runtime received in this session since the last reset."""
        self._apply_surfaced()
        return frozenset(self._surfaced)

    def _apply_surfaced(self) -> None:
        """Apply the plans' pending :class:`Surfaced` messages, in the order they were sent.

        Synchronous (no checkpoint, no clock): safe wherever the set is read.
        """
        while True:
            try:
                message = self._surfaced_inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                return
            self._surfaced.update(message.paths)
            if self._surfaced_observer is not None:
                self._surfaced_observer.surfaced(self.session_id, message)

    def _clear_surfaced(self) -> None:
        """A reset: apply what is pending, then forget every surfaced document."""
        self._apply_surfaced()
        self._surfaced.clear()
        if self._surfaced_observer is not None:
            change = SurfacedCleared(t=trio.current_time())
            self._surfaced_observer.surfaced(self.session_id, change)

    # -- plumbing ----------------------------------------------------------------------

    def _closed_message(self) -> str:
        if self._failure is not None:
            return (
                f"session {self.session_id} failed ({type(self._failure).__name__}) and is closed"
            )
        return f"session {self.session_id} is closed"

    async def _submit(self, request: _Request) -> None:
        if self._closed:
            raise SessionClosedError(self._closed_message())
        try:
            await self._send.send(request)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise SessionClosedError(self._closed_message()) from self._failure
        await request.done.wait()
        if request.error is not None:
            raise request.error

    async def _forward(self, event: RuntimeEvent) -> MemoryBlock | None:
        request = _Request(event)
        await self._submit(request)
        return None if request.reply is None else await request.reply.wait()

    # -- the actor ---------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The session actor: route requests until shutdown.

        It never raises an ``Exception``: if routing (or a plan actor) fails,
        the session closes, the failure is logged and becomes the cause of the
        ``SessionClosedError`` its callers get. Cancellation propagates.
        """
        request: _Request | None = None
        try:
            async with trio.open_nursery() as plans:
                task_status.started()
                try:
                    async for request in self._receive:
                        await self._route(request, plans)
                        request.done.set()
                        if isinstance(request.event, Shutdown):
                            break
                finally:
                    self._closed = True
                    if self._plan is not None and not self._plan.done:
                        self._plan.send(Shutdown())
        except Exception as exc:
            self._failure = _innermost(exc)
            log.exception(
                "session %s failed (%s); it is closed, the engine goes on",
                self.session_id,
                type(self._failure).__name__,
            )
        finally:
            self._closed = True
            self._fail_pending(request)
            self._plan = None  # a closed session keeps no plan (nor its candidates) alive

    def _fail_pending(self, current: _Request | None) -> None:
        """Wake every caller still waiting on a request: the session is gone."""
        pending = [] if current is None or current.done.is_set() else [current]
        while True:
            try:
                pending.append(self._receive.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                break
        self._receive.close()
        for request in pending:
            error = SessionClosedError(self._closed_message())
            error.__cause__ = self._failure
            request.error = error
            request.done.set()

    async def _route(self, request: _Request, plans: trio.Nursery) -> None:
        self._apply_surfaced()
        event = request.event
        current = self._plan if self._plan is not None and not self._plan.done else None
        if isinstance(event, UserQuery):
            if current is not None:
                await current.send(event).wait()
            self._apply_surfaced()  # the new plan excludes everything surfaced so far
            started_at = trio.current_time() if request.started_at is None else request.started_at
            plan = self._plan = self._new_plan(event, started_at, request.correlation)
            request.plan = plan
            request.initial = plan.initial
            await self._start_plan(plans, plan, request.context)
            if request.cancelled and request.abort_on_cancel:
                plan.send(Abort())  # the caller went away while the plan was starting
            return
        if isinstance(event, Reset):
            self._clear_surfaced()
        elif isinstance(event, ToolResult) and self._plan is None:
            request.error = SessionMisuseError(
                "tool_result() before any user_query(): there is no turn to deliver into"
            )
            return
        if current is not None:
            reply = current.send(event)
            await reply.wait()
            self._apply_surfaced()  # what the reply hands the runtime
            request.reply = reply

    @staticmethod
    async def _start_plan(
        plans: trio.Nursery, plan: PlanActor, context: contextvars.Context | None
    ) -> None:
        """Start the plan actor, in a copy of the caller's context when there is one."""
        if context is None:
            await plans.start(plan.run)
            return
        started = trio.Event()

        async def run() -> None:
            await plan.run(task_status=_Started(started))

        # trio copies the current context into a new task: spawn it inside the caller's.
        context.run(plans.start_soon, run)
        await started.wait()

    def _new_plan(self, query: UserQuery, started_at: float, correlation: object) -> PlanActor:
        settings = self._settings
        hooks = settings.hooks
        options = PlanOptions(
            query_length=utf16_len(query.text),
            started_at=started_at,
            wall_time=hooks.wall_clock(),
            model_selection=settings.selector is not None,
            fast_result=settings.fast_result,
            wait_for_selector=settings.wait_for_selector,
        )
        return PlanActor(
            plan_id=f"{self.session_id}/{query.query_id}",
            query=query,
            options=options,
            source=settings.source,
            selector=settings.selector,
            excluded_paths=frozenset(self._surfaced),
            sinks=tuple(sink.bind(correlation) for sink in settings.sinks),
            surfaced_to=self._surfaced_to,
            observer=settings.observer,
            scan_in_thread=hooks.scan_in_thread,
            scan_delay=hooks.scan_delay,
            step_function=hooks.step_function,
        )


@attrs.frozen
class _Started:
    """A ``task_status`` that sets an event (a plan spawned with ``start_soon`` in a context)."""

    event: trio.Event

    def started(self, value: None = None) -> None:
        self.event.set()
