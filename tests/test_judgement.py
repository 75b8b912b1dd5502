"""The absolute judgement and the weak floor, stated as properties (no calibrated numbers).

judgement.py says: ``strong`` needs both figures *at or above* the strong thresholds, ``weak``
both at or above the weak ones, anything else is ``none``. fielded.py's ranking keeps the
documents judged weak or better, best first. Each property below holds for any thresholds,
so none of them depends on the shipped, calibrated values.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.judgement import Judgement, Thresholds
from tests.factories import filed

_RANK = {Judgement.NONE: 0, Judgement.WEAK: 1, Judgement.STRONG: 2}
_UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
_EVIDENCE = st.floats(min_value=0.0, max_value=4.0, allow_nan=False)


@st.composite
def thresholds(draw: st.DrawFn) -> Thresholds:
    """Any ordered thresholds: weak at or below strong on both figures."""
    weak_coverage, strong_coverage = sorted((draw(_UNIT), draw(_UNIT)))
    weak_evidence, strong_evidence = sorted((draw(_EVIDENCE), draw(_EVIDENCE)))
    return Thresholds(weak_coverage, weak_evidence, strong_coverage, strong_evidence)


def below(value: float) -> float:
    """The largest float under ``value`` (``value`` itself at 0: nothing is below)."""
    return math.nextafter(value, -math.inf) if value > 0.0 else value


@given(thresholds())
def test_each_threshold_is_inclusive(t: Thresholds) -> None:
    assert t.judge(t.strong_coverage, t.strong_evidence) is Judgement.STRONG
    if (t.weak_coverage, t.weak_evidence) != (t.strong_coverage, t.strong_evidence):
        expected = {Judgement.WEAK, Judgement.STRONG}
    else:
        expected = {Judgement.STRONG}
    assert t.judge(t.weak_coverage, t.weak_evidence) in expected


@given(thresholds())
def test_just_under_a_threshold_is_one_judgement_lower(t: Thresholds) -> None:
    if t.strong_coverage > t.weak_coverage:
        assert t.judge(below(t.strong_coverage), t.strong_evidence) is Judgement.WEAK
    if t.strong_evidence > t.weak_evidence:
        assert t.judge(t.strong_coverage, below(t.strong_evidence)) is Judgement.WEAK
    if t.weak_coverage > 0.0:
        assert t.judge(below(t.weak_coverage), t.strong_evidence) is Judgement.NONE
    if t.weak_evidence > 0.0:
        assert t.judge(t.strong_coverage, below(t.weak_evidence)) is Judgement.NONE


@given(thresholds(), _UNIT, _EVIDENCE, _UNIT, _EVIDENCE)
def test_more_coverage_or_evidence_never_lowers_the_judgement(
    t: Thresholds, coverage: float, evidence: float, more_coverage: float, more_evidence: float
) -> None:
    low = t.judge(coverage, evidence)
    high = t.judge(max(coverage, more_coverage), max(evidence, more_evidence))
    assert _RANK[high] >= _RANK[low]


@given(thresholds())
def test_a_thresholds_file_round_trips(t: Thresholds) -> None:
    assert Thresholds.from_json(t.to_json()) == t


# --------------------------------------------------------------------------- the weak floor

_WORDS = ("deploy", "runbook", "rollback", "billing", "invoice", "pager", "rota", "quota")
_DAY = 86_400.0


@st.composite
def pools(draw: st.DrawFn) -> list[tuple[str, str, float]]:
    """Up to eight documents over a small vocabulary, written up to two years apart."""
    words = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join)
    size = draw(st.integers(min_value=2, max_value=8))
    return [(draw(words), draw(words), draw(st.integers(0, 730)) * _DAY) for _ in range(size)]


@settings(max_examples=300, deadline=None)
@given(
    pools(),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
    thresholds(),
    st.integers(min_value=1, max_value=5),
)
def test_ranking_keeps_exactly_the_documents_judged_weak_or_better(
    pool: list[tuple[str, str, float]], query: str, t: Thresholds, limit: int
) -> None:
    # The floor must drop only documents the judgement calls `none`: the ranking is the
    # best `limit` of the judged-weak-or-better documents, whatever the thresholds are,
    # with at most one more: the first one's update, right after it (an update follows its
    # note, matched or not), or before it where it stands in for it (time_rules.stands_in).
    documents = [filed(title, description, mtime=mtime) for title, description, mtime in pool]
    index = FieldedIndex.of(documents, thresholds=t)
    ranked = index.rank(query, limit)
    judged = index.judge(query, limit)
    assert all(j is not Judgement.NONE for _, j in judged)
    order = [i for i, _ in judged]
    extra = [i for i in ranked if i not in order]
    assert len(extra) <= 1
    moved = ranked[:1] != order[:1]  # the first one's update stands in for it
    follower = ranked[0] if moved else next(iter(extra), None)
    if follower is not None:
        assert index.same_subject(order[0], follower)
        assert documents[follower].mtime - documents[order[0]].mtime >= 14 * _DAY
    if moved:
        assert index.stands_in(query, order[0], ranked[0])
        assert ranked == [follower, *(i for i in order if i != follower)][:limit]
    elif follower is not None:
        assert ranked == [order[0], follower, *order[1:]][:limit]
    else:
        assert ranked == order
    every = index.matches(query)
    kept = {m.index for m in every if m.judgement is not Judgement.NONE}
    assert set(order) <= kept
    assert len(ranked) == min(limit, len(kept) + len(extra))
    assert index.rank_and_fast(query, limit)[0] == ranked
