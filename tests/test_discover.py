"""``MemoryTree.discover``: Qwen Code's project and user memory roots for a project directory.

Each test builds a fake installation under ``tmp_path`` with HOME and the Qwen Code variables
monkeypatched, so nothing here reads or writes the real home. Expected roots are spelled out
from the rules (base dir, git root, the key, the local-mode variable), not computed by the
code under test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall import DiagnosticKind, MemoryTree, Scope
from memrecall.cli import main
from memrecall.sources.scanner import qwen_project_key, scan_tree

TOPIC = (
    "---\ntype: reference\ntitle: Failover runbook\ndescription: how to fail over\n---\nSteps.\n"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home directory; the Qwen Code variables unset; caches under tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("QWEN_CODE_MEMORY_BASE_DIR", raising=False)
    monkeypatch.delenv("QWEN_CODE_MEMORY_LOCAL", raising=False)
    return home


def _key(path: Path) -> str:
    """The key by hand for an ASCII path: every character but [A-Za-z0-9] becomes '-'."""
    text = str(path)
    assert text.isascii()
    return re.sub(r"[^A-Za-z0-9]", "-", text)


def _roots(tree: MemoryTree) -> dict[Scope, str]:
    assert [root.scope for root in tree.roots] == [Scope.PROJECT, Scope.USER]
    return {root.scope: root.path for root in tree.roots}


def _no_git_above(path: Path) -> None:
    if any((parent / ".git").exists() for parent in [path, *path.parents]):
        pytest.skip("the temporary directory lies inside a git checkout")


def test_git_root_above_the_working_directory(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "work" / "repo"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "src" / "pkg"
    cwd.mkdir(parents=True)
    roots = _roots(MemoryTree.discover(cwd))
    assert roots[Scope.PROJECT] == str(home / ".qwen" / "projects" / _key(repo) / "memory")
    assert roots[Scope.USER] == str(home / ".qwen" / "memories")


def test_the_nearest_git_entry_wins_and_a_worktree_file_counts(home: Path, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / ".git").mkdir(parents=True)
    worktree = outer / "trees" / "feature"
    worktree.mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../../.git/worktrees/feature\n", encoding="utf-8")
    roots = _roots(MemoryTree.discover(worktree / "docs"))  # need not exist
    assert roots[Scope.PROJECT] == str(home / ".qwen" / "projects" / _key(worktree) / "memory")


def test_without_a_git_root_the_project_directory_is_the_key(home: Path, tmp_path: Path) -> None:
    _no_git_above(tmp_path)
    project = tmp_path / "plain project"
    project.mkdir()
    roots = _roots(MemoryTree.discover(str(project)))
    assert roots[Scope.PROJECT] == str(home / ".qwen" / "projects" / _key(project) / "memory")


def test_a_symlinked_path_is_resolved_first(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "real"
    (repo / ".git").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)
    assert MemoryTree.discover(link) == MemoryTree.discover(repo)
    assert _roots(MemoryTree.discover(link))[Scope.PROJECT].endswith(f"/{_key(repo)}/memory")


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/home/ann/src/app", "-home-ann-src-app"),
        ("/srv/my project.v2/x_y", "-srv-my-project-v2-x-y"),
        ("/ABC/xyz/019", "-ABC-xyz-019"),
        ("/café/日本", "-caf----"),
        ("/a😀b", "-a--b"),  # beyond U+FFFF: two UTF-16 code units, two dashes
        ("C:\\Users\\ann", "C--Users-ann"),
    ],
)
def test_the_key_replaces_everything_but_ascii_letters_and_digits(path: str, key: str) -> None:
    assert qwen_project_key(path) == key


@given(st.text())
def test_the_key_keeps_ascii_alphanumerics_and_the_utf16_length(path: str) -> None:
    key = qwen_project_key(path)
    assert re.fullmatch(r"[A-Za-z0-9-]*", key)
    assert len(key) == len(path.encode("utf-16-le", "surrogatepass")) // 2
    kept = [c for c in path if c.isascii() and c.isalnum()]
    assert [c for c in key if c != "-"] == kept


def test_the_base_directory_variable(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    base = tmp_path / "qwen-base"
    monkeypatch.setenv("QWEN_CODE_MEMORY_BASE_DIR", str(base))
    roots = _roots(MemoryTree.discover(repo))
    assert roots == {
        Scope.PROJECT: str(base / "projects" / _key(repo) / "memory"),
        Scope.USER: str(base / "memories"),
    }
    monkeypatch.setenv("QWEN_CODE_MEMORY_BASE_DIR", "")  # empty: as if unset
    assert _roots(MemoryTree.discover(repo))[Scope.USER] == str(home / ".qwen" / "memories")


def test_explicit_environment_and_home_override_the_process(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    other = tmp_path / "other-home"
    roots = _roots(MemoryTree.discover(repo, environ={}, home=other))
    assert roots[Scope.USER] == str(other / ".qwen" / "memories")


@pytest.mark.parametrize(("value", "local"), [("1", True), ("0", False), ("true", False)])
def test_the_local_mode_variable(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, local: bool
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project = repo / "service"
    project.mkdir()
    monkeypatch.setenv("QWEN_CODE_MEMORY_LOCAL", value)
    roots = _roots(MemoryTree.discover(project))
    if local:  # beside the project directory itself, not the git root
        assert roots[Scope.PROJECT] == str(project / ".qwen" / "memory")
    else:
        assert roots[Scope.PROJECT] == str(home / ".qwen" / "projects" / _key(repo) / "memory")
    assert roots[Scope.USER] == str(home / ".qwen" / "memories")  # local mode moves project only


def test_an_existing_installation_is_scanned(home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project_memory = home / ".qwen" / "projects" / _key(repo) / "memory"
    (project_memory / "reference").mkdir(parents=True)
    (project_memory / "MEMORY.md").write_text("- [Failover](reference/failover.md)\n")
    (project_memory / "reference" / "failover.md").write_text(TOPIC, encoding="utf-8")
    (home / ".qwen" / "memories").mkdir(parents=True)
    (home / ".qwen" / "memories" / "style.md").write_text(
        TOPIC.replace("reference", "user"), encoding="utf-8"
    )
    result = scan_tree(MemoryTree.discover(repo))
    assert result.diagnostics == ()
    assert sorted((d.scope, d.relative_path) for d in result.documents) == [
        (Scope.PROJECT, os.path.join("reference", "failover.md")),
        (Scope.USER, "style.md"),
    ]


def test_missing_directories_are_diagnostics_not_errors(home: Path, tmp_path: Path) -> None:
    tree = MemoryTree.discover(tmp_path / "no" / "such" / "project")  # nothing exists
    result = scan_tree(tree)
    assert result.documents == ()
    assert [(d.path, d.kind) for d in result.diagnostics] == [
        (root.path, DiagnosticKind.MISSING_ROOT) for root in tree.roots
    ]
    assert not (home / ".qwen").exists()  # discovery creates nothing


def test_bad_arguments_are_refused(home: Path) -> None:
    with pytest.raises(ValueError, match="project_root"):
        MemoryTree.discover("")
    with pytest.raises(TypeError, match="project_root"):
        MemoryTree.discover(42)  # type: ignore[arg-type]


def test_scan_and_demo_accept_discover(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    project_memory = home / ".qwen" / "projects" / _key(repo) / "memory"
    project_memory.mkdir(parents=True)
    (project_memory / "failover.md").write_text(TOPIC, encoding="utf-8")

    assert main(["scan", "--discover", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "failover.md" in out
    assert "bundled example tree" not in out

    assert main(["demo", "--discover", str(repo)]) == 0
    assert "1 documents" in capsys.readouterr().out.splitlines()


def test_discover_excludes_explicit_roots(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["scan", "--discover", ".", "--project", "."])
    assert exit_info.value.code == 2
    assert "--discover" in capsys.readouterr().err


def test_scan_discover_with_nothing_installed_exits_2(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--discover", str(tmp_path / "nowhere")]) == 2
    assert "no memory root found" in capsys.readouterr().err
