"""The ``fielded`` default scorer: analysis, ranking, judgement, and its floors on the corpus."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.analysis import fold, query_terms, sea_terms, term_counts, terms
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex, Params, is_variant
from memrecall.engine.scoring.judgement import Judgement, Thresholds, default_thresholds
from memrecall.events.documents import MemoryDocument
from memrecall.tooling import evaluation
from memrecall.tooling.evaluation import DEFAULT_SCORER, SCORERS, evaluate_many, load_corpus
from tests.factories import memory

FIXTURE = Path(__file__).parent / "fixtures" / "recall-eval.json"


def doc(
    title: str,
    body: str = "",
    *,
    description: str = "",
    mtime: float = 0.0,
    name: str | None = None,
) -> MemoryDocument:
    return memory(title, description, body, name=name, mtime=mtime)


OPEN = Thresholds(0.0, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- analysis


def test_words_are_whole_and_at_least_three_letters_or_two_with_a_digit() -> None:
    assert terms("The Q4 release-freeze, ok? v2 is go") == ["the", "q4", "release", "freeze", "v2"]


def test_cjk_gives_bigrams_without_punctuation() -> None:
    assert terms("支付告警") == ["支付", "付告", "告警"]
    assert terms("猫") == []
    assert terms("ありがとう、助かり") == ["あり", "りが", "がと", "とう", "助か", "かり"]


def test_unspaced_scripts_give_cluster_trigrams_that_never_split_a_cluster() -> None:
    grams = sea_terms("ปิดปรับปรุง")
    assert grams[0] == "ปิดป"  # ปิ (consonant + vowel sign) is one cluster
    for gram in grams:
        assert not regex.match(r"\p{M}", gram)
        assert len(regex.findall(r"\X", gram)) == 3
    assert sea_terms("ดี") == []  # one cluster: nothing
    assert sea_terms("กข") == ["กข"]
    assert terms("ช่วง ปิด") == ["ช่วง", "ปิด"]  # two-cluster runs stay whole


def test_optional_diacritics_fold_and_essential_marks_stay() -> None:
    assert fold("gelöscht") == "geloscht"
    assert fold("họp") == "hop"
    assert fold("đứng") == "dung"
    assert fold("σημειώσεις") == "σημειωσεισ"
    assert fold("फ़ोन") == "फोन"  # nukta: typed or not, one word
    assert fold("हाँ") == "हां"  # candrabindu / anusvara
    assert fold("नाम") == "नाम"  # Devanagari vowel signs are not optional
    assert fold("ё") == "е"
    assert fold("й") == "й"  # only the diaeresis folds in Cyrillic
    assert fold("デプロイ") == "デプロイ"  # kana voicing marks stay
    assert terms("क्\u200dष") == terms("क्ष")  # a zero-width joiner does not split a word
    assert terms("नाम") == ["नाम"]  # two letters and a vowel sign make a word


_MIXED = (
    "abcXYZ09 -_.,ÀéöüßİŞابتحمُदनमाीेंँ़्ปิดรับงวัน่้ລົງທະប្រាក់ဆာဗခန်း"
    "日本語漢字ひらがなカタカナー、。한국어\u0301\u3099\u200b\u200d\u00adＦｕｌｌ"
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_MIXED, max_size=40))
def test_counted_terms_equal_the_ordered_ones(text: str) -> None:
    assert term_counts(text) == dict(Counter(terms(text)))


def test_query_terms_drop_stopwords_and_weigh_common_words_down() -> None:
    found = {t.term: t.weight for t in query_terms("thanks, that works now: where is the p99 SLO?")}
    assert found == {"works": 0.3, "p99": 1.0, "slo": 1.0}
    assert query_terms("it is ok to go") == []
    kana = {t.term: t.weight for t in query_terms("した手順")}
    assert kana["した"] == 0.3
    assert kana["手順"] == 1.0


def test_long_queries_keep_the_head_and_the_tail() -> None:
    words = [f"word{i:03d}" for i in range(100)]
    kept = [t.term for t in query_terms(" ".join(words))]
    assert kept == words[:32] + words[-32:]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("charged", "charges", True),
        ("retried", "retries", True),
        ("rotate", "rotation", True),
        ("deploy", "deploying", True),
        ("магазин", "магазины", True),
        ("log", "logs", True),
        ("box", "boxes", True),
        ("owner", "ownership", False),
        ("tea", "team", False),
        ("ant", "antes", False),
        ("colony", "colour", False),
        ("passt", "passes", False),
        ("stripe", "stripped", False),
        ("deploy", "deployment", False),
        ("same", "same", False),
    ],
)
def test_inflected_forms_match_but_longer_words_do_not(a: str, b: str, expected: bool) -> None:
    assert is_variant(a, b) is expected
    assert is_variant(b, a) is expected


# --------------------------------------------------------------------------- ranking


def test_word_boundaries_beat_substrings() -> None:
    pool = [
        doc("Service ownership map", description="Backstage lists owning squads", name="map"),
        doc("Code owner approval", description="payments needs a code owner", name="owners"),
        doc("Team calendar", description="offsites and holidays", name="team"),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("who is the code owner", 5) == [1]
    assert index.rank("tea recipes", 5) == []


def test_a_rare_body_word_beats_a_common_title_word() -> None:
    pool = [doc(f"API token rotation {i}", description="partner tokens") for i in range(6)]
    pool.append(doc("CDN incident", "the Fastly purge token had expired", name="cdn"))
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("Fastly token", 1) == [6]


def test_unspaced_thai_finds_its_document() -> None:
    pool = [
        doc("การอนุมัติก่อนขึ้นโปรดักชัน", description="ต้องได้รับอนุมัติจากหัวหน้าทีมสองคน", name="th"),
        doc("Release dashboard", name="en"),
    ]
    index = FieldedIndex.of(pool)
    assert index.rank("ต้องขออนุมัติจากใครก่อนขึ้นโปรดักชัน", 5) == [0]


def test_the_rest_of_the_body_counts_less_than_the_window() -> None:
    tail = "filler " * 200 + "kestrel"
    pool = [doc("notes", tail, name="long"), doc("other", "kestrel here", name="short")]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("kestrel", 5) == [1, 0]


# Versions of one memory are no longer inferred from equal titles (issue 18): see
# tests/test_supersession.py for explicit links, same-subject pairs and the freshness prior.


def test_built_from_cached_features_is_the_same_index() -> None:
    corpus = load_corpus(FIXTURE)
    features = [DocumentFeatures.of(d) for d in corpus.documents]
    a = FieldedIndex.of(corpus.documents)
    b = FieldedIndex.from_features(features)
    for case in corpus.cases[::7]:
        assert a.rank(case.query, 5) == b.rank(case.query, 5)
        assert a.fast(case.query) == b.fast(case.query)


def test_judgement_thresholds_decide_rank_and_fast() -> None:
    pool = [doc("Release deadline", description="ship date"), doc("Grafana dashboard", name="g")]
    closed = Thresholds(2.0, 99.0, 2.0, 99.0)
    assert FieldedIndex.of(pool, thresholds=closed).rank("release deadline", 5) == []
    weak_only = Thresholds(0.0, 0.0, 2.0, 99.0)
    index = FieldedIndex.of(pool, thresholds=weak_only)
    assert index.rank("release deadline", 5) == [0]
    assert index.fast("release deadline") == []
    assert FieldedIndex.of(pool, thresholds=OPEN).fast("release deadline") == [0]


def test_the_second_fast_document_must_be_close_to_the_first() -> None:
    pool = [
        doc("Grafana checkout latency", description="p99 latency per region", name="lat"),
        doc("Grafana errors", name="err"),
    ]
    index = FieldedIndex.of(pool, thresholds=OPEN)
    assert index.rank("grafana checkout latency", 5) == [0, 1]
    assert index.fast("grafana checkout latency") == [0]
    loose = FieldedIndex.of(pool, thresholds=OPEN, params=Params(second=0.0))
    assert loose.fast("grafana checkout latency") == [0, 1]


_WORDS = ["cache", "deploy", "release", "owner", "ownership", "grafana", "kafka", "the", "token"]


@st.composite
def pools(draw: st.DrawFn) -> list[MemoryDocument]:
    size = draw(st.integers(1, 8))
    out = []
    for i in range(size):
        words = draw(st.lists(st.sampled_from(_WORDS), min_size=0, max_size=6))
        title = " ".join(words[:2])
        out.append(doc(title, " ".join(words[2:]), mtime=draw(st.integers(0, 3)), name=f"d{i}"))
    return out


@settings(max_examples=60, deadline=None)
@given(pool=pools(), query=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=4))
def test_rank_fast_and_judge_agree(pool: Sequence[MemoryDocument], query: list[str]) -> None:
    text = " ".join(query)
    index = FieldedIndex.of(pool)
    judged = index.judge(text)
    ranked = index.rank(text, 5)
    assert ranked == [i for i, _ in judged][:5]
    assert all(j is not Judgement.NONE for _, j in judged)
    fast = index.fast(text)
    assert fast == [i for i in fast if i in ranked[:2]]
    assert all(dict(judged)[i] is Judgement.STRONG for i in fast)
    matches = index.matches(text)
    scores = [m.score for m in matches]
    assert {m.index for m in matches} >= set(ranked)
    assert all(s > 0 for s in scores)
    excluded = index.rank(text, 5, exclude={0})
    assert 0 not in excluded


# --------------------------------------------------------------------------- the project's corpus


@pytest.fixture(scope="module")
def reports() -> dict[str, evaluation.Report]:
    return evaluate_many(load_corpus(FIXTURE), ["reference", "fielded"])


def test_fielded_is_the_default_and_reference_stays_selectable() -> None:
    assert DEFAULT_SCORER == "fielded"
    assert {"fielded", "reference", "bm25", "frozen", "random"} <= set(SCORERS)


def test_fielded_meets_the_issue_7_floors(reports: dict[str, evaluation.Report]) -> None:
    lexical = reports["fielded"].lexical
    assert lexical.recall_at_5 is not None
    assert lexical.recall_at_5 >= 0.97
    assert lexical.top1 is not None
    assert lexical.top1 >= 0.93
    assert lexical.no_result_recall is not None
    assert lexical.no_result_recall >= 0.90
    assert lexical.no_result_precision is not None
    assert lexical.no_result_precision >= 0.90
    assert lexical.fast_precision is not None
    assert lexical.fast_precision >= 0.95
    assert reports["fielded"].slices["no-result"].no_result_recall == 1.0
    assert reports["fielded"].overall.max_selected == 5


def test_no_slice_is_worse_than_reference_on_recall(reports: dict[str, evaluation.Report]) -> None:
    for name, before in reports["reference"].slices.items():
        after = reports["fielded"].slices[name]
        if before.recall_at_5 is not None:
            assert after.recall_at_5 is not None
            assert after.recall_at_5 >= before.recall_at_5, name


def test_no_result_cases_never_get_a_fast_document(reports: dict[str, evaluation.Report]) -> None:
    corpus = load_corpus(FIXTURE)
    silent = {c.id for c in corpus.cases if not c.relevant}
    assert silent
    assert all(not r.fast for r in reports["fielded"].results if r.id in silent)


def test_semantic_slice_stays_at_its_measured_value(reports: dict[str, evaluation.Report]) -> None:
    # Measured: inflection matching reaches two of these (deploying/deploys, billed/bill...).
    semantic = reports["fielded"].slices[evaluation.SEMANTIC_SLICE]
    assert semantic.recall_at_5 == pytest.approx(0.25)


def test_shipped_thresholds_carry_their_provenance() -> None:
    shipped = default_thresholds()
    assert shipped.provenance is not None
    assert shipped.provenance.corpus == load_corpus(FIXTURE).name
    assert "memrecall calibrate --corpus tests/fixtures/recall-eval.json" in (
        shipped.provenance.command
    )
    assert 0 <= shipped.weak_coverage <= shipped.strong_coverage <= 1
    assert 0 <= shipped.weak_evidence <= shipped.strong_evidence


def test_side_by_side_table(capsys: pytest.CaptureFixture[str]) -> None:
    from memrecall.cli import main

    assert main(["eval", "--corpus", str(FIXTURE), "--side-by-side"]) == 0
    out = capsys.readouterr().out
    assert "each cell: frozen / reference / bm25 / fielded (percent)" in out
    rows = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("| ")]
    assert rows[:3] == ["slice", "overall", "lexical"]
    assert "fast precision" in out


def test_rank_and_fast_in_one_pass_equal_the_separate_calls() -> None:
    corpus = load_corpus(FIXTURE)
    index = FieldedIndex.of(corpus.documents)
    for case in corpus.cases:
        for limit in (1, 2, 5, 180):
            ranked, fast = index.rank_and_fast(case.query, limit, exclude={0, 3})
            assert ranked == index.rank(case.query, limit, exclude={0, 3})
            assert fast == index.fast(case.query, exclude={0, 3})


def test_tiny_pools_can_still_be_judged_strong() -> None:
    # idf is floored at a 20-document pool, so one matching memory is not "common".
    runbook = doc("Deploy runbook", "how to deploy the api", name="runbook")
    for others in (0, 1, 4):
        pool = [runbook] + [doc(f"other topic {i}", name=f"o{i}") for i in range(others)]
        index = FieldedIndex.of(pool)
        assert index.fast("deploy runbook") == [0]
        assert index.fast("how do I deploy") == [0]
    plain = FieldedIndex.of([runbook], params=Params(min_pool=1))
    assert plain.fast("how do I deploy") == []  # without the floor: nothing is ever strong
