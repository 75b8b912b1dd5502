"""The catalog file: a new process starts warm; a bad file is reported, rebuilt, never trusted."""

from __future__ import annotations

import logging
import os
import struct
import time
from pathlib import Path

import msgspec
import pytest

from memrecall.sources.cachefile import HEADER
from memrecall.sources.catalog import store as catalog_store
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.catalog.store import (
    MAGIC,
    LoadFailure,
    default_cache_path,
    load_catalog,
)
from memrecall.sources.scanner import MemoryTree, scan_tree
from memrecall.sources.source import ScorerName

from .test_catalog import assert_fresh, note, write

AN_HOUR = 3_600 * 10**9


def settled_clock() -> int:
    """A clock an hour ahead: the files written by a test look long settled."""
    return time.time_ns() + AN_HOUR


@pytest.fixture
def tree(tmp_path: Path) -> MemoryTree:
    project = tmp_path / "memory" / "project"
    user = tmp_path / "memory" / "user"
    write(project / "a.md", note("Alpha deploy", body="apple"), 100)
    write(project / "sub" / "b.md", note("Beta release", kind="reference"), 200)
    write(project / "bad.md", "no frontmatter")
    write(user / "c.md", note("Gamma preference", kind="user"), 300)
    return MemoryTree.of(project=str(project), user=str(user))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "catalog.bin"


def tree_bytes(tree: MemoryTree) -> dict[str, tuple[bytes, int]]:
    out = {}
    for root in tree.roots:
        for directory, _, names in os.walk(root.path):
            for name in names:
                path = os.path.join(directory, name)
                out[path] = (Path(path).read_bytes(), os.stat(path).st_mtime_ns)
    return out


def build(tree: MemoryTree, cache: Path) -> None:
    catalog = CatalogSource(tree, cache_path=cache, clock=settled_clock)
    catalog.snapshot()
    catalog.close()
    assert cache.exists()


def test_a_new_process_starts_warm_and_reads_nothing_unchanged(
    tree: MemoryTree, cache: Path
) -> None:
    before = tree_bytes(tree)
    build(tree, cache)
    warm = CatalogSource(tree, cache_path=cache)
    try:
        assert_fresh(warm, tree)
        assert warm.stats.loaded == 4
        assert warm.stats.reads == 0
        assert warm.stats.stats == 4
        assert warm.stats.load_problem is None
    finally:
        warm.close()
    assert tree_bytes(tree) == before  # the memory files are never written


def test_a_stale_file_is_validated_entry_by_entry(tree: MemoryTree, cache: Path) -> None:
    build(tree, cache)
    project = Path(tree.roots[0].path)
    user = Path(tree.roots[1].path)
    a = project / "a.md"
    info = a.stat()
    a.write_text(note("Alpha deploy", body="mango"))  # same size
    os.utime(a, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same mtime
    (project / "sub" / "b.md").unlink()
    write(user / "new.md", note("New"), 400)
    os.utime(user / "c.md", (50, 50))
    warm = CatalogSource(tree, cache_path=cache)
    try:
        snapshot = assert_fresh(warm, tree)
        assert "mango" in next(d.body for d in snapshot.documents if d.title == "Alpha deploy")
        assert warm.stats.stale_on_load == 3  # a.md and c.md re-read, b.md gone
    finally:
        warm.close()


def corrupt(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x55
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: corrupt(p, len(MAGIC) + HEADER.size + 20), "corrupt"),
        (lambda p: p.write_bytes(p.read_bytes()[:-100]), "truncated"),
        (lambda p: p.write_bytes(p.read_bytes()[: len(MAGIC) + 3]), "truncated"),
        (lambda p: p.write_bytes(b"garbage, not a catalog"), "not a catalog file"),
        (lambda p: p.write_bytes(b""), "not a catalog file"),
        (
            lambda p: p.write_bytes(
                MAGIC + struct.pack("<I", 999) + p.read_bytes()[len(MAGIC) + 4 :]
            ),
            "foreign version",
        ),
    ],
    ids=["bit-flip", "truncated", "cut-header", "garbage", "empty", "foreign-version"],
)
def test_a_damaged_file_is_reported_and_rebuilt(
    tree: MemoryTree,
    cache: Path,
    caplog: pytest.LogCaptureFixture,
    damage: object,
    reason: str,
) -> None:
    build(tree, cache)
    damage(cache)  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger="memrecall.catalog"):
        catalog = CatalogSource(tree, cache_path=cache)
        try:
            assert_fresh(catalog, tree)
            assert catalog.stats.load_problem == reason
            assert catalog.stats.loaded == 0
        finally:
            catalog.close()
    assert reason in caplog.text
    assert "rebuilding" in caplog.text
    roots = [(r.scope.value, r.path) for r in tree.roots]
    assert isinstance(load_catalog(str(cache), roots), catalog_store.StoredCatalog)


def test_a_file_from_other_code_or_for_other_roots_is_not_used(
    tree: MemoryTree, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tree, cache)
    roots = [(r.scope.value, r.path) for r in tree.roots]
    assert load_catalog(str(cache), roots[:1]) == LoadFailure(
        "other tree", "written for other memory roots"
    )
    monkeypatch.setattr(catalog_store, "code_fingerprint", lambda: "another parser")
    failure = load_catalog(str(cache), roots)
    assert isinstance(failure, LoadFailure)
    assert failure.reason == "other code"
    catalog = CatalogSource(tree, cache_path=cache)
    try:
        assert_fresh(catalog, tree)
        assert catalog.stats.load_problem == "other code"
    finally:
        catalog.close()


def test_a_missing_file_is_silently_a_cold_start(tree: MemoryTree, cache: Path) -> None:
    catalog = CatalogSource(tree, cache_path=cache)
    try:
        assert_fresh(catalog, tree)
        assert catalog.stats.load_problem is None
        assert catalog.stats.loaded == 0
    finally:
        catalog.close()
    assert cache.exists()


def test_a_cache_path_inside_a_memory_root_is_refused(
    tree: MemoryTree, caplog: pytest.LogCaptureFixture
) -> None:
    inside = Path(tree.roots[0].path) / "sub" / "catalog.bin"
    before = tree_bytes(tree)
    with caplog.at_level(logging.WARNING, logger="memrecall.catalog"):
        catalog = CatalogSource(tree, cache_path=inside)
    assert catalog.cache_path is None
    assert "inside memory root" in caplog.text
    assert_fresh(catalog, tree)
    catalog.close()
    assert not inside.exists()
    assert tree_bytes(tree) == before


def test_default_cache_path_follows_xdg_and_is_keyed_by_the_roots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [("project", "/p"), ("user", "/u")]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = default_cache_path(roots)
    assert path.startswith(str(tmp_path / "xdg" / "memrecall") + os.sep)
    assert default_cache_path(roots) == path
    assert default_cache_path(roots[:1]) != path
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path(roots).startswith(
        str(tmp_path / "home" / ".cache" / "memrecall") + os.sep
    )


def test_saving_is_atomic_and_private(tree: MemoryTree, cache: Path) -> None:
    build(tree, cache)
    assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # no temporary left
    assert cache.stat().st_mode & 0o077 == 0
    assert scan_tree(tree).documents  # sanity: the tree is intact


def test_a_verified_but_inconsistent_file_is_still_refused(
    tree: MemoryTree, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    build(tree, cache)
    roots = [(r.scope.value, r.path) for r in tree.roots]
    stored = load_catalog(str(cache), roots)
    assert isinstance(stored, catalog_store.StoredCatalog)
    first, second, *rest = [e for e in stored.entries if e.slot >= 0]
    broken = msgspec.structs.replace(
        stored,
        entries=[first, msgspec.structs.replace(second, slot=first.slot), *rest],
    )
    catalog_store.save_catalog(str(cache), broken)
    with caplog.at_level(logging.WARNING, logger="memrecall.catalog"):
        catalog = CatalogSource(tree, cache_path=cache)
        try:
            assert_fresh(catalog, tree)
            assert catalog.stats.load_problem == "corrupt"
        finally:
            catalog.close()
    assert "slots are not unique" in caplog.text


def test_a_damaged_document_is_read_from_the_tree_and_the_file_not_kept(
    tree: MemoryTree, cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The documents follow the checksummed payload and are checked one by one when
    read: a bad one is never used (the topic file is read instead) nor copied."""
    build(tree, cache)
    corrupt(cache, -20)  # inside the last stored document
    with caplog.at_level(logging.WARNING, logger="memrecall.catalog"):
        catalog = CatalogSource(tree, cache_path=cache)
        try:
            assert_fresh(catalog, tree)  # reads every document, the damaged one too
            assert catalog.stats.loaded > 0
        finally:
            catalog.close()
    assert "does not verify" in caplog.text
    assert not cache.exists()
    again = CatalogSource(tree, cache_path=cache)
    try:
        assert_fresh(again, tree)
        assert again.stats.loaded == 0
    finally:
        again.close()
    assert cache.exists()


def test_the_default_directory_forgets_catalogs_untouched_for_a_month(
    tree: MemoryTree, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    directory = Path(catalog_store.default_cache_dir())
    old = write(directory / "catalog-0123456789abcdef01234567.bin", b"old")
    crashed = write(directory / ".catalog-x.tmp", b"half")
    recent = write(directory / "catalog-recent.bin", b"new", time.time())
    keep = write(directory / "notes.txt", b"not ours")
    roots = [(r.scope.value, r.path) for r in tree.roots]
    catalog = CatalogSource(tree, cache_path=default_cache_path(roots))
    catalog.snapshot()
    catalog.close()
    assert not old.exists()
    assert not crashed.exists()
    assert recent.exists()
    assert keep.exists()
    assert Path(default_cache_path(roots)).exists()


@pytest.mark.parametrize("scorer", ["fielded", "reference"])
def test_a_large_file_is_decoded_in_chunks_with_checkpoints_between(
    tmp_path: Path, cache: Path, scorer: ScorerName
) -> None:
    project = tmp_path / "memory" / "project"
    files = 3 * catalog_store.DECODE_CHUNK + 1
    for i in range(files):
        write(project / f"t{i}.md", note(f"Topic {i}", body=f"body {i}"), 100 + i)
    tree = MemoryTree.of(project=str(project))
    catalog = CatalogSource(tree, cache_path=cache, clock=settled_clock, scorer=scorer)
    catalog.snapshot()
    catalog.close()
    pauses: list[int] = []
    roots = [(root.scope.value, root.path) for root in tree.roots]
    loaded = load_catalog(
        str(cache), roots, scorer=scorer, checkpoint=lambda: pauses.append(len(pauses))
    )
    assert isinstance(loaded, catalog_store.StoredCatalog)
    assert len(loaded.entries) == files
    assert len(pauses) >= files // catalog_store.DECODE_CHUNK + 1
    # the scorer is part of the file: the other scorer's catalog rebuilds instead
    other: ScorerName = "reference" if scorer == "fielded" else "fielded"
    refused = load_catalog(str(cache), roots, scorer=other)
    assert isinstance(refused, LoadFailure)
    assert refused.reason == "other scorer"
