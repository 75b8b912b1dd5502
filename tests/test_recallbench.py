"""``memrecall bench recall``: the shape of its output and its helpers (never its timings)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.cli import main
from memrecall.tooling.recallbench import MODES, RecallRow, percentile, query_mix


def test_a_tiny_run_prints_one_row_per_mode_with_sane_figures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "recall", "--sizes", "12", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["topics"], r["mode"]) for r in rows] == [(12, mode) for mode in MODES]
    fields = {a.name for a in RecallRow.__attrs_attrs__}
    for row in rows:
        assert set(row) == fields
        assert row["turns"] >= 1
        assert 0.0 <= row["p50_ms"] <= row["p99_ms"] <= row["max_ms"]
        assert 0.0 <= row["window_share"] <= 1.0


@pytest.mark.parametrize("sizes", ["0", "-3", "ten", "10,10"])
def test_bad_sizes_are_a_usage_error(sizes: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "recall", "--sizes", sizes])
    assert stopped.value.code == 2
    assert "--sizes" in capsys.readouterr().err


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=50), st.floats(0.01, 1.0))
def test_percentile_is_the_nearest_rank_value(values: list[float], q: float) -> None:
    got = percentile(values, q)
    assert got in values
    at_or_below = sum(1 for v in values if v <= got)
    below = sum(1 for v in values if v < got)
    assert at_or_below >= math.ceil(q * len(values)) > below or got == min(values)


def test_most_queries_of_the_mix_carry_a_word_no_earlier_query_used() -> None:
    queries = query_mix(200, offset=7)
    seen: set[str] = set()
    fresh = 0
    for query in queries:
        words = set(query.split())
        fresh += bool(words - seen)
        seen |= words
    assert fresh >= 0.7 * len(queries)
    assert len(set(queries)) > 0.7 * len(queries)
