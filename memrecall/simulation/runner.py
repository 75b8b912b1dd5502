"""Seeded simulations: the real actors on a virtual clock, recorded, checked, run twice.

A seed expands into :class:`SimOptions` (printed, so a run is understandable
without the code): how many sessions and turns, how many turns use tools, the
selector's latency distribution (including calls past the 30 s ceiling and
outright failures), how often turns are cancelled or the conversation reset,
and the size of the memory pool. :func:`run_once` runs that scenario through
:func:`memrecall.actors.open_engine` under ``trio.testing.MockClock`` with the
event log on; :func:`simulate` runs it twice, requires byte-identical logs, and
checks the property catalogue of :mod:`memrecall.simulation.safety` on every record.

Determinism: every random choice comes from a generator seeded by the seed and
the session (or the request), never from the order in which tasks happen to
run, and trio's scheduler is seeded the way trio's own Hypothesis plugin does
it (a private hook; :func:`deterministic_scheduling` fails loudly if it moves).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import attrs
import trio
import trio.testing

from memrecall.actors import Session
from memrecall.actors.selector import SelectorRequest
from memrecall.engine.plan import StepFunction, step
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.events.inputs import Reset, UserQuery
from memrecall.simulation.eventlog import EventLog, eventlog_codec
from memrecall.simulation.safety import Violation, check_log
from memrecall.sources.source import StaticSource
from memrecall.testing import open_test_engine

__all__ = [
    "SimOptions",
    "SimResult",
    "build_pool",
    "deterministic_scheduling",
    "options_for_seed",
    "run_once",
    "simulate",
]

WALL = 1_780_000_000.0
_VOCABULARY = (
    "deploy rollback postgres failover dashboard latency vault secret kafka lag canary "
    "release freeze oncall rota budget invoice terraform cluster replica backup cache "
    "部署 回滚 数据库 デプロイ サーバー 배포 장애 развертывание αντίγραφα"
).split()
_NOISE = ("zebra", "quux", "ok", "go", "x")


@attrs.frozen
class SimOptions:
    """Everything a simulated run depends on. ``seed`` alone determines the rest."""

    seed: int
    sessions: int
    turns: int
    documents: int
    tool_free_share: float
    latency_median: float
    timeout_share: float
    failure_share: float
    cancel_share: float
    reset_share: float
    scan_delay: float

    def describe(self) -> str:
        """One line per option, for the console."""
        return "\n".join(
            f"  {f.name:<16} {getattr(self, f.name)}" for f in attrs.fields(SimOptions)
        )

    def as_dict(self) -> dict[str, Any]:
        """The options as a plain dict (for the log header)."""
        return attrs.asdict(self)


def options_for_seed(seed: int) -> SimOptions:
    """Expand a seed into options."""
    rng = random.Random(seed)
    return SimOptions(
        seed=seed,
        sessions=rng.randint(1, 3),
        turns=rng.randint(2, 8),
        documents=rng.choice([0, 5, 30, 120, 400]),
        tool_free_share=round(rng.uniform(0.2, 0.8), 2),
        latency_median=round(rng.choice([0.04, 0.25, 0.6, 1.5, 3.0]), 3),
        timeout_share=round(rng.choice([0.0, 0.05, 0.2]), 2),
        failure_share=round(rng.choice([0.0, 0.1, 0.3]), 2),
        cancel_share=round(rng.choice([0.0, 0.15, 0.4]), 2),
        reset_share=round(rng.choice([0.0, 0.1]), 2),
        scan_delay=round(rng.choice([0.0, 0.005, 0.03, 0.2]), 3),
    )


def build_pool(options: SimOptions) -> tuple[MemoryDocument, ...]:
    """A synthetic, multilingual memory pool of ``options.documents`` documents."""
    rng = random.Random(f"pool-{options.seed}")
    docs = []
    for i in range(options.documents):
        words = rng.sample(_VOCABULARY, 4)
        scope = Scope.PROJECT if i % 3 else Scope.USER
        docs.append(
            MemoryDocument(
                scope=scope,
                path=f"/sim/{scope.value}/topic-{i:04d}.md",
                relative_path=f"topic-{i:04d}.md",
                type=rng.choice(list(MemoryType)),
                title=f"{words[0]} {words[1]} note {i}",
                description=f"about {words[2]}",
                body=f"{words[3]} details " * rng.randint(1, 60),
                mtime=WALL - rng.uniform(0, 90 * 86_400),
            )
        )
    docs.sort(key=lambda d: (d.scope is Scope.USER, -d.mtime, d.relative_path))
    return tuple(docs)


def _rng_for(*parts: object) -> random.Random:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@attrs.define
class _SimSelector:
    """A selector whose latency, failures and picks are functions of the request and seed."""

    options: SimOptions

    async def select(self, request: SelectorRequest) -> Sequence[str]:
        rng = _rng_for(self.options.seed, request.query, len(request.candidates))
        if rng.random() < self.options.timeout_share:
            delay = rng.uniform(30.5, 40.0)
        else:
            delay = rng.lognormvariate(0.0, 0.5) * self.options.latency_median
        await trio.sleep(delay)
        if rng.random() < self.options.failure_share:
            raise RuntimeError("simulated selector failure")
        paths = list(request.paths)
        rng.shuffle(paths)
        return paths[: rng.randint(0, request.limit)]


async def _converse(session: Session, options: SimOptions, index: int, log: EventLog) -> None:
    """One session's conversation; every runtime call is recorded in ``log`` before it is made."""
    rng = random.Random(f"session-{options.seed}-{index}")
    await trio.sleep(rng.uniform(0, 2))
    sid = session.session_id
    for turn in range(options.turns):
        if rng.random() < options.reset_share:
            log.runtime(sid, trio.current_time(), Reset())
            await session.reset()
        words = rng.sample(_VOCABULARY, rng.randint(1, 3))
        if rng.random() < 0.15:
            words = [rng.choice(_NOISE)]
        text = " ".join(words)
        cancel_after = rng.uniform(0.0, 0.15) if rng.random() < options.cancel_share else None
        query = UserQuery(query_id=f"turn{turn + 1}", text=text)
        log.runtime(sid, trio.current_time(), query)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(partial(session.user_query, text, query_id=query.query_id))
            if cancel_after is not None:
                await trio.sleep(cancel_after)
                await session.abort()
        if cancel_after is None:
            if rng.random() < options.tool_free_share:
                await session.turn_end(tools_requested=False)
            else:
                for _ in range(rng.randint(1, 3)):
                    await session.turn_end(tools_requested=True)
                    await trio.sleep(rng.uniform(0.05, 4.0))
                    await session.tool_result()
                await session.turn_end(tools_requested=False)
        await trio.sleep(rng.uniform(0.1, 5.0))


@contextmanager
def deterministic_scheduling(seed: int) -> Iterator[None]:
    """Make trio's scheduler deterministic for one run (as trio's Hypothesis plugin does)."""
    core: Any = trio._core._run
    if not hasattr(core, "_ALLOW_DETERMINISTIC_SCHEDULING") or not hasattr(core, "_r"):
        raise RuntimeError("this trio version moved its scheduler-determinism hook")
    saved_flag, saved_state = core._ALLOW_DETERMINISTIC_SCHEDULING, core._r.getstate()
    core._ALLOW_DETERMINISTIC_SCHEDULING = True
    core._r.seed(seed)
    try:
        yield
    finally:
        core._ALLOW_DETERMINISTIC_SCHEDULING = saved_flag
        core._r.setstate(saved_state)


def run_once(options: SimOptions, *, step_function: StepFunction = step) -> bytes:
    """Run the scenario once on a virtual clock; return the event log."""
    log = EventLog(options=options.as_dict(), seed=options.seed)
    pool = build_pool(options)

    async def main() -> None:
        async with open_test_engine(
            StaticSource(pool),
            selector=_SimSelector(options),
            observer=log,
            wall_clock=lambda: WALL,
            scan_in_thread=False,
            scan_delay=options.scan_delay,
            step_function=step_function,
        ) as engine:
            sessions = [await engine.open_session() for _ in range(options.sessions)]
            async with trio.open_nursery() as nursery:
                for index, session in enumerate(sessions):
                    nursery.start_soon(_converse, session, options, index, log)

    with deterministic_scheduling(options.seed):
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    return log.getvalue()


@attrs.frozen
class SimResult:
    """One checked simulation: the log, every violation, and whether two runs agreed."""

    options: SimOptions
    log: bytes
    violations: tuple[Violation, ...]
    identical: bool
    plans: int

    @property
    def ok(self) -> bool:
        """True when every property held and both runs produced the same bytes."""
        return self.identical and not self.violations


def simulate(options: SimOptions, *, step_function: StepFunction = step) -> SimResult:
    """Run twice, compare the logs byte for byte, and check the property catalogue."""
    first = run_once(options, step_function=step_function)
    second = run_once(options, step_function=step_function)
    _, records = eventlog_codec.decode_numbered(first)
    violations = check_log(records)
    plans = sum(1 for _, r in records if r.__struct_config__.tag == "opened")
    return SimResult(options, first, tuple(violations), first == second, plans)
