"""The plan actor: one trio task per user query, driving the pure state machine.

The actor owns a memory channel. Everything the plan must react to arrives
there as an event: the runtime's inputs (forwarded by the session actor) and
the completions of its own workers (the scan, the selector call, the initial
deadline). For each event it asks :func:`memrecall.engine.plan.step` what to
do and carries out the effects in order. It makes no decision of its own.

If the host cancels the actor while its plan is still open, the actor feeds a
``Shutdown`` into the machine synchronously before it unwinds, so the plan's
terminal record is still produced by a transition.

An event the machine refuses (:class:`~memrecall.engine.plan.PlanProtocolError`:
a worker reported something it never could) is a bug: the actor logs it as an
error, keeps it in :attr:`PlanActor.protocol_error`, and moves the plan to its
error terminal (:func:`~memrecall.engine.plan.fail`), which records the one
terminal record with ``discard_reason=protocol_error``.

The actor tells its session which documents the runtime received with a
message, never by touching the session's state: when it hands a block over
(the initial block as it releases the first request, or the block in reply
to a tool result) it first sends :class:`~memrecall.events.surfaced.Surfaced`
to the session's channel, so the session applies it before the runtime's next
call. A block the machine delivers but nobody receives (an initial block
after the release) surfaces nothing.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Sequence
from typing import Protocol

import attrs
import msgspec
import trio

from memrecall.engine.plan import (
    Plan,
    PlanOptions,
    PlanProtocolError,
    StepFunction,
    fail,
    start,
    step,
)
from memrecall.engine.render import MAX_PROMPT_DOCS
from memrecall.engine.scoring.candidates import RecallCandidates
from memrecall.events.effects import (
    ArmInitialDeadline,
    CallSelector,
    Deliver,
    Effect,
    EmitTelemetry,
    Ignore,
    RejectEvent,
    ReleaseInitialWait,
    StartScan,
)
from memrecall.events.inputs import (
    InitialDeadline,
    PlanEvent,
    ScanCompleted,
    ScanFailed,
    SelectorFailed,
    SelectorFailure,
    SelectorSucceeded,
    Shutdown,
    UserQuery,
    text_digest,
)
from memrecall.events.surfaced import Surfaced
from memrecall.events.telemetry import DeliveryPoint, Phase
from memrecall.sources import pacing
from memrecall.sources.source import DocumentSource, prepare_recall
from memrecall.telemetry.sinks import TelemetrySink

from .selector import (
    SELECTOR_CEILING,
    Selector,
    SelectorHTTPError,
    SelectorRequest,
    SelectorResponseError,
    SelectorTimeoutError,
    SelectorUnreachableError,
    validate_selection,
)

__all__ = ["PAUSE_LEAD", "MemoryBlock", "OneShot", "PlanActor", "PlanObserver"]

log = logging.getLogger("memrecall.plan")

PAUSE_LEAD = 0.005
"""How long before the initial deadline worker threads are asked to step aside (seconds).

From then until the caller has its answer the plan holds
:data:`memrecall.sources.pacing.PACER`, so the loop's hops from the timer to
``user_query``'s return do not queue behind a CPU-bound scan for the GIL. The hold
also lowers the switch interval to half a millisecond, so a few milliseconds are
enough; a longer lead (it was 20 ms) paused scans that would have finished inside
the window, and a new process whose catalog start ended between 80 and 100 ms
missed it (docs/evaluation.md, "Recall latency").
"""


@attrs.frozen
class MemoryBlock:
    """A memory block to put into the conversation, and the documents it holds."""

    prompt: str
    phase: Phase
    paths: tuple[str, ...]


@attrs.define(eq=False)
class OneShot:
    """A value that is set once and awaited by whoever needs it."""

    _event: trio.Event = attrs.field(factory=trio.Event)
    _value: MemoryBlock | None = None

    def set(self, value: MemoryBlock | None) -> None:
        """Set the value (later calls are ignored) and wake the waiters."""
        if not self._event.is_set():
            self._value = value
            self._event.set()

    @property
    def is_set(self) -> bool:
        """True once a value was set."""
        return self._event.is_set()

    async def wait(self) -> MemoryBlock | None:
        """Wait for the value."""
        await self._event.wait()
        return self._value


class PlanObserver(Protocol):
    """Sees every transition of every plan (the event log implements this)."""

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        """A plan opened with ``options``, excluding ``excluded``, and produced ``effects``."""
        ...

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        """A plan consumed its ``seq``-th event at ``now`` and produced ``effects``."""
        ...


@attrs.define(eq=False)
class _Envelope:
    event: PlanEvent
    reply: OneShot | None = None


class PlanActor:
    """Runs one plan. Create it, then ``await nursery.start(actor.run)``."""

    def __init__(
        self,
        *,
        plan_id: str,
        query: UserQuery,
        options: PlanOptions,
        source: DocumentSource,
        selector: Selector | None,
        excluded_paths: frozenset[str],
        sinks: Sequence[TelemetrySink],
        surfaced_to: trio.MemorySendChannel[Surfaced],
        observer: PlanObserver | None = None,
        scan_in_thread: bool = True,
        scan_delay: float = 0.0,
        step_function: StepFunction = step,
    ) -> None:
        self.plan_id = plan_id
        self.query = query
        # The plan knows which text it recalls for only by its digest (no text in the machine).
        self.options = msgspec.structs.replace(options, query_digest=text_digest(query.text))
        self.initial = OneShot()
        self._source = source
        self._selector = selector
        self._excluded = excluded_paths
        self._sinks = tuple(sinks)
        self._surfaced_to = surfaced_to
        self._observer = observer
        self._scan_in_thread = scan_in_thread
        self._scan_delay = scan_delay
        self._send, self._receive = trio.open_memory_channel[_Envelope](math.inf)
        self._plan: Plan | None = None
        self._initial_block: MemoryBlock | None = None
        self._candidates: RecallCandidates | None = None
        self._work_scopes: list[trio.CancelScope] = []
        self._work: trio.Nursery | None = None
        self._step = step_function
        self._seq = 0
        self._recalled_digest = ""
        self._hold: pacing.Hold | None = None
        self.protocol_error: PlanProtocolError | None = None
        """The event the machine refused, if any (a bug; the plan ended ``protocol_error``)."""

    @property
    def plan(self) -> Plan:
        """The current plan state."""
        assert self._plan is not None, "the actor has not started"
        return self._plan

    @property
    def done(self) -> bool:
        """True once the plan reached a terminal state."""
        return self._plan is not None and self._plan.terminal

    def send(self, event: PlanEvent) -> OneShot:
        """Queue an event; the returned one-shot holds any block delivered in response."""
        reply = OneShot()
        try:
            self._send.send_nowait(_Envelope(event, reply))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            reply.set(None)  # the plan is over: nothing more can come of it
        return reply

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The actor's life: start the plan, consume events until it is over."""
        async with trio.open_nursery() as work:
            self._work = work
            try:
                plan, effects = start(self.options)
                self._plan = plan
                if self._observer is not None:
                    self._observer.opened(
                        self.plan_id, self.options, self.query, self._excluded, effects
                    )
                self._carry_out(effects, None)
                task_status.started()
                async with self._receive:
                    async for envelope in self._receive:
                        self._feed(envelope.event, envelope.reply)
                        if self.plan.terminal:
                            break
            finally:
                if self._plan is not None and not self._plan.terminal:
                    self._feed(Shutdown(), None)
                self._receive.close()
                self.initial.set(None)
                for scope in self._work_scopes:
                    scope.cancel()
                self._end_hold(soon=True)

    # -- the loop body ---------------------------------------------------------------

    def _feed(self, event: PlanEvent, reply: OneShot | None) -> None:
        now = trio.current_time()
        try:
            self._plan, effects = self._step(self.plan, event, now)
        except PlanProtocolError as error:
            self.protocol_error = error
            self._plan, effects = fail(self.plan, error, now)
        self._seq += 1
        if self._observer is not None:
            self._observer.stepped(self.plan_id, self._seq, now, event, effects)
        self._carry_out(effects, reply)

    def _carry_out(self, effects: list[Effect], reply: OneShot | None) -> None:
        answer: MemoryBlock | None = None
        for effect in effects:
            match effect:
                case StartScan():
                    self._spawn(self._scan)
                case ArmInitialDeadline(at=at):
                    self._spawn(self._deadline, at)
                case CallSelector(ids=ids, manifest_digest=digest):
                    self._spawn(self._select, ids, digest)
                case Deliver(phase=phase, point=point, prompt=prompt, paths=paths):
                    block = MemoryBlock(prompt, phase, paths)
                    if point is DeliveryPoint.INITIAL:
                        self._initial_block = block
                    else:
                        answer = block
                case ReleaseInitialWait():
                    initial = self._initial_block
                    if initial is not None and not self.initial.is_set:
                        self._surface(DeliveryPoint.INITIAL, initial.paths)
                    self.initial.set(initial)
                    self._end_hold(soon=True)
                case EmitTelemetry(record=record):
                    for sink in self._sinks:
                        sink.emit(record)
                case RejectEvent(state=state, event=kind, detail=detail):
                    log.error(
                        "plan %s: protocol error: %s in state %s: %s (the plan ended)",
                        self.plan_id,
                        kind,
                        state,
                        detail,
                    )
                case Ignore(reason=reason):
                    log.debug("plan %s: ignored (%s)", self.plan_id, reason)
        if reply is not None:
            if answer is not None and not reply.is_set:
                self._surface(DeliveryPoint.TOOL_RESULT, answer.paths)
            reply.set(answer)

    def _surface(self, point: DeliveryPoint, paths: tuple[str, ...]) -> None:
        """Tell the session the runtime is being handed ``paths`` (before it can see them)."""
        message = Surfaced(plan=self.plan_id, t=trio.current_time(), point=point, paths=paths)
        # A session that is gone has no surfaced set left to update.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            self._surfaced_to.send_nowait(message)

    # -- workers: each reports back through the channel ------------------------------

    def _spawn(self, fn: Callable[..., object], *args: object) -> None:
        assert self._work is not None
        scope = trio.CancelScope()
        self._work_scopes.append(scope)

        async def worker() -> None:
            with scope:
                await fn(*args)  # type: ignore[misc]

        self._work.start_soon(worker)

    def _report(self, event: PlanEvent) -> None:
        # The plan may have ended while this worker was finishing.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            self._send.send_nowait(_Envelope(event))

    def _end_hold(self, *, soon: bool) -> None:
        """Let workers go on: at once, or once the woken caller has run (two loop hops)."""
        hold, self._hold = self._hold, None
        if hold is None:
            return
        if not soon or self._work is None:
            hold.release()
            return

        async def release_after_caller() -> None:
            try:
                # The caller of user_query() was woken by initial.set(); it runs in the
                # next batch of tasks, so after two checkpoints it has its answer.
                await trio.lowlevel.checkpoint()
                await trio.lowlevel.checkpoint()
            finally:
                hold.release()

        try:
            self._work.start_soon(release_after_caller)
        except RuntimeError:  # the nursery is closing: release now
            hold.release()

    def _prepare(self) -> RecallCandidates:
        text = self.query.text
        candidates = prepare_recall(
            self._source,
            text,
            recent_tools=self.query.recent_tools,
            excluded_paths=self._excluded,
        )
        self._recalled_digest = text_digest(text)
        return candidates

    def _prepare_in_worker(self) -> RecallCandidates:
        with pacing.worker():
            return self._prepare()

    async def _scan(self) -> None:
        try:
            if self._scan_in_thread:
                candidates = await trio.to_thread.run_sync(
                    self._prepare_in_worker, abandon_on_cancel=True
                )
            else:
                await trio.sleep(self._scan_delay)
                candidates = self._prepare()
        except Exception as exc:
            log.warning("plan %s: scan failed: %r", self.plan_id, exc)
            self._report(ScanFailed(reason=type(exc).__name__))
            return
        self._candidates = candidates
        manifest = candidates.manifest
        self._report(
            ScanCompleted(
                docs_scanned=candidates.docs_scanned,
                fallback=candidates.fallback,
                fast=candidates.fast,
                candidates=len(manifest.included),
                query_digest=self._recalled_digest,
                ids=manifest.ids,
                manifest_digest=text_digest(manifest.text),
            )
        )

    async def _deadline(self, at: float) -> None:
        await trio.sleep_until(at - PAUSE_LEAD)
        if not self.initial.is_set and self._hold is None:
            self._hold = pacing.PACER.hold()
        try:
            await trio.sleep_until(at)
        except BaseException:
            self._end_hold(soon=False)  # cancelled: the plan no longer waits on this deadline
            raise
        self._report(InitialDeadline())

    async def _select(self, ids: tuple[str, ...], digest: str) -> None:
        assert self._candidates is not None
        assert self._selector is not None, "CallSelector without a selector"
        manifest = self._candidates.manifest
        if manifest.ids != ids or text_digest(manifest.text) != digest:
            # The selector would see something the log does not record: refuse to call it.
            log.error("plan %s: the manifest differs from the one the plan recorded", self.plan_id)
            self._report(SelectorFailed(failure=SelectorFailure.ERROR))
            return
        request = SelectorRequest(
            query=self.query.text,
            manifest=manifest.text,
            candidates=manifest.included,
            recent_tools=self.query.recent_tools,
            limit=MAX_PROMPT_DOCS,
            ids=manifest.ids,
        )
        with trio.move_on_after(SELECTOR_CEILING):
            try:
                answer = await self._selector.select(request)
            except Exception as exc:
                failure = _failure_of(exc)
                # The type only: a message may quote the endpoint's answer.
                log.warning(
                    "plan %s: selector failed (%s): %s", self.plan_id, failure, type(exc).__name__
                )
                self._report(SelectorFailed(failure=failure))
                return
            try:
                chosen = validate_selection(answer, request)
            except SelectorResponseError as exc:
                log.warning("plan %s: invalid selector answer: %s", self.plan_id, exc)
                self._report(SelectorFailed(failure=SelectorFailure.INVALID))
                return
            self._report(SelectorSucceeded(selected=chosen))
            return
        self._report(SelectorFailed(failure=SelectorFailure.TIMEOUT))


def _failure_of(exc: Exception) -> SelectorFailure:
    """The telemetry cause of a selector's exception (anything untyped is ``error``)."""
    match exc:
        case SelectorResponseError():
            return SelectorFailure.INVALID
        case SelectorTimeoutError():
            return SelectorFailure.TIMEOUT
        case SelectorHTTPError():
            return SelectorFailure.HTTP_ERROR
        case SelectorUnreachableError():
            return SelectorFailure.UNREACHABLE
    return SelectorFailure.ERROR
