"""The delivery evaluation: the engine on a virtual clock, single path vs fast path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from memrecall.actors.selector import SelectorRequest
from memrecall.cli import main as cli_main
from memrecall.events.telemetry import Phase
from memrecall.simulation.delivery import (
    LATENCIES_MS,
    STAND_IN,
    CaseRun,
    DeliveryCheckError,
    DeliveryReport,
    Design,
    GoldStandIn,
    Row,
    TurnKind,
    check_run,
    delivery_main,
    evaluate_delivery,
    run_cases,
)
from memrecall.tooling.evaluation import SEMANTIC_SLICE, Corpus, load_corpus
from tests.heldout import without_held_out

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"
BUDGET_MS = 100


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    # the gates below were set on the corpus before its held-out slices (issue 18), which
    # hold questions across languages that no lexical fast path reaches
    return without_held_out(load_corpus(FIXTURE))


@pytest.fixture(scope="module")
def report(corpus: Corpus) -> DeliveryReport:
    # The whole fixture x 5 latencies x 2 designs x 2 turn kinds (about 12 s).
    return evaluate_delivery(corpus)


def row(report: DeliveryReport, latency: int, design: Design) -> Row:
    (found,) = [r for r in report.rows if r.latency_ms == latency and r.design is design]
    return found


RunKey = tuple[int, Design, float]
_RUNS: dict[RunKey, list[CaseRun]] = {}


def runs_of(corpus: Corpus, latency: int, design: Design, miss_rate: float = 0.0) -> list[CaseRun]:
    """The fixture's runs for one (latency, design, miss rate), played once per module."""
    key = (latency, design, miss_rate)
    if key not in _RUNS:
        _RUNS[key] = run_cases(corpus, latency, design, miss_rate=miss_rate)
    return _RUNS[key]


def labelled(corpus: Corpus, case_id: str) -> set[str]:
    """The paths of a case's labelled relevant documents (the corpus' gold labels)."""
    path = dict(zip(corpus.ids, (d.path for d in corpus.documents), strict=True))
    (case,) = [c for c in corpus.cases if c.id == case_id]
    return {path[doc_id] for doc_id in case.relevant}


def test_counts(report: DeliveryReport, corpus: Corpus) -> None:
    # Answerability comes from the labels, never from a ranker.
    assert len(report.rows) == len(LATENCIES_MS) * 2
    assert report.cases == len(corpus.cases) == report.answerable + report.no_result
    assert report.answerable == sum(1 for c in corpus.cases if c.relevant)
    semantic = sum(1 for c in corpus.cases if c.relevant and c.slice == SEMANTIC_SLICE)
    assert semantic > 0
    assert report.lexically_answerable == report.answerable - semantic


@pytest.mark.parametrize("latency", [ms for ms in LATENCIES_MS if ms > BUDGET_MS])
def test_single_path_delivers_nothing_on_tool_free_turns_past_the_budget(
    report: DeliveryReport, latency: int
) -> None:
    tool_free = row(report, latency, Design.SINGLE).tool_free
    for figures in (tool_free.lexical, tool_free.answerable):
        assert figures.first_turn == 0.0
        assert figures.delivered == 0.0


def test_the_fast_path_answers_tool_free_turns_whatever_the_selector_latency(
    report: DeliveryReport, corpus: Corpus
) -> None:
    # Past the window the fast result alone decides a tool-free turn: the same documents at
    # every latency, on nearly every lexically answerable case (a quality gate, measured 98.6%),
    # where the single path delivers nothing.
    late = [ms for ms in LATENCIES_MS if ms > BUDGET_MS]
    rates = {row(report, ms, Design.FAST).tool_free.lexical.first_turn for ms in late}
    (rate,) = rates
    assert rate is not None
    assert rate >= 0.95
    first, last = (runs_of(corpus, ms, Design.FAST) for ms in (late[0], late[-1]))
    assert [r.first_turn for r in first if r.kind is TurnKind.TOOL_FREE] == [
        r.first_turn for r in last if r.kind is TurnKind.TOOL_FREE
    ]


def test_a_selector_inside_the_window_delivers_the_labelled_documents_first(
    corpus: Corpus,
) -> None:
    # 40 ms is inside the 100 ms window: the stand-in's pick (the labels) goes in first, whole.
    runs = runs_of(corpus, 40, Design.SINGLE)
    assert len(runs) == 2 * len(corpus.cases)
    for run in runs:
        gold = labelled(corpus, run.case_id)
        assert set(run.first_turn) == gold, run.case_id
        assert run.first_phase is (Phase.REFINED if gold else None), run.case_id
        assert run.tool_result == ()


@pytest.mark.parametrize(("latency", "design"), [(600, Design.SINGLE), (600, Design.FAST)])
def test_tool_using_turns_deliver_every_labelled_document_once(
    corpus: Corpus, latency: int, design: Design
) -> None:
    # Past the window the pick comes at the tool result, minus what the fast phase delivered.
    runs = [r for r in runs_of(corpus, latency, design) if r.kind is TurnKind.TOOL_USING]
    assert runs
    for run in runs:
        gold = labelled(corpus, run.case_id)
        assert run.pick is not None, run.case_id
        assert set(run.pick) == gold, run.case_id
        assert gold <= set(run.first_turn) | set(run.tool_result), run.case_id
        assert set(run.tool_result) == gold - set(run.fast), run.case_id
        if design is Design.SINGLE:
            assert run.first_turn == ()


def test_overlap_is_measured_against_the_labels(report: DeliveryReport, corpus: Corpus) -> None:
    # Overlap: a labelled document was among the fast result. It is a measurement (the
    # stand-in shares no code with the fast ranker), so neither 0 nor 1 by construction.
    runs = runs_of(corpus, 600, Design.FAST)
    lexical = {c.id for c in corpus.cases if c.relevant and c.slice != SEMANTIC_SLICE}
    mine = [r for r in runs if r.kind is TurnKind.TOOL_USING and r.case_id in lexical]
    expected = sum(bool(set(r.fast) & labelled(corpus, r.case_id)) for r in mine) / len(mine)
    assert row(report, 600, Design.FAST).tool_using.lexical.overlap == pytest.approx(expected)
    assert 0.0 < expected < 1.0
    for r in report.rows:
        if r.design is Design.SINGLE:
            assert r.tool_using.lexical.overlap == 0.0


@pytest.mark.parametrize(("latency", "design"), [(40, Design.SINGLE), (600, Design.FAST)])
def test_a_selector_that_misses_everything_adds_nothing(
    corpus: Corpus, latency: int, design: Design
) -> None:
    sample = attrs.evolve(corpus, cases=corpus.cases[::5])
    runs = runs_of(sample, latency, design, miss_rate=1.0)
    assert runs
    for run in runs:
        assert run.pick in ((), None)
        assert run.tool_result == ()
        if design is Design.SINGLE:
            assert run.first_turn == ()


def test_the_stand_in_misses_labelled_documents_at_its_rate(corpus: Corpus) -> None:
    pairs = sum(len(c.relevant) for c in corpus.cases)
    assert pairs >= 200
    for rate in (0.0, 0.25, 0.5, 1.0):
        stand_in = GoldStandIn(corpus, miss_rate=rate)
        kept = sum(len(stand_in.gold(c)) for c in corpus.cases)
        assert abs((pairs - kept) / pairs - rate) <= 0.1, rate
        for case in corpus.cases:
            assert set(stand_in.gold(case)) <= labelled(corpus, case.id)
    with pytest.raises(ValueError, match="miss_rate"):
        GoldStandIn(corpus, miss_rate=1.5)


def test_the_stand_in_answers_only_its_cases_query(corpus: Corpus) -> None:
    stand_in = GoldStandIn(corpus)
    case = next(c for c in corpus.cases if c.relevant)
    pool = corpus.documents

    def ask(query: str) -> list[str]:
        request = SelectorRequest(
            query=query, manifest="", candidates=pool, recent_tools=(), limit=5
        )
        return list(stand_in(request))

    stand_in.expect(case)
    assert set(ask(case.query)) == labelled(corpus, case.id)
    assert stand_in.wrong_query == 0
    assert ask(case.query + " and something else") == []
    assert stand_in.wrong_query == 1


def test_no_document_is_delivered_twice(report: DeliveryReport) -> None:
    for r in report.rows:
        assert r.tool_free.duplicates == 0.0
        assert r.tool_using.duplicates == 0.0


@pytest.mark.parametrize("design", list(Design))
def test_no_result_queries_stay_silent(corpus: Corpus, design: Design) -> None:
    # The upstream-style `no-result` slice stays entirely silent.
    no_result = attrs.evolve(corpus, cases=tuple(c for c in corpus.cases if c.slice == "no-result"))
    runs = run_cases(no_result, 600, design)
    assert runs
    assert not any(r.delivered for r in runs if r.kind is TurnKind.TOOL_FREE)


def test_the_hard_no_result_cases_stay_mostly_silent(corpus: Corpus) -> None:
    # Every case labelled no-result, including the substring traps and common-word
    # queries: the fielded scorer's strong-only fast path keeps at least 90% silent
    # (issue 7's no-result recall floor), where the reference scorer's top two did not.
    hard = attrs.evolve(corpus, cases=tuple(c for c in corpus.cases if not c.relevant))
    runs = [r for r in run_cases(hard, 600, Design.FAST) if r.kind is TurnKind.TOOL_FREE]
    assert len(runs) >= 40
    silent = sum(not r.delivered for r in runs) / len(runs)
    assert silent >= 0.9, silent


@pytest.mark.parametrize("design", list(Design))
def test_semantic_only_queries_get_nothing_on_tool_free_turns(
    corpus: Corpus, design: Design
) -> None:
    semantic = attrs.evolve(
        corpus, cases=tuple(c for c in corpus.cases if c.slice == SEMANTIC_SLICE)
    )
    runs = run_cases(semantic, 600, design)
    assert runs
    assert not any(r.delivered for r in runs if r.kind is TurnKind.TOOL_FREE)


# One latency per design, each inside or past the 100 ms window: the reuse property does not
# depend on the pair, and the time it took (a third of the suite's delivery harness) is better
# spent on the core properties (tests/test_plan_machine.py, tests/test_actor_properties.py).
@pytest.mark.parametrize(
    ("design", "latency"), [(Design.SINGLE, 600), (Design.FAST, 40), (Design.FAST_WAIT, 600)]
)
def test_reusing_an_engine_gives_the_same_runs_as_fresh_engines(
    corpus: Corpus, latency: int, design: Design
) -> None:
    sample = attrs.evolve(corpus, cases=corpus.cases[::9])
    reused = run_cases(sample, latency, design)
    fresh = run_cases(sample, latency, design, reuse_engines=False)
    assert reused == fresh
    assert len(reused) == 2 * len(sample.cases)


def test_the_telemetry_cross_check_catches_a_missing_terminal_record() -> None:
    run = CaseRun(
        case_id="x",
        kind=TurnKind.TOOL_FREE,
        first_turn=("/a.md",),
        first_phase=None,
        tool_result=(),
        pick=None,
        records=(),
    )
    with pytest.raises(DeliveryCheckError, match="terminal"):
        check_run(run)


# --------------------------------------------------------------------------- the command


def small_corpus() -> dict[str, Any]:
    def doc(doc_id: str, title: str, description: str = "") -> dict[str, Any]:
        return {
            "id": doc_id,
            "type": "project",
            "title": title,
            "description": description,
            "body": "",
        }

    return {
        "name": "small",
        "documents": [
            doc("freeze", "Release freeze", "no deploys in late November"),
            doc("rota", "On-call rota", "who carries the pager"),
            doc("style", "Answer tersely"),
        ],
        "cases": [
            {"id": "hit", "query": "release freeze dates", "relevant": ["freeze"], "slice": "en"},
            {"id": "none", "query": "quantum chromodynamics", "relevant": [], "slice": "none"},
            {"id": "sem", "query": "beeper duty", "relevant": ["rota"], "slice": SEMANTIC_SLICE},
        ],
    }


def write(tmp_path: Path, data: object) -> str:
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert delivery_main(write(tmp_path, small_corpus()), as_json=True) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["selector"] == STAND_IN
    assert out["miss_rate"] == 0.0
    assert (out["answerable"], out["lexically_answerable"], out["no_result"]) == (2, 1, 1)
    rows = out["rows"]
    assert [(r["latency_ms"], r["design"]) for r in rows] == [
        (ms, d) for ms in LATENCIES_MS for d in ("single", "fast")
    ]
    for r in rows:
        assert r["lexically_answerable"] == 1
        for kind in ("tool_free", "tool_using"):
            figures = r[kind]
            for group in ("lexically_answerable", "answerable"):
                assert all(0.0 <= v <= 1.0 for v in figures[group].values())
            assert figures["duplicates"] == 0.0
            assert figures["no_result_silent"] == 1.0
    by_key = {(r["latency_ms"], r["design"]): r for r in rows}
    assert by_key[(250, "single")]["tool_free"]["lexically_answerable"]["first_turn"] == 0.0
    assert by_key[(250, "fast")]["tool_free"]["lexically_answerable"]["first_turn"] == 1.0
    assert by_key[(250, "fast")]["tool_free"]["answerable"]["first_turn"] == 0.5


def test_table_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert delivery_main(write(tmp_path, small_corpus()), as_json=False) == 0
    out = capsys.readouterr().out
    assert STAND_IN in out
    assert "| 250 ms  | single |" in out


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "cannot read"),
        ("{not json", "invalid JSON"),
        ({"name": "x", "documents": [], "cases": []}, "no documents"),
    ],
)
def test_a_bad_corpus_exits_2_with_a_one_line_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, reason: str
) -> None:
    path = tmp_path / "corpus.json"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif content is not None:
        path.write_text(json.dumps(content), encoding="utf-8")
    assert delivery_main(str(path), as_json=False) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("memrecall simulate delivery: error: ")
    assert reason in captured.err


def test_an_invalid_case_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = small_corpus()
    data["cases"][0]["relevant"] = ["missing"]
    assert delivery_main(write(tmp_path, data), as_json=True) == 2
    assert "unknown document id" in capsys.readouterr().err


def test_the_miss_rate_reaches_the_stand_in_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, small_corpus())
    assert cli_main(["simulate", "delivery", "--corpus", path, "--json", "--miss-rate", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["miss_rate"] == 1.0
    by_key = {(r["latency_ms"], r["design"]): r for r in out["rows"]}
    # the stand-in picks nothing: at 40 ms the single path has nothing to deliver first
    assert by_key[(40, "single")]["tool_free"]["lexically_answerable"]["first_turn"] == 0.0


@pytest.mark.parametrize("value", ["-0.1", "1.5", "nan", "x"])
def test_a_miss_rate_outside_0_to_1_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    path = write(tmp_path, small_corpus())
    with pytest.raises(SystemExit) as exited:
        cli_main(["simulate", "delivery", "--corpus", path, "--miss-rate", value])
    assert exited.value.code == 2
    assert "--miss-rate" in capsys.readouterr().err
