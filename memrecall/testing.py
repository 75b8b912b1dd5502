"""Hooks for tests and simulations: an engine with a fixed wall clock, the scan on the loop, ...

Not for production. :func:`open_test_engine` is :func:`memrecall.actors.open_engine`
with four more options, and :func:`open_aio_test_engine` the same for
:func:`memrecall.aio.open_engine`:

- ``wall_clock``: the wall time used to render memory ages (fix it for
  reproducible prompts);
- ``scan_in_thread=False``: run the deterministic pass on the event loop. Needed
  on ``trio.testing.MockClock``: a worker thread would let an autojumping clock
  pass the 100 ms deadline while the scan is still running;
- ``scan_delay``: with ``scan_in_thread=False``, seconds of (virtual) time the
  scan is modelled to take;
- ``step_function``: replaces the plan's transition function (simulations plant
  faults with it to prove that the safety checks catch them).

The aio variant also takes ``clock`` (a trio clock for the guest run, e.g.
``trio.testing.MockClock``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Generic, Protocol, TypeVar, Unpack

import trio

from memrecall.actors.engine import Engine, open_engine_with_hooks
from memrecall.actors.selector import Selector
from memrecall.actors.settings import EngineHooks, EngineKeywords, EngineOptions
from memrecall.aio import AioSelector, AsyncioEngine, open_guest_engine
from memrecall.engine.plan import PlanOptions, StepFunction, step
from memrecall.events.effects import Effect
from memrecall.events.inputs import PlanEvent, SelectorFailed, SelectorSucceeded, UserQuery
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import DocumentSource

__all__ = ["EngineHooks", "SelectorAnswered", "open_aio_test_engine", "open_test_engine"]


def open_test_engine(
    memory: MemoryTree | DocumentSource,
    *,
    selector: Selector | None = None,
    wall_clock: Callable[[], float] = time.time,
    scan_in_thread: bool = True,
    scan_delay: float = 0.0,
    step_function: StepFunction = step,
    **options: Unpack[EngineKeywords],
) -> AbstractAsyncContextManager[Engine]:
    """:func:`memrecall.actors.open_engine` with the test hooks (see the module docstring)."""
    hooks = EngineHooks(
        wall_clock=wall_clock,
        scan_in_thread=scan_in_thread,
        scan_delay=scan_delay,
        step_function=step_function,
    )
    return open_engine_with_hooks(memory, selector, EngineOptions(**options), hooks)


def open_aio_test_engine(
    memory: MemoryTree | DocumentSource,
    *,
    selector: AioSelector | None = None,
    wall_clock: Callable[[], float] = time.time,
    scan_in_thread: bool = True,
    scan_delay: float = 0.0,
    step_function: StepFunction = step,
    clock: trio.abc.Clock | None = None,
    **options: Unpack[EngineKeywords],
) -> AbstractAsyncContextManager[AsyncioEngine]:
    """:func:`memrecall.aio.open_engine` with the test hooks and a trio ``clock``."""
    hooks = EngineHooks(
        wall_clock=wall_clock,
        scan_in_thread=scan_in_thread,
        scan_delay=scan_delay,
        step_function=step_function,
    )
    return open_guest_engine(memory, selector, EngineOptions(**options), hooks, clock)


class _Settable(Protocol):
    def set(self) -> None: ...


_E = TypeVar("_E", bound=_Settable)


class SelectorAnswered(Generic[_E]):
    """A plan observer that sets ``event`` (a ``trio.Event``, an ``asyncio.Event``) once a
    plan's selector answered or failed: what a test or a demo waits for before it looks
    at what the turn delivered."""

    def __init__(self, event: _E) -> None:
        self.event = event

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        """Nothing to do."""

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        """Set the event on a selector completion."""
        if isinstance(event, SelectorSucceeded | SelectorFailed):
            self.event.set()
