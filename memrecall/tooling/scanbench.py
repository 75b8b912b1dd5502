"""``memrecall bench scan``: time from the start of a recall to the fast result.

Trees are shaped like upstream's scan benchmark: for each size N a project
root holding N reference topics of about 1 KB (the codeword only in the last
one) and an empty user root. The timed quantity is wall-clock from the
``user_query`` call to the publication of the fast result (the plan consuming
its ``scan_completed`` event), through the real engine: worker-thread scan,
parse, ranking, candidates. The selector answers ``[]`` after a second, so it
never races the measurement. Each size gets one warm-up (page cache) and five
samples; the read-only column times merely reading the same files.

The default columns are the engine without its catalog (``catalog=False``:
every recall scans the whole tree). ``--catalog`` adds the engine with it
(:class:`~memrecall.sources.catalog.source.CatalogSource`):

- *build*: the first recall of an engine whose catalog starts empty;
- *warm*: five more recalls of that engine (nothing changed in between), once the catalog
  has embedded every memory's passage (where it embeds them: docs/embedding.md);
- *one edit*: five recalls, each right after one topic file was rewritten;
- *new process*: a fresh Python process (``subprocess``) opens an engine on the
  catalog file the first engine saved: its first recall (load, validation of
  every file by ``stat``, ranking) and the median of five more;
- *memory*: what the catalog holds once loaded with the same scorer (``tracemalloc``, in another
  fresh process), in total and per 10,000 documents.

The catalog distrusts files changed within two seconds of being read (see
``docs/catalog.md``); the run lets the freshly written tree age that long
before the catalog first reads it, as any tree not being edited right now is.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import attrs
import msgspec
import trio

from memrecall.actors import Engine, SimulatedSelector, open_engine
from memrecall.engine.plan import PlanOptions
from memrecall.events.effects import Effect
from memrecall.events.inputs import PlanEvent, ScanCompleted, UserQuery
from memrecall.progress import Progress
from memrecall.sources.catalog.source import SUSPECT_NS, CatalogSource
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import DEFAULT_SCORER, ScorerName

__all__ = ["DEFAULT_SIZES", "ScanRow", "build_tree", "run_scan_bench", "scan_bench_main"]

DEFAULT_SIZES = (200, 500, 1000, 2000, 5000)
QUERY = "what is the saved scanbench codeword for deployment"
BUDGET_MS = 100.0
_FILLER = "Historical note about an unrelated subsystem. " * 20


@attrs.frozen
class ScanRow:
    """One size: median and worst of five, and the time to only read the files.

    The catalog fields are ``None`` unless the run measured the catalog.
    """

    topics: int
    median_ms: float
    worst_ms: float
    read_only_ms: float
    build_ms: float | None = None
    warm_median_ms: float | None = None
    warm_worst_ms: float | None = None
    edit_median_ms: float | None = None
    restart_first_ms: float | None = None
    restart_median_ms: float | None = None
    memory_mb: float | None = None


def _topic_text(i: int, last: bool, revision: int = 0) -> str:
    lines = [
        "---",
        "type: reference",
        f"name: Topic {i}",
        f"description: Reference note number {i} about deployment history",
        "---",
        "",
        _FILLER,
        "The saved codeword is SCANBENCH." if last else "",
        f"Revision {revision}." if revision else "",
        "",
    ]
    return "\n".join(lines)


def build_tree(root: Path, topics: int) -> MemoryTree:
    """Write ``topics`` topic files under ``root/project`` (and an empty user root)."""
    project = root / "project"
    (project / "reference").mkdir(parents=True)
    (project / "MEMORY.md").write_text("", encoding="utf-8")
    (root / "user").mkdir()
    for i in range(topics):
        path = project / "reference" / f"topic-{i:04d}.md"
        path.write_text(_topic_text(i, i == topics - 1), encoding="utf-8")
    return MemoryTree.of(project=str(project), user=str(root / "user"))


def _tree_of(root: Path) -> MemoryTree:
    return MemoryTree.of(project=str(root / "project"), user=str(root / "user"))


@attrs.define
class _PublicationTimer:
    """Notes when each plan consumed its scan result."""

    started: dict[str, float] = attrs.field(factory=dict)
    published: dict[str, float] = attrs.field(factory=dict)
    arrived: trio.Event = attrs.field(factory=trio.Event)

    def opened(
        self,
        plan_id: str,
        options: PlanOptions,
        query: UserQuery,
        excluded: frozenset[str],
        effects: list[Effect],
    ) -> None:
        self.started[plan_id] = options.started_at

    def stepped(
        self, plan_id: str, seq: int, now: float, event: PlanEvent, effects: list[Effect]
    ) -> None:
        if isinstance(event, ScanCompleted):
            self.published[plan_id] = now
            self.arrived.set()


def _selector() -> SimulatedSelector:
    return SimulatedSelector(latency=1.0, choose=lambda request: [])


async def _one_recall(engine: Engine, timer: _PublicationTimer) -> float:
    """One recall in a new session; milliseconds from its start to its fast result."""
    timer.arrived = trio.Event()
    before = set(timer.started)
    session = await engine.open_session()
    await session.user_query(QUERY)
    await timer.arrived.wait()  # past the 100 ms ceiling the wait ends first
    await session.close()
    (plan_id,) = set(timer.started) - before
    return (timer.published[plan_id] - timer.started[plan_id]) * 1000.0


async def _time_recalls(tree: MemoryTree, runs: int, scorer: ScorerName) -> list[float]:
    timer = _PublicationTimer()
    async with open_engine(
        tree, selector=_selector(), observer=timer, catalog=False, scorer=scorer
    ) as engine:
        return [await _one_recall(engine, timer) for _ in range(runs)]


@attrs.frozen
class _CatalogTimes:
    build_ms: float
    warm: list[float]
    edits: list[float]


async def _time_catalog(
    root: Path, cache: Path, topics: int, runs: int, scorer: ScorerName
) -> _CatalogTimes:
    timer = _PublicationTimer()
    tree = _tree_of(root)
    async with open_engine(
        tree, selector=_selector(), observer=timer, catalog_cache=cache, scorer=scorer
    ) as engine:
        build = await _one_recall(engine, timer)
        source = engine.settings.source
        if isinstance(source, CatalogSource):  # the steady state: every passage embedded
            await trio.to_thread.run_sync(source.settle)
        warm = [await _one_recall(engine, timer) for _ in range(runs)]
        edits = []
        for revision in range(1, runs + 1):
            i = (revision * 7919) % topics
            path = root / "project" / "reference" / f"topic-{i:04d}.md"
            path.write_text(_topic_text(i, i == topics - 1, revision), encoding="utf-8")
            edits.append(await _one_recall(engine, timer))
    return _CatalogTimes(build, warm, edits)


async def _restart_probe(root: Path, cache: Path, runs: int, scorer: ScorerName) -> list[float]:
    timer = _PublicationTimer()
    async with open_engine(
        _tree_of(root), selector=_selector(), observer=timer, catalog_cache=cache, scorer=scorer
    ) as engine:
        return [await _one_recall(engine, timer) for _ in range(runs)]


def _memory_probe(root: Path, cache: Path, scorer: ScorerName) -> float:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    catalog = CatalogSource(_tree_of(root), cache_path=cache, scorer=scorer)
    catalog.snapshot()
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    catalog.close()
    return held / 1e6


def _in_new_process(*args: str) -> object:
    done = subprocess.run(
        [sys.executable, "-m", "memrecall.tooling.scanbench", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def _read_only_ms(root: Path) -> float:
    begun = time.perf_counter()
    for directory, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(directory, name), "rb") as handle:
                handle.read()
    return (time.perf_counter() - begun) * 1000.0


def _ms(value: float) -> float:
    return round(value, 2)


def run_scan_bench(
    sizes: Sequence[int] = DEFAULT_SIZES,
    runs: int = 5,
    *,
    catalog: bool = False,
    scorer: ScorerName = DEFAULT_SCORER,
    progress: Progress | None = None,
) -> list[ScanRow]:
    """Measure every size; one warm-up recall then ``runs`` samples each.

    ``progress`` advances once per size, and once more per size with ``catalog``.
    """
    if len(set(sizes)) != len(sizes):
        raise ValueError(f"sizes must be distinct: {list(sizes)}")
    bar = progress or Progress.off()
    rows = []
    with tempfile.TemporaryDirectory(prefix="recall-scan-bench-") as scratch:
        for topics in sizes:
            bar.note(f"{topics} topics: writing the tree")
            root = Path(scratch) / f"tree-{topics}"
            tree = build_tree(root, topics)
            written = time.time_ns()
            bar.note(f"{topics} topics: recalls without the catalog")
            samples = trio.run(_time_recalls, tree, runs + 1, scorer)[1:]
            reads = sorted(_read_only_ms(root) for _ in range(runs))
            row = ScanRow(
                topics=topics,
                median_ms=_ms(statistics.median(samples)),
                worst_ms=_ms(max(samples)),
                read_only_ms=_ms(statistics.median(reads)),
            )
            bar.advance(f"{topics} topics")
            if catalog:
                bar.note(f"{topics} topics: the catalog (build, warm, edits, new process)")
                cache = Path(scratch) / f"catalog-{topics}.bin"
                row = _measure_catalog(row, root, cache, runs, written, scorer=scorer)
                bar.advance(f"{topics} topics: catalog")
            rows.append(row)
    return rows


def _measure_catalog(
    row: ScanRow, root: Path, cache: Path, runs: int, written: int, *, scorer: ScorerName
) -> ScanRow:
    settle = (written + SUSPECT_NS - time.time_ns()) / 1e9 + 0.1
    if settle > 0:
        time.sleep(settle)
    times = trio.run(_time_catalog, root, cache, row.topics, runs, scorer)
    restart = _in_new_process("restart", str(root), str(cache), str(runs + 1), scorer)
    memory = _in_new_process("memory", str(root), str(cache), scorer)
    assert isinstance(restart, list)
    assert isinstance(memory, float)
    return attrs.evolve(
        row,
        build_ms=_ms(times.build_ms),
        warm_median_ms=_ms(statistics.median(times.warm)),
        warm_worst_ms=_ms(max(times.warm)),
        edit_median_ms=_ms(statistics.median(times.edits)),
        restart_first_ms=_ms(restart[0]),
        restart_median_ms=_ms(statistics.median(restart[1:])),
        memory_mb=round(memory, 1),
    )


def _print_catalog(rows: Sequence[ScanRow]) -> None:
    print()
    print("with the catalog (ms from recall start to fast result; warm and one edit: median)")
    print(
        "| topics | no catalog |  build | warm median | warm worst | speed-up | one edit "
        "| new process: first | warm | memory | per 10k docs |"
    )
    print(
        "|-------:|-----------:|-------:|------------:|-----------:|---------:|---------:"
        "|-------------------:|-----:|-------:|-------------:|"
    )
    for r in rows:
        assert r.warm_median_ms is not None
        assert r.memory_mb is not None
        speedup = r.median_ms / r.warm_median_ms if r.warm_median_ms else float("inf")
        print(
            f"| {r.topics:>6} | {r.median_ms:>10.1f} | {r.build_ms:>6.0f} "
            f"| {r.warm_median_ms:>11.2f} | {r.warm_worst_ms:>10.2f} | {speedup:>7.0f}x "
            f"| {r.edit_median_ms:>8.1f} | {r.restart_first_ms:>18.0f} "
            f"| {r.restart_median_ms:>4.1f} | {r.memory_mb:>3.0f} MB "
            f"| {r.memory_mb / r.topics * 10_000:>9.1f} MB |"
        )


def scan_bench_main(
    sizes: Sequence[int],
    *,
    as_json: bool,
    catalog: bool = False,
    scorer: ScorerName = DEFAULT_SCORER,
) -> int:
    """Print the scan table (or JSON rows); ``catalog`` adds the catalog's columns.

    While it runs, a progress bar on stderr (a terminal only, never with ``as_json``).
    """
    steps = len(sizes) * (2 if catalog else 1)
    with Progress(steps, "bench scan", quiet=as_json) as progress:
        rows = run_scan_bench(sizes, catalog=catalog, scorer=scorer, progress=progress)
    if as_json:
        keep = None if catalog else ("topics", "median_ms", "worst_ms", "read_only_ms")
        encoded = [
            {k: v for k, v in attrs.asdict(r).items() if keep is None or k in keep} for r in rows
        ]
        print(msgspec.json.encode(encoded).decode())
        return 0
    print(f"scorer: {scorer}")
    print("time from recall start to fast-result publication (median and worst of 5)")
    print(
        f"| {'topics':>6} | {'median':>9} | {'worst':>9} | {'budget':>6} | {'inside':>6} | "
        f"{'read only':>9} |"
    )
    print("|-------:|----------:|----------:|-------:|-------:|----------:|")
    for r in rows:
        inside = "yes" if r.worst_ms < BUDGET_MS else "no"
        print(
            f"| {r.topics:>6} | {r.median_ms:>6.1f} ms | {r.worst_ms:>6.1f} ms | "
            f"{r.median_ms / BUDGET_MS:>6.0%} | {inside:>6} | {r.read_only_ms:>6.1f} ms |"
        )
    if catalog:
        _print_catalog(rows)
    return 0


def _probe(argv: Sequence[str]) -> int:
    """The new-process halves of the catalog measurements.

    ``python -m memrecall.tooling.scanbench``.
    """
    what, root, cache, *rest = argv
    scorer: ScorerName = "reference" if rest[-1:] == ["reference"] else "fielded"
    if what == "restart":
        result: object = trio.run(_restart_probe, Path(root), Path(cache), int(rest[0]), scorer)
    elif what == "memory":
        result = _memory_probe(Path(root), Path(cache), scorer)
    else:
        print(f"unknown probe {what!r}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(_probe(sys.argv[1:]))
