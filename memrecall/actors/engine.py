"""The engine: one nursery that owns every session actor and, through them, every plan."""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager

import trio

from memrecall.engine.catalog import CatalogSource
from memrecall.engine.catalog_store import CacheLocation, default_cache_path
from memrecall.engine.feature_store import FeatureStore
from memrecall.engine.plan import StepFunction, step
from memrecall.engine.scanner import MemoryTree
from memrecall.engine.source import (
    DEFAULT_SCORER,
    DocumentSource,
    FieldedRanking,
    RankedSource,
    ScorerName,
    TreeSource,
)
from memrecall.sinks import TelemetrySink

from .plan import PlanObserver
from .selector import Selector
from .session import Session, SessionClosedError
from .settings import EngineSettings

__all__ = ["Engine", "open_engine"]


class Engine:
    """Opens sessions. Use :func:`open_engine` to get one."""

    def __init__(self, nursery: trio.Nursery, settings: EngineSettings) -> None:
        self.settings = settings
        self._nursery = nursery
        self._sessions: list[Session] = []
        self._ids = itertools.count(1)
        self._closed = False

    async def open_session(self, session_id: str | None = None) -> Session:
        """Start a session actor for one conversation."""
        if self._closed:
            raise SessionClosedError("the engine is shut down")
        session = Session(session_id or f"s{next(self._ids)}", self.settings)
        await self._nursery.start(session.run)
        self._sessions.append(session)
        return session

    async def aclose(self) -> None:
        """Shut every session down; each pending plan ends with ``shutdown``."""
        self._closed = True
        for session in self._sessions:
            with contextlib.suppress(SessionClosedError):
                await session.close()


@asynccontextmanager
async def open_engine(
    memory: MemoryTree | DocumentSource,
    *,
    selector: Selector | None = None,
    sinks: Iterable[TelemetrySink] = (),
    observer: PlanObserver | None = None,
    wall_clock: Callable[[], float] = time.time,
    scan_in_thread: bool = True,
    scan_delay: float = 0.0,
    fast_result: bool = True,
    step_function: StepFunction = step,
    catalog: bool = True,
    catalog_cache: str | os.PathLike[str] | CacheLocation | None = CacheLocation.DEFAULT,
    scorer: ScorerName = DEFAULT_SCORER,
) -> AsyncIterator[Engine]:
    """Open an engine over a memory tree (or any document source).

    For a memory tree the engine keeps a catalog of parsed documents shared by
    all its sessions (:class:`~memrecall.engine.catalog.CatalogSource`), so a
    recall reads only what changed. ``catalog_cache`` is where the catalog is
    persisted for the next process: by default a file under
    ``$XDG_CACHE_HOME/memrecall/`` (else ``~/.cache/memrecall/``) named after
    the roots; a path of your choice; or ``None`` to keep it in memory only.
    ``catalog=False`` scans the whole tree on every recall instead.
    ``scorer`` ranks a memory tree's documents: ``fielded`` (the default: BM25F
    with a strong/weak/none judgement; the fast result holds strong matches
    only) or ``reference`` (upstream's scorer, exactly). A document source
    passed directly ranks with its own scorer.

    On exit every session is shut down and every pending plan records its
    terminal event. If the host cancels the block, the plans still record
    theirs (``shutdown``) while they unwind; nothing outlives the block.
    """
    owned: CatalogSource | None = None
    source: DocumentSource
    if not isinstance(memory, MemoryTree):
        source = memory
    elif catalog:
        if catalog_cache is CacheLocation.DEFAULT:
            catalog_cache = default_cache_path([(r.scope.value, r.path) for r in memory.roots])
        source = owned = CatalogSource(memory, cache_path=catalog_cache)
    else:
        source = TreeSource(memory)
    ranking: FieldedRanking | None = None
    if isinstance(memory, MemoryTree) and scorer == "fielded":
        # The scorer's per-document features persist next to the catalog's file.
        store_path = None if owned is None else owned.cache_path
        store = FeatureStore(None if store_path is None else store_path + ".features")
        ranking = FieldedRanking(store)
        source = RankedSource(source, ranking)
    settings = EngineSettings(
        source=source,
        selector=selector,
        sinks=tuple(sinks),
        observer=observer,
        wall_clock=wall_clock,
        scan_in_thread=scan_in_thread,
        scan_delay=scan_delay,
        fast_result=fast_result,
        step_function=step_function,
    )
    async with trio.open_nursery() as nursery:
        engine = Engine(nursery, settings)
        try:
            yield engine
        finally:
            # Drain gracefully even if the host is cancelling us: shutting a session down
            # only forwards an event and waits for it to be processed, never for I/O.
            with trio.move_on_after(_DRAIN_SECONDS, shield=True):
                await engine.aclose()
            if owned is not None:
                # Saves the catalog file; waits for a scan still running in a worker thread.
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(owned.close)
            if ranking is not None:
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(ranking.save)


_DRAIN_SECONDS = 5.0
