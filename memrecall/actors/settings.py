"""What every plan of an engine shares: the document source, selector, sinks and clocks."""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

from memrecall.engine.plan import StepFunction, step
from memrecall.sources.source import DocumentSource
from memrecall.telemetry.sinks import TelemetrySink

from .plan import PlanObserver
from .selector import Selector

__all__ = ["EngineSettings"]


@attrs.frozen
class EngineSettings:
    """Engine-wide settings, fixed when the engine opens.

    ``scan_in_thread`` runs the deterministic pass in a worker thread (the
    default, so a large tree never blocks the event loop). Simulations and
    virtual-clock tests turn it off and may model its cost with ``scan_delay``
    seconds of trio time instead: a real thread would let a mock clock jump
    past the initial deadline while the scan is still running.
    ``fast_result=False`` disables the fast phase (the delivery evaluation's
    "single path" design); leave it on in production. ``wait_for_selector``
    holds a fast result back up to the end of the initial wait so a fast
    selector's pick can go in first (:class:`~memrecall.engine.plan.PlanOptions`).
    ``step_function`` is a
    test-only hook: simulations replace the transition function to plant faults
    and prove the safety checks catch them.
    """

    source: DocumentSource
    selector: Selector | None = None
    sinks: tuple[TelemetrySink, ...] = ()
    observer: PlanObserver | None = None
    wall_clock: Callable[[], float] = time.time
    scan_in_thread: bool = True
    scan_delay: float = 0.0
    fast_result: bool = True
    wait_for_selector: bool = False
    step_function: StepFunction = step
