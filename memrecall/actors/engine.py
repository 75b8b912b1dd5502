"""The engine: one nursery that owns every session actor and, through them, every plan.

Every argument of :func:`open_engine` and :meth:`Engine.open_session` is
checked in the caller's task before anything starts (``TypeError`` /
``ValueError`` naming the argument). Telemetry sinks are wrapped in
:class:`~memrecall.telemetry.sinks.GuardedSink`, so a sink that raises is logged once and
skipped. A memory tree's roots are checked when the engine opens: one that is
missing or not a directory is a WARNING log line and an entry in
:attr:`Engine.diagnostics`. A closed session is forgotten by the engine.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import stat
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import get_args

import attrs
import trio

from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.catalog.store import CacheLocation, default_cache_path
from memrecall.sources.scanner import Diagnostic, DiagnosticKind, MemoryTree
from memrecall.sources.source import (
    DEFAULT_SCORER,
    DocumentSource,
    RankedSource,
    ScorerName,
    TreeSource,
)
from memrecall.sources.turn_reader import default_turns
from memrecall.telemetry.sinks import CorrelatedSink, GuardedSink, TelemetrySink

from .arguments import (
    check_bool,
    check_callable,
    check_has_methods,
    check_id,
    check_nonnegative,
)
from .plan import PlanObserver
from .selector import Selector
from .session import Session, SessionClosedError
from .settings import EngineHooks, EngineOptions, EngineSettings

__all__ = ["Engine", "EngineStatistics", "open_engine", "open_engine_with_hooks"]

log = logging.getLogger("memrecall.engine")


@attrs.frozen
class EngineStatistics:
    """What an engine holds right now (see :meth:`Engine.statistics`)."""

    open_sessions: int
    """Sessions whose actor still runs (a closed one is dropped once its plans have unwound)."""
    failed_sinks: tuple[str, ...]
    """Names of telemetry sinks that raised and are skipped from then on."""


class Engine:
    """Opens sessions. Use :func:`open_engine` to get one."""

    def __init__(
        self,
        nursery: trio.Nursery,
        settings: EngineSettings,
        diagnostics: tuple[Diagnostic, ...] = (),
    ) -> None:
        self.settings = settings
        self.diagnostics = diagnostics
        """Problems found when the engine opened (a memory root missing or not a directory)."""
        self._nursery = nursery
        self._sessions: dict[str, Session] = {}  # open sessions only, by id
        self._ids = itertools.count(1)
        self._closed = False

    async def open_session(self, session_id: str | None = None) -> Session:
        """Start a session actor for one conversation.

        ``session_id`` is ``None`` (an id is generated) or a non-empty printable
        ``str`` that no open session of this engine has (``ValueError``
        otherwise). Ids end up in plan ids and the event log: keep your own
        ids unique over the engine's life.
        """
        check_id("session_id", session_id)
        if self._closed:
            raise SessionClosedError("the engine is shut down")
        if session_id is not None and session_id in self._sessions:
            raise ValueError(f"session_id {session_id!r} belongs to an open session")
        if session_id is None:
            session_id = f"s{next(self._ids)}"
            while session_id in self._sessions:  # the caller took it
                session_id = f"s{next(self._ids)}"
        session = Session(session_id, self.settings)
        self._sessions[session_id] = session  # reserved before the first checkpoint
        try:
            await self._nursery.start(self._run_session, session)
        except BaseException:
            self._forget(session)
            raise
        return session

    def statistics(self) -> EngineStatistics:
        """Open sessions and failed sinks, as a frozen record."""
        failed = tuple(
            s.name for s in self.settings.sinks if isinstance(s, GuardedSink) and s.failure
        )
        return EngineStatistics(open_sessions=len(self._sessions), failed_sinks=failed)

    async def aclose(self) -> None:
        """Shut every session down; each pending plan ends with ``shutdown``."""
        self._closed = True
        for session in list(self._sessions.values()):
            with contextlib.suppress(SessionClosedError):
                await session.close()

    async def _run_session(
        self, session: Session, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await session.run(task_status=task_status)
        finally:
            self._forget(session)

    def _forget(self, session: Session) -> None:
        if self._sessions.get(session.session_id) is session:
            del self._sessions[session.session_id]


def open_engine(
    memory: MemoryTree | DocumentSource,
    *,
    selector: Selector | None = None,
    sinks: Iterable[TelemetrySink | CorrelatedSink] = (),
    observer: PlanObserver | None = None,
    fast_result: bool = True,
    wait_for_selector: bool = False,
    catalog: bool = True,
    catalog_cache: str | os.PathLike[str] | CacheLocation | None = CacheLocation.DEFAULT,
    scorer: ScorerName = DEFAULT_SCORER,
) -> AbstractAsyncContextManager[Engine]:
    """Open an engine over a memory tree (or any document source): ``async with open_engine(...)``.

    For a memory tree the engine keeps a catalog of parsed documents shared by
    all its sessions (:class:`~memrecall.sources.catalog.source.CatalogSource`), so a
    recall reads only what changed. ``catalog_cache`` is where the catalog is
    persisted for the next process: by default a file under
    ``$XDG_CACHE_HOME/memrecall/`` (else ``~/.cache/memrecall/``) named after
    the roots; a path of your choice; or ``None`` to keep it in memory only.
    ``catalog=False`` scans the whole tree on every recall instead.
    ``scorer`` ranks a memory tree's documents: ``fielded`` (the default: BM25F
    with a strong/weak/none judgement; the fast result holds strong matches
    only) or ``reference`` (upstream's scorer, exactly). A document source
    passed directly ranks with its own scorer.
    ``wait_for_selector=True`` lets the first request wait (up to the 100 ms
    initial wait) for the selector when a fast result exists: the selector's
    pick goes in if it answers in time, else the fast result at the deadline.
    The default delivers the fast result at once (upstream's rule).
    ``fast_result=False`` turns the fast phase off (the delivery evaluation's
    "single path" design). ``observer`` sees every transition of every plan
    (:class:`~memrecall.actors.plan.PlanObserver`; the event log is one).

    On exit every session is shut down and every pending plan records its
    terminal event. If the host cancels the block, the plans still record
    theirs (``shutdown``) while they unwind; nothing outlives the block.

    Arguments are checked before anything starts: a wrong type raises
    ``TypeError``, a wrong value (an empty root or cache path, an unknown
    scorer) ``ValueError``. A root that does not exist or is not a directory
    does not stop the engine: it is logged (WARNING) and listed in
    :attr:`Engine.diagnostics`. Sinks that raise are logged once and skipped;
    sinks with a ``flush()`` method are flushed (in a worker thread) on exit.
    Hooks for tests (a fixed wall clock, the scan on the event loop, a
    replaced transition function) are in :func:`memrecall.testing.open_test_engine`.
    """
    options = EngineOptions(
        sinks=sinks,
        observer=observer,
        fast_result=fast_result,
        wait_for_selector=wait_for_selector,
        catalog=catalog,
        catalog_cache=catalog_cache,
        scorer=scorer,
    )
    return open_engine_with_hooks(memory, selector, options, EngineHooks())


@asynccontextmanager
async def open_engine_with_hooks(
    memory: MemoryTree | DocumentSource,
    selector: Selector | None,
    options: EngineOptions,
    hooks: EngineHooks,
) -> AsyncIterator[Engine]:
    """:func:`open_engine` with test hooks (internal: use :mod:`memrecall.testing`)."""
    sink_list = _check_arguments(memory, selector, options, hooks)
    catalog_cache = options.catalog_cache
    scorer = options.scorer
    diagnostics: tuple[Diagnostic, ...] = ()
    if isinstance(memory, MemoryTree):
        diagnostics = await trio.to_thread.run_sync(check_roots, memory)
    owned: CatalogSource | None = None
    source: DocumentSource
    if not isinstance(memory, MemoryTree):
        source = memory
    elif options.catalog:
        if catalog_cache is CacheLocation.DEFAULT:
            catalog_cache = default_cache_path([(r.scope.value, r.path) for r in memory.roots])
        # The catalog keeps the scorer's per-document data (and persists it in its file).
        source = owned = CatalogSource(memory, cache_path=catalog_cache, scorer=scorer)
    else:
        source = TreeSource(memory)
    if isinstance(memory, MemoryTree) and owned is None and scorer == "fielded":
        source = RankedSource(source)
    settings = EngineSettings(
        source=source,
        selector=selector,
        sinks=tuple(GuardedSink(sink) for sink in sink_list),
        observer=options.observer,
        fast_result=options.fast_result,
        wait_for_selector=options.wait_for_selector,
        hooks=hooks,
    )
    if scorer == "fielded" and hooks.scan_in_thread:
        # The turn reader (memrecall.sources.turn_reader) loads its model once per process
        # (numpy and the embedding model: about 0.3 s): before the first turn, not in it.
        await trio.to_thread.run_sync(default_turns)
    async with trio.open_nursery() as nursery:
        engine = Engine(nursery, settings, diagnostics)
        if owned is not None and hooks.scan_in_thread:
            # Load and validate the catalog while the runtime gets ready for its first turn.
            nursery.start_soon(trio.to_thread.run_sync, owned.preload)
        try:
            yield engine
        finally:
            # Drain gracefully even if the host is cancelling us: shutting a session down
            # only forwards an event and waits for it to be processed, never for I/O.
            with trio.move_on_after(_DRAIN_SECONDS, shield=True):
                await engine.aclose()
            if any(callable(getattr(s, "flush", None)) for s in sink_list):
                # Every plan has recorded its terminal event: get those records on disk.
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(_flush_sinks, settings.sinks)
            if owned is not None:
                # Saves the catalog file; waits for a scan still running in a worker thread.
                with trio.CancelScope(shield=True):
                    await trio.to_thread.run_sync(owned.close)


_DRAIN_SECONDS = 5.0


def _flush_sinks(sinks: tuple[GuardedSink, ...]) -> None:
    for sink in sinks:
        if isinstance(sink, GuardedSink):
            sink.flush()


def check_roots(tree: MemoryTree) -> tuple[Diagnostic, ...]:
    """Each root that is missing, not a directory or not readable, as a diagnostic.

    Each is also logged as a WARNING (the path is for the operator; telemetry
    never carries it). The engine still opens: recall uses the other roots.
    """
    found: list[Diagnostic] = []
    for root in tree.roots:
        try:
            mode = os.stat(root.path).st_mode
        except FileNotFoundError:
            found.append(
                Diagnostic(root.path, DiagnosticKind.MISSING_ROOT, "the memory root does not exist")
            )
        except OSError as exc:
            detail = f"the memory root cannot be read ({type(exc).__name__})"
            found.append(Diagnostic(root.path, DiagnosticKind.UNREADABLE, detail))
        else:
            if not stat.S_ISDIR(mode):
                detail = "the memory root is not a directory"
                found.append(Diagnostic(root.path, DiagnosticKind.NOT_A_DIRECTORY, detail))
    scopes = {root.path: root.scope.value for root in tree.roots}
    for diagnostic in found:
        log.warning(
            "%s memory root %s: %s; recall goes on without it",
            scopes[diagnostic.path],
            diagnostic.path,
            diagnostic.detail,
        )
    if not tree.roots:
        log.warning("the memory tree has no roots; recall will find nothing")
    return tuple(found)


def _check_arguments(
    memory: object, selector: object, options: EngineOptions, hooks: EngineHooks
) -> tuple[TelemetrySink | CorrelatedSink, ...]:
    """Check :func:`open_engine`'s arguments; return the sinks as a tuple."""
    if isinstance(memory, MemoryTree):
        for root in memory.roots:
            if not isinstance(root.path, str):
                raise TypeError(
                    f"memory: a root path must be a str, not {type(root.path).__name__}"
                )
            if not root.path:
                raise ValueError("memory: a root path is empty (use '.' for the current directory)")
    else:
        check_has_methods("memory", memory, "snapshot")
    if selector is not None:
        check_has_methods("selector", selector, "select")
    sinks: object = options.sinks
    if isinstance(sinks, str | bytes) or not isinstance(sinks, Iterable):
        raise TypeError(f"sinks must be an iterable of sinks, not {type(sinks).__name__}")
    sink_list = tuple(sinks)
    for sink in sink_list:
        if not callable(getattr(sink, "emit_correlated", None)):
            check_has_methods("sinks", sink, "emit")
    if options.observer is not None:
        check_has_methods("observer", options.observer, "opened", "stepped")
    check_callable("wall_clock", hooks.wall_clock)
    check_bool("scan_in_thread", hooks.scan_in_thread)
    check_nonnegative("scan_delay", hooks.scan_delay)
    check_bool("fast_result", options.fast_result)
    check_bool("wait_for_selector", options.wait_for_selector)
    check_callable("step_function", hooks.step_function)
    check_bool("catalog", options.catalog)
    catalog_cache: object = options.catalog_cache
    if catalog_cache is not None and not isinstance(catalog_cache, CacheLocation):
        if not isinstance(catalog_cache, str | os.PathLike):
            kind = type(catalog_cache).__name__
            raise TypeError(f"catalog_cache must be a path, None or CacheLocation, not {kind}")
        if not os.fspath(catalog_cache):
            raise ValueError("catalog_cache must not be empty (pass None for no cache file)")
    if options.scorer not in get_args(ScorerName):
        raise ValueError(f"scorer must be one of {get_args(ScorerName)}, got {options.scorer!r}")
    return sink_list
