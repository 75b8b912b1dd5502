"""``memrecall bench http`` briefly: the JSON shape, no 5xx, nothing lost or skipped."""

from __future__ import annotations

import json

import pytest

from memrecall.cli import main


def test_bench_http_json_shape_and_checks(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["bench", "http", "--clients", "3", "--duration", "0.6", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    assert data["clients"] == 3
    assert data["server_errors"] == 0
    assert data["transport_errors"] == 0
    assert (data["lost_writes"], data["skipped_revisions"]) == (0, 0)
    assert data["ok"] is True
    assert data["acknowledged_writes"] > 0
    names = {row["endpoint"] for row in data["rows"]}
    assert {"GET /me/core-memories", "POST /me/core-memories"} <= names
    assert sum(row["requests"] for row in data["rows"]) == data["requests"]
    for row in data["rows"]:
        assert 0 < row["p50_ms"] <= row["p99_ms"]
        assert row["server_errors"] == 0


@pytest.mark.parametrize(
    "args", [["--clients", "0"], ["--duration", "0"], ["--duration", "x"], ["--duration", "4000"]]
)
def test_bench_http_options_are_validated(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["bench", "http", *args])
    assert info.value.code == 2
    assert "Traceback" not in capsys.readouterr().err
