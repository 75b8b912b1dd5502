"""``memrecall bench store`` at a tiny size: the JSON shape and option validation only
(timings are never asserted)."""

from __future__ import annotations

import json

import attrs
import pytest

from memrecall.cli import main
from memrecall.tooling.storebench import StoreRow


def test_bench_store_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "store", "--sizes", "30,60", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [row["size"] for row in rows] == [30, 60]
    fields = {a.name for a in attrs.fields(StoreRow)}
    for row in rows:
        assert set(row) == fields
        assert all(isinstance(row[name], int | float) for name in fields)
        assert row["searches"] > 0
        assert row["search_p50_ms"] <= row["search_p99_ms"]
        assert row["after_write_p50_ms"] <= row["after_write_max_ms"]


@pytest.mark.parametrize("sizes", ["0", "10,10", "ten", ""])
def test_bench_store_validates_sizes(sizes: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["bench", "store", "--sizes", sizes])
    assert info.value.code == 2
    assert "--sizes" in capsys.readouterr().err
