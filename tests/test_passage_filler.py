"""The catalog embeds passages after its snapshot is out (memrecall.sources.catalog.passage_filler).

A fake embedder stands in for the model (the vector says which text it was given), so these
run everywhere; the catalog queues passages only where a passage embedder exists, which the
tests arrange by patching the two places that ask for one.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import PassageEmbedder, passage_text
from memrecall.engine.scoring.text import body_text
from memrecall.sources.catalog import entries as entries_module
from memrecall.sources.catalog import passage_filler
from memrecall.sources.catalog import source as source_module
from memrecall.sources.catalog.source import CatalogSource
from memrecall.sources.scanner import MemoryTree
from memrecall.sources.source import Snapshot

from .test_catalog import HAS_INOTIFY
from .test_catalog_store import settled_clock


def _vector(text: str) -> list[float]:
    """What the fake model gives a text: its length and a checksum of it."""
    return [float(len(text)), float(zlib.crc32(text.encode("utf-8")) % (1 << 24))]  # exact in f32


class _Model:
    """A passage embedder that counts its calls and can hold them until released."""

    def __init__(self, *, hold_after: int | None = None) -> None:
        self.calls: list[str] = []
        self.hold_after = hold_after
        self.holding = threading.Event()
        self.release = threading.Event()
        if hold_after is None:
            self.release.set()

    def __call__(self, text: str) -> Sequence[float]:
        if self.hold_after is not None and len(self.calls) >= self.hold_after:
            self.holding.set()
            self.release.wait(30)
        self.calls.append(text)
        return _vector(text)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[_Model], None]]:
    """Use a fake model for passages (the words' ranking stays the lexical reader's)."""
    used: list[_Model] = []

    def use(fake: _Model) -> None:
        used.append(fake)
        embedder: PassageEmbedder = fake
        monkeypatch.setattr(entries_module, "background_passage_embedder", lambda: embedder)
        monkeypatch.setattr(source_module, "background_passage_embedder", lambda: embedder)

    yield use
    for fake in used:
        fake.release.set()


def _write(root: Path, name: str, title: str, body: str) -> None:
    text = f"---\nname: {title}\ndescription: about {title}\ntype: project\n---\n\n{body}\n"
    (root / name).write_text(text, encoding="utf-8")


def _tree(root: Path, count: int) -> MemoryTree:
    for i in range(count):
        _write(root, f"note-{i:02d}.md", f"Note {i}", f"The body of note {i}. " * (i + 1))
    return MemoryTree.of(project=str(root))


def _passages(snapshot: Snapshot) -> dict[str, tuple[float, ...] | None]:
    index = snapshot.ranker
    assert isinstance(index, FieldedIndex)
    return {d.title: index.passage(i) for i, d in enumerate(snapshot.documents)}


def _expected(title: str, body: str) -> tuple[float, ...]:
    return tuple(_vector(passage_text(title, f"about {title}", body_text(body))))


def test_the_words_come_first_and_every_passage_follows(
    tmp_path: Path, model: Callable[[_Model], None]
) -> None:
    fake = _Model(hold_after=0)
    model(fake)
    catalog = CatalogSource(_tree(tmp_path, 5), watch=False, scorer="fielded")
    try:
        first = catalog.snapshot()
        assert len(first.documents) == 5
        assert set(_passages(first).values()) == {None}  # published before embedding
        fake.release.set()
        assert catalog.settle(30)
        assert catalog.stats.embedded == 5
        settled = catalog.snapshot()
        assert settled is not first
        for i in range(5):
            body = f"The body of note {i}. " * (i + 1)
            assert _passages(settled)[f"Note {i}"] == _expected(f"Note {i}", body)
        assert set(_passages(first).values()) == {None}  # a published view never moves
        assert len(fake.calls) == 5
    finally:
        catalog.close()


def test_a_memory_changed_while_its_passage_is_embedded_is_embedded_again(
    tmp_path: Path, model: Callable[[_Model], None]
) -> None:
    fake = _Model(hold_after=0)
    model(fake)
    catalog = CatalogSource(_tree(tmp_path, 3), watch=False, scorer="fielded")
    try:
        catalog.snapshot()
        assert fake.holding.wait(30)  # the worker holds all three texts as they were
        _write(tmp_path, "note-00.md", "Note 0", "Rewritten.")
        catalog.snapshot()
        fake.release.set()
        assert catalog.settle(30)
        passages = _passages(catalog.snapshot())
        assert passages["Note 0"] == _expected("Note 0", "Rewritten.")
        assert passages["Note 1"] == _expected("Note 1", "The body of note 1. " * 2)
        assert len(fake.calls) == 4  # three, then the rewritten one once more
    finally:
        catalog.close()


@pytest.mark.parametrize("watch", [False, True], ids=["full-start", "quick-start"])
def test_a_closed_catalog_keeps_what_is_left_for_the_next_process(
    tmp_path: Path,
    model: Callable[[_Model], None],
    monkeypatch: pytest.MonkeyPatch,
    watch: bool,
) -> None:
    if watch and not HAS_INOTIFY:
        pytest.skip("the quick start needs inotify")
    monkeypatch.setattr(passage_filler, "BATCH", 2)
    memory, cache = tmp_path / "memory", tmp_path / "catalog.bin"
    memory.mkdir()
    tree = _tree(memory, 6)

    def opened() -> CatalogSource:
        return CatalogSource(
            tree, watch=watch, scorer="fielded", cache_path=cache, clock=settled_clock
        )

    fake = _Model(hold_after=2)
    model(fake)
    catalog = opened()
    catalog.snapshot()
    assert fake.holding.wait(30)  # the first batch stored, the third passage held
    closing = threading.Thread(target=catalog.close)
    closing.start()
    fake.release.set()
    closing.join(30)
    assert not closing.is_alive()
    done = catalog.stats.embedded
    assert done in (3, 4)  # the held one is stored; the fourth if it began before the close

    again = _Model()
    model(again)
    reopened = opened()
    try:
        reopened.snapshot()
        assert reopened.stats.quick_start == watch
        assert reopened.settle(30)
        assert len(again.calls) == 6 - done  # none embedded twice
        passages = _passages(reopened.snapshot())
        assert None not in passages.values()
    finally:
        reopened.close()


def test_without_a_passage_embedder_no_worker_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    woken: list[object] = []
    monkeypatch.setattr(passage_filler.PassageFiller, "wake", woken.append)
    monkeypatch.setattr(entries_module, "background_passage_embedder", lambda: None)
    catalog = CatalogSource(_tree(tmp_path, 3), watch=False, scorer="fielded")
    try:
        catalog.snapshot()
        assert woken == []
        assert set(_passages(catalog.snapshot()).values()) == {None}
    finally:
        catalog.close()


def test_a_failing_embedder_leaves_memories_to_their_words(
    tmp_path: Path, model: Callable[[_Model], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str) -> Sequence[float]:
        raise RuntimeError("the engine failed")

    model(_Model())
    monkeypatch.setattr(source_module, "background_passage_embedder", lambda: broken)
    catalog = CatalogSource(_tree(tmp_path, 3), watch=False, scorer="fielded")
    try:
        catalog.snapshot()
        assert catalog.settle(30)
        assert set(_passages(catalog.snapshot()).values()) == {None}
        assert catalog.stats.embedded == 0
    finally:
        catalog.close()


class PassagesFollowEdits(RuleBasedStateMachine):
    """Edits, recalls and restarts in any order: once settled, every memory's passage is
    the embedding of its current text, and a snapshot never holds another memory's."""

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="memrecall-passages-"))
        self.memory = self.base / "memory"
        self.memory.mkdir()
        self.cache = self.base / "catalog.bin"
        self.bodies: dict[int, str] = {}
        self.seen: dict[str, set[tuple[float, ...]]] = {}
        """Every passage each memory has had."""
        self.revision = 0
        self.patch = pytest.MonkeyPatch()
        fake = _Model()
        self.patch.setattr(entries_module, "background_passage_embedder", lambda: fake)
        self.patch.setattr(source_module, "background_passage_embedder", lambda: fake)
        self.catalog = self._open()

    def _open(self) -> CatalogSource:
        tree = MemoryTree.of(project=str(self.memory))
        return CatalogSource(tree, watch=False, scorer="fielded", cache_path=self.cache)

    @rule(note=st.integers(0, 5))
    def write(self, note: int) -> None:
        self.revision += 1
        body = f"Revision {self.revision} of note {note}. " * (1 + self.revision % 3)
        _write(self.memory, f"note-{note}.md", f"Note {note}", body)
        self.bodies[note] = body
        self.seen.setdefault(f"Note {note}", set()).add(_expected(f"Note {note}", body))

    @rule(note=st.integers(0, 5))
    def delete(self, note: int) -> None:
        if self.bodies.pop(note, None) is not None:
            (self.memory / f"note-{note}.md").unlink()

    @rule()
    def recall(self) -> None:
        snapshot = self.catalog.snapshot()
        for title, passage in _passages(snapshot).items():
            # in the middle of embedding: nothing yet, or a text of this very memory
            assert passage is None or passage in self.seen[title]

    @rule()
    def settle(self) -> None:
        self.catalog.snapshot()
        assert self.catalog.settle(30)
        passages = _passages(self.catalog.snapshot())
        assert set(passages) == {f"Note {n}" for n in self.bodies}
        for note, body in self.bodies.items():
            assert passages[f"Note {note}"] == _expected(f"Note {note}", body)

    @rule()
    def restart(self) -> None:
        self.catalog.close()
        self.catalog = self._open()

    def teardown(self) -> None:
        self.catalog.close()
        self.patch.undo()
        shutil.rmtree(self.base, ignore_errors=True)


PassagesFollowEdits.TestCase.settings = settings(max_examples=25, stateful_step_count=12)
test_passages_follow_edits = PassagesFollowEdits.TestCase
