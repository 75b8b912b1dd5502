from __future__ import annotations

import os
from pathlib import Path

import pytest

from memrecall.events import MemoryType, Scope
from memrecall.sources.scanner import (
    DiagnosticKind,
    MemoryTree,
    Root,
    scan_tree,
)


def write(path: Path, text: str | bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def note(name: str, kind: str = "project", description: str = "d", body: str = "b") -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


def snapshot(root: Path) -> dict[str, tuple[bytes, float]]:
    return {
        str(p): (p.read_bytes(), p.stat().st_mtime)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    user = tmp_path / "user"
    project.mkdir()
    user.mkdir()
    return project, user


def test_reads_recursively_and_orders_project_then_user_by_mtime(
    tree: tuple[Path, Path],
) -> None:
    project, user = tree
    write(project / "old.md", note("Old"), mtime=100)
    write(project / "deep" / "er" / "new.md", note("New", "reference"), mtime=300)
    write(project / "tie-b.md", note("TieB"), mtime=200)
    write(project / "tie-a.md", note("TieA"), mtime=200)
    write(user / "u.md", note("User newest", "user"), mtime=999)
    result = scan_tree(MemoryTree.of(project=str(project), user=str(user)))
    assert [d.title for d in result.documents] == ["New", "TieA", "TieB", "Old", "User newest"]
    first = result.documents[0]
    assert first.scope is Scope.PROJECT
    assert first.relative_path == "deep/er/new.md"
    assert first.path == str(project / "deep" / "er" / "new.md")
    assert first.type is MemoryType.REFERENCE
    assert first.mtime == 300
    assert result.documents[-1].scope is Scope.USER
    assert result.diagnostics == ()


def test_skips_index_and_non_markdown_at_any_depth(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    write(project / "MEMORY.md", note("Index"))
    write(project / "sub" / "MEMORY.md", note("Nested index"))
    write(project / "notes.txt", note("Text"))
    write(project / "real.md", note("Real"))
    result = scan_tree(MemoryTree.of(project=str(project)))
    assert [d.title for d in result.documents] == ["Real"]


def test_no_document_cap(tree: tuple[Path, Path]) -> None:
    project, _ = tree
    for i in range(230):
        write(project / f"t{i:03}.md", note(f"T{i}"), mtime=1000 + i)
    result = scan_tree(MemoryTree.of(project=str(project)))
    assert len(result.documents) == 230
    assert result.documents[0].title == "T229"


def test_bad_files_become_diagnostics_and_the_scan_continues(tree: tuple[Path, Path]) -> None:
    project, user = tree
    write(project / "good.md", note("Good"))
    write(project / "plain.md", "no frontmatter here\n")
    write(project / "untyped.md", "---\nname: x\n---\nbody\n")
    write(project / "alien.md", "---\nname: x\ntype: team\n---\nbody\n")
    write(project / "latin1.md", note("Caf\xe9").encode("latin-1"))
    write(project / "huge.md", note("Huge", body="x" * 200))
    before = snapshot(project)
    result = scan_tree(MemoryTree.of(project=str(project), user=str(user)), max_bytes=150)
    kinds = {Path(d.path).name: d.kind for d in result.diagnostics}
    assert kinds == {
        "plain.md": DiagnosticKind.NO_FRONTMATTER,
        "untyped.md": DiagnosticKind.MISSING_TYPE,
        "alien.md": DiagnosticKind.UNKNOWN_TYPE,
        "latin1.md": DiagnosticKind.INVALID_UTF8,
        "huge.md": DiagnosticKind.TOO_LARGE,
    }
    titles = sorted(d.title for d in result.documents)
    assert titles == ["Caf\ufffd", "Good"]
    invalid = next(d for d in result.diagnostics if d.kind is DiagnosticKind.INVALID_UTF8)
    assert not invalid.skipped
    assert "byte" in invalid.detail
    assert snapshot(project) == before


def test_missing_and_non_directory_roots(tmp_path: Path) -> None:
    write(tmp_path / "file-root", "x")
    write(tmp_path / "user" / "u.md", note("U", "user"))
    tree = MemoryTree(
        (
            Root(Scope.PROJECT, str(tmp_path / "absent")),
            Root(Scope.PROJECT, str(tmp_path / "file-root")),
            Root(Scope.USER, str(tmp_path / "user")),
        )
    )
    result = scan_tree(tree)
    assert [d.kind for d in result.diagnostics] == [
        DiagnosticKind.MISSING_ROOT,
        DiagnosticKind.NOT_A_DIRECTORY,
    ]
    assert [d.title for d in result.documents] == ["U"]


@pytest.mark.parametrize("follow", [False, True])
def test_symlink_loop_and_broken_link(tree: tuple[Path, Path], follow: bool) -> None:
    project, _ = tree
    write(project / "sub" / "a.md", note("A"))
    (project / "sub" / "loop").symlink_to(project)  # inside the root: never followed
    (project / "dangling.md").symlink_to(project / "nowhere.md")
    (project / "self.md").symlink_to(project / "self.md")
    result = scan_tree(MemoryTree.of(project=str(project), follow_links=follow))
    assert [d.title for d in result.documents] == ["A"]
    kinds = sorted(d.kind.value for d in result.diagnostics)
    assert kinds == ["broken_link", "symlink_loop"]


def test_symlinked_file_outside_the_roots_is_read_only_when_following_links(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    project, _ = tree
    target = write(tmp_path / "elsewhere.md", note("Linked"))
    (project / "link.md").symlink_to(target)
    result = scan_tree(MemoryTree.of(project=str(project)))
    assert result.documents == ()
    assert [(d.path, d.kind) for d in result.diagnostics] == [
        (str(project / "link.md"), DiagnosticKind.LINK_OUTSIDE_ROOTS)
    ]
    result = scan_tree(MemoryTree.of(project=str(project), follow_links=True))
    assert [d.title for d in result.documents] == ["Linked"]
    assert result.documents[0].path == str(project / "link.md")


def test_unreadable_file_via_error_injection(
    tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, _ = tree
    write(project / "ok.md", note("Ok"))
    write(project / "denied.md", note("Denied"))
    write(project / "gone.md", note("Gone"))
    real_open = open

    def fake_open(path: str, mode: str = "r", *args: object, **kwargs: object) -> object:
        if str(path).endswith("denied.md"):
            raise PermissionError(13, "Permission denied")
        if str(path).endswith("gone.md"):
            os.unlink(path)  # vanishes between listing and reading
        return real_open(path, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", fake_open)
    result = scan_tree(MemoryTree.of(project=str(project)))
    assert [d.title for d in result.documents] == ["Ok"]
    kinds = {Path(d.path).name: d.kind for d in result.diagnostics}
    assert kinds == {"denied.md": DiagnosticKind.UNREADABLE, "gone.md": DiagnosticKind.VANISHED}


def test_unlistable_subdirectory(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    project, _ = tree
    write(project / "top.md", note("Top"))
    write(project / "locked" / "inner.md", note("Inner"))
    real_scandir = os.scandir

    def fake_scandir(path: str) -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", fake_scandir)
    result = scan_tree(MemoryTree.of(project=str(project)))
    assert [d.title for d in result.documents] == ["Top"]
    assert [d.kind for d in result.diagnostics] == [DiagnosticKind.UNREADABLE]
