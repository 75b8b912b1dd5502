"""``memrecall bench recall``: how long ``user_query`` keeps a turn waiting.

For each tree size (topics shaped as in :mod:`memrecall.tooling.scanbench`, written by
its :func:`~memrecall.tooling.scanbench.build_tree`) the run measures the time from
the ``user_query`` call to its return, through the real engine
(:func:`~memrecall.actors.open_engine` with its catalog and the default
scorer), in three modes:

- *cold*: a fresh Python process (``subprocess``) with no catalog file; its
  first turn (the catalog is still being built);
- *cached*: a fresh process opening the catalog file the cold runs saved; its
  first turn (load, validation of every file, ranking);
- *warm*: one process, after its catalog is built: many turns.

Every turn opens a session and asks a query from a mix in which most queries
contain a word that process has not seen before (so nothing per-query is
cached). The engine runs without a model selector: ``user_query`` then returns
as soon as the deterministic pass has settled the turn, or at the 100 ms
deadline, whichever is first. A turn *made the window* when its fast result
(the scan's completion) was published before the deadline.

Each row prints the number of turns, p50, p99 and max of the return time (ms)
and the share of turns that made the window. Nothing is asserted about timings
here: the targets are in docs/evaluation.md.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import msgspec
import trio

from memrecall.actors import open_engine
from memrecall.engine.plan import PlanOptions
from memrecall.events.effects import Effect
from memrecall.events.inputs import InitialDeadline, PlanEvent, ScanCompleted, UserQuery
from memrecall.progress import Progress
from memrecall.sources.catalog.source import SUSPECT_NS
from memrecall.sources.scanner import MemoryTree
from memrecall.tooling.scanbench import build_tree

__all__ = [
    "DEFAULT_SIZES",
    "MODES",
    "RecallRow",
    "TurnTimes",
    "percentile",
    "query_mix",
    "recall_bench_main",
    "run_recall_bench",
]

DEFAULT_SIZES = (1000, 10000, 20000)
MODES = ("cold", "cached", "warm")
NEW_PROCESS_RUNS = 5
"""Fresh processes per size for each of the cold and cached rows (one first turn each)."""
WARM_TURNS = 100
"""Turns of the warm row per size."""

_STEMS = ("deploy", "histor", "referen", "subsyst", "unrelat", "codewor", "staging", "rollbac")
_PLAIN = (
    "what did we note about the deployment history",
    "remind me of the scanbench codeword",
    "which reference covers the unrelated subsystem",
    "how do we roll back a release",
)


def _letters(n: int) -> str:
    out = ""
    for _ in range(3):
        n, r = divmod(n, 26)
        out += chr(ord("a") + r)
    return out


def query_mix(count: int, *, offset: int = 0) -> list[str]:
    """``count`` queries; three in four carry a word never used by an earlier query of the mix.

    The new words share a stem with the trees' vocabulary (``histor…``,
    ``deploy…``), so each one exercises the scorer's word-variant lookup.
    """
    out = []
    for i in range(offset, offset + count):
        plain = _PLAIN[i % len(_PLAIN)]
        if i % 4 == 3:
            out.append(plain)
        else:
            out.append(f"{plain} {_STEMS[i % len(_STEMS)]}{_letters(i)}")
    return out


@attrs.frozen
class TurnTimes:
    """Per turn: milliseconds until ``user_query`` returned, and whether the fast result made it."""

    return_ms: list[float]
    made: list[bool]


@attrs.frozen
class RecallRow:
    """One mode at one size."""

    topics: int
    mode: str
    turns: int
    p50_ms: float
    p99_ms: float
    max_ms: float
    window_share: float
    """Share of turns whose fast result was published inside the initial wait (0 to 1)."""


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values``, nearest rank (an observed value)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


@attrs.define
class _TurnObserver:
    """Notes, per plan, whether its scan completed before its initial deadline."""

    made: dict[str, bool] = attrs.field(factory=dict)
    last: str | None = None
    settled: trio.Event = attrs.field(factory=trio.Event)

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.last = plan_id
        self.settled = trio.Event()

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        if isinstance(event, ScanCompleted):
            self.made.setdefault(plan_id, True)
            if plan_id == self.last:
                self.settled.set()
        elif isinstance(event, InitialDeadline):
            self.made.setdefault(plan_id, False)


def _tree_of(root: Path) -> MemoryTree:
    return MemoryTree.of(project=str(root / "project"), user=str(root / "user"))


async def _turns(
    root: Path, cache: Path | None, queries: Sequence[str], warm_up: bool
) -> TurnTimes:
    """Run ``queries`` as turns of one engine; with ``warm_up``, first let its catalog build."""
    observer = _TurnObserver()
    times: list[float] = []
    made: list[bool] = []
    async with open_engine(_tree_of(root), observer=observer, catalog_cache=cache) as engine:
        if warm_up:
            session = await engine.open_session()
            await session.user_query("warm up the catalog")
            await observer.settled.wait()
            await session.close()
        for query in queries:
            session = await engine.open_session()
            begun = time.perf_counter()
            await session.user_query(query)
            times.append((time.perf_counter() - begun) * 1000.0)
            plan_id = observer.last
            await observer.settled.wait()  # one turn at a time: the next starts on a quiet engine
            await session.close()
            made.append(observer.made.get(plan_id or "", False))
    return TurnTimes(times, made)


def _first_turn_in_new_process(root: Path, cache: Path, offset: int) -> TurnTimes:
    done = subprocess.run(
        [sys.executable, "-m", "memrecall.tooling.recallbench", str(root), str(cache), str(offset)],
        capture_output=True,
        text=True,
        check=True,
    )
    return msgspec.json.decode(done.stdout.encode(), type=TurnTimes)


def _row(topics: int, mode: str, times: TurnTimes) -> RecallRow:
    values = times.return_ms
    return RecallRow(
        topics=topics,
        mode=mode,
        turns=len(values),
        p50_ms=round(percentile(values, 0.5), 2),
        p99_ms=round(percentile(values, 0.99), 2),
        max_ms=round(max(values), 2),
        window_share=round(sum(times.made) / len(times.made), 3),
    )


def _merge(parts: Sequence[TurnTimes]) -> TurnTimes:
    return TurnTimes([t for p in parts for t in p.return_ms], [m for p in parts for m in p.made])


def run_recall_bench(
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    runs: int = NEW_PROCESS_RUNS,
    warm_turns: int = WARM_TURNS,
    progress: Progress | None = None,
) -> list[RecallRow]:
    """Measure every size in every mode (see the module doc); ``progress`` advances per row."""
    bar = progress or Progress.off()
    rows: list[RecallRow] = []
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as scratch:
        for topics in sizes:
            bar.note(f"{topics} topics: writing the tree")
            root = Path(scratch) / f"tree-{topics}"
            build_tree(root, topics)
            # The catalog distrusts files changed within SUSPECT_NS of being read: let the
            # tree age like any tree not being edited right now.
            time.sleep(SUSPECT_NS / 1e9 + 0.1)
            cache = Path(scratch) / f"catalog-{topics}.bin"
            cold = []
            for run in range(runs):
                cache.unlink(missing_ok=True)
                features = cache.parent / (cache.name + ".features")
                features.unlink(missing_ok=True)
                cold.append(_first_turn_in_new_process(root, cache, run))
            rows.append(_row(topics, "cold", _merge(cold)))
            bar.advance(f"{topics} topics: cold")
            cached = [_first_turn_in_new_process(root, cache, runs + r) for r in range(runs)]
            rows.append(_row(topics, "cached", _merge(cached)))
            bar.advance(f"{topics} topics: cached")
            warm = trio.run(_turns, root, cache, query_mix(warm_turns, offset=2 * runs), True)
            rows.append(_row(topics, "warm", warm))
            bar.advance(f"{topics} topics: warm")
    return rows


def _print(rows: Sequence[RecallRow]) -> None:
    print("user_query return time (ms) through the real engine and catalog")
    print("| topics | mode   | turns |   p50 |   p99 |   max | fast result in window |")
    print("|-------:|:-------|------:|------:|------:|------:|----------------------:|")
    for r in rows:
        print(
            f"| {r.topics:>6} | {r.mode:<6} | {r.turns:>5} | {r.p50_ms:>5.1f} "
            f"| {r.p99_ms:>5.1f} | {r.max_ms:>5.1f} | {r.window_share:>21.0%} |"
        )


def recall_bench_main(sizes: Sequence[int], *, as_json: bool) -> int:
    """Print the recall table (or JSON rows); progress on stderr when it is a terminal."""
    with Progress(len(sizes) * len(MODES), "bench recall", quiet=as_json) as progress:
        rows = run_recall_bench(sizes, progress=progress)
    if as_json:
        print(msgspec.json.encode([attrs.asdict(r) for r in rows]).decode())
    else:
        _print(rows)
    return 0


def _probe(argv: Sequence[str]) -> int:
    """One fresh process's first turn.

    ``python -m memrecall.tooling.recallbench ROOT CACHE OFFSET``.
    """
    root, cache, offset = argv
    times = trio.run(_turns, Path(root), Path(cache), query_mix(1, offset=int(offset)), False)
    print(json.dumps(attrs.asdict(times)))
    return 0


if __name__ == "__main__":
    sys.exit(_probe(sys.argv[1:]))
