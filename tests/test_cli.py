"""The command line on the bundled example tree."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from memrecall.cli import EXAMPLE_TREE, main


def test_scan_prints_a_table_with_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.endswith("documents")
    assert int(first.split()[0]) >= 30
    assert "no_frontmatter" in out
    assert "unfinished-note.md" in out


def test_scan_json(capsys: pytest.CaptureFixture[str]) -> None:
    project = str(EXAMPLE_TREE / "project")
    user = str(EXAMPLE_TREE / "user")
    assert main(["scan", "--project", project, "--user", user, "--json"]) == 0
    payload = msgspec.json.decode(capsys.readouterr().out)
    documents = payload["documents"]
    assert {d["type"] for d in documents} == {"user", "feedback", "project", "reference"}
    scopes = [d["scope"] for d in documents]
    assert scopes == sorted(scopes, key=lambda s: s != "project")  # project first
    assert [g["kind"] for g in payload["diagnostics"]] == ["no_frontmatter"]


def test_demo_runs_every_scripted_turn(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    for marker in (
        "point=initial strategy=heuristic",  # fast result on a tool-free turn
        "point=tool_result strategy=model",  # refined pick after the tool
        "reason=abort",  # cancelled inside the window
        "reason=new_query",  # a new query while one is pending
        "reset: 0 documents surfaced now",
    ):
        assert marker in out, marker


def test_missing_roots_are_diagnostics_not_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--project", f"{tmp_path}/nope"]) == 0
    assert "missing_root" in capsys.readouterr().out
