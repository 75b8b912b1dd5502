"""memory_expand (bodies, missing, hits) and memory_prune (merge, evict, dry run by default)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.tools.contract.constants import ScoreConfig
from memrecall.tools.contract.expand import expand
from memrecall.tools.contract.prune import is_dry_run, plan_prune, prune_score
from memrecall.tools.contract.records import MemoryRecord, record_bytes

from .helpers import record, records, view

DAY = 86_400.0


def test_expand_returns_bodies_lists_missing_and_counts_hits() -> None:
    recs = view(record("a", body="alpha body", hits=2), record("b", body="beta body"))
    result = expand(recs, ["b", "nope", "a", "b", "gone"])
    assert [r.id for r in result.found] == ["b", "a"]
    assert [r.body for r in result.found] == ["beta body", "alpha body"]
    assert result.missing == ("nope", "gone")
    assert result.hits == {"b": 1, "a": 3}
    assert "alpha body" in result.text
    assert "missing: nope, gone" in result.text


def test_prune_merges_same_kind_and_title() -> None:
    old = record("old", "same title here", tags=("x", "y"), hits=2, updated_at=1.0)
    new = record("new", "same title here", tags=("z", "x"), hits=3, updated_at=5.0)
    other_kind = record("k", "same title here", kind="lesson", updated_at=3.0)
    plan = plan_prune(view(old, new, other_kind), now=10.0)
    assert len(plan.merges) == 1
    merge = plan.merges[0]
    assert merge.kept == "new"
    assert merge.absorbed == ("old",)
    assert merge.record.hits == 5
    assert merge.record.tags == ("z", "x", "y")
    assert plan.evictions == ()
    assert plan.records_after == 2


def test_prune_evicts_lowest_score_first_until_under_the_cap() -> None:
    now = 100 * DAY
    fresh = record("fresh", "fresh memory here", updated_at=now)
    stale = record("stale", "stale memory here", updated_at=0.0)
    used = record("used", "stale but used ok", updated_at=0.0, hits=40)
    recs = (fresh, stale, used)
    cap = sum(record_bytes(r) for r in recs) - 1
    plan = plan_prune(view(*recs, max_bytes=cap), now=now)
    assert [e.id for e in plan.evictions] == ["stale"]
    assert plan.bytes_after <= cap
    half = ScoreConfig().prune_half_life_days
    assert math.isclose(prune_score(stale, now, ScoreConfig()), 0.5 ** (100 / half))


def test_only_an_explicit_false_turns_the_dry_run_off() -> None:
    assert is_dry_run(True)
    assert is_dry_run("false")
    assert is_dry_run(0)
    assert is_dry_run(None)
    assert not is_dry_run(False)
    assert plan_prune(view(), now=0.0).dry_run
    assert not plan_prune(view(), now=0.0, dry_run=False).dry_run


@settings(max_examples=80)
@given(records(max_size=12), st.integers(0, 6000), st.integers(0, 10**7))
def test_the_plan_fits_the_cap_and_evicts_in_score_order(
    recs: tuple[MemoryRecord, ...], cap: int, now: int
) -> None:
    plan = plan_prune(view(*recs, max_bytes=cap), now=float(now))
    assert plan.bytes_after <= cap or plan.records_after == 0
    scores = [e.prune_score for e in plan.evictions]
    assert scores == sorted(scores)
    kept = {(r.scope, r.kind, r.title) for r in recs}
    assert plan.records_after == len(kept) - len(plan.evictions)
    absorbed = {i for m in plan.merges for i in m.absorbed}
    assert not absorbed & {e.id for e in plan.evictions}
    assert sum(m.record.hits for m in plan.merges) == sum(
        r.hits for r in recs if r.id in absorbed or r.id in {m.kept for m in plan.merges}
    )
