"""memrecall from asyncio: the trio engine run as a guest on the running asyncio loop.

``async with memrecall.aio.open_engine(tree, ...) as engine`` takes the same
options as :func:`memrecall.actors.open_engine`; ``await engine.open_session()``
gives an :class:`AsyncioSession` with the same methods as the trio
:class:`~memrecall.actors.session.Session`, awaitable from asyncio tasks.

How it works (docs/decisions.md, "asyncio host"): one trio run per asyncio loop,
started with :func:`trio.lowlevel.start_guest_run`, hosts every engine opened on
that loop. trio's scheduling ticks run as callbacks on the asyncio loop's thread;
only trio's I/O wait sits in a helper thread. The two sides never await each
other's objects: asyncio asks trio through :meth:`trio.lowlevel.TrioToken.run_sync_soon`
(which spawns a trio task for the call), and trio answers by setting an asyncio
future from that task (same thread). Each call runs in a copy of the asyncio
caller's :mod:`contextvars` context.

Cancellation: cancelling the asyncio task that awaits a call cancels the trio
task carrying it out. For :meth:`AsyncioSession.user_query` that also **aborts
the turn's plan** (its selector call is cancelled, telemetry records ``abort``):
a cancelled asyncio task will not send the request the block was for. The
cancelled ``await`` returns once the trio side has let go of the call. (If the
answer was already on its way when the task was cancelled, the plan goes on as
if the call had returned; ``abort()`` ends it.)

Selectors: memrecall's own (:class:`~memrecall.actors.selector.SimulatedSelector`,
:class:`~memrecall.selectors.OpenAICompatibleSelector`) run on the trio side.
Any other selector object (``async def select(request)``), or a bare coroutine
function ``async def select(request) -> Sequence[str]``, is your asyncio code:
each call runs as an asyncio task on your loop (in the context of the turn's
``user_query`` call) and is cancelled (``task.cancel()``) when the plan no longer
needs it. It never needs to know about trio.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypeVar, Unpack

import attrs
import outcome
import trio

from memrecall.actors.engine import Engine, EngineStatistics, open_engine_with_hooks
from memrecall.actors.plan import MemoryBlock
from memrecall.actors.selector import (
    Selector,
    SelectorError,
    SelectorRequest,
    SimulatedSelector,
)
from memrecall.actors.session import Session, SessionClosedError
from memrecall.actors.settings import EngineHooks, EngineKeywords, EngineOptions
from memrecall.selectors.openai import OpenAICompatibleSelector
from memrecall.sources.scanner import Diagnostic, MemoryTree
from memrecall.sources.source import DocumentSource

__all__ = [
    "AioSelector",
    "AsyncioEngine",
    "AsyncioSelector",
    "AsyncioSession",
    "MemoryBlock",
    "open_engine",
    "open_guest_engine",
]

log = logging.getLogger("memrecall.aio")

T = TypeVar("T")

SelectFunction = Callable[[SelectorRequest], Awaitable[Sequence[str]]]
AioSelector = Selector | SelectFunction
"""A ``selector`` for :func:`open_engine`: an object with ``select``, or a coroutine function."""

TRIO_SELECTORS: tuple[type, ...] = (SimulatedSelector, OpenAICompatibleSelector)
"""memrecall's own selectors: they run on the trio side (the rest run as asyncio tasks)."""


def open_engine(
    memory: MemoryTree | DocumentSource,
    *,
    selector: AioSelector | None = None,
    **options: Unpack[EngineKeywords],
) -> AbstractAsyncContextManager[AsyncioEngine]:
    """Open an engine from asyncio: ``async with open_engine(tree, ...) as engine``.

    The options are those of :func:`memrecall.actors.open_engine`, except that
    ``selector`` may be an asyncio selector (see the module docstring). On exit
    every session is shut down and every pending plan records its terminal
    event (``shutdown``), also when the block is left by cancellation.
    """
    return open_guest_engine(memory, selector, EngineOptions(**options), EngineHooks(), None)


@asynccontextmanager
async def open_guest_engine(
    memory: MemoryTree | DocumentSource,
    selector: AioSelector | None,
    options: EngineOptions,
    hooks: EngineHooks,
    clock: trio.abc.Clock | None,
) -> AsyncIterator[AsyncioEngine]:
    """:func:`open_engine` with test hooks and a trio clock (use :mod:`memrecall.testing`).

    ``clock`` applies only when this call starts the loop's guest run.
    """
    loop = asyncio.get_running_loop()
    bridged = _bridge_selector(selector, loop)
    # The sinks are read once, here: an iterator passed in is not consumed twice.
    options = attrs.evolve(options, sinks=tuple(options.sinks))

    def opener() -> AbstractAsyncContextManager[Engine]:
        return open_engine_with_hooks(memory, bridged, options, hooks)

    guest = await _GuestRun.acquire(loop, clock)
    host = _EngineHost(guest)
    try:
        engine = await host.open(opener)
        try:
            yield AsyncioEngine(host, engine)
        finally:
            await host.close()
    finally:
        await guest.release()


# -- the guest run: one per asyncio loop ----------------------------------------------


_RUNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _GuestRun] = weakref.WeakKeyDictionary()


@attrs.define(eq=False)
class _GuestRun:
    """One trio guest run on an asyncio loop, shared by the engines open on it (qtrio's shape).

    It holds the clock, the done callback's future and one all-encompassing
    cancel scope. It starts with the first engine and ends when the last one
    has closed: the host loop never stops under a live trio run.
    """

    loop: asyncio.AbstractEventLoop
    clock: trio.abc.Clock | None
    users: int = 0
    token: trio.lowlevel.TrioToken | None = None
    nursery: trio.Nursery | None = None
    cancel_scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)
    ready: asyncio.Future[None] | None = None
    done: asyncio.Future[outcome.Outcome[None]] | None = None
    _stop: trio.Event | None = None

    stopping: bool = False

    @classmethod
    async def acquire(
        cls, loop: asyncio.AbstractEventLoop, clock: trio.abc.Clock | None
    ) -> _GuestRun:
        """The loop's guest run (one is started if none runs); the caller must :meth:`release`.

        A thread holds one trio run at a time: if the last run is still ending,
        this waits for it to end first.
        """
        while True:
            run = _RUNS.get(loop)
            if run is None:
                run = _RUNS[loop] = cls(loop, clock)
                run._start()
                break
            if not run.stopping:
                break
            assert run.done is not None
            await _wait_through_cancel(run.done)
        run.users += 1
        return run

    def _start(self) -> None:
        self.ready = self.loop.create_future()
        self.done = self.loop.create_future()
        trio.lowlevel.start_guest_run(
            self._main,
            run_sync_soon_threadsafe=self.loop.call_soon_threadsafe,
            run_sync_soon_not_threadsafe=self.loop.call_soon,
            done_callback=self._finished,
            host_uses_signal_set_wakeup_fd=True,
            clock=self.clock,
        )

    async def _main(self) -> None:
        self.token = trio.lowlevel.current_trio_token()
        if self._stop is None:
            self._stop = trio.Event()
        if self.stopping:  # the last engine let go before the run got going
            self._stop.set()
        with self.cancel_scope:
            async with trio.open_nursery() as nursery:
                self.nursery = nursery
                assert self.ready is not None
                self.ready.set_result(None)
                await self._stop.wait()
                # Every engine has closed (each waits for its own calls): nothing is left.
                nursery.cancel_scope.cancel()

    def _finished(self, result: outcome.Outcome[None]) -> None:
        assert self.ready is not None
        assert self.done is not None
        if not self.ready.done():
            error = result.error if isinstance(result, outcome.Error) else None
            self.ready.set_exception(error or RuntimeError("the trio guest run ended early"))
            self.ready.exception()  # retrieved here: whoever waits sees it through done
        self.done.set_result(result)
        if _RUNS.get(self.loop) is self:
            del _RUNS[self.loop]

    async def wait_ready(self) -> None:
        """Wait until the run can take engines (raises if it failed to start)."""
        assert self.ready is not None
        assert self.done is not None
        waits: list[asyncio.Future[object]] = [self.ready, self.done]  # type: ignore[list-item]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not self.ready.done() or self.ready.exception() is not None:
            self.done.result().unwrap()
            raise RuntimeError("the trio guest run ended before it was ready")

    def run_sync_soon(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` in trio soon (callable from anywhere); ``SessionClosedError`` if it ended."""
        if self.token is None:
            raise SessionClosedError("memrecall's trio run has not started")
        try:
            self.token.run_sync_soon(fn)
        except trio.RunFinishedError:
            raise SessionClosedError("memrecall's trio run has ended") from None

    async def release(self) -> None:
        """One engine is done with the run; the last one ends it and waits for the end."""
        self.users -= 1
        if self.users > 0 or self.done is None:
            return
        self.stopping = True
        if not self.done.done():
            with contextlib.suppress(SessionClosedError):
                self.run_sync_soon(self._request_stop)
        await _wait_through_cancel(self.done)
        self.done.result().unwrap()

    def _request_stop(self) -> None:
        if self._stop is None:
            self._stop = trio.Event()
        self._stop.set()


async def _wait_through_cancel(future: asyncio.Future[T]) -> None:
    """Wait for ``future`` even if cancelled meanwhile; re-raise the cancellation afterwards."""
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                break
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


# -- one engine inside the guest run --------------------------------------------------


@attrs.define(eq=False)
class _EngineHost:
    """Runs one trio engine in the guest run and carries calls from asyncio into it."""

    guest: _GuestRun
    calls: trio.Nursery | None = None
    opened: asyncio.Future[Engine] | None = None
    closed: asyncio.Future[None] | None = None
    _stop: trio.Event | None = None

    async def open(self, opener: Callable[[], AbstractAsyncContextManager[Engine]]) -> Engine:
        """Open the engine in trio; return it once it is ready (or raise its opening error)."""
        await self.guest.wait_ready()
        loop = self.guest.loop
        self.opened = loop.create_future()
        self.closed = loop.create_future()
        nursery = self.guest.nursery
        assert nursery is not None
        self.guest.run_sync_soon(lambda: nursery.start_soon(self._run, opener))
        try:
            waits: list[asyncio.Future[object]] = [self.opened, self.closed]  # type: ignore[list-item]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await self.close()
            raise
        if self.opened.done():
            return self.opened.result()
        self.closed.result()  # raises the opening error
        raise SessionClosedError("the engine closed while opening")

    async def _run(self, opener: Callable[[], AbstractAsyncContextManager[Engine]]) -> None:
        assert self.opened is not None
        assert self.closed is not None
        if self._stop is None:  # else close() came first: open, then close at once
            self._stop = trio.Event()
        try:
            async with opener() as engine, trio.open_nursery() as calls:
                self.calls = calls
                self.opened.set_result(engine)
                await self._stop.wait()
                # Shut the sessions down: calls in flight return (or get
                # SessionClosedError), pending plans record ``shutdown``.
                await engine.aclose()
        except Exception as exc:
            if not self.closed.done():
                self.closed.set_exception(_innermost(exc))
        finally:
            if not self.closed.done():
                self.closed.set_result(None)

    async def close(self) -> None:
        """Shut the engine down and wait until it has (also when cancelled meanwhile)."""
        assert self.closed is not None
        if not self.closed.done():
            with contextlib.suppress(SessionClosedError):
                self.guest.run_sync_soon(self._request_stop)
        await _wait_through_cancel(self.closed)
        self.closed.result()

    def _request_stop(self) -> None:
        if self._stop is None:  # _run has not started: it will find the stop set
            self._stop = trio.Event()
        self._stop.set()

    async def call(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``await fn()`` as a trio task (in a copy of the caller's context); return its value.

        Cancelling the caller cancels the trio task and waits until it is over.
        """
        loop = self.guest.loop
        result: asyncio.Future[T] = loop.create_future()
        over: asyncio.Future[None] = loop.create_future()
        scope = trio.CancelScope()

        async def task() -> None:
            try:
                with scope:
                    value = await fn()
                    if not result.done():
                        result.set_result(value)
            except Exception as exc:
                if not result.done():
                    result.set_exception(exc)
            finally:
                if not result.done():
                    result.set_exception(SessionClosedError("the call was cancelled"))
                    result.exception()  # nobody may be waiting any more
                over.set_result(None)

        context = contextvars.copy_context()

        def spawn() -> None:
            calls = self.calls
            try:
                if calls is not None:
                    context.run(calls.start_soon, task)  # trio copies the current context
                    return
            except RuntimeError:  # the engine is closing: its nursery takes no new calls
                pass
            result.set_exception(SessionClosedError("the engine is shut down"))
            over.set_result(None)

        self.guest.run_sync_soon(spawn)
        try:
            return await result
        except asyncio.CancelledError:
            with contextlib.suppress(SessionClosedError):
                self.guest.run_sync_soon(scope.cancel)
            await _wait_through_cancel(over)
            raise


def _innermost(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


# -- the asyncio faces -----------------------------------------------------------------


class AsyncioEngine:
    """An engine seen from asyncio. Get one from :func:`open_engine`."""

    def __init__(self, host: _EngineHost, engine: Engine) -> None:
        self._host = host
        self._engine = engine

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        """Problems found when the engine opened (:attr:`memrecall.actors.Engine.diagnostics`)."""
        return self._engine.diagnostics

    def statistics(self) -> EngineStatistics:
        """Open sessions and failed sinks, as a frozen record."""
        return self._engine.statistics()

    async def open_session(self, session_id: str | None = None) -> AsyncioSession:
        """Start a session for one conversation (:meth:`memrecall.actors.Engine.open_session`)."""
        session = await self._host.call(lambda: self._engine.open_session(session_id))
        return AsyncioSession(self._host, session)

    async def aclose(self) -> None:
        """Shut every session down; each pending plan ends with ``shutdown``."""
        await self._host.call(self._engine.aclose)


class AsyncioSession:
    """A conversation's handle, for asyncio (the methods of :class:`memrecall.actors.Session`)."""

    def __init__(self, host: _EngineHost, session: Session) -> None:
        self._host = host
        self._session = session

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session.session_id

    @property
    def closed(self) -> bool:
        """True once the session is shut down."""
        return self._session.closed

    @property
    def surfaced(self) -> frozenset[str]:
        """Paths delivered in this session since the last reset."""
        return self._session.surfaced

    async def user_query(
        self,
        text: str,
        *,
        recent_tools: Iterable[str] = (),
        query_id: str | None = None,
        correlation: object = None,
    ) -> MemoryBlock | None:
        """Start recall for a new user turn (see :meth:`memrecall.actors.Session.user_query`).

        Unlike the trio method, cancelling the awaiting task aborts the turn's
        plan (and its selector call): telemetry records ``abort``.
        """
        session = self._session

        def query() -> Awaitable[MemoryBlock | None]:
            return session.query_in_context(
                text,
                recent_tools=recent_tools,
                query_id=query_id,
                correlation=correlation,
                context=contextvars.copy_context(),  # the caller's (call() runs us in a copy)
                abort_on_cancel=True,
            )

        return await self._host.call(query)

    async def tool_result(self) -> MemoryBlock | None:
        """A tool result goes back to the model: return what to append after it (zero wait)."""
        return await self._host.call(self._session.tool_result)

    async def turn_end(self, *, tools_requested: bool) -> None:
        """The model turn ended; without tool requests the pending recall is discarded."""
        await self._host.call(lambda: self._session.turn_end(tools_requested=tools_requested))

    async def abort(self) -> None:
        """The caller cancelled the turn: cancel the pending recall."""
        await self._host.call(self._session.abort)

    async def reset(self) -> None:
        """The conversation was cleared: cancel, and forget what was surfaced."""
        await self._host.call(self._session.reset)

    async def close(self) -> None:
        """Shut the session down; the pending recall ends with ``shutdown``. Idempotent."""
        if self._session.closed:
            return
        with contextlib.suppress(SessionClosedError):
            await self._host.call(self._session.close)


# -- asyncio selectors, run from trio --------------------------------------------------


def _bridge_selector(
    selector: AioSelector | None, loop: asyncio.AbstractEventLoop
) -> Selector | None:
    if selector is None or isinstance(selector, TRIO_SELECTORS):
        return selector  # type: ignore[return-value]
    select = getattr(selector, "select", None)
    if callable(select):
        return AsyncioSelector(select, loop)
    if callable(selector):
        return AsyncioSelector(selector, loop)
    raise TypeError(
        f"selector must have a select() method or be a coroutine function "
        f"({type(selector).__name__} is neither)"
    )


@attrs.frozen
class AsyncioSelector:
    """Runs an asyncio selector function as a task on ``loop``, for the trio side.

    The task runs in the context of the plan (a copy of the ``user_query``
    caller's); a cancelled plan cancels the task. An asyncio task cancelled from
    elsewhere counts as a selector error.
    """

    select_fn: SelectFunction
    loop: asyncio.AbstractEventLoop

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        """Start the asyncio task, wait for it without blocking trio, return its answer."""
        token = trio.lowlevel.current_trio_token()
        finished = trio.Event()

        async def call() -> Sequence[str]:
            return await self.select_fn(request)

        def wake(_: object) -> None:
            with contextlib.suppress(trio.RunFinishedError):
                token.run_sync_soon(finished.set)

        # We run on the loop's thread (a guest tick), so the loop's own calls are safe here.
        task = self.loop.create_task(call(), context=contextvars.copy_context())
        task.add_done_callback(wake)
        try:
            await finished.wait()
        except BaseException:
            task.cancel()  # the plan is over: the runtime's request is cancelled
            raise
        if task.cancelled():
            raise SelectorError("the asyncio selector task was cancelled")
        return task.result()
