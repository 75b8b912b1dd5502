"""``memrecall serve`` as a process: binds, prints its URL, serves, stops on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from memrecall.cli import build_parser

from .conftest import ALICE_TOKEN, bearer


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memrecall", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # blocks until the server is bound (or exits)
    if "listening on" not in line:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"serve did not start: {line!r} {err!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def test_serve_with_a_token_file_then_sigterm(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(f"# the users\n{ALICE_TOKEN}=alice\n", encoding="utf-8")
    db = tmp_path / "m.db"
    proc, url = _start(["--db", str(db), "--token-file", str(tokens)])
    try:
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=url, headers=bearer(ALICE_TOKEN), timeout=30) as c:
            r = c.put("/me/memories", json={"memory_key": "k", "content": "c", "category": "x"})
            assert r.status_code == 200
            assert c.get("/me/memories").json()["memories"][0]["content"] == "c"
            assert httpx.get(url + "/me/memories", timeout=30).status_code == 401
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert ALICE_TOKEN not in err
    assert db.exists()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--token", "short=alice"],
        ["--token", f"{ALICE_TOKEN}=alice", "--port", "70000"],
        ["--token", f"{ALICE_TOKEN}=alice", "--token-file", "x"],
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memrecall", "serve", "--db", str(tmp_path / "m.db"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip()
    assert "Traceback" not in proc.stderr


def test_serve_is_registered() -> None:
    args = build_parser().parse_args(["serve", "--token", f"{ALICE_TOKEN}=alice"])
    assert (args.host, args.port, args.token) == ("127.0.0.1", 8765, [f"{ALICE_TOKEN}=alice"])


@pytest.mark.parametrize("db", ["directory", "postgresql://u:p@127.0.0.1:1/nowhere"])
def test_a_store_that_cannot_be_opened_is_one_line_not_a_traceback(tmp_path: Path, db: str) -> None:
    where = str(tmp_path) if db == "directory" else db  # a directory is no database file
    proc = subprocess.run(
        [sys.executable, "-m", "memrecall", "serve", "--db", where, "--token", f"{ALICE_TOKEN}=a"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("memrecall serve: cannot open the store: ")
    assert proc.stderr.count("\n") == 1
