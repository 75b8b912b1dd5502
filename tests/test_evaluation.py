"""The evaluation: corpus validation, metric definitions, the ``eval`` command, the quality gate."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pytest

from memrecall.cli import main
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.tooling import evaluation
from memrecall.tooling.evaluation import (
    SCORERS,
    Case,
    CorpusError,
    compute_metrics,
    evaluate,
    evaluate_many,
    load_corpus,
    parse_corpus,
    random_floor,
)
from tests.heldout import held_out

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"

METRIC_KEYS = {
    "cases",
    "recall_at_5",
    "top1",
    "no_result_precision",
    "no_result_recall",
    "max_selected",
}
OPTIONAL_METRIC_KEYS = {"fast_precision", "fast_hit", "fast_outdated"}
"""Extra keys per group (the contract allows optional additions)."""
REPORT_KEYS = {
    "corpus",
    "documents",
    "cases",
    "scorer",
    "random_floor",
    "overall",
    "lexical",
    "slices",
    "latency_ms",
    "results",
}


def doc(doc_id: str, title: str = "t", **extra: Any) -> dict[str, Any]:
    return {
        "id": doc_id,
        "type": "project",
        "title": title,
        "description": "",
        "body": "",
        **extra,
    }


def case(case_id: str, query: str, relevant: list[str], **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "query": query, "relevant": relevant, "slice": "english", **extra}


def small_corpus() -> dict[str, Any]:
    """Three documents the reference scorer separates cleanly, and four cases."""
    return {
        "name": "small",
        "documents": [
            doc("terse", "Prefers terse answers", type="user", scope="user"),
            doc("deadline", "Release deadline", description="ship date", body="3 March"),
            doc("dash", "Grafana dashboard", type="reference", description="latency graphs"),
        ],
        "cases": [
            case("when", "what is the release deadline", ["deadline"], top="deadline"),
            case("graphs", "where are the latency graphs", ["dash"], top="dash"),
            case("weather", "weather in Paris tomorrow", [], slice="no-result"),
            case("style", "how should replies look", ["terse"], slice="semantic-no-lexical"),
        ],
    }


def write(tmp_path: Path, data: object, name: str = "corpus.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


# --------------------------------------------------------------------------- metric definitions


def mk(case_id: str, relevant: Sequence[str], top: str | None = None, slice_: str = "s") -> Case:
    return Case(id=case_id, query="q", relevant=tuple(relevant), top=top, slice=slice_)


def test_metrics_follow_the_contract_definitions() -> None:
    cases = [
        mk("a", ["d1", "d2"], top="d1"),  # both found, but d2 first: top-1 miss
        mk("b", ["d1", "d2", "d3"], top="d3"),  # d3 first; d1 only at rank 6: 1/3
        mk("c", []),  # silent, rightly
        mk("d", []),  # answered although nothing is relevant
        mk("e", ["d4"], top="d4"),  # silent, wrongly: recall 0, top-1 miss
    ]
    selections = [
        ["d2", "d1"],
        ["d3", "x1", "x2", "x3", "x4", "d1"],
        [],
        ["d1"],
        [],
    ]
    metrics = compute_metrics(cases, selections)
    assert metrics.cases == 5
    assert metrics.recall_at_5 == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert metrics.top1 == pytest.approx(1 / 3)  # b hits; a and e miss
    assert metrics.no_result_precision == pytest.approx(1 / 2)  # silent: c (right), e (wrong)
    assert metrics.no_result_recall == pytest.approx(1 / 2)  # no-result: c (silent), d (not)
    assert metrics.max_selected == 6


def test_fast_outdated_counts_an_older_note_delivered_without_its_update() -> None:
    cases = [
        mk("a", ["old", "new"], top="new"),  # the older one alone: outdated
        mk("b", ["old", "new"], top="new"),  # both: the update is there
        mk("c", ["old", "new"], top="new"),  # nothing fast: not outdated
        mk("d", ["x"], top="x"),  # one relevant document: not an update question
        mk("e", ["old", "new"], top="new"),  # only an unrelated one: a miss, not outdated
    ]
    selections = [["old"], ["old", "new"], [], ["y"], ["z"]]
    fast = [["old"], ["old", "new"], [], ["y"], ["z"]]
    metrics = compute_metrics(cases, selections, fast)
    assert metrics.fast_outdated == pytest.approx(1 / 4)
    assert metrics.fast_hit == pytest.approx(2 / 5)
    assert compute_metrics(cases, selections).fast_outdated is None
    assert compute_metrics(cases[3:4], selections[3:4], fast[3:4]).fast_outdated is None


def test_metrics_with_no_eligible_case_are_null() -> None:
    only_no_result = compute_metrics([mk("a", []), mk("b", [])], [[], ["d1"]])
    assert only_no_result.recall_at_5 is None
    assert only_no_result.top1 is None
    assert only_no_result.no_result_precision == 1.0
    assert only_no_result.no_result_recall == 0.5

    always_answers = compute_metrics([mk("a", ["d1"])], [["d2"]])
    assert always_answers.no_result_precision is None
    assert always_answers.no_result_recall is None
    assert always_answers.top1 is None
    assert always_answers.recall_at_5 == 0.0

    nothing = compute_metrics([], [])
    assert nothing.cases == 0
    assert nothing.max_selected is None
    assert nothing.recall_at_5 is None


def test_random_floor() -> None:
    assert random_floor(1) == 1.0
    assert random_floor(5) == 1.0
    assert random_floor(20) == 0.25
    assert random_floor(88) == pytest.approx(5 / 88)
    with pytest.raises(ValueError, match="at least one"):
        random_floor(0)


class Scripted:
    """A scorer that answers from a script (query -> ids) and records the exclusions it got."""

    script: dict[str, list[str]] = {}  # noqa: RUF012
    seen: dict[str, set[str]] = {}  # noqa: RUF012

    def __init__(self, documents: Sequence[MemoryDocument]) -> None:
        self.ids = [Path(d.relative_path).stem for d in documents]

    def rank(self, query: str, limit: int, *, exclude: Collection[int] = ()) -> list[int]:
        Scripted.seen[query] = {self.ids[i] for i in exclude}
        wanted = [self.ids.index(i) for i in self.script.get(query, [])]
        return [i for i in wanted if i not in exclude][:limit]


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> type[Scripted]:
    monkeypatch.setitem(SCORERS, "scripted", Scripted)
    Scripted.script = {}
    Scripted.seen = {}
    return Scripted


def test_evaluate_aggregates_per_slice_overall_and_lexical(scripted: type[Scripted]) -> None:
    data = {
        "name": "hand",
        "documents": [doc(f"d{i}") for i in range(1, 9)],  # 8 documents
        "cases": [
            case("e1", "q1", ["d1", "d2"], top="d1"),
            case("e2", "q2", ["d3"], top="d3"),
            case("n1", "q3", [], slice="no-result"),
            case("n2", "q4", [], slice="no-result"),
            case("s1", "q5", ["d5"], slice="semantic-no-lexical"),
        ],
    }
    scripted.script = {
        "q1": ["d1", "d4", "d5", "d6", "d7", "d2"],  # d2 only at rank 6: cut, recall 1/2
        "q2": ["d4", "d3"],  # recall 1, top-1 miss
        "q3": [],  # right silence
        "q4": ["d8"],  # false positive
        "q5": [],  # semantic: silent, wrongly
    }
    report = evaluate(parse_corpus(data), "scripted")

    assert [r.selected for r in report.results] == [
        ("d1", "d4", "d5", "d6", "d7"),
        ("d4", "d3"),
        (),
        ("d8",),
        (),
    ]
    assert report.random_floor == 5 / 8
    english = report.slices["english"]
    assert (english.cases, english.recall_at_5, english.top1) == (2, 0.75, 0.5)
    assert english.no_result_precision is None
    assert english.no_result_recall is None
    no_result = report.slices["no-result"]
    assert (no_result.recall_at_5, no_result.top1) == (None, None)
    assert (no_result.no_result_precision, no_result.no_result_recall) == (1.0, 0.5)
    assert no_result.max_selected == 1
    semantic = report.slices["semantic-no-lexical"]
    assert (semantic.recall_at_5, semantic.top1, semantic.max_selected) == (0.0, None, 0)
    assert semantic.no_result_precision == 0.0

    overall = report.overall
    assert overall.cases == 5
    assert overall.recall_at_5 == pytest.approx((0.5 + 1 + 0) / 3)
    assert overall.top1 == 0.5
    assert overall.no_result_precision == pytest.approx(1 / 2)  # silent: q3 right, q5 wrong
    assert overall.no_result_recall == 0.5
    assert overall.max_selected == 5

    lexical = report.lexical  # everything but the semantic slice
    assert lexical.cases == 4
    assert lexical.recall_at_5 == 0.75
    assert lexical.no_result_precision == 1.0
    assert lexical.max_selected == 5
    assert list(report.slices) == ["english", "no-result", "semantic-no-lexical"]


def test_pool_order_defaults_and_exclusions(scripted: type[Scripted]) -> None:
    data = {
        "name": "pool",
        "documents": [
            doc("u1", scope="user", mtime=7),
            doc("p1"),
            doc("u2", scope="user"),
            doc("p2", scope="project", mtime=1737703200),
        ],
        "cases": [case("c", "q", ["p1"], exclude=["u2", "p2"])],
    }
    corpus = parse_corpus(data)
    assert corpus.ids == ("p1", "p2", "u1", "u2")
    first, _, user = corpus.documents[:3]
    assert first.scope is Scope.PROJECT
    assert first.mtime == 0.0
    assert first.type is MemoryType.PROJECT
    assert first.path == "/corpus/project/p1.md"
    assert first.relative_path == "p1.md"
    assert user.path == "/corpus/user/u1.md"
    assert user.mtime == 7.0
    assert corpus.documents[1].mtime == 1737703200.0

    scripted.script = {"q": ["p2", "u2", "u1", "p1"]}
    report = evaluate(corpus, "scripted")
    assert scripted.seen["q"] == {"u2", "p2"}
    assert report.results[0].selected == ("u1", "p1")


def test_reference_scorer_end_to_end() -> None:
    report = evaluate(parse_corpus(small_corpus()), "reference")
    selected = {r.id: r.selected for r in report.results}
    assert selected["when"][0] == "deadline"
    assert selected["graphs"][0] == "dash"
    assert selected["weather"] == ()
    assert report.slices["english"].top1 == 1.0
    assert report.slices["no-result"].no_result_recall == 1.0
    assert report.random_floor == 1.0


def test_exclude_removes_a_document_for_that_case_only() -> None:
    data = small_corpus()
    data["cases"] = [
        case("all", "release deadline dashboard", ["deadline", "dash"]),
        case("minus", "release deadline dashboard", ["dash"], exclude=["deadline"]),
    ]
    report = evaluate(parse_corpus(data), "reference")
    selected = {r.id: set(r.selected) for r in report.results}
    assert selected["all"] == {"deadline", "dash"}
    assert selected["minus"] == {"dash"}


def test_evaluate_many_and_unknown_scorer() -> None:
    corpus = parse_corpus(small_corpus())
    reports = evaluate_many(corpus, ["frozen", "reference", "random"])
    assert list(reports) == ["frozen", "reference", "random"]
    assert {r.scorer for r in reports.values()} == {"frozen", "reference", "random"}
    with pytest.raises(KeyError, match="unknown scorer"):
        evaluate(corpus, "nope")


# --------------------------------------------------------------------------- validation


Mutation = Callable[[dict[str, Any]], object]


def _set(path: Sequence[str | int], value: object) -> Mutation:
    def mutate(data: dict[str, Any]) -> object:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return data

    return mutate


def _drop(path: Sequence[str | int]) -> Mutation:
    def mutate(data: dict[str, Any]) -> object:
        target: Any = data
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return data

    return mutate


def _duplicate_doc(data: dict[str, Any]) -> object:
    data["documents"].append(doc("dash", "again"))
    return data


def _duplicate_case(data: dict[str, Any]) -> object:
    data["cases"].append(case("when", "again", []))
    return data


INVALID: list[tuple[str, Mutation, str]] = [
    ("not an object", lambda d: [d], "corpus: expected an object, got an array"),
    ("missing name", _drop(["name"]), "missing field 'name'"),
    ("name not a string", _set(["name"], 3), "name: expected a string, got a number"),
    ("documents missing", _drop(["documents"]), "missing field 'documents'"),
    ("documents not array", _set(["documents"], {}), "documents: expected an array"),
    ("no documents", _set(["documents"], []), "the corpus has no documents"),
    ("no cases", _set(["cases"], []), "the corpus has no cases"),
    ("document not object", _set(["documents", 1], "x"), "documents[1]: expected an object"),
    ("missing title", _drop(["documents", 1, "title"]), "documents[1]: missing field 'title'"),
    ("body ill-typed", _set(["documents", 0, "body"], None), "documents[0].body: expected a"),
    ("empty doc id", _set(["documents", 0, "id"], ""), "documents[0].id: must not be empty"),
    ("bad type", _set(["documents", 2, "type"], "note"), "documents[2].type: expected one of"),
    ("bad scope", _set(["documents", 2, "scope"], "team"), "documents[2].scope: expected one"),
    ("mtime string", _set(["documents", 0, "mtime"], "1"), "documents[0].mtime: expected a"),
    ("mtime bool", _set(["documents", 0, "mtime"], True), "documents[0].mtime: expected a"),
    ("duplicate doc id", _duplicate_doc, 'documents[3].id: duplicate document id "dash"'),
    ("duplicate case id", _duplicate_case, 'cases[4].id: duplicate case id "when"'),
    ("case missing slice", _drop(["cases", 0, "slice"]), "cases[0]: missing field 'slice'"),
    ("query ill-typed", _set(["cases", 0, "query"], 1), "cases[0].query: expected a string"),
    ("relevant not array", _set(["cases", 0, "relevant"], "dash"), "cases[0].relevant: expected"),
    (
        "relevant unknown",
        _set(["cases", 1, "relevant"], ["dash", "ghost"]),
        'cases[1].relevant[1]: unknown document id "ghost"',
    ),
    (
        "relevant twice",
        _set(["cases", 1, "relevant"], ["dash", "dash"]),
        'cases[1].relevant[1]: document id "dash" is listed twice',
    ),
    ("top unknown", _set(["cases", 0, "top"], "ghost"), 'cases[0].top: "ghost" is not one'),
    ("top not relevant", _set(["cases", 0, "top"], "dash"), 'cases[0].top: "dash" is not one'),
    ("top ill-typed", _set(["cases", 0, "top"], 5), "cases[0].top: expected a string"),
    ("exclude unknown", _set(["cases", 2, "exclude"], ["nope"]), "cases[2].exclude[0]: unknown"),
    ("exclude not array", _set(["cases", 2, "exclude"], "dash"), "cases[2].exclude: expected"),
    (
        "relevant excluded",
        _set(["cases", 0, "exclude"], ["deadline"]),
        'cases[0].exclude: relevant document "deadline" is excluded',
    ),
]


@pytest.mark.parametrize(
    ("mutate", "reason"), [(m, r) for _, m, r in INVALID], ids=[i for i, _, _ in INVALID]
)
def test_invalid_corpus_exits_2_with_one_line_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mutate: Mutation, reason: str
) -> None:
    path = write(tmp_path, mutate(copy.deepcopy(small_corpus())))
    status, out, err = run_cli(["eval", "--corpus", str(path)], capsys)
    assert status == 2
    assert out == ""
    assert err.endswith("\n")
    assert err.count("\n") == 1
    assert reason in err
    with pytest.raises(CorpusError, match=re.escape(reason)):
        load_corpus(path)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"name": "x", "documents": [', "invalid JSON at line 1 column 29"),
        (b"", "invalid JSON at line 1 column 1"),
        (b'{"name": "x", "documents": [], "cases": [], "n": NaN}', "NaN is not a JSON value"),
        (b'{"name": "\xff"}', "is not UTF-8"),
    ],
    ids=["truncated", "empty", "nan", "latin-1"],
)
def test_undecodable_corpus_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    status, out, err = run_cli(["eval", "--corpus", str(path)], capsys)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1
    assert reason in err


def test_unreadable_corpus_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in (tmp_path / "missing.json", tmp_path):
        status, out, err = run_cli(["eval", "--corpus", str(path), "--json"], capsys)
        assert (status, out) == (2, "")
        assert err.count("\n") == 1
        assert f"cannot read {path}" in err


def test_unknown_fields_are_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = small_corpus()
    data["version"] = 3
    data["documents"][0]["tags"] = ["x"]
    data["cases"][0]["notes"] = {"why": "extension"}
    status, out, _ = run_cli(["eval", "--corpus", str(write(tmp_path, data)), "--json"], capsys)
    assert status == 0
    plain = evaluate(parse_corpus(small_corpus()))
    assert json.loads(out)["results"] == plain.to_json()["results"]


def test_an_extra_file_adds_documents_and_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path, small_corpus())
    added = {
        "documents": [doc("badge", "Office badge", body="Badges open the side door")],
        "cases": [case("door", "which door does my badge open", ["badge"], top="badge")],
    }
    extra = write(tmp_path, added, "extra.json")
    status, out, _ = run_cli(
        ["eval", "--corpus", str(base), "--extra", str(extra), "--json"], capsys
    )
    assert status == 0
    report = json.loads(out)
    assert report["documents"] == 4
    assert [r["id"] for r in report["results"]][-1] == "door"
    assert report["results"][-1]["selected"][0] == "badge"
    # a clash is the corpus's own error; a file that is no object is named
    clash = write(tmp_path, {"documents": [doc("dash", "Another")]}, "clash.json")
    with pytest.raises(CorpusError, match='duplicate document id "dash"'):
        load_corpus(base, extra=[clash])
    wrong = write(tmp_path, [1, 2], "wrong.json")
    status, out, err = run_cli(["eval", "--corpus", str(base), "--extra", str(wrong)], capsys)
    assert (status, out) == (2, "")
    assert f"{wrong}: an extra file is a JSON object" in err


def test_unknown_scorer_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, small_corpus())
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--corpus", str(path), "--scorer", "nope"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- the command's output


def test_json_output_has_exactly_the_contract_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, small_corpus())
    status, out, _ = run_cli(["eval", "--corpus", str(path), "--json"], capsys)
    assert status == 0
    report = json.loads(out)
    assert set(report) == REPORT_KEYS
    assert (report["corpus"], report["documents"], report["cases"]) == ("small", 3, 4)
    assert report["scorer"] == "fielded"
    assert report["random_floor"] == 1.0
    for group in [report["overall"], report["lexical"], *report["slices"].values()]:
        assert set(group) == METRIC_KEYS | OPTIONAL_METRIC_KEYS
    assert set(report["slices"]) == {"english", "no-result", "semantic-no-lexical"}
    assert set(report["latency_ms"]) == {"p50", "p95"}
    assert all(isinstance(v, float) for v in report["latency_ms"].values())
    assert report["latency_ms"]["p50"] <= report["latency_ms"]["p95"]
    assert [set(r) for r in report["results"]] == [{"id", "selected"}] * 4
    assert [r["id"] for r in report["results"]] == ["when", "graphs", "weather", "style"]
    assert report["results"][0]["selected"][0] == "deadline"


@pytest.mark.parametrize("scorer", ["reference", "frozen", "random"])
def test_runs_are_deterministic_apart_from_latency(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scorer: str
) -> None:
    path = write(tmp_path, small_corpus())
    argv = ["eval", "--corpus", str(path), "--json", "--scorer", scorer]
    first = json.loads(run_cli(argv, capsys)[1])
    second = json.loads(run_cli(argv, capsys)[1])
    del first["latency_ms"], second["latency_ms"]
    assert first == second
    assert first["scorer"] == scorer


def test_table_and_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, small_corpus())
    status, out, _ = run_cli(["eval", "--corpus", str(path)], capsys)
    assert status == 0
    rows = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert rows == ["slice", "overall", "lexical", "english", "no-result", "semantic-no-lexical"]
    assert "random floor" in out
    assert "latency per case: p50" in out

    status, out, _ = run_cli(["eval", "--corpus", str(path), "--compare"], capsys)
    assert status == 0
    assert "frozen → fielded" in out
    no_result = next(line for line in out.splitlines() if line.startswith("| no-result"))
    assert "0.0% → 100.0%" in no_result  # frozen answers with filler; reference stays silent


def test_json_and_compare_are_exclusive(tmp_path: Path) -> None:
    path = write(tmp_path, small_corpus())
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--corpus", str(path), "--json", "--compare"])
    assert exit_info.value.code == 2


# --------------------------------------------------------------------------- the project's corpus


@pytest.fixture(scope="module")
def fixture_reports() -> dict[str, evaluation.Report]:
    if not FIXTURE.exists():
        pytest.skip(f"{FIXTURE} is not there")
    return evaluate_many(load_corpus(FIXTURE), ["frozen", "reference"])


HARD_SLICES = frozenset(
    {
        "substring-trap",
        "no-result-common",
        "rare-body",
        "sea-script",
        "combining-marks",
        "conversational",
        "shared-title",
    }
)
"""Slices added with the ``fielded`` scorer (issue 7) to show the reference scorer's documented
weaknesses: substring hits, stopwords, title over body, unspaced scripts, combining marks; and
with issue 18, memories sharing a title. The reference floor below is kept on the corpus it was
set for (every other lexical case), since those slices exist to fail it; the ``fielded`` floors
in tests/test_default_scorer.py cover the whole corpus."""


def _issue_18_recency(case: evaluation.Case) -> bool:
    """A recency case added with issue 18 (its documents' ids start with ``rc-``)."""
    return any(doc_id.startswith("rc-") for doc_id in case.relevant)


def test_reference_meets_the_quality_floor(fixture_reports: dict[str, evaluation.Report]) -> None:
    report = fixture_reports["reference"]
    corpus = load_corpus(FIXTURE)
    original = [
        c.slice not in HARD_SLICES
        and c.slice != evaluation.SEMANTIC_SLICE
        and not _issue_18_recency(c)
        and not held_out(c)
        for c in corpus.cases
    ]
    lexical = compute_metrics(
        [c for c, keep in zip(corpus.cases, original, strict=True) if keep],
        [r.selected for r, keep in zip(report.results, original, strict=True) if keep],
    )
    assert lexical.recall_at_5 is not None
    assert lexical.recall_at_5 >= 0.9
    assert lexical.top1 is not None
    assert lexical.top1 >= 0.85
    assert report.slices["no-result"].no_result_recall == 1.0
    assert report.overall.max_selected is not None
    assert report.overall.max_selected <= 5


def test_reference_clears_the_random_floor(fixture_reports: dict[str, evaluation.Report]) -> None:
    report = fixture_reports["reference"]
    assert report.random_floor <= 0.25
    assert report.lexical.recall_at_5 is not None
    assert report.lexical.recall_at_5 > 3 * report.random_floor


def _at_least(after: float | None, before: float | None) -> bool:
    assert after is not None
    return before is None or after >= before


def test_reference_never_regresses_against_frozen(
    fixture_reports: dict[str, evaluation.Report],
) -> None:
    before, after = fixture_reports["frozen"], fixture_reports["reference"]
    english_before, english_after = before.slices["english"], after.slices["english"]
    assert _at_least(english_after.recall_at_5, english_before.recall_at_5)
    assert _at_least(english_after.top1, english_before.top1)
    assert _at_least(after.overall.no_result_recall, before.overall.no_result_recall)
    assert _at_least(after.overall.no_result_precision, before.overall.no_result_precision)


def test_semantic_slice_stays_at_its_measured_value(
    fixture_reports: dict[str, evaluation.Report],
) -> None:
    # Measured: no substring scorer answers these. If a future scorer does,
    # raise these figures; do not move the cases out of the slice.
    semantic = fixture_reports["reference"].slices["semantic-no-lexical"]
    assert semantic.cases > 0
    assert semantic.recall_at_5 == 0.0
    assert semantic.max_selected == 0
