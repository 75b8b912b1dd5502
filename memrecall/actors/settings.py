"""What every plan of an engine shares: the document source, selector, sinks and test hooks."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import TypedDict

import attrs

from memrecall.engine.plan import StepFunction, step
from memrecall.sources.catalog.store import CacheLocation
from memrecall.sources.source import DEFAULT_SCORER, DocumentSource, ScorerName
from memrecall.telemetry.sinks import CorrelatedSink, GuardedSink, TelemetrySink

from .plan import PlanObserver
from .selector import Selector

__all__ = ["EngineHooks", "EngineKeywords", "EngineOptions", "EngineSettings"]


class EngineKeywords(TypedDict, total=False):
    """The keyword arguments every way of opening an engine shares (see
    :func:`memrecall.actors.open_engine` for what each means)."""

    sinks: Iterable[TelemetrySink | CorrelatedSink]
    observer: PlanObserver | None
    fast_result: bool
    wait_for_selector: bool
    catalog: bool
    catalog_cache: str | os.PathLike[str] | CacheLocation | None
    scorer: ScorerName


@attrs.frozen
class EngineOptions:
    """:class:`EngineKeywords` with their defaults, as one value passed down to the opener."""

    sinks: Iterable[TelemetrySink | CorrelatedSink] = ()
    observer: PlanObserver | None = None
    fast_result: bool = True
    wait_for_selector: bool = False
    catalog: bool = True
    catalog_cache: str | os.PathLike[str] | CacheLocation | None = CacheLocation.DEFAULT
    scorer: ScorerName = DEFAULT_SCORER


@attrs.frozen
class EngineHooks:
    """Test-only hooks (set through :func:`memrecall.testing.open_test_engine`).

    ``wall_clock`` is the wall time used to render memory ages (fix it for
    reproducible prompts). ``scan_in_thread=False`` runs the deterministic pass
    on the event loop instead of a worker thread: needed on a virtual clock,
    where a real thread would let an autojumping clock pass the initial
    deadline while the scan still runs; ``scan_delay`` then models the scan's
    cost in seconds of trio time. ``step_function`` replaces the plan's
    transition function (simulations plant faults with it to prove the safety
    checks catch them).
    """

    wall_clock: Callable[[], float] = time.time
    scan_in_thread: bool = True
    scan_delay: float = 0.0
    step_function: StepFunction = step


@attrs.frozen
class EngineSettings:
    """Engine-wide settings, fixed when the engine opens.

    ``fast_result=False`` disables the fast phase (the delivery evaluation's
    "single path" design); leave it on in production. ``wait_for_selector``
    holds a fast result back up to the end of the initial wait so a fast
    selector's pick can go in first (:class:`~memrecall.engine.plan.PlanOptions`).
    """

    source: DocumentSource
    selector: Selector | None = None
    sinks: tuple[GuardedSink, ...] = ()
    observer: PlanObserver | None = None
    fast_result: bool = True
    wait_for_selector: bool = False
    hooks: EngineHooks = EngineHooks()
