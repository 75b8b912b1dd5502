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
from typing import Unpack

import trio

from memrecall.actors.engine import Engine, open_engine_with_hooks
from memrecall.actors.selector import Selector
from memrecall.actors.settings import EngineHooks, EngineKeywords, EngineOptions
from memrecall.aio import AioSelector, AsyncioEngine, open_guest_engine
from memrecall.engine.plan import StepFunction, step
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import DocumentSource

__all__ = ["EngineHooks", "open_aio_test_engine", "open_test_engine"]


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
