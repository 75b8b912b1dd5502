"""The command line on the bundled example tree."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from memrecall.cli import EXAMPLE_NOTE, EXAMPLE_TREE, NO_ROOT_STATUS, build_parser, main
from memrecall.progress import Progress
from memrecall.sources.catalog.store import default_cache_dir
from memrecall.tooling import bench


def test_scan_prints_a_table_with_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[1]  # after the line naming the bundled example tree
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


def test_demo_runs_every_scripted_turn(
    capsys: pytest.CaptureFixture[str], private_home: Path
) -> None:
    assert main(["demo"]) == 0
    # The catalog file went to the test's private cache directory, and nowhere else in HOME.
    written = [p.relative_to(private_home) for p in private_home.rglob("*") if p.is_file()]
    assert written
    assert all(p.parts[:2] == (".cache", "memrecall") for p in written), written
    assert default_cache_dir() == str(private_home / ".cache" / "memrecall")
    out = capsys.readouterr().out
    for marker in (
        "point=initial strategy=heuristic",  # fast result on a tool-free turn
        "point=tool_result strategy=model",  # refined pick after the tool
        "reason=abort",  # cancelled inside the window
        "reason=new_query",  # a new query while one is pending
        "reset: 0 documents surfaced now",
    ):
        assert marker in out, marker


def test_a_missing_root_beside_a_present_one_is_a_diagnostic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "user").mkdir()
    assert main(["scan", "--project", f"{tmp_path}/nope", "--user", f"{tmp_path}/user"]) == 0
    assert "missing_root" in capsys.readouterr().out


@pytest.mark.parametrize(
    "roots",
    [
        ["--project", "nope"],
        ["--user", "nope"],
        ["--project", "nope", "--user", "gone"],
        ["--project", "a-file.md", "--user", "nope"],
    ],
)
def test_scan_fails_clearly_when_it_found_no_root_at_all(
    roots: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file.md").write_text("not a directory", encoding="utf-8")
    assert main(["scan", *roots]) == NO_ROOT_STATUS != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("memrecall scan: error: no memory root found")
    assert str(tmp_path / roots[1]) in line


def test_scan_without_roots_names_the_bundled_example_tree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scan"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith(EXAMPLE_NOTE)
    assert str(EXAMPLE_TREE) in first
    assert main(["scan", "--json"]) == 0
    captured = capsys.readouterr()
    assert msgspec.json.decode(captured.out)["documents"]  # stdout stays one JSON object
    assert EXAMPLE_NOTE in captured.err
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    assert "bundled example tree" in " ".join(capsys.readouterr().out.split())


def test_scan_with_roots_does_not_mention_the_example_tree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    project = str(EXAMPLE_TREE / "project")
    assert main(["scan", "--project", project]) == 0
    assert EXAMPLE_NOTE not in capsys.readouterr().out


CORPUS = str(Path(__file__).parent / "fixtures" / "recall-eval.json")

# (argv, the option it names): one bad value per line, every numeric option of every command.
BAD_OPTIONS = [
    (["bench", "scan", "--sizes", "10,10"], "--sizes"),
    (["bench", "scan", "--sizes", "0,5"], "--sizes"),
    (["bench", "scan", "--sizes", "-5"], "--sizes"),
    (["bench", "scan", "--sizes", "ten"], "--sizes"),
    (["bench", "scan", "--sizes", ","], "--sizes"),
    (["simulate", "--runs", "-3"], "--runs"),
    (["simulate", "--runs", "0"], "--runs"),
    (["simulate", "--runs", "2.5"], "--runs"),
    (["simulate", "--seed", "-1"], "--seed"),
    (["simulate", "--seed", "one"], "--seed"),
    (["calibrate", "--corpus", CORPUS, "--target", "1.5"], "--target"),
    (["calibrate", "--corpus", CORPUS, "--target", "0"], "--target"),
    (["calibrate", "--corpus", CORPUS, "--target", "-0.2"], "--target"),
    (["calibrate", "--corpus", CORPUS, "--target", "nan"], "--target"),
    (["calibrate", "--corpus", CORPUS, "--target", "high"], "--target"),
    (["scan", "--project", ""], "--project"),
    (["demo", "--user", " "], "--user"),
]


@pytest.mark.parametrize(
    ("argv", "option"),
    BAD_OPTIONS,
    ids=[" ".join(a).replace(CORPUS, "CORPUS") for a, _ in BAD_OPTIONS],
)
def test_a_bad_option_value_is_a_usage_error(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert f"argument {option}:" in errors[0]


BAD_BENCH_OPTIONS = [
    (["--repeats", "0"], "--repeats"),
    (["--queries", "-4"], "--queries"),
    (["--seed", "-1"], "--seed"),
    (["--sizes", "25,25"], "--sizes"),
    (["--sizes", "0"], "--sizes"),
]


@pytest.mark.parametrize(
    ("argv", "option"), BAD_BENCH_OPTIONS, ids=[" ".join(a) for a, _ in BAD_BENCH_OPTIONS]
)
def test_a_bad_scoring_bench_option_is_a_usage_error(
    argv: list[str], option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench.main(argv)
    assert exited.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1
    assert f"argument {option}:" in errors[0]


def _actions(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                for path, inner in _actions(child):
                    yield f"{name} {path}", inner
        else:
            yield "/".join(action.option_strings) or action.dest, action


def test_no_numeric_option_takes_an_unchecked_int_or_float() -> None:
    parsers = [build_parser(), bench.build_parser()]
    unchecked = [
        name for p in parsers for name, action in _actions(p) if action.type in (int, float)
    ]
    assert unchecked == []


def test_the_demo_log_replays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "demo.jsonl"
    assert main(["demo", "--log", str(log)]) == 0
    assert f"event log written to {log}" in capsys.readouterr().out
    assert main(["replay", str(log)]) == 0
    assert "every property of the catalogue holds" in capsys.readouterr().out


def test_a_cli_process_with_the_test_environment_keeps_out_of_the_real_home(
    private_home: Path, tmp_path: Path
) -> None:
    # A new process inherits the private HOME/XDG variables: its cache lies under them.
    code = (
        "from memrecall.sources.catalog.store import default_cache_dir; print(default_cache_dir())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert Path(done.stdout.strip()).is_relative_to(private_home)


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, standing in for an interactive stderr."""

    def isatty(self) -> bool:
        return True


def test_progress_draws_only_on_a_terminal_and_never_when_quiet() -> None:
    for stream, quiet, shown in [
        (_Terminal(), False, True),
        (_Terminal(), True, False),
        (io.StringIO(), False, False),
    ]:
        with Progress(2, "counting", quiet=quiet, stream=stream) as progress:
            progress.advance("one")
            progress.advance("two")
        assert progress.shown is shown
        assert ("counting" in stream.getvalue()) is shown


def test_long_commands_show_progress_on_a_terminal_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["simulate", "--seed", "1", "--runs", "2"]) == 0
    assert "simulate" in terminal.getvalue()
    terminal.seek(0)
    terminal.truncate()
    assert main(["bench", "scan", "--sizes", "3,4"]) == 0
    assert "bench scan" in terminal.getvalue()
    assert "bench scan" not in capsys.readouterr().out  # the bar is not on stdout


def test_long_commands_are_quiet_with_json_or_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    captured_stderr, terminal = sys.stderr, _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["bench", "scan", "--sizes", "3,4", "--json"]) == 0
    assert terminal.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", captured_stderr)
    assert main(["simulate", "--seed", "1", "--runs", "2"]) == 0
    assert main(["bench", "scan", "--sizes", "3"]) == 0
    assert capsys.readouterr().err == ""  # captured stderr is no terminal
