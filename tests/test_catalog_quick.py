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
from memrecall.sources.catalog.store import StoredCatalog, load_catalog, save_catalog
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


def test_files_written_just_before_the_save_are_read_again_and_still_start_quickly(
    tmp_path: Path,
) -> None:
    """With the real clock, every file was read within two seconds of being written (an
    agent's session writing memories until it ends): each is read again, not trusted."""
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    first = CatalogSource(tree, cache_path=cache, scorer="fielded")
    first.snapshot()
    first.close()
    catalog = CatalogSource(tree, cache_path=cache, scorer="fielded")
    try:
        assert_fresh(catalog, tree)
        assert catalog.stats.quick_start
        assert catalog.stats.reads == 4  # a.md, b.md, bad.md, c.md
    finally:
        catalog.close()


def test_a_suspect_file_that_reads_differently_means_a_full_start(tmp_path: Path) -> None:
    """A change in the timestamp tick of the read leaves the signature as it was: the
    file as read again, not its signature, decides."""
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    first = CatalogSource(tree, cache_path=cache, scorer="fielded")
    first.snapshot()
    first.close()
    path = tmp_path / "memory" / "project" / "a.md"
    info = path.stat()
    path.write_text(note("Alpha deploy", body="mango"))  # same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    roots = [(root.scope.value, root.path) for root in tree.roots]
    stored = load_catalog(str(cache), roots, scorer="fielded")
    assert isinstance(stored, StoredCatalog)
    now = path.stat()
    signature = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns)
    for entry in stored.entries:  # what a same-tick edit looks like: the signature as read
        if entry.path == str(path):
            entry.signature = signature
    save_catalog(str(cache), stored)
    catalog = CatalogSource(tree, cache_path=cache, scorer="fielded")
    try:
        snapshot = assert_fresh(catalog, tree)
        assert not catalog.stats.quick_start
        assert any("mango" in d.body for d in snapshot.documents)
    finally:
        catalog.close()


def test_a_suspect_directory_that_lists_differently_means_a_full_start(tmp_path: Path) -> None:
    """The same for a directory: an entry made in the tick of its listing is found by
    listing it again."""
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    first = CatalogSource(tree, cache_path=cache, scorer="fielded")
    first.snapshot()
    first.close()
    directory = tmp_path / "memory" / "project"
    write(directory / "late.md", note("Late arrival"), 700)
    roots = [(root.scope.value, root.path) for root in tree.roots]
    stored = load_catalog(str(cache), roots, scorer="fielded")
    assert isinstance(stored, StoredCatalog)
    now = directory.stat()
    for listing in stored.listings:  # a same-tick change: the signature as listed
        if listing.path == str(directory):
            listing.signature = (now.st_dev, now.st_ino, now.st_mtime_ns, now.st_ctime_ns)
    save_catalog(str(cache), stored)
    catalog = CatalogSource(tree, cache_path=cache, scorer="fielded")
    try:
        snapshot = assert_fresh(catalog, tree)
        assert not catalog.stats.quick_start
        assert any(d.title == "Late arrival" for d in snapshot.documents)
    finally:
        catalog.close()


def test_a_tree_with_a_hard_link_always_starts_in_full(tmp_path: Path) -> None:
    """A file linked from outside the tree can change without an event in it: such trees
    are validated in full at every start (and the link on every refresh)."""
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    outside = write(tmp_path / "elsewhere.md", note("Shared", body="before"), 100)
    os.link(outside, tmp_path / "memory" / "project" / "shared.md")
    saved(tree, cache)
    catalog = open_catalog(tree, cache)
    try:
        assert_fresh(catalog, tree)
        assert not catalog.stats.quick_start
        with open(outside, "r+b") as handle:  # same size; the link's mtime put back
            data = handle.read().replace(b"before", b"after!")
            handle.seek(0)
            handle.write(data)
        stamp(outside)
        assert any("after!" in d.body for d in assert_fresh(catalog, tree).documents)
    finally:
        catalog.close()


def test_files_read_again_at_a_quick_start_are_not_read_again_after_the_next_save(
    tmp_path: Path,
) -> None:
    """The read times a quick start moved on are kept when the catalog is next saved."""
    tree = make_tree(tmp_path / "memory")
    cache = tmp_path / "catalog.bin"
    first = CatalogSource(tree, cache_path=cache, scorer="fielded")  # the real clock
    first.snapshot()
    first.close()
    second = open_catalog(tree, cache)  # an hour later: every file read again, unchanged
    try:
        assert_fresh(second, tree)
        assert second.stats.quick_start
        assert second.stats.reads == 4
        _add(tmp_path / "memory")  # a change: the entries are adopted, the file saved
        assert_fresh(second, tree)
    finally:
        second.close()
    third = open_catalog(tree, cache)
    try:
        assert_fresh(third, tree)
        assert third.stats.quick_start
        assert third.stats.reads == 0
    finally:
        third.close()


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
