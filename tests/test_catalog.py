"""The catalog gives what a fresh full scan gives, after every kind of change to a real tree.

Each test runs with inotify (``watch=True``) and with the stat fallback
(``watch=False``). Mtimes are set explicitly with ``os.utime``; nothing sleeps.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest
import trio
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    multiple,
    rule,
)

from memrecall.actors import SimulatedSelector, open_engine
from memrecall.engine.scoring.candidates import RecallCandidates
from memrecall.engine.scoring.reference import ReferenceIndex
from memrecall.sources.catalog import watch as catalog_watch
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.scanner import MemoryTree, scan_tree
from memrecall.sources.source import RankedSource, ScorerName, Snapshot, TreeSource, prepare_recall
from memrecall.testing import open_test_engine

HAS_INOTIFY = catalog_watch.open_watcher() is not None
MODES = [
    pytest.param(True, id="inotify", marks=pytest.mark.skipif(not HAS_INOTIFY, reason="Linux")),
    pytest.param(False, id="stat"),
]
QUERIES = ("deploy the release", "部署 流程 preference", "dashboard ticket docs")


def note(title: str, body: str = "body", kind: str = "project", description: str = "d") -> str:
    return f"---\nname: {title}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


def write(path: Path, text: str | bytes, mtime: float = 1_000_000.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


class FreshScan:
    """What a recall would see without a catalog."""

    def __init__(self, tree: MemoryTree) -> None:
        self.tree = tree

    def snapshot(self) -> Snapshot:
        result = scan_tree(self.tree)
        return Snapshot(result.documents, ReferenceIndex.of(result.documents), result.diagnostics)


def recall(
    source: CatalogSource | FreshScan | RankedSource, query: str, **options: object
) -> RecallCandidates:
    return prepare_recall(source, query, **options)  # type: ignore[arg-type]


def assert_fresh(source: CatalogSource, tree: MemoryTree) -> Snapshot:
    """The catalog's snapshot is the full scan's, and recalls over it agree (both ranked
    with the catalog's scorer; a fresh scan's ``fielded`` index is built from scratch)."""
    snapshot = source.snapshot()
    expected = scan_tree(tree)
    assert snapshot.documents == expected.documents
    assert snapshot.diagnostics == expected.diagnostics
    fresh: FreshScan | RankedSource = FreshScan(tree)
    if source.scorer == "fielded":
        fresh = RankedSource(fresh)
    paths = [d.path for d in expected.documents[:2]]
    for query in QUERIES:
        assert recall(source, query) == recall(fresh, query)
        assert recall(source, query, excluded_paths=paths, recent_tools=("Bash",)) == recall(
            fresh, query, excluded_paths=paths, recent_tools=("Bash",)
        )
    return snapshot


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, MemoryTree]:
    project = tmp_path / "memory" / "project"
    user = tmp_path / "memory" / "user"
    project.mkdir(parents=True)
    user.mkdir(parents=True)
    return project, user, MemoryTree.of(project=str(project), user=str(user))


@pytest.fixture(params=MODES)
def watch(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture(params=["reference", "fielded"])
def scorer(request: pytest.FixtureRequest) -> ScorerName:
    name: ScorerName = request.param
    return name


@pytest.fixture
def source(
    roots: tuple[Path, Path, MemoryTree], watch: bool, scorer: ScorerName
) -> Iterator[CatalogSource]:
    catalog = CatalogSource(roots[2], watch=watch, scorer=scorer)
    yield catalog
    catalog.close()


def test_first_snapshot_is_the_full_scan_with_every_diagnostic(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, user, tree = roots
    write(project / "a.md", note("Alpha deploy"), 300)
    write(project / "deep" / "er" / "b.md", note("Beta release", kind="reference"), 200)
    write(project / "MEMORY.md", note("Index"))
    write(project / "notes.txt", note("Text"))
    write(project / "bad.md", "no frontmatter here")
    write(project / "bom.md", "\ufeff" + note("Bom"))
    write(project / "latin1.md", note("Caf\xe9").encode("latin-1"))
    write(project / "huge.md", note("Huge", body="x" * (1024 * 1024)))
    (project / "dangling.md").symlink_to(project / "nowhere.md")
    write(user / "u.md", note("User pref", kind="user"), 999)
    snapshot = assert_fresh(source, tree)
    assert len(snapshot.documents) == 4
    assert {d.kind.value for d in snapshot.diagnostics} >= {
        "no_frontmatter",
        "invalid_utf8",
        "too_large",
        "broken_link",
    }


def test_same_size_edit_with_the_mtime_put_back_is_seen(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, _, tree = roots
    path = write(project / "a.md", note("Alpha", body="the word is apple"), 500)
    assert_fresh(source, tree)
    write(path, note("Alpha", body="the word is mango"), 500)
    assert path.stat().st_mtime == 500
    snapshot = assert_fresh(source, tree)
    assert "mango" in snapshot.documents[0].body


def test_an_editor_style_atomic_save_is_seen(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, _, tree = roots
    path = write(project / "a.md", note("Alpha", body="first"), 500)
    write(project / "b.md", note("Beta"), 400)
    assert_fresh(source, tree)
    temporary = write(project / ".a.md.swp", note("Alpha", body="second version"), 500)
    os.replace(temporary, path)
    snapshot = assert_fresh(source, tree)
    assert snapshot.documents[0].body == "second version"


def test_new_deleted_and_renamed_files(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, user, tree = roots
    write(project / "a.md", note("Alpha"), 100)
    write(project / "b.md", note("Beta"), 200)
    assert_fresh(source, tree)
    write(user / "c.md", note("Gamma"), 300)
    (project / "a.md").unlink()
    (project / "b.md").rename(project / "renamed.md")
    snapshot = assert_fresh(source, tree)
    assert [d.relative_path for d in snapshot.documents] == ["renamed.md", "c.md"]
    (project / "renamed.md").rename(project / "renamed.txt")
    assert [d.relative_path for d in assert_fresh(source, tree).documents] == ["c.md"]


def test_directories_created_moved_and_deleted(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, user, tree = roots
    write(project / "d" / "e" / "x.md", note("Ex deploy"), 100)
    write(project / "d" / "y.md", note("Why"), 200)
    assert_fresh(source, tree)
    write(project / "new" / "deeper" / "z.md", note("Zed"), 300)
    assert_fresh(source, tree)
    (project / "d").rename(project / "moved")
    snapshot = assert_fresh(source, tree)
    assert "moved/e/x.md" in [d.relative_path for d in snapshot.documents]
    (project / "moved").rename(user / "from-project")
    assert_fresh(source, tree)
    shutil.rmtree(user / "from-project")
    shutil.rmtree(project / "new")
    assert assert_fresh(source, tree).documents == ()


def test_mtime_only_touches_reorder(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, _, tree = roots
    write(project / "a.md", note("Alpha"), 100)
    write(project / "b.md", note("Beta"), 200)
    assert [d.title for d in assert_fresh(source, tree).documents] == ["Beta", "Alpha"]
    os.utime(project / "a.md", (300, 300))
    assert [d.title for d in assert_fresh(source, tree).documents] == ["Alpha", "Beta"]


def test_permission_changes(roots: tuple[Path, Path, MemoryTree], source: CatalogSource) -> None:
    project, _, tree = roots
    path = write(project / "sub" / "a.md", note("Alpha"), 100)
    assert_fresh(source, tree)
    try:
        path.chmod(0)
        assert_fresh(source, tree)  # root may still read it; either way as a fresh scan
        (project / "sub").chmod(0)
        assert_fresh(source, tree)
    finally:
        (project / "sub").chmod(0o755)
        path.chmod(0o644)
    assert_fresh(source, tree)


def test_roots_that_vanish_and_come_back(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, user, tree = roots
    write(user / "u.md", note("User"), 100)
    assert_fresh(source, tree)
    shutil.rmtree(user)
    assert [d.kind.value for d in assert_fresh(source, tree).diagnostics] == ["missing_root"]
    write(user / "again.md", note("Again"), 100)
    assert [d.title for d in assert_fresh(source, tree).documents] == ["Again"]
    (user.parent).rename(user.parent.parent / "renamed-memory")
    assert len(assert_fresh(source, tree).diagnostics) == 2
    (user.parent.parent / "renamed-memory").rename(user.parent)
    assert [d.title for d in assert_fresh(source, tree).documents] == ["Again"]
    shutil.rmtree(project)
    project.write_text("not a directory")
    assert_fresh(source, tree)


def test_a_root_missing_from_the_start_is_picked_up(tmp_path: Path, watch: bool) -> None:
    tree = MemoryTree.of(project=str(tmp_path / "later" / "project"))
    catalog = CatalogSource(tree, watch=watch)
    try:
        assert_fresh(catalog, tree)
        write(tmp_path / "later" / "project" / "a.md", note("Late"), 100)
        assert [d.title for d in assert_fresh(catalog, tree).documents] == ["Late"]
    finally:
        catalog.close()


@pytest.mark.parametrize("follow", [False, True], ids=["unfollowed", "followed"])
def test_symlinks_in_the_tree_are_kept_fresh(
    tmp_path: Path, roots: tuple[Path, Path, MemoryTree], watch: bool, follow: bool
) -> None:
    project, _, tree = roots
    tree = attrs.evolve(tree, follow_links=follow)
    source = CatalogSource(tree, watch=watch)
    outside = tmp_path / "outside"
    target = write(outside / "t.md", note("Target", body="one"), 100)
    (project / "link.md").symlink_to(target)
    (project / "linked-dir").symlink_to(outside, target_is_directory=True)
    (project / "loop").symlink_to(project, target_is_directory=True)
    try:
        first = assert_fresh(source, tree)
        assert ("Target" in {d.title for d in first.documents}) == follow
        write(target, note("Target", body="two"), 100)
        write(outside / "extra.md", note("Extra"), 50)
        assert_fresh(source, tree)
        (project / "linked-dir").unlink()  # the link now points into the tree
        (project / "linked-dir").symlink_to(project, target_is_directory=True)
        assert_fresh(source, tree)
    finally:
        source.close()


def test_a_hard_linked_file_changed_through_another_link(
    tmp_path: Path, roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, _, tree = roots
    outside = write(tmp_path / "elsewhere.md", note("Shared", body="before"), 100)
    os.link(outside, project / "shared.md")
    assert_fresh(source, tree)
    with open(outside, "r+b") as handle:  # same size, same mtime afterwards
        data = handle.read().replace(b"before", b"after!")
        handle.seek(0)
        handle.write(data)
    os.utime(outside, (100, 100))
    assert "after!" in assert_fresh(source, tree).documents[0].body


def test_only_changed_files_are_read_again(tmp_path: Path) -> None:
    if not HAS_INOTIFY:
        pytest.skip("needs inotify")
    project = tmp_path / "project"
    for i in range(50):
        write(project / "r" / f"t{i:02d}.md", note(f"T{i}"), 100 + i)
    tree = MemoryTree.of(project=str(project))
    catalog = CatalogSource(tree)
    try:
        assert_fresh(catalog, tree)
        reads = catalog.stats.reads
        first = catalog.snapshot()
        assert catalog.snapshot() is first  # nothing changed: the same snapshot
        write(project / "r" / "t07.md", note("T7 edited"), 107)
        temporary = write(project / "r" / ".t08.tmp", note("T8 saved"), 108)
        os.replace(temporary, project / "r" / "t08.md")
        assert_fresh(catalog, tree)
        assert catalog.stats.reads == reads + 2
        assert catalog.stats.stats == 0
    finally:
        catalog.close()


def test_without_events_unchanged_files_are_only_stat_ed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for i in range(20):
        write(project / f"t{i:02d}.md", note(f"T{i}"), 100 + i)
    tree = MemoryTree.of(project=str(project))
    # A clock an hour ahead: every file looks long settled, so the signature decides.
    catalog = CatalogSource(tree, watch=False, clock=lambda: time.time_ns() + 3_600 * 10**9)
    try:
        assert_fresh(catalog, tree)
        reads = catalog.stats.reads
        assert_fresh(catalog, tree)
        assert catalog.stats.reads == reads
        write(project / "t03.md", note("T3 longer title"), 103)  # size differs
        os.utime(project / "t04.md", (999, 999))  # mtime differs
        os.rename(project / "t05.md", project / "t05.tmp")
        write(project / "t05.md", note("T5"), 105)  # same everything but the inode
        assert_fresh(catalog, tree)
        assert catalog.stats.reads == reads + 3
    finally:
        catalog.close()


def test_a_file_changed_within_two_seconds_of_its_read_is_read_again(tmp_path: Path) -> None:
    # A same-size edit in the same timestamp tick leaves the signature unchanged; the
    # only defence is to distrust a signature that is younger than the suspect window.
    project = tmp_path / "project"
    write(project / "a.md", note("Alpha"), 100)  # its ctime is now
    tree = MemoryTree.of(project=str(project))
    fresh = CatalogSource(tree, watch=False)
    settled = CatalogSource(tree, watch=False, clock=lambda: time.time_ns() + 3_600 * 10**9)
    try:
        for catalog, extra in ((fresh, 1), (settled, 0)):
            catalog.snapshot()
            reads = catalog.stats.reads
            catalog.snapshot()
            assert catalog.stats.reads == reads + extra
    finally:
        fresh.close()
        settled.close()


def test_queue_overflow_falls_back_to_a_full_revalidation(tmp_path: Path) -> None:
    if not HAS_INOTIFY:
        pytest.skip("needs inotify")
    project = tmp_path / "project"
    a = write(project / "a.md", note("Alpha", body="apple"), 100)
    b = write(project / "b.md", note("Beta"), 200)
    tree = MemoryTree.of(project=str(project))
    catalog = CatalogSource(tree)
    try:
        assert_fresh(catalog, tree)
        limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        for i in range(limit // 2 + 10):  # alternate, so the kernel cannot merge events
            os.utime(a, (i, 100))
            os.utime(b, (i, 200))
        write(a, note("Alpha", body="mango"), 100)
        assert "mango" in assert_fresh(catalog, tree).documents[1].body
        assert catalog.stats.overflows == 1
    finally:
        catalog.close()


def test_concurrent_snapshots_from_many_threads(
    roots: tuple[Path, Path, MemoryTree], source: CatalogSource
) -> None:
    project, _, tree = roots
    for i in range(30):
        write(project / f"t{i}.md", note(f"T{i} deploy"), 100 + i)
    write(project / "late.md", note("Late"), 999)
    expected = scan_tree(tree).documents
    results: list[Sequence[object]] = []

    def worker() -> None:
        for _ in range(5):
            results.append(source.snapshot().documents)
            recall(source, "deploy")

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r == expected for r in results)
    assert len(results) == 30


async def test_open_engine_uses_the_catalog_by_default_and_persists_it(
    tmp_path: Path, roots: tuple[Path, Path, MemoryTree]
) -> None:
    project, _, tree = roots
    write(project / "a.md", note("Deploy runbook", body="how to deploy"), 100)
    cache = tmp_path / "cache" / "catalog.bin"
    selector = SimulatedSelector(latency=0.0, choose=lambda request: [])
    # The scan runs inline (not in a worker thread) so the fast result is consumed before
    # the 100 ms deadline however slow the machine is: this test is about the catalog.
    async with open_test_engine(
        tree, selector=selector, catalog_cache=cache, scan_in_thread=False
    ) as engine:
        source = engine.settings.source
        assert isinstance(source, CatalogSource)  # it keeps the default scorer's data itself
        assert source.scorer == "fielded"
        session = await engine.open_session()
        block = await session.user_query("how do I deploy")
        assert block is not None
        assert block.paths == (str(project / "a.md"),)
        await session.close()
        # a memory written while the engine runs is recalled by the next turn
        write(project / "b.md", note("Canary rollout", body="the canary rollout plan"), 200)
        session = await engine.open_session()
        block = await session.user_query("the canary rollout")
        assert block is not None
        assert block.paths == (str(project / "b.md"),)
        await session.close()
    assert cache.exists()
    async with open_engine(tree, catalog=False, scorer="reference") as engine:
        assert isinstance(engine.settings.source, TreeSource)
    async with open_engine(tree, catalog_cache=None, scorer="reference") as engine:
        assert isinstance(engine.settings.source, CatalogSource)
        assert engine.settings.source.cache_path is None
    await trio.lowlevel.checkpoint()


# -- the stateful comparison --------------------------------------------------------------

VOCABULARY = ["deploy", "release", "the", "other", "部署", "流程", "preference", "docs"]
TYPES = ["project", "user", "feedback", "reference", "nonsense"]
NAMES = ["a.md", "b.md", "c.md", "MEMORY.md", "d.txt"]
DIRECTORIES = ["x", "y", "z"]
MTIMES = [1_000_000.0, 1_000_000.5, 2_000_000.0]

contents = st.one_of(
    st.builds(
        note,
        title=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=3).map(" ".join),
        body=st.lists(st.sampled_from(VOCABULARY), max_size=5).map(" ".join),
        kind=st.sampled_from(TYPES),
        description=st.sampled_from(VOCABULARY),
    ),
    st.sampled_from(["", "no frontmatter", "\ufeff" + note("bom")]),
    st.just(b"---\nname: bad \xff\ntype: user\n---\nbody\n"),
)


class CatalogMachine(RuleBasedStateMachine):
    """Random file operations on a real tree; every recall equals a fresh full scan."""

    watch = True
    scorer: ScorerName = "reference"
    files = Bundle("files")
    directories = Bundle("directories")

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="memrecall-catalog-"))
        self.roots = [self.base / "project", self.base / "user"]
        for root in self.roots:
            root.mkdir()
        self.tree = MemoryTree.of(project=str(self.roots[0]), user=str(self.roots[1]))
        self.cache = self.base / "cache" / "catalog.bin"
        self.source = self._open()

    def _open(self) -> CatalogSource:
        return CatalogSource(self.tree, cache_path=self.cache, watch=self.watch, scorer=self.scorer)

    def teardown(self) -> None:
        self.source.close()
        shutil.rmtree(self.base, ignore_errors=True)

    @initialize(target=directories)
    def the_roots(self) -> object:
        return multiple(*self.roots)

    @rule(target=directories, parent=directories, name=st.sampled_from(DIRECTORIES))
    def make_directory(self, parent: Path, name: str) -> Path:
        path = parent / name
        if parent.is_dir() and not path.exists():
            path.mkdir(parents=True)
        return path

    @rule(
        target=files,
        directory=directories,
        name=st.sampled_from(NAMES),
        content=contents,
        mtime=st.sampled_from(MTIMES),
    )
    def create(self, directory: Path, name: str, content: str | bytes, mtime: float) -> Path:
        path = directory / name
        if directory.is_dir() and not path.is_dir():
            write(path, content, mtime)
        return path

    @rule(path=files)
    def edit_same_size_same_mtime(self, path: Path) -> None:
        if not path.is_file() or not os.access(path, os.R_OK | os.W_OK):
            return
        info = path.stat()
        data = bytearray(path.read_bytes())
        for i, byte in enumerate(data):
            if chr(byte).isalpha():  # an ASCII letter: flip its case, keeping the length
                data[i] = ord(chr(byte).swapcase())
                break
        path.write_bytes(bytes(data))
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))

    @rule(path=files, content=contents, mtime=st.sampled_from(MTIMES))
    def atomic_save(self, path: Path, content: str | bytes, mtime: float) -> None:
        if path.parent.is_dir() and not path.is_dir():
            temporary = write(path.parent / (path.name + ".tmp"), content, mtime)
            os.replace(temporary, path)

    @rule(target=files, path=consumes(files), directory=directories, name=st.sampled_from(NAMES))
    def rename(self, path: Path, directory: Path, name: str) -> Path:
        destination = directory / name
        if path.is_file() and directory.is_dir() and not destination.is_dir():
            os.replace(path, destination)
        return destination

    @rule(path=files)
    def delete(self, path: Path) -> None:
        if path.is_file():
            path.unlink()

    @rule(path=files, mtime=st.sampled_from(MTIMES))
    def touch(self, path: Path, mtime: float) -> None:
        if path.is_file():
            os.utime(path, (mtime, mtime))

    @rule(path=st.one_of(files, directories), mode=st.sampled_from([0o600, 0o644, 0o000]))
    def change_mode(self, path: Path, mode: int) -> None:
        if path.is_file():
            path.chmod(mode)
        elif path.is_dir():
            path.chmod(mode | 0o700)

    @rule(
        target=directories,
        source=consumes(directories),
        parent=directories,
        name=st.sampled_from(DIRECTORIES),
    )
    def move_directory(self, source: Path, parent: Path, name: str) -> Path:
        destination = parent / name
        movable = source.is_dir() and source not in self.roots and parent.is_dir()
        if movable and not destination.exists() and source not in destination.parents:
            source.rename(destination)
            return destination
        return source

    @rule(directory=directories)
    def delete_directory(self, directory: Path) -> None:
        if directory.is_dir() and not directory.is_symlink() and directory != self.roots[0]:
            shutil.rmtree(directory)

    @rule(
        link=st.sampled_from(["l.md", "ld"]),
        directory=directories,
        pointee=st.one_of(files, directories),
    )
    def symlink(self, link: str, directory: Path, pointee: Path) -> None:
        path = directory / link
        if directory.is_dir() and not os.path.lexists(path):
            path.symlink_to(pointee)

    @rule()
    def recreate_user_root(self) -> None:
        if not os.path.lexists(self.roots[1]):
            self.roots[1].mkdir()

    @rule()
    def reopen_from_the_cache_file(self) -> None:
        self.source.close()
        self.source = self._open()

    @rule()
    def check_recall(self) -> None:
        assert_fresh(self.source, self.tree)


class PollingCatalogMachine(CatalogMachine):
    watch = False


class FieldedCatalogMachine(CatalogMachine):
    """The same, with the catalog keeping the ``fielded`` pool incrementally: every
    recall equals one ranked by a ``fielded`` index built from scratch."""

    scorer: ScorerName = "fielded"


_profile = settings.default
_examples = max(10, (_profile.max_examples if _profile is not None else 60) // 3)
_stateful = settings(max_examples=_examples, stateful_step_count=30, deadline=None)
CatalogMachine.TestCase.settings = _stateful
PollingCatalogMachine.TestCase.settings = _stateful
FieldedCatalogMachine.TestCase.settings = _stateful
TestCatalogMachine = pytest.mark.skipif(not HAS_INOTIFY, reason="needs inotify")(
    CatalogMachine.TestCase
)
TestPollingCatalogMachine = PollingCatalogMachine.TestCase
TestFieldedCatalogMachine = pytest.mark.skipif(not HAS_INOTIFY, reason="needs inotify")(
    FieldedCatalogMachine.TestCase
)


def test_a_catalog_dropped_without_close_releases_its_inotify_instance(tmp_path: Path) -> None:
    if not HAS_INOTIFY:
        pytest.skip("needs inotify")
    gc.collect()  # descriptors of earlier tests' objects are not this test's to count
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        CatalogSource(MemoryTree.of(project=str(tmp_path))).snapshot()
    gc.collect()
    assert len(os.listdir("/proc/self/fd")) == before


def test_preloading_a_fielded_catalog_reads_the_turn_model(tmp_path: Path) -> None:
    from memrecall.sources.turn_reader import default_turns

    tree = MemoryTree.of(project=str(tmp_path / "project"))
    write(tmp_path / "project" / "a.md", note("Guest Wi-Fi"), 100)
    catalog = CatalogSource(tree, watch=False, scorer="fielded")
    reader = default_turns()
    default_turns.cache_clear()
    try:
        catalog.preload()
        assert default_turns.cache_info().currsize == 1  # the first turn finds it read
        assert type(default_turns()) is type(reader)
    finally:
        catalog.close()
