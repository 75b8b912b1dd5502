"""``memrecall memory``: every subcommand, its JSON shape and its exit status; import/export
of a memory tree (round trip, per-file diagnostics, nothing half-written)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memrecall.sources.scanner import MemoryTree, scan_tree
from memrecall.store.cli import main


class Cli:
    """Runs ``memrecall memory`` in-process against one database."""

    def __init__(self, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.db = db
        self.capsys = capsys

    def __call__(self, *argv: str, user: str = "u1") -> tuple[int, dict[str, Any], str]:
        command, *rest = argv
        status = main(["memory", command, "--db", str(self.db), "--user", user, "--json", *rest])
        out, err = self.capsys.readouterr()
        lines = out.strip().splitlines()
        assert len(lines) == 1, out  # exactly one JSON object
        return status, json.loads(lines[0]), err

    def ok(self, *argv: str, user: str = "u1") -> dict[str, Any]:
        status, payload, err = self(*argv, user=user)
        assert status == 0, (payload, err)
        return payload


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path / "memory.db", capsys)


def test_save_search_show_list(cli: Cli) -> None:
    saved = cli.ok("save", "--key", "Editor", "--content", "prefers vim", "--category", "tool")
    assert saved["revision"] == 1
    assert saved["status"] == "active"
    assert saved["created"] is True
    found = cli.ok("search", "vim")
    (hit,) = found["results"]
    assert hit["memory_id"] == saved["memory_id"]
    assert {"memory_id", "key", "content", "category", "scope", "updated_at"} <= hit.keys()
    assert hit["scope"] == "global"
    assert hit["content"] == "prefers vim"
    learning = cli.ok(
        "save", "--workspace", "learning", "--key", "editor", "--content", "uses emacs in class",
        "--category", "tool",
    )  # fmt: skip
    assert learning["scope"] == "learning"
    assert (
        cli.ok("search", "editor", "--workspace", "learning")["results"][0]["memory_id"]
        == (learning["memory_id"])
    )
    assert cli.ok("search", "zebra")["results"] == []
    assert cli.ok("search", "editor", "--limit", "1")["results"][0]["key"] == "editor"
    shown = cli.ok("show", saved["memory_id"])["record"]
    assert shown["content"] == "prefers vim"
    assert [r["memory_id"] for r in cli.ok("list")["records"]] == [saved["memory_id"]]
    assert [r["memory_id"] for r in cli.ok("list", "--workspace", "learning")["records"]] == [
        learning["memory_id"]
    ]
    # another user sees nothing
    assert cli.ok("search", "vim", user="u2")["results"] == []
    status, payload, err = cli("show", saved["memory_id"], user="u2")
    assert status == 4
    assert payload["error"] == "not_found"
    assert len(err.strip().splitlines()) == 1


def test_update_history_restore_version_and_conflicts(cli: Cli) -> None:
    memory_id = cli.ok("save", "--key", "tea", "--content", "green", "--category", "p")["memory_id"]
    updated = cli.ok("update", memory_id, "--content", "oolong", "--expected-revision", "1")
    assert updated["revision"] == 2
    status, payload, err = cli(
        "update", memory_id, "--content", "black", "--expected-revision", "1"
    )
    assert status == 3
    assert payload == {"error": "revision_conflict", "current_revision": 2}
    assert "revision conflict" in err
    assert cli.ok("show", memory_id)["record"]["content"] == "oolong"  # nothing overwritten
    history = cli.ok("history", memory_id)["versions"]
    assert [(v["revision"], v["content"]) for v in history] == [(1, "green"), (2, "oolong")]
    restored = cli.ok("restore-version", memory_id, "1", "--expected-revision", "2")
    assert restored["revision"] == 3
    assert cli.ok("show", memory_id)["record"]["content"] == "green"
    status, payload, _ = cli("restore-version", memory_id, "1", "--expected-revision", "2")
    assert (status, payload["error"], payload["current_revision"]) == (3, "revision_conflict", 3)
    status, payload, _ = cli("save", "--key", "TEA", "--content", "rooibos", "--category", "p")
    assert (status, payload["error"], payload["memory_id"]) == (3, "key_conflict", memory_id)
    status, payload, _ = cli("update", memory_id, "--expected-revision", "3")
    assert (status, payload["error"]) == (2, "invalid_input")


def test_suppress_restore_forget(cli: Cli) -> None:
    memory_id = cli.ok("save", "--key", "pet", "--content", "a cat named Pixel", "--category", "p")[
        "memory_id"
    ]
    assert cli.ok("suppress", memory_id)["status"] == "suppressed"
    assert cli.ok("search", "Pixel")["results"] == []
    assert cli.ok("restore", memory_id)["status"] == "active"
    assert len(cli.ok("search", "Pixel")["results"]) == 1
    forgotten = cli.ok("forget", memory_id)
    assert forgotten["forgotten"] is True
    assert forgotten["final_revision"] == 1
    assert cli.ok("search", "Pixel")["results"] == []
    for command in ("show", "history", "suppress", "restore", "forget"):
        status, payload, _ = cli(command, memory_id)
        assert (status, payload["error"], payload["forgotten"]) == (4, "not_found", True)
    assert b"Pixel" not in (cli.db.read_bytes())


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "x", "--limit", "0"],
        ["search", "x", "--limit", "51"],
        ["search", "x", "--workspace", "office"],
        ["update", "m", "--content", "c", "--expected-revision", "zero"],
        ["restore-version", "m", "-1", "--expected-revision", "1"],
        ["save", "--key", "k", "--content", "  ", "--category", "c"],
        ["show"],
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["memory", argv[0], "--db", str(tmp_path / "m.db"), "--user", "u1", *argv[1:]])
    assert info.value.code == 2
    assert not (tmp_path / "m.db").exists()
    assert capsys.readouterr().out == ""


def test_missing_user_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["memory", "list", "--db", str(tmp_path / "m.db")])
    assert info.value.code == 2


def test_export_import_round_trip(cli: Cli, tmp_path: Path) -> None:
    memories = [
        ("editor", "prefers vim\nfor every language", "preference"),
        ("deploy steps", "run the tests, then tag", "Workflow"),
        ("memory", "the index file name must not collide", "note"),
        ("quoted", "a category with a quote", '"odd" one'),
    ]
    for key, content, category in memories:
        cli.ok("save", "--key", key, "--content", content, "--category", category)
    cli.ok(
        "save", "--workspace", "research", "--key", "goal", "--content", "a thesis",
        "--category", "goal",
    )  # fmt: skip
    suppressed = cli.ok("save", "--key", "hidden", "--content", "not exported", "--category", "p")
    cli.ok("suppress", suppressed["memory_id"])
    tree = tmp_path / "tree"
    exported = cli.ok("export-tree", str(tree))
    assert exported["exported"] == 4
    assert exported["warnings"] == []
    assert (tree / "MEMORY.md").exists()
    # the scanner reads the exported tree
    scanned = scan_tree(MemoryTree.of(user=str(tree)))
    assert scanned.diagnostics == ()
    assert sorted(d.title for d in scanned.documents) == sorted(
        ["editor", "deploy_steps", "memory", "quoted"]
    )
    # into a fresh database: the same records
    fresh = Cli(tmp_path / "fresh.db", cli.capsys)
    imported = fresh.ok("import-tree", str(tree))
    assert (imported["imported"], imported["unchanged"], imported["diagnostics"]) == (4, 0, [])

    def contents(c: Cli) -> list[tuple[str, str, str, str]]:
        return sorted(
            (r["key"], r["content"], r["category"], r["scope"])
            for r in c.ok("list")["records"]
            if r["status"] == "active"
        )

    assert contents(fresh) == contents(cli)
    # importing again is idempotent
    again = fresh.ok("import-tree", str(tree))
    assert (again["imported"], again["unchanged"]) == (0, 4)
    # a workspace exports on its own
    research = tmp_path / "research"
    assert cli.ok("export-tree", str(research), "--workspace", "research")["exported"] == 1
    status, payload, _ = cli("export-tree", str(tree))  # not empty: refused, untouched
    assert (status, payload["error"]) == (2, "invalid_input")


def _topic(name: str, body: str, kind: str = "user") -> str:
    return f"---\nname: {name}\ndescription: d\ntype: {kind}\n---\n{body}\n"


def test_import_reports_bad_files_and_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "good.md").write_text(_topic("good", "a good memory"))
    (tree / "sub" / "plain.md").write_text("no frontmatter here")
    (tree / "badtype.md").write_text(_topic("badtype", "x", kind="diary"))
    (tree / "empty.md").write_text(_topic("empty", ""))
    (tree / "twin.md").write_text(_topic("Good", "the same key again"))
    (tree / "latin1.md").write_bytes(_topic("latin", "caf\xe9").encode("latin-1"))
    (tree / "MEMORY.md").write_text("# index\n")
    if hasattr(os, "symlink"):
        os.symlink(tree / "good.md", tree / "link.md")
    status, payload, err = cli("import-tree", str(tree))
    assert status == 3
    assert payload["error"] == "import_rejected"
    assert payload["written"] is False
    reasons = {d["file"]: d["reason"] for d in payload["diagnostics"]}
    assert reasons["sub/plain.md"] == "no_frontmatter"
    assert reasons["badtype.md"] == "unknown_type"
    assert reasons["empty.md"].startswith("content")
    assert reasons["twin.md"].startswith("duplicate_key")
    assert reasons["latin1.md"] == "not_utf8"
    assert reasons.get("link.md", "symlink_not_followed") == "symlink_not_followed"
    assert "good.md" not in reasons
    assert "MEMORY.md" not in reasons
    assert len(err.strip().splitlines()) == 1
    assert cli.ok("list")["records"] == []  # nothing half-written
    partial = cli.ok("import-tree", str(tree), "--skip-invalid")
    assert partial["imported"] == 1
    assert [r["key"] for r in cli.ok("list")["records"]] == ["good"]


def test_import_conflicting_with_stored_content_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    cli.ok("save", "--key", "good", "--content", "stored first", "--category", "user")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "good.md").write_text(_topic("good", "imported later"))
    (tree / "other.md").write_text(_topic("other", "fine"))
    status, payload, _ = cli("import-tree", str(tree))
    assert status == 3
    assert payload["diagnostics"] == [
        {"file": "good.md", "reason": "key_conflict: stored differently"}
    ]
    assert [r["key"] for r in cli.ok("list")["records"]] == ["good"]


def test_text_output_and_the_installed_entry_point(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memrecall.cli", "memory", *argv, "--db", db, "--user", "u1"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )

    saved = run("save", "--key", "editor", "--content", "prefers vim", "--category", "tool")
    assert saved.returncode == 0, saved.stderr
    assert "revision=1" in saved.stdout
    found = run("search", "vim")
    assert "prefers vim" in found.stdout
    missing = run("show", "nope")
    assert missing.returncode == 4
    assert missing.stderr.strip().count("\n") == 0
    assert "not found" in missing.stderr
