"""``memrecall bench store --postgres URI``: both backends measured, printed side by side
(shapes only; timings are never asserted)."""

from __future__ import annotations

import json

import attrs
import psycopg
import pytest

from memrecall.cli import main
from memrecall.tooling import storebench
from memrecall.tooling.storebench import StoreRow, _side_by_side

from . import pgserver


def test_bench_store_runs_on_both(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(storebench, "SERVICE_SAVES", 20)  # the shape only: keep it short
    monkeypatch.setattr(storebench, "SEARCHES", 20)
    uri = pgserver.as_uri(postgres_dsn)
    assert main(["bench", "store", "--sizes", "30", "--json", "--postgres", uri]) == 0
    out = json.loads(capsys.readouterr().out)
    fields = {a.name for a in attrs.fields(StoreRow)}
    for key in ("rows", "postgres_rows"):
        assert [row["size"] for row in out[key]] == [30]
        assert set(out[key][0]) == fields
        assert out[key][0]["searches"] > 0
    # the bench's schemas are dropped afterwards
    with psycopg.connect(postgres_dsn) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'memrecall_bench_%'"
        ).fetchone()
    assert left == (0,)
    lite, pg = ([StoreRow(**row) for row in out[key]] for key in ("rows", "postgres_rows"))
    _side_by_side(lite, pg)
    text = capsys.readouterr().out.splitlines()
    assert text[0].split()[-2:] == ["sqlite", "postgres"]
    first = text[1].split()
    assert first[:2] == ["30", "store_saves_per_s"]
    assert [float(v) for v in first[2:]] == [lite[0].store_saves_per_s, pg[0].store_saves_per_s]
