"""The quick start: a new process publishes straight from the catalog file only when the
tree is exactly as the file describes it, and its snapshot is then the full scan's.

Catalogs here read with a clock an hour ahead (``settled_clock``), so the files a
test writes count as settled and the quick start is possible at all. That also
turns off the two-second rule that catches a change in the same timestamp tick
as the read, so every change a test makes moves a size or an explicit mtime
(``os.utime``) of the file or directory it touches. Nothing sleeps.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.scanner import MemoryTree

from .test_catalog import HAS_INOTIFY, assert_fresh, note, write
from .test_catalog_store import settled_clock

pytestmark = pytest.mark.skipif(not HAS_INOTIFY, reason="the quick start needs inotify")

_mtimes = itertools.count(1_000_000)


def stamp(path: Path) -> None:
    """Give ``path`` an mtime no earlier read has seen."""
    value = next(_mtimes)
    os.utime(path, (value, value))


def make_tree(base: Path) -> MemoryTree:
    project, user = base / "project", base / "user"
    write(project / "a.md", note("Alpha deploy", body="apple"), 100)
    write(project / "sub" / "b.md", note("Beta release", kind="reference"), 200)
    write(project / "bad.md", "no frontmatter")
    write(user / "c.md", note("Gamma preference", kind="user"), 300)
    return MemoryTree.of(project=str(project), user=str(user))


def open_catalog(tree: MemoryTree, cache: Path) -> CatalogSource:
    return CatalogSource(tree, cache_path=cache, clock=settled_clock, scorer="fielded")


def saved(tree: MemoryTree, cache: Path) -> None:
    catalog = open_catalog(tree, cache)
    catalog.snapshot()
    catalog.close()


def test_an_unchanged_tree_starts_from_the_file_and_equals_the_scan(tmp_path: Path) -> None:
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    saved(tree, cache)
    written = cache.read_bytes()
    catalog = open_catalog(tree, cache)
    try:
        snapshot = assert_fresh(catalog, tree)  # the bad file's diagnostic included
        assert catalog.stats.quick_start
        assert catalog.stats.reads == 0
        assert snapshot.diagnostics  # bad.md: the quick start kept the entry's problem
        assert catalog.snapshot() is snapshot  # nothing changed: the same snapshot
    finally:
        catalog.close()
    assert cache.read_bytes() == written  # nothing changed, nothing rewritten


def test_a_missing_root_still_starts_quickly(tmp_path: Path) -> None:
    project = tmp_path / "memory" / "project"
    write(project / "a.md", note("Alpha deploy"), 100)
    tree = MemoryTree.of(project=str(project), user=str(tmp_path / "memory" / "nobody"))
    cache = tmp_path / "catalog.bin"
    saved(tree, cache)
    catalog = open_catalog(tree, cache)
    try:
        assert_fresh(catalog, tree)
        assert catalog.stats.quick_start
    finally:
        catalog.close()


def _edit(base: Path) -> None:
    (base / "project" / "a.md").write_text(note("Alpha deploy", body="a longer body now"))


def _same_size_new_mtime(base: Path) -> None:
    path = base / "project" / "a.md"
    path.write_text(note("Alpha deplox", body="apple"))
    stamp(path)


def _add(base: Path) -> None:
    path = base / "project" / "sub" / "new.md"
    write(path, note("New"), 500)
    stamp(path.parent)


def _delete(base: Path) -> None:
    (base / "project" / "sub" / "b.md").unlink()
    stamp(base / "project" / "sub")


def _new_directory(base: Path) -> None:
    write(base / "project" / "more" / "d.md", note("Delta"), 600)
    stamp(base / "project")


def _rename_directory(base: Path) -> None:
    (base / "project" / "sub").rename(base / "project" / "renamed")
    stamp(base / "project")


def _remove_root(base: Path) -> None:
    shutil.rmtree(base / "user")


def _symlink(base: Path) -> None:
    (base / "project" / "link.md").symlink_to(base / "user" / "c.md")
    stamp(base / "project")


def _hard_link(base: Path) -> None:
    os.link(base / "user" / "c.md", base / "project" / "c-again.md")
    stamp(base / "project")
    stamp(base / "user" / "c.md")


def _unreadable(base: Path) -> None:
    path = base / "project" / "a.md"
    path.chmod(0o000)
    stamp(path)


CHANGES: dict[str, Callable[[Path], None]] = {
    "edit": _edit,
    "same-size-new-mtime": _same_size_new_mtime,
    "add": _add,
    "delete": _delete,
    "new-directory": _new_directory,
    "rename-directory": _rename_directory,
    "remove-root": _remove_root,
    "symlink": _symlink,
    "hard-link": _hard_link,
    "unreadable": _unreadable,
}


def saved_tree(tmp_path: Path) -> tuple[Path, MemoryTree, Path]:
    """A tree (under the returned base) whose catalog file (the last item) is written."""
    base = tmp_path / "memory"
    tree = make_tree(base)
    cache = tmp_path / "catalog.bin"
    saved(tree, cache)
    return base, tree, cache


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_since_the_file_means_a_full_start(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    base, tree, cache = saved_tree(tmp_path)
    change(base)
    catalog = open_catalog(tree, cache)
    try:
        assert_fresh(catalog, tree)
        assert not catalog.stats.quick_start
    finally:
        catalog.close()


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_changes_after_a_quick_start_are_seen(
    tmp_path: Path, change: Callable[[Path], None]
) -> None:
    base, tree, cache = saved_tree(tmp_path)
    catalog = open_catalog(tree, cache)
    try:
        assert_fresh(catalog, tree)
        assert catalog.stats.quick_start
        change(base)
        assert_fresh(catalog, tree)  # the entries are adopted, the events applied
        _edit(base)
        assert_fresh(catalog, tree)
    finally:
        catalog.close()
    again = open_catalog(tree, cache)
    try:
        assert_fresh(again, tree)
    finally:
        again.close()


OPERATIONS = st.lists(st.sampled_from(sorted(CHANGES)), max_size=4)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=OPERATIONS, after=OPERATIONS)
def test_whatever_changes_around_a_restart_the_catalog_equals_the_scan(
    tmp_path_factory: pytest.TempPathFactory, before: list[str], after: list[str]
) -> None:
    """Changes before the file is written, between it and a new process, and after
    that process started: every snapshot is the full scan's, and a new process
    starts quickly exactly when nothing changed since the file (and the tree has
    no links, which a start always checks in full)."""
    base = tmp_path_factory.mktemp("quick")
    tree = make_tree(base / "memory")
    cache = base / "catalog.bin"
    for name in before:
        _apply(name, base / "memory")
    saved(tree, cache)
    changed = [name for name in after if _apply(name, base / "memory")]
    catalog = open_catalog(tree, cache)
    try:
        assert_fresh(catalog, tree)
        links = {"hard-link", "symlink"}.intersection(before)  # always checked in full
        assert catalog.stats.quick_start == (not changed and not links)
        for name in before:
            _apply(name, base / "memory")
            assert_fresh(catalog, tree)
    finally:
        catalog.close()
        _restore_modes(base)


def _apply(name: str, base: Path) -> bool:
    """One change; False when skipped because what it needs is gone (a root removed, a
    file renamed) or already there."""
    try:
        CHANGES[name](base)
    except OSError:  # gone, already there, or a directory in the way
        return False
    return True


def _restore_modes(base: Path) -> None:
    for directory, _, names in os.walk(base):
        for name in names:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                os.chmod(path, 0o600)
