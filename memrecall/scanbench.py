"""``memrecall bench scan``: time from the start of a recall to the fast result.

Trees are shaped like upstream's scan benchmark: for each size N a project
root holding N reference topics of about 1 KB (the codeword only in the last
one) and an empty user root. The timed quantity is wall-clock from the
``user_query`` call to the publication of the fast result (the plan consuming
its ``scan_completed`` event), through the real engine: worker-thread scan,
parse, ranking, candidates. The selector answers ``[]`` after a second, so it
never races the measurement. Each size gets one warm-up (page cache) and five
samples; the read-only column times merely reading the same files.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
import msgspec
import trio

from memrecall.actors import SimulatedSelector, open_engine
from memrecall.engine.plan import PlanOptions
from memrecall.engine.scanner import MemoryTree
from memrecall.events.effects import Effect
from memrecall.events.inputs import PlanEvent, ScanCompleted, UserQuery

__all__ = ["DEFAULT_SIZES", "ScanRow", "build_tree", "run_scan_bench", "scan_bench_main"]

DEFAULT_SIZES = (200, 500, 1000, 2000, 5000)
QUERY = "what is the saved scanbench codeword for deployment"
BUDGET_MS = 100.0
_FILLER = "Historical note about an unrelated subsystem. " * 20


@attrs.frozen
class ScanRow:
    """One size: median and worst of five, and the time to only read the files."""

    topics: int
    median_ms: float
    worst_ms: float
    read_only_ms: float


def build_tree(root: Path, topics: int) -> MemoryTree:
    """Write ``topics`` topic files under ``root/project`` (and an empty user root)."""
    project = root / "project"
    (project / "reference").mkdir(parents=True)
    (project / "MEMORY.md").write_text("", encoding="utf-8")
    (root / "user").mkdir()
    for i in range(topics):
        last = i == topics - 1
        lines = [
            "---",
            "type: reference",
            f"name: Topic {i}",
            f"description: Reference note number {i} about deployment history",
            "---",
            "",
            _FILLER,
            "The saved codeword is SCANBENCH." if last else "",
            "",
        ]
        path = project / "reference" / f"topic-{i:04d}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
    return MemoryTree.of(project=str(project), user=str(root / "user"))


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


async def _time_recalls(tree: MemoryTree, runs: int) -> list[float]:
    timer = _PublicationTimer()
    selector = SimulatedSelector(latency=1.0, choose=lambda request: [])
    samples = []
    async with open_engine(tree, selector=selector, observer=timer) as engine:
        for _ in range(runs):
            timer.arrived = trio.Event()
            session = await engine.open_session()
            await session.user_query(QUERY)
            await timer.arrived.wait()  # past the 100 ms ceiling the wait ends first
            await session.close()
        for plan_id, begun in timer.started.items():
            samples.append((timer.published[plan_id] - begun) * 1000.0)
    return samples


def _read_only_ms(root: Path) -> float:
    begun = time.perf_counter()
    for directory, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(directory, name), "rb") as handle:
                handle.read()
    return (time.perf_counter() - begun) * 1000.0


def run_scan_bench(sizes: Sequence[int] = DEFAULT_SIZES, runs: int = 5) -> list[ScanRow]:
    """Measure every size; one warm-up recall then ``runs`` samples each."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="recall-scan-bench-") as scratch:
        for topics in sizes:
            root = Path(scratch) / f"tree-{topics}"
            tree = build_tree(root, topics)
            samples = trio.run(_time_recalls, tree, runs + 1)[1:]
            reads = sorted(_read_only_ms(root) for _ in range(runs))
            rows.append(
                ScanRow(
                    topics=topics,
                    median_ms=round(statistics.median(samples), 2),
                    worst_ms=round(max(samples), 2),
                    read_only_ms=round(statistics.median(reads), 2),
                )
            )
    return rows


def scan_bench_main(sizes: Sequence[int], *, as_json: bool) -> int:
    """Print the scan table (or JSON rows)."""
    rows = run_scan_bench(sizes)
    if as_json:
        print(msgspec.json.encode([attrs.asdict(r) for r in rows]).decode())
        return 0
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
    return 0
