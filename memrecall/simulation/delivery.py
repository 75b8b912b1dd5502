"""Delivery evaluation: when does recalled memory reach the model (``memrecall simulate delivery``).

Every case of a labelled corpus (the format of :mod:`memrecall.tooling.evaluation`)
is played through the real engine (sessions, plan actors, the plan machine) on
trio's :class:`~trio.testing.MockClock`, for each modelled selector latency
and for both designs:

* ``single``: no fast phase (``fast_result=False``); the selector's pick is
  delivered before the first request only if it arrives inside the 100 ms
  initial wait, otherwise at the next tool result.
* ``fast`` (the default engine): the deterministic fast result (top two) goes
  in before the first request; the selector's pick follows at the next tool
  result, minus what the fast phase delivered.
* ``fast_wait`` (``wait_for_selector=True``, only with ``--wait-for-selector``):
  a fast result is held while the 100 ms wait lasts; the selector's pick goes
  in first if it answers in time, else the fast result at the deadline.

Two turn shapes are played per case, each in a fresh session: a tool-free turn
(``user_query``, then ``turn_end(tools_requested=False)``) and a tool-using
turn (``user_query``, ``turn_end(tools_requested=True)``, the tool runs for
the selector latency plus 0.5 s, ``tool_result()``, then
``turn_end(tools_requested=False)``).

No model is called. The selector is a :class:`SimulatedSelector` whose pick
stands in for a model's: :class:`GoldStandIn`, the case's labelled relevant
documents among the candidates it is shown, each one missed at a configurable
rate (``miss_rate``, deterministic per case and document). It never consults
the engine's ranker, so how often the fast result and the pick overlap is a
measurement, not a consequence of the stand-in. Which cases count as
answerable comes from the corpus labels too (:func:`lexically_answerable`).
Outcomes are read from the returned memory blocks and cross-checked against
the telemetry records; a disagreement raises :class:`DeliveryCheckError`.
"""

from __future__ import annotations

import enum
import hashlib
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import attrs
import msgspec
import trio
import trio.testing

from memrecall.actors import Engine, SimulatedSelector
from memrecall.actors.selector import SelectorRequest
from memrecall.events.documents import MemoryDocument
from memrecall.events.telemetry import (
    DeliveryPoint,
    DeliveryRecord,
    Phase,
    TelemetryRecord,
)
from memrecall.progress import Progress
from memrecall.sources.source import StaticSource
from memrecall.sources.turn_reader import remembering
from memrecall.telemetry.sinks import MemorySink
from memrecall.testing import open_test_engine
from memrecall.tooling.evaluation import (
    SEMANTIC_SLICE,
    Case,
    Corpus,
    CorpusError,
    load_corpus,
)
from memrecall.tooling.tables import markdown_table, percent

__all__ = [
    "DEFAULT_MISS_RATE",
    "LATENCIES_MS",
    "STAND_IN",
    "TOOL_SLACK",
    "WAIT_LATENCIES_MS",
    "WALL_TIME",
    "CaseRun",
    "DeliveryCheckError",
    "DeliveryReport",
    "Design",
    "Figures",
    "GoldStandIn",
    "KindFigures",
    "Row",
    "TurnKind",
    "check_run",
    "delivery_main",
    "evaluate_delivery",
    "format_delivery",
    "format_wait",
    "lexically_answerable",
    "run_cases",
]

LATENCIES_MS: tuple[int, ...] = (40, 250, 600, 1500, 3000)
"""The modelled selector latencies, in milliseconds."""

WAIT_LATENCIES_MS: tuple[int, ...] = (20, 40, 80, 150, 600)
"""The latencies of the wait-policy comparison (``--wait-for-selector``), in milliseconds."""

TOOL_SLACK = 0.5
"""Seconds a tool runs beyond the selector latency before its result goes back."""

WALL_TIME = 1_780_000_000.0
"""The fixed wall time every run renders memory ages against."""

STAND_IN = "labelled stand-in: the case's relevant documents among its candidates"
"""What the selector's pick is in this evaluation (printed with every report and its miss rate)."""

DEFAULT_MISS_RATE = 0.0
"""The stand-in's default miss rate: it picks every labelled document it is shown."""


class Design(enum.StrEnum):
    """The two delivery designs compared."""

    SINGLE = "single"
    FAST = "fast"
    FAST_WAIT = "fast_wait"


class TurnKind(enum.StrEnum):
    """The two turn shapes played per case."""

    TOOL_FREE = "tool_free"
    TOOL_USING = "tool_using"


class DeliveryCheckError(RuntimeError):
    """The returned memory blocks and the telemetry records disagree about a run."""


# --------------------------------------------------------------------------- one run


@attrs.frozen
class CaseRun:
    """What one case delivered in one turn shape (paths, in delivery order).

    ``pick`` is the selector's answer if it answered before the plan ended
    (``None`` if the call was cancelled); ``records`` is the run's telemetry.
    ``first_request_ms`` is how long ``user_query`` took (virtual clock): the
    time until the first request may go.
    """

    case_id: str
    kind: TurnKind
    first_turn: tuple[str, ...]
    first_phase: Phase | None
    tool_result: tuple[str, ...]
    pick: tuple[str, ...] | None
    records: tuple[TelemetryRecord, ...]
    first_request_ms: float = 0.0

    @property
    def pick_first_turn(self) -> bool:
        """True if the selector's pick went in before the first request."""
        return self.first_phase is Phase.REFINED and bool(self.first_turn)

    @property
    def fast(self) -> tuple[str, ...]:
        """The documents the fast phase delivered."""
        return self.first_turn if self.first_phase is Phase.FAST else ()

    @property
    def delivered(self) -> bool:
        """True if anything was delivered, at the first request or at the tool result."""
        return bool(self.first_turn or self.tool_result)

    @property
    def duplicated(self) -> bool:
        """True if some document was delivered twice."""
        paths = self.first_turn + self.tool_result
        return len(set(paths)) != len(paths)

    @property
    def overlap(self) -> bool:
        """True if the selector's pick included a document the fast phase delivered."""
        return self.pick is not None and bool(set(self.pick) & set(self.fast))


def check_run(run: CaseRun) -> None:
    """Cross-check the blocks against the telemetry; raise :class:`DeliveryCheckError`."""

    def fail(why: str) -> None:
        raise DeliveryCheckError(f"case {run.case_id} ({run.kind}): {why}")

    deliveries = [r for r in run.records if isinstance(r, DeliveryRecord)]
    fast = [r for r in deliveries if r.phase is Phase.FAST]
    terminal = [r for r in deliveries if r.phase is Phase.REFINED]
    if len(terminal) != 1:
        fail(f"{len(terminal)} terminal records, expected exactly one")
    if [r.docs_selected for r in fast] != ([len(run.fast)] if run.fast else []):
        fail("the fast delivery record does not match the fast block")
    point = terminal[0].delivery_point
    refined_initial = run.first_turn if run.first_phase is Phase.REFINED else ()
    expected = {
        DeliveryPoint.INITIAL: refined_initial,
        DeliveryPoint.TOOL_RESULT: run.tool_result,
        DeliveryPoint.DISCARDED: (),
    }[point]
    if point is not DeliveryPoint.DISCARDED and terminal[0].docs_selected != len(expected):
        fail("the refined delivery record does not match the delivered block")
    if (refined_initial and point is not DeliveryPoint.INITIAL) or (
        run.tool_result and point is not DeliveryPoint.TOOL_RESULT
    ):
        fail(f"a refined block was delivered but the terminal record says {point}")


def _missed(seed: int, case_id: str, doc_id: str, miss_rate: float) -> bool:
    """Whether the stand-in misses this labelled document of this case (a fixed coin per pair)."""
    key = f"{seed}\x00{case_id}\x00{doc_id}".encode()
    draw = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2.0**64
    return draw < miss_rate


class GoldStandIn:
    """The selector's choice: the case's labelled relevant documents it is shown.

    Before each session :meth:`expect` names the case. A request for that
    case's query is answered with its labelled documents (``Case.relevant``,
    in label order) that are among the request's candidates, at most
    ``request.limit``; each labelled document is left out when a fixed coin
    for ``(seed, case id, document id)`` falls under ``miss_rate`` (0: a
    perfect selector, 1: one that never picks anything). No-result cases get
    an empty pick. A request with any other query text is answered with
    nothing and counted in :attr:`wrong_query` (the engine asked about the
    wrong text). The stand-in never ranks: it does not share any code with
    the engine's scorers. Records the last pick so the run can compare it
    with the fast result.
    """

    def __init__(self, corpus: Corpus, *, miss_rate: float = DEFAULT_MISS_RATE, seed: int = 0):
        if not 0.0 <= miss_rate <= 1.0:
            raise ValueError(f"miss_rate must be between 0 and 1, not {miss_rate}")
        self.miss_rate = miss_rate
        self.seed = seed
        self._paths = dict(zip(corpus.ids, (d.path for d in corpus.documents), strict=True))
        self._case: Case | None = None
        self.last: tuple[str, ...] | None = None
        self.wrong_query = 0

    def expect(self, case: Case) -> None:
        """The next requests are for ``case``; forget the last pick."""
        self._case = case
        self.last = None

    def gold(self, case: Case) -> tuple[str, ...]:
        """The paths of ``case``'s labelled documents this stand-in picks when shown them."""
        return tuple(
            self._paths[doc_id]
            for doc_id in case.relevant
            if not _missed(self.seed, case.id, doc_id, self.miss_rate)
        )

    def __call__(self, request: SelectorRequest) -> Sequence[str]:
        case = self._case
        if case is None or request.query != case.query:
            self.wrong_query += 1
            self.last = ()
            return []
        shown = set(request.paths)
        self.last = tuple(p for p in self.gold(case) if p in shown)[: request.limit]
        return list(self.last)


@attrs.define
class _Rig:
    """An engine with its sink and stand-in, reused for many sessions."""

    engine: Engine
    sink: MemorySink
    stand_in: GoldStandIn


@asynccontextmanager
async def _rig(
    pool: tuple[MemoryDocument, ...], latency: float, design: Design, stand_in: GoldStandIn
) -> AsyncIterator[_Rig]:
    sink = MemorySink()
    async with open_test_engine(
        StaticSource(pool),
        selector=SimulatedSelector(latency=latency, choose=stand_in),
        sinks=[sink],
        wall_clock=lambda: WALL_TIME,
        scan_in_thread=False,
        fast_result=design is not Design.SINGLE,
        wait_for_selector=design is Design.FAST_WAIT,
    ) as engine:
        yield _Rig(engine, sink, stand_in)


async def _play(rig: _Rig, case: Case, kind: TurnKind, latency: float) -> CaseRun:
    """One case, one turn shape, in a fresh session of ``rig``'s engine."""
    first_record = len(rig.sink.records)
    rig.stand_in.expect(case)
    wrong = rig.stand_in.wrong_query
    session = await rig.engine.open_session()
    tool: tuple[str, ...] = ()
    asked = trio.current_time()
    first = await session.user_query(case.query)
    first_request = trio.current_time() - asked
    if kind is TurnKind.TOOL_USING:
        await session.turn_end(tools_requested=True)
        await trio.sleep(latency + TOOL_SLACK)
        block = await session.tool_result()
        tool = () if block is None else block.paths
    await session.turn_end(tools_requested=False)
    await session.close()
    run = CaseRun(
        case_id=case.id,
        kind=kind,
        first_turn=() if first is None else first.paths,
        first_phase=None if first is None else first.phase,
        tool_result=tool,
        pick=rig.stand_in.last,
        records=tuple(rig.sink.records[first_record:]),
        first_request_ms=round(first_request * 1000.0, 3),
    )
    if rig.stand_in.wrong_query != wrong:
        raise DeliveryCheckError(f"case {case.id} ({kind}): the selector was asked another query")
    check_run(run)
    return run


def _pool(corpus: Corpus, case: Case) -> tuple[MemoryDocument, ...]:
    excluded = set(case.exclude)
    return tuple(d for i, d in zip(corpus.ids, corpus.documents, strict=True) if i not in excluded)


async def _run_cases_async(
    corpus: Corpus, latency: float, design: Design, *, reuse_engines: bool, stand_in: GoldStandIn
) -> list[CaseRun]:
    runs: list[CaseRun] = []
    if not reuse_engines:
        for case in corpus.cases:
            for kind in TurnKind:
                async with _rig(_pool(corpus, case), latency, design, stand_in) as rig:
                    runs.append(await _play(rig, case, kind, latency))
        return runs
    # One engine per distinct pool (cases with the same ``exclude``); a fresh session per run.
    by_pool: dict[tuple[str, ...], list[int]] = {}
    for position, case in enumerate(corpus.cases):
        by_pool.setdefault(tuple(sorted(case.exclude)), []).append(position)
    slots: list[list[CaseRun]] = [[] for _ in corpus.cases]
    for positions in by_pool.values():
        pool = _pool(corpus, corpus.cases[positions[0]])
        async with _rig(pool, latency, design, stand_in) as rig:
            for position in positions:
                for kind in TurnKind:
                    slots[position].append(await _play(rig, corpus.cases[position], kind, latency))
    return [run for slot in slots for run in slot]


def run_cases(
    corpus: Corpus,
    latency_ms: float,
    design: Design,
    *,
    reuse_engines: bool = True,
    miss_rate: float = DEFAULT_MISS_RATE,
) -> list[CaseRun]:
    """Play every case of ``corpus`` in both turn shapes; one run per (case, turn kind).

    Runs on a fresh ``MockClock`` (no real waiting). ``reuse_engines=False``
    opens a new engine for every run instead of one per pool; the results are
    the same (sessions share nothing), only slower. ``miss_rate`` is the
    stand-in selector's (:class:`GoldStandIn`).
    """
    latency = latency_ms / 1000.0
    stand_in = GoldStandIn(corpus, miss_rate=miss_rate)

    async def main() -> list[CaseRun]:
        return await _run_cases_async(
            corpus, latency, design, reuse_engines=reuse_engines, stand_in=stand_in
        )

    with remembering():  # every latency and design replays the same queries
        return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


# --------------------------------------------------------------------------- figures


def _rate(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


@attrs.frozen
class Figures:
    """Rates over one group of answerable cases (``None`` if the group is empty)."""

    first_turn: float | None
    delivered: float | None
    overlap: float | None
    pick_first_turn: float | None = None

    @classmethod
    def of(cls, runs: Sequence[CaseRun]) -> Figures:
        """The rates over ``runs``."""
        return cls(
            first_turn=_rate([bool(r.first_turn) for r in runs]),
            delivered=_rate([r.delivered for r in runs]),
            overlap=_rate([r.overlap for r in runs]),
            pick_first_turn=_rate([r.pick_first_turn for r in runs]),
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON object (rates as fractions)."""
        return {
            "first_turn": self.first_turn,
            "delivered": self.delivered,
            "overlap": self.overlap,
            "pick_first_turn": self.pick_first_turn,
        }


@attrs.frozen
class KindFigures:
    """One turn kind's figures for one (latency, design)."""

    lexical: Figures
    answerable: Figures
    duplicates: float
    no_result_silent: float | None
    first_request_ms: tuple[float, float] = (0.0, 0.0)
    """Mean and largest time to the first request over every case, in milliseconds."""

    def to_json(self) -> dict[str, Any]:
        """A JSON object (rates as fractions)."""
        mean, largest = self.first_request_ms
        return {
            "lexically_answerable": self.lexical.to_json(),
            "answerable": self.answerable.to_json(),
            "duplicates": self.duplicates,
            "no_result_silent": self.no_result_silent,
            "first_request_ms": {"mean": mean, "max": largest},
        }


@attrs.frozen
class Row:
    """One (latency, design): figures for both turn kinds."""

    latency_ms: int
    design: Design
    tool_free: KindFigures
    tool_using: KindFigures


@attrs.frozen
class DeliveryReport:
    """The whole evaluation on one corpus."""

    corpus: str
    documents: int
    cases: int
    answerable: int
    lexically_answerable: int
    no_result: int
    rows: tuple[Row, ...]
    miss_rate: float = DEFAULT_MISS_RATE

    def to_json(self) -> dict[str, Any]:
        """The object ``--json`` prints: counts, then one row per (latency, design)."""
        counts = {
            "cases": self.cases,
            "answerable": self.answerable,
            "lexically_answerable": self.lexically_answerable,
            "no_result": self.no_result,
        }
        return {
            "corpus": self.corpus,
            "documents": self.documents,
            **counts,
            "selector": STAND_IN,
            "miss_rate": self.miss_rate,
            "rows": [
                {
                    "latency_ms": row.latency_ms,
                    "design": row.design.value,
                    **counts,
                    "tool_free": row.tool_free.to_json(),
                    "tool_using": row.tool_using.to_json(),
                }
                for row in self.rows
            ],
        }


def lexically_answerable(corpus: Corpus) -> frozenset[str]:
    """Ids of the cases a lexical path could answer, from the labels alone: the cases with
    relevant documents outside the ``semantic-no-lexical`` slice (no shared words)."""
    return frozenset(c.id for c in corpus.cases if c.relevant and c.slice != SEMANTIC_SLICE)


def _kind_figures(
    corpus: Corpus, runs: Sequence[CaseRun], kind: TurnKind, lexical: frozenset[str]
) -> KindFigures:
    cases = {c.id: c for c in corpus.cases}
    mine = [r for r in runs if r.kind is kind]
    answerable = [r for r in mine if cases[r.case_id].relevant]
    no_result = [r for r in mine if not cases[r.case_id].relevant]
    duplicates = _rate([r.duplicated for r in mine])
    waits = [r.first_request_ms for r in mine] or [0.0]
    return KindFigures(
        lexical=Figures.of([r for r in answerable if r.case_id in lexical]),
        answerable=Figures.of(answerable),
        duplicates=0.0 if duplicates is None else duplicates,
        no_result_silent=_rate([not r.delivered for r in no_result]),
        first_request_ms=(round(sum(waits) / len(waits), 1), max(waits)),
    )


def evaluate_delivery(
    corpus: Corpus,
    *,
    latencies_ms: Sequence[int] = LATENCIES_MS,
    designs: Sequence[Design] = (Design.SINGLE, Design.FAST),
    reuse_engines: bool = True,
    progress: Progress | None = None,
    miss_rate: float = DEFAULT_MISS_RATE,
) -> DeliveryReport:
    """Play the corpus for every (latency, design) and compute the figures.

    First-turn, delivered-at-all and overlap rates are reported over the
    lexically answerable cases and over all answerable cases; the duplicate
    rate is over every case; the silent rate over the no-result cases. ``progress``
    advances once per (latency, design). ``miss_rate`` is the stand-in selector's.
    """
    lexical = lexically_answerable(corpus)
    rows: list[Row] = []
    for latency in latencies_ms:
        for design in designs:
            runs = run_cases(
                corpus, latency, design, reuse_engines=reuse_engines, miss_rate=miss_rate
            )
            if progress is not None:
                progress.advance(f"{latency} ms {design.value}")
            rows.append(
                Row(
                    latency_ms=latency,
                    design=design,
                    tool_free=_kind_figures(corpus, runs, TurnKind.TOOL_FREE, lexical),
                    tool_using=_kind_figures(corpus, runs, TurnKind.TOOL_USING, lexical),
                )
            )
    answerable = sum(1 for c in corpus.cases if c.relevant)
    return DeliveryReport(
        corpus=corpus.name,
        documents=len(corpus.documents),
        cases=len(corpus.cases),
        answerable=answerable,
        lexically_answerable=len(lexical),
        no_result=len(corpus.cases) - answerable,
        rows=tuple(rows),
        miss_rate=miss_rate,
    )


# --------------------------------------------------------------------------- output


def format_delivery(report: DeliveryReport) -> str:
    """The report as a readable table, one row per (latency, design)."""
    header = [
        "latency",
        "design",
        "tool-free 1st turn",
        "tool-free at all",
        "tool-using 1st turn",
        "tool-using at all",
        "overlap",
        "duplicates",
        "no-result silent",
    ]
    rows = [
        [
            f"{row.latency_ms} ms",
            row.design.value,
            percent(row.tool_free.lexical.first_turn),
            percent(row.tool_free.lexical.delivered),
            percent(row.tool_using.lexical.first_turn),
            percent(row.tool_using.lexical.delivered),
            percent(row.tool_using.lexical.overlap),
            percent(max(row.tool_free.duplicates, row.tool_using.duplicates)),
            f"{percent(row.tool_free.no_result_silent)} / "
            f"{percent(row.tool_using.no_result_silent)}",
        ]
        for row in report.rows
    ]
    lines = [
        f"delivery through the engine on a virtual clock; corpus {report.corpus}:"
        f" {report.documents} documents, {report.cases} cases",
        f"({report.answerable} answerable, {report.lexically_answerable} lexically answerable,"
        f" {report.no_result} no-result); no model is called",
        f"refined choice: {STAND_IN}, each missed at rate {report.miss_rate:g}",
        "single: the selector alone (first turn only if it answers inside the 100 ms wait);",
        "fast: the deterministic top 2 before the first request, the pick at the next tool result",
        f"rates over the lexically answerable cases (labelled, outside {SEMANTIC_SLICE});",
        "overlap: tool-using turns whose pick included a fast-delivered document;",
        "duplicates: every case, both turn kinds; no-result silent: tool-free / tool-using",
        "",
        *markdown_table(header, rows, text_columns=2),
    ]
    return "\n".join(lines)


def format_wait(report: DeliveryReport) -> str:
    """The wait-policy comparison: the pick on the first turn vs the time to the first request."""
    header = [
        "latency",
        "policy",
        "pick 1st turn (lexical)",
        "pick 1st turn (all)",
        "anything 1st turn",
        "1st request mean",
        "1st request max",
    ]
    policy = {Design.FAST: "at once (default)", Design.FAST_WAIT: "wait_for_selector"}
    rows = []
    for row in report.rows:
        mean, largest = row.tool_free.first_request_ms
        rows.append(
            [
                f"{row.latency_ms} ms",
                policy.get(row.design, row.design.value),
                percent(row.tool_free.lexical.pick_first_turn),
                percent(row.tool_free.answerable.pick_first_turn),
                percent(row.tool_free.lexical.first_turn),
                f"{mean:.1f} ms",
                f"{largest:.1f} ms",
            ]
        )
    lines = [
        f"fast-result policy on a virtual clock; corpus {report.corpus}:"
        f" {report.documents} documents, {report.cases} cases"
        f" ({report.lexically_answerable} lexically answerable); no model is called",
        f"refined choice: {STAND_IN}, each missed at rate {report.miss_rate:g}",
        "tool-free turns; pick 1st turn: the selector's pick went in before the first request",
        f"(lexical: over the labelled relevant cases outside {SEMANTIC_SLICE}; all: over",
        "every answerable case); 1st request: time user_query took, over every case",
        "",
        *markdown_table(header, rows, text_columns=2),
    ]
    return "\n".join(lines)


def delivery_main(
    corpus_path: str,
    *,
    as_json: bool,
    wait_for_selector: bool = False,
    miss_rate: float = DEFAULT_MISS_RATE,
) -> int:
    """``memrecall simulate delivery``: print the report; 0, or 2 for a bad corpus.

    ``wait_for_selector`` compares the two fast-result policies instead (the
    default, and ``wait_for_selector=True``) at :data:`WAIT_LATENCIES_MS`.
    An unreadable or invalid corpus prints a one-line reason on stderr (the
    evaluation module's validation) and returns 2. ``miss_rate`` is the
    stand-in selector's (:class:`GoldStandIn`).
    """
    try:
        corpus = load_corpus(corpus_path)
    except CorpusError as exc:
        print(f"memrecall simulate delivery: error: {exc}", file=sys.stderr)
        return 2
    latencies, designs = LATENCIES_MS, (Design.SINGLE, Design.FAST)
    if wait_for_selector:
        latencies, designs = WAIT_LATENCIES_MS, (Design.FAST, Design.FAST_WAIT)
    total = len(latencies) * len(designs)
    with Progress(total, "delivery", quiet=as_json) as progress:
        report = evaluate_delivery(
            corpus,
            latencies_ms=latencies,
            designs=designs,
            progress=progress,
            miss_rate=miss_rate,
        )
    if as_json:
        sys.stdout.flush()
        sys.stdout.buffer.write(msgspec.json.encode(report.to_json()) + b"\n")
        sys.stdout.buffer.flush()
    else:
        print(format_wait(report) if wait_for_selector else format_delivery(report))
    return 0
