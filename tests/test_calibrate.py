"""Calibrating the strong/weak thresholds (``memrecall calibrate``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall.cli import main
from memrecall.engine.scoring.judgement import Judgement, Provenance, Thresholds, default_thresholds
from memrecall.tooling.calibration import Observed, calibrate, fit, outcome, split
from memrecall.tooling.evaluation import Case, load_corpus

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
    t = Thresholds(0.1, 0.2, 0.3, 0.4, provenance)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(t.to_json()), encoding="utf-8")
    assert Thresholds.from_json(json.loads(path.read_text(encoding="utf-8"))) == t
    with pytest.raises(ValueError, match="not a thresholds object"):
        Thresholds.from_json({"weak": {}})


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
    t = fit(observed, target=1.0)
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
    assert set(printed) == {"weak", "strong", "provenance"}
    assert printed["provenance"]["note"] == "fitted on every case"


def test_cli_rejects_a_bad_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["calibrate", "--corpus", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "memrecall calibrate: error: invalid JSON" in err
