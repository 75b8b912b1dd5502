"""Trees that overlap, lie or explode, and cache paths that are not files (issue 10).

Every test here compares the catalog with a fresh full scan where both apply,
runs both watch modes, and never sleeps: a possible hang is guarded by a
thread join with a timeout, and unblocked by the test itself.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest
import trio

from memrecall.actors import MemoryBlock
from memrecall.events import Scope
from memrecall.sources.catalog import store as catalog_store
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.catalog.store import STALE_TEMPORARY_S, prune_cache_dir
from memrecall.sources.feature_store import FeatureStore
from memrecall.sources.scanner import DiagnosticKind, MemoryTree, scan_tree
from memrecall.testing import open_test_engine

from .test_catalog import HAS_INOTIFY, MODES, assert_fresh, note, write

OLD = time.time() - 10 * STALE_TEMPORARY_S


@pytest.fixture(params=MODES)
def watch(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@contextlib.contextmanager
def catalog_of(tree: MemoryTree, **options: object) -> Iterator[CatalogSource]:
    source = CatalogSource(tree, **options)  # type: ignore[arg-type]
    try:
        yield source
    finally:
        source.close()


def md_files(*directories: Path) -> set[str]:
    """Every topic file below the directories, by real path, without following links."""
    found: set[str] = set()
    for directory in directories:
        for parent, _, names in os.walk(directory):
            found.update(
                os.path.realpath(os.path.join(parent, n))
                for n in names
                if n.endswith(".md") and not os.path.islink(os.path.join(parent, n))
            )
    return found


# -- overlapping roots ----------------------------------------------------------------------


def _equal(base: Path) -> tuple[Path, Path]:
    return base / "m", base / "m"


def _user_inside_project(base: Path) -> tuple[Path, Path]:
    return base / "m", base / "m" / "user"


def _project_inside_user(base: Path) -> tuple[Path, Path]:
    return base / "m" / "project", base / "m"


def _user_is_a_link_to_project(base: Path) -> tuple[Path, Path]:
    (base / "m").mkdir()
    (base / "link").symlink_to(base / "m", target_is_directory=True)
    return base / "m", base / "link"


def _user_is_a_link_into_project(base: Path) -> tuple[Path, Path]:
    (base / "m" / "deep").mkdir(parents=True)
    (base / "link").symlink_to(base / "m" / "deep", target_is_directory=True)
    return base / "m", base / "link"


def _project_links_to_user(base: Path) -> tuple[Path, Path]:
    (base / "p").mkdir()
    (base / "u").mkdir()
    (base / "p" / "to-user").symlink_to(base / "u", target_is_directory=True)
    return base / "p", base / "u"


LAYOUTS: dict[str, Callable[[Path], tuple[Path, Path]]] = {
    "equal": _equal,
    "user-inside-project": _user_inside_project,
    "project-inside-user": _project_inside_user,
    "user-is-a-link-to-project": _user_is_a_link_to_project,
    "user-is-a-link-into-project": _user_is_a_link_into_project,
    "project-links-to-user": _project_links_to_user,
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_overlapping_roots_read_and_deliver_each_file_once(
    tmp_path: Path, layout: str, watch: bool
) -> None:
    project, user = LAYOUTS[layout](tmp_path)
    project.mkdir(parents=True, exist_ok=True)
    user.mkdir(parents=True, exist_ok=True)
    write(project / "deploy.md", note("Deploy runbook", body="deploy the release"), 300)
    write(project / "deep" / "release.md", note("Release notes"), 200)
    write(user / "pref.md", note("User preference", kind="user"), 100)
    write(user / "sub" / "more.md", note("More release docs", kind="user"), 50)
    tree = MemoryTree.of(project=str(project), user=str(user))
    result = scan_tree(tree)
    real = [os.path.realpath(d.path) for d in result.documents]
    assert sorted(real) == sorted(md_files(project, user))  # every file, each once
    assert len({d.path for d in result.documents}) == len(result.documents)
    project_real = os.path.realpath(project)
    for document, where in zip(result.documents, real, strict=True):
        # The project scope wins: a file below the project root is a project memory.
        in_project = where.startswith(project_real + os.sep)
        assert document.scope is (Scope.PROJECT if in_project else Scope.USER)
    with catalog_of(tree, watch=watch) as source:
        assert_fresh(source, tree)
        write(user / "sub" / "new.md", note("New release", kind="user"), 400)
        write(project / "deep" / "release.md", note("Release notes, edited"), 200)
        assert_fresh(source, tree)


async def test_equal_roots_deliver_a_memory_once_through_the_engine(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root / "deploy.md", note("Deploy runbook", body="how to deploy the release"), 300)
    write(root / "deploy-2.md", note("Deploy checklist", body="deploy steps"), 200)
    tree = MemoryTree.of(project=str(root), user=str(root))
    for catalog in (True, False):
        async with open_test_engine(
            tree, catalog=catalog, catalog_cache=None, scan_in_thread=False, scorer="reference"
        ) as engine:
            session = await engine.open_session()
            block = await session.user_query("how do I deploy the release")
            assert block is not None
            assert len(block.paths) == len(set(block.paths)) == 2
            await session.close()


def test_hard_links_to_one_file_are_read_and_delivered_once(tmp_path: Path, watch: bool) -> None:
    project, user = tmp_path / "p", tmp_path / "u"
    first = write(project / "a" / "deploy.md", note("Deploy runbook", body="deploy it"), 300)
    write(project / "other.md", note("Release notes", body="release"), 200)
    (project / "b").mkdir()
    os.link(first, project / "b" / "deploy-again.md")
    user.mkdir()
    os.link(first, user / "deploy-user.md")
    tree = MemoryTree.of(project=str(project), user=str(user))
    result = scan_tree(tree)
    assert sorted(d.title for d in result.documents) == ["Deploy runbook", "Release notes"]
    assert [d.path for d in result.documents if d.title == "Deploy runbook"] == [str(first)]
    assert [(d.path, d.kind) for d in result.diagnostics] == [
        (str(project / "b" / "deploy-again.md"), DiagnosticKind.DUPLICATE_LINK),
        (str(user / "deploy-user.md"), DiagnosticKind.DUPLICATE_LINK),
    ]
    assert all(str(first) in d.detail for d in result.diagnostics)
    cache = tmp_path / "cache" / "catalog.bin"
    with catalog_of(tree, watch=watch, cache_path=cache) as source:
        assert_fresh(source, tree)
        first.unlink()  # the next link in order takes its place
        snapshot = assert_fresh(source, tree)
        assert [d.path for d in snapshot.documents if d.title == "Deploy runbook"] == [
            str(project / "b" / "deploy-again.md")
        ]
        os.link(project / "b" / "deploy-again.md", project / "a" / "deploy.md")
        assert_fresh(source, tree)
    with catalog_of(tree, watch=watch, cache_path=cache) as reopened:  # from the file
        assert reopened.stats.loaded == 0
        assert_fresh(reopened, tree)
        assert reopened.stats.loaded == 4  # every listed file, links included


async def test_hard_links_deliver_a_memory_once_through_the_engine(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    first = write(root / "deploy.md", note("Deploy runbook", body="how to deploy the release"), 300)
    os.link(first, root / "deploy-link.md")
    tree = MemoryTree.of(project=str(root))
    for catalog in (True, False):
        async with open_test_engine(
            tree, catalog=catalog, catalog_cache=None, scan_in_thread=False, scorer="reference"
        ) as engine:
            session = await engine.open_session()
            block = await session.user_query("how do I deploy the release")
            assert block is not None
            # one delivery, of the first path in listing order ("-" sorts before ".")
            assert block.paths == (str(root / "deploy-link.md"),)
            await session.close()


def test_a_root_added_inside_an_earlier_one_later_is_claimed_by_it(
    tmp_path: Path, watch: bool
) -> None:
    user = tmp_path / "u"
    project = user / "later" / "project"
    write(user / "a.md", note("A", kind="user"), 100)
    tree = MemoryTree.of(project=str(project), user=str(user))
    with catalog_of(tree, watch=watch) as source:
        assert_fresh(source, tree)
        write(project / "p.md", note("P"), 200)  # the project root appears inside the user root
        snapshot = assert_fresh(source, tree)
        assert [(d.title, d.scope) for d in snapshot.documents] == [
            ("P", Scope.PROJECT),
            ("A", Scope.USER),
        ]


def test_a_root_released_by_an_earlier_one_is_scanned_again(tmp_path: Path, watch: bool) -> None:
    outside = tmp_path / "outside"
    project = tmp_path / "project"
    user = outside / "user"
    write(project / "p.md", note("P"), 200)
    write(user / "u.md", note("U", kind="user"), 100)
    (project / "shared").symlink_to(outside, target_is_directory=True)
    tree = MemoryTree.of(project=str(project), user=str(user), follow_links=True)
    with catalog_of(tree, watch=watch) as source:
        first = assert_fresh(source, tree)  # the project root claims the user root
        assert {d.scope for d in first.documents} == {Scope.PROJECT}
        (project / "shared").unlink()
        snapshot = assert_fresh(source, tree)
        assert [(d.title, d.scope) for d in snapshot.documents] == [
            ("P", Scope.PROJECT),
            ("U", Scope.USER),
        ]


# -- symlinks ------------------------------------------------------------------------------


def test_a_link_out_of_the_roots_is_one_diagnostic_not_a_walk(tmp_path: Path, watch: bool) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "system"
    for i in range(30):
        write(outside / f"d{i}" / "x.md", b"\xff not a memory")
        write(outside / f"d{i}" / "y.md", note(f"Outside {i}"))
    write(project / "a.md", note("Inside"))
    (project / "usr").symlink_to(outside, target_is_directory=True)
    tree = MemoryTree.of(project=str(project))
    result = scan_tree(tree)
    assert [d.title for d in result.documents] == ["Inside"]
    assert [(d.path, d.kind) for d in result.diagnostics] == [
        (str(project / "usr"), DiagnosticKind.LINK_OUTSIDE_ROOTS)
    ]
    with catalog_of(tree, watch=watch) as source:
        assert_fresh(source, tree)
    following = attrs.evolve(tree, follow_links=True)
    assert len(scan_tree(following).documents) == 31  # opt in: the link is followed
    with catalog_of(following, watch=watch) as source:
        assert_fresh(source, following)


def test_a_link_inside_the_tree_keeps_the_incremental_path(tmp_path: Path) -> None:
    if not HAS_INOTIFY:
        pytest.skip("needs inotify")
    project = tmp_path / "project"
    for d in range(20):
        for f in range(5):
            write(project / f"d{d:02d}" / f"t{f}.md", note(f"T{d}.{f}"), 100 + d)
    (project / "d03" / "shortcut").symlink_to(project / "d07", target_is_directory=True)
    (project / "d04" / "alias.md").symlink_to(project / "d08" / "t1.md")
    tree = MemoryTree.of(project=str(project))
    with catalog_of(tree) as source:
        first = assert_fresh(source, tree)
        assert len(first.documents) == 100  # the linked files are recalled once, by real path
        before = attrs.evolve(source.stats)
        assert source.snapshot() is first
        # No re-validation: nothing listed, nothing stat-ed, no resync of the root.
        assert source.stats.listings == before.listings
        assert source.stats.stats == before.stats
        assert source.stats.resyncs == before.resyncs
        write(project / "d07" / "t2.md", note("Edited through the real path"), 500)
        assert_fresh(source, tree)
        assert source.stats.reads == before.reads + 1
        assert source.stats.listings == before.listings


def test_a_link_whose_target_moves_out_of_the_roots_is_seen(tmp_path: Path, watch: bool) -> None:
    project = tmp_path / "project"
    outside = tmp_path / "outside"
    write(project / "a" / "b" / "in.md", note("In"), 100)
    write(outside / "b" / "out.md", note("Out"), 100)
    write(project / "c" / "c.md", note("C"), 100)
    (project / "c" / "link").symlink_to(project / "a" / "b", target_is_directory=True)
    tree = MemoryTree.of(project=str(project))
    with catalog_of(tree, watch=watch) as source:
        assert_fresh(source, tree)
        (project / "a" / "b" / "in.md").unlink()
        (project / "a" / "b").rmdir()
        (project / "a").rmdir()
        (project / "a").symlink_to(outside, target_is_directory=True)
        snapshot = assert_fresh(source, tree)  # "link" now leads out of the roots
        kinds = {(d.path, d.kind) for d in snapshot.diagnostics}
        assert (str(project / "c" / "link"), DiagnosticKind.LINK_OUTSIDE_ROOTS) in kinds


# -- cache paths that are not regular files --------------------------------------------------


def _run_engine(tree: MemoryTree, cache: Path, unblock: Path) -> tuple[MemoryBlock | None, object]:
    """One recall through a fresh engine in a thread; fails (instead of hanging) if it blocks.

    Returns the block and the engine's document source."""
    answers: list[tuple[MemoryBlock | None, object]] = []

    async def recall() -> None:
        async with open_test_engine(tree, catalog_cache=cache, scan_in_thread=False) as engine:
            session = await engine.open_session()
            answers.append((await session.user_query("how do I deploy"), engine.settings.source))
            await session.close()

    thread = threading.Thread(target=trio.run, args=(recall,), daemon=True)
    thread.start()
    thread.join(timeout=60)
    if thread.is_alive():
        with contextlib.suppress(OSError):  # give the blocked reader an end of file
            os.close(os.open(unblock, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout=60)
        pytest.fail("the engine blocked on a cache path that is not a regular file")
    assert len(answers) == 1
    return answers[0]


@pytest.mark.parametrize("which", ["catalog", "features"])
def test_a_fifo_at_a_cache_path_never_blocks_the_engine(tmp_path: Path, which: str) -> None:
    project = tmp_path / "project"
    write(project / "deploy.md", note("Deploy runbook", body="how to deploy"), 100)
    cache = tmp_path / "cache" / "catalog.bin"
    cache.parent.mkdir()
    fifo = cache if which == "catalog" else Path(f"{cache}.features")
    os.mkfifo(fifo)
    tree = MemoryTree.of(project=str(project))
    block, source = _run_engine(tree, cache, fifo)
    assert block is not None
    assert block.paths == (str(project / "deploy.md"),)
    assert fifo.is_fifo()  # left alone, not replaced
    assert isinstance(source, CatalogSource)  # it keeps the fielded scorer's data itself
    if which == "catalog":
        assert source.stats.load_problem == "not a regular file"
        assert source.cache_path is None
    else:  # the features live in the catalog file: a FIFO beside it is never opened
        assert source.cache_path == str(cache)
        assert source.stats.load_problem is None


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_catalog_path_that_is_not_a_file_turns_persistence_off(tmp_path: Path, kind: str) -> None:
    project = tmp_path / "project"
    write(project / "a.md", note("A"), 100)
    if kind == "fifo":
        cache = tmp_path / "fifo"
        os.mkfifo(cache)
    elif kind == "directory":
        cache = tmp_path / "dir"
        cache.mkdir()
    else:
        cache = Path("/dev/null")
    tree = MemoryTree.of(project=str(project))
    with catalog_of(tree, cache_path=cache) as source:
        assert source.cache_path is None
        assert source.stats.load_problem == "not a regular file"
        documents = source.snapshot().documents
        assert [d.title for d in documents] == ["A"]
        assert source.save() is False
    store = FeatureStore(cache)
    assert len(store.features(documents)) == 1  # analysed in memory, nothing read
    assert store.save(documents) is False  # and nothing written over it
    assert FeatureStore(cache).save(documents) is False  # not even without loading first
    assert not cache.is_file()
    assert not list(cache.parent.glob(".features-*"))


def test_loading_and_saving_refuse_a_fifo_at_the_catalog_path(tmp_path: Path) -> None:
    fifo = tmp_path / "late.bin"
    os.mkfifo(fifo)
    result = catalog_store.load_catalog(str(fifo), [])
    assert isinstance(result, catalog_store.LoadFailure)
    assert result.reason == "not a regular file"
    with pytest.raises(catalog_store.NotARegularFile, match="FIFO"):
        catalog_store.save_catalog(str(fifo), catalog_store.StoredCatalog([], [], [], []))
    assert fifo.is_fifo()


# -- temporary files ---------------------------------------------------------------------------


def _aged(path: Path, data: bytes = b"half written", mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def test_a_killed_cache_write_is_cleaned_up_by_the_next_start(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write(project / "a.md", note("A"), 100)
    cache = tmp_path / "cache" / "catalog.bin"
    killed = [
        _aged(cache.parent / ".catalog-k1ll3d.tmp"),
        _aged(cache.parent / ".features-k1ll3d.tmp"),
        _aged(cache.parent / ".features-abcd1234"),  # the name older versions used
    ]
    in_flight = _aged(cache.parent / ".catalog-writing.tmp", mtime=time.time())
    mine = _aged(cache.parent / "notes.tmp")
    tree = MemoryTree.of(project=str(project))
    with catalog_of(tree, cache_path=cache) as source:
        source.snapshot()
        assert [p for p in killed if p.exists()] == []
    assert in_flight.exists()  # another process may be writing it right now
    assert mine.exists()
    alone = _aged(tmp_path / "features" / ".features-k1ll3d.tmp")
    FeatureStore(tmp_path / "features" / "f.features").features([])
    assert not alone.exists()


def test_a_failed_feature_store_write_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    write(project / "a.md", note("A"), 100)
    documents = scan_tree(MemoryTree.of(project=str(project))).documents
    store = FeatureStore(tmp_path / "cache" / "f.features")
    store.features(documents)

    def refuse(source: str, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    assert store.save(documents) is False
    assert list((tmp_path / "cache").iterdir()) == []


def test_pruning_the_cache_directory_covers_feature_files_and_their_temporaries(
    tmp_path: Path,
) -> None:
    month = time.time() - 31 * 24 * 3600
    stale = [
        _aged(tmp_path / "catalog-0123.bin", mtime=month),
        _aged(tmp_path / "catalog-0123.bin.features", mtime=month),
        _aged(tmp_path / ".features-abcd1234"),
        _aged(tmp_path / ".features-x.tmp"),
        _aged(tmp_path / ".catalog-x.tmp"),
    ]
    fresh = [
        _aged(tmp_path / "catalog-4567.bin.features", mtime=time.time()),
        _aged(tmp_path / ".features-y.tmp", mtime=time.time()),
        _aged(tmp_path / "other.features", mtime=month),
    ]
    removed = prune_cache_dir(str(tmp_path))
    assert sorted(removed) == sorted(map(str, stale))
    assert all(p.exists() for p in fresh)
