"""``--db postgresql://...`` wherever ``--db PATH`` is: ``memrecall memory``, ``serve``,
``mcp``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import httpx
import pytest

from memrecall.cli import build_parser
from memrecall.cli import main as memrecall_main
from memrecall.store.postgres import PostgresStore

from . import pgserver
from .test_processes import ROOT

TOKEN = "pg-cli-token-0123456789abcdefghijklmnopqrstuv"


def _memory(uri: str, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    command, *rest = argv
    status = memrecall_main(["memory", command, "--db", uri, "--user", "u1", "--json", *rest])
    out, err = capsys.readouterr()
    assert status == 0, err
    payload: dict[str, object] = json.loads(out)
    return payload


def test_memory_cli_on_postgres(postgres_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    uri = pgserver.as_uri(postgres_dsn)
    saved = _memory(
        uri, capsys, "save", "--key", "editor", "--content", "prefers vim", "--category", "pref"
    )
    memory_id = str(saved["memory_id"])
    assert saved["created"] is True
    listed = _memory(uri, capsys, "list")
    records = listed["records"]
    assert isinstance(records, list)
    assert [r["memory_id"] for r in records] == [memory_id]
    store = PostgresStore(postgres_dsn)
    assert store.get("u1", memory_id).content == "prefers vim"
    _memory(uri, capsys, "forget", memory_id)
    assert store.list_records("u1") == []
    store.close()


def test_serve_on_postgres(postgres_dsn: str) -> None:
    uri = pgserver.as_uri(postgres_dsn)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memrecall",
            "serve",
            "--port",
            "0",
            "--db",
            uri,
            "--token",
            f"{TOKEN}=alice",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    try:
        assert "listening on" in line, proc.stderr.read() if proc.stderr else line
        url = line.rsplit(" ", 1)[1].strip()
        auth = {"Authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=url, headers=auth, timeout=30) as c:
            r = c.put("/me/memories", json={"memory_key": "k", "content": "c", "category": "x"})
            assert r.status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    store = PostgresStore(postgres_dsn)
    assert [r.content for r in store.list_records("alice")] == ["c"]
    store.close()


def test_mcp_keeps_a_postgres_uri_intact() -> None:
    uri = "postgresql://u:p@db.example:5433/memory?sslmode=require"
    args = build_parser().parse_args(["mcp", "--db", uri, "--user", "u1"])
    assert args.db == uri  # not a Path, which would fold the '//'
