"""``memrecall demo``: a scripted conversation on the bundled example tree.

It runs the real engine (worker-thread scans, trio actors, real time) with a
simulated selector of realistic latency and prints a timeline: what was
delivered when, and every telemetry record as it is emitted.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import attrs
import trio

from memrecall.actors import MemoryBlock, Session, SimulatedSelector, open_engine
from memrecall.actors.selector import SelectorRequest
from memrecall.engine.scoring.reference import ReferenceIndex
from memrecall.events import DeliveryRecord, SelectionRecord, TelemetryRecord
from memrecall.scanview import print_scan
from memrecall.simulation.eventlog import EventLog
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.scanner import MemoryTree, scan_tree

__all__ = ["SELECTOR_LATENCY", "run_demo"]

SELECTOR_LATENCY = 0.600
"""Seconds the simulated selector takes: a typical network model call, far past 100 ms."""


def _stand_in_model(request: SelectorRequest) -> Sequence[str]:
    """Pick the lexical top three among the candidates (a deterministic stand-in for a model)."""
    index = ReferenceIndex.of(request.candidates)
    return [request.candidates[i].path for i in index.rank(request.query, 3)]


@attrs.define
class _Timeline:
    start: float = 0.0
    titles: dict[str, str] = attrs.field(factory=dict)

    def at(self) -> str:
        return f"{(trio.current_time() - self.start) * 1000:8.1f} ms"

    def say(self, text: str) -> None:
        print(f"{self.at()}  {text}")

    def block(self, label: str, block: MemoryBlock | None) -> None:
        if block is None:
            self.say(f"{label}: nothing delivered")
            return
        names = ", ".join(self.titles.get(p, p) for p in block.paths)
        self.say(f"{label}: {block.phase.value} block with {len(block.paths)} doc(s): {names}")

    def emit(self, record: TelemetryRecord) -> None:
        if isinstance(record, SelectionRecord):
            text = (
                f"selection strategy={record.strategy} selected={record.docs_selected}"
                f"/{record.docs_scanned} duration={record.duration_ms:.1f}ms"
            )
        else:
            assert isinstance(record, DeliveryRecord)
            reason = f" reason={record.discard_reason}" if record.discard_reason else ""
            text = (
                f"delivery phase={record.phase} point={record.delivery_point}{reason} "
                f"strategy={record.strategy} docs={record.docs_selected} "
                f"latency={record.latency_ms:.1f}ms"
            )
        print(f"{self.at()}    telemetry: {text}")


async def _turn(
    timeline: _Timeline, session: Session, text: str, *, tools: bool, tool_seconds: float = 0.8
) -> None:
    timeline.say(f"user: {text!r}")
    timeline.block("before the first request", await session.user_query(text))
    if tools:
        timeline.say("model requests a tool; the tool runs")
        await session.turn_end(tools_requested=True)
        await trio.sleep(tool_seconds)
        timeline.block("after the tool result", await session.tool_result())
    timeline.say("model answers without tools: the turn ends")
    await session.turn_end(tools_requested=False)


async def _script(tree: MemoryTree, log: EventLog) -> None:
    timeline = _Timeline()
    timeline.titles = {d.path: d.title for d in scan_tree(tree).documents}
    selector = SimulatedSelector(latency=SELECTOR_LATENCY, choose=_stand_in_model)
    async with open_engine(tree, selector=selector, sinks=[timeline], observer=log) as engine:
        # The catalog: parse the tree once (or load it from the cache file of an earlier
        # run); every recall after this reads only what changed on disk.
        begun = trio.current_time()
        await trio.to_thread.run_sync(engine.settings.source.snapshot)
        print(f"\ncatalog ready in {(trio.current_time() - begun) * 1000:.1f} ms; later recalls")
        print("re-read only files that changed (see docs/catalog.md)")
        source = engine.settings.source
        if isinstance(source, CatalogSource):
            # Recall across languages: the catalog embeds each memory's passage after it
            # has published (in a runtime, between turns); the script waits for them here
            # so that every turn below ranks as a settled catalog does.
            begun = trio.current_time()
            if not await trio.to_thread.run_sync(source.settle, 0.0):
                print("embedding each memory's passage (recall across languages; once per")
                print("memory, kept in the catalog file) ...")
                await trio.to_thread.run_sync(source.settle)
                took = trio.current_time() - begun
                print(f"{source.stats.embedded} passages embedded in {took:.1f} s")
        session = await engine.open_session()
        timeline.start = trio.current_time()

        print("\n== 1. A tool-free turn: the fast result is all the model gets ==")
        await _turn(timeline, session, "Which Grafana dashboard shows API latency?", tools=False)

        print(
            "\n== 2. A tool-using turn: the refined pick arrives after the tool, minus fast docs =="
        )
        await _turn(
            timeline, session, "How do I fail over the Postgres primary safely?", tools=True
        )

        print("\n== 3. A turn cancelled inside the 100 ms window ==")
        async with trio.open_nursery() as nursery:

            async def ask() -> None:
                text = "zebra offsite?"  # matches nothing lexically: no fast result
                timeline.say(f"user: {text!r}")
                timeline.block("before the first request", await session.user_query(text))

            nursery.start_soon(ask)
            await trio.sleep(0.040)
            timeline.say("the user presses stop")
            await session.abort()

        print("\n== 4. A new query while the previous recall is pending ==")
        timeline.say("user: 'what are the staging deploy steps?'")
        timeline.block(
            "before the first request",
            await session.user_query("what are the staging deploy steps?"),
        )
        await session.turn_end(tools_requested=True)
        timeline.say("before the tool finishes, the user sends another message")
        await _turn(timeline, session, "who owns the jira issue-search tool?", tools=False)

        print("\n== 5. Surfaced documents are not repeated in a session, until a reset ==")
        timeline.say(f"documents surfaced so far this session: {len(session.surfaced)}")
        await _turn(timeline, session, "Which Grafana dashboard shows API latency?", tools=False)
        await session.reset()
        timeline.say(f"reset: {len(session.surfaced)} documents surfaced now")
        await _turn(timeline, session, "Which Grafana dashboard shows API latency?", tools=False)
        print()


def run_demo(tree: MemoryTree, *, log_path: str | None = None) -> int:
    """Scan the tree, then run the scripted conversation and print its timeline.

    ``log_path`` writes the run's event log there (for ``memrecall replay``).
    """
    print("== The memory tree ==")
    print_scan(scan_tree(tree))
    print(
        f"\nThe selector is simulated: it answers after {SELECTOR_LATENCY * 1000:.0f} ms with "
        "the lexical top three (a stand-in for a model)."
    )
    log = EventLog(options={"demo": True})
    trio.run(_script, tree, log)
    if log_path is not None:
        try:
            log.write(log_path)
        except OSError as exc:
            print(f"memrecall demo: cannot write {log_path}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"event log written to {log_path}; replay: uv run memrecall replay {log_path}")
    return 0
