"""Recall across languages from the store (memrecall.store.source): each pooled memory's
passage is embedded after the snapshot that pooled it, kept in memory only, and dropped with
the memory; until it is in, the memory ranks by its words."""

from __future__ import annotations

import hashlib
import math
import shutil
import tempfile
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from memrecall.engine.scoring.features import passage_of
from memrecall.engine.scoring.fielded import FieldedIndex
from memrecall.engine.scoring.passages import PassageEmbedder, pack
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.engine.scoring.turn_semantic import SemanticTurns, SemanticWeights
from memrecall.sources.source import Snapshot, prepare_recall
from memrecall.sources.turn_reader import ENVIRONMENT, PASSAGES, default_turns, e5_embedder
from memrecall.store import MemoryService, SQLiteStore
from memrecall.store.backend import ContentChange
from memrecall.store.model import ChangeType, Status
from memrecall.store.source import StoreSource, record_document

from .helpers import GLOBAL, T0, ManualClock, new_memory

QUESTION = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=-20.0, cutoff=0.9)
"""A reader that reads every turn as a question."""
TALK = SemanticWeights(weights=[0.0, 0.0, 0.0], lexical=0.0, bias=20.0, cutoff=0.9)
"""A reader that reads every turn as small talk."""
READER = SemanticTurns(QUESTION, TurnModel({}, bias=0.0, cutoff=0.99), lambda text: [0.0] * 3)
ENGLISH = "During the release freeze, how many days does a customer refund take?"
FREEZE = "release_freeze"
REFUNDS = "plazo_de_pagos"
NOTES = {
    FREEZE: "No deploys in late November. Hotfixes need approval.",
    REFUNDS: "Los reembolsos a clientes tardan cinco días hábiles.",
    **{
        f"{topic}_note_{i}": f"About the {topic} of team {i}."
        for i, topic in enumerate(["grafana", "vault", "kafka", "budget", "oncall"] * 4)
    },
}
SECRET_LIKE = [0.6, 0.8, 0.0]
"""The refund note's vector: twelve bytes no database page holds by chance."""


def _vectors(text: str) -> Sequence[float]:
    """A stand-in for the model: the freeze note and turns about it point one way, the
    refund note and turns about refunds another, the rest a third."""
    if "reembolsos" in text or "refund" in text:
        return SECRET_LIKE
    if "freeze" in text or "November" in text:
        return [1.0, 0.0, 0.0]
    return [0.0, 0.0, 1.0]


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch) -> SemanticTurns:
    """The semantic reader over :func:`_vectors`, as the store's ranker sees it."""
    reader = SemanticTurns(QUESTION, READER.lexical_model, _vectors)
    monkeypatch.setattr("memrecall.store.source.default_turns", lambda: reader)
    return reader


def _embedding_with(monkeypatch: pytest.MonkeyPatch, embedder: PassageEmbedder | None) -> None:
    monkeypatch.setattr("memrecall.store.source.background_passage_embedder", lambda: embedder)


async def _service(
    tmp_path: Path, notes: dict[str, str] = NOTES, clock: ManualClock | None = None
) -> tuple[MemoryService, SQLiteStore]:
    store = SQLiteStore(tmp_path / "m.db", durable=False)
    clock = clock or ManualClock()
    service = MemoryService(store, clock=clock)
    for key, content in notes.items():
        clock.advance(60)
        await service.save("u1", GLOBAL, key, content, "project")
    return service, store


def _in_files(folder: Path, data: bytes) -> bool:
    """Whether any of the database's files (main, journal, WAL) holds ``data``."""
    files = [p for p in folder.iterdir() if p.name.startswith("m.db")]
    assert files
    return any(data in p.read_bytes() for p in files)


def _settled(source: StoreSource) -> Snapshot:
    """The source's snapshot once every passage is embedded."""
    source.snapshot()
    assert source.settle(30)
    return source.snapshot()


def _titles(source: StoreSource, query: str) -> list[str]:
    snapshot = source.snapshot()
    return [snapshot.documents[i].title for i in snapshot.ranker.rank(query, 5)]


async def test_a_note_in_another_language_joins_once_its_passage_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: SemanticTurns
) -> None:
    held = threading.Event()

    def slow(text: str) -> Sequence[float]:
        held.wait()
        return _vectors(text)

    _embedding_with(monkeypatch, slow)
    service, store = await _service(tmp_path)
    source = StoreSource(store, "u1")
    try:
        words = _titles(source, ENGLISH)  # the first snapshot: the words alone
        assert words[0] == "release freeze"
        assert "plazo de pagos" not in words
        held.set()
        assert source.settle(30)
        assert source.embedded == len(NOTES)
        both = _titles(source, ENGLISH)
        assert both[:2] == ["release freeze", "plazo de pagos"]
        # as a FieldedIndex over the same documents with their passages ranks them
        snapshot = source.snapshot()
        fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=_vectors)
        silent = "how long does a refund take?"  # no word of it in any note
        paste = silent + " " + " ".join(f"zq{i}.refund xk{i}" for i in range(80))
        for query in (ENGLISH, "release freeze", "refund", "grafana team budget", silent, paste):
            assert snapshot.ranker.rank(query, 5) == fresh.rank(query, 5)
            assert snapshot.ranker.rank_and_fast(query, 5) == fresh.rank_and_fast(query, 5)  # type: ignore[attr-defined]
        # the words leave it silent; the reader is sure it asks, and one passage stands out
        assert _titles(source, silent) == ["plazo de pagos"]
        assert snapshot.ranker.rank_and_fast(silent, 5)[1] == []  # type: ignore[attr-defined]
        assert _titles(source, paste) == []  # a paste is left to its words
        talk = SemanticTurns(TALK, READER.lexical_model, _vectors)
        monkeypatch.setattr("memrecall.store.source.default_turns", lambda: talk)
        assert _titles(source, silent) == []  # small talk: silence stays
    finally:
        held.set()
        source.close()
        service.close()


async def test_a_rewrite_while_its_passage_is_embedded_keeps_the_new_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: SemanticTurns
) -> None:
    started, held = threading.Event(), threading.Event()

    def slow(text: str) -> Sequence[float]:
        if "reembolsos" in text and not held.is_set():
            started.set()
            held.wait()
        return _vectors(text)

    _embedding_with(monkeypatch, slow)
    service, store = await _service(tmp_path, {REFUNDS: NOTES[REFUNDS]})
    source = StoreSource(store, "u1")
    try:
        source.snapshot()
        assert started.wait(30)  # the old text is being embedded
        (record,) = store.snapshot("u1", [GLOBAL])[1]
        await service.update(
            "u1", record.memory_id, expected_revision=record.revision, content="Freeze ends 2 Dec."
        )
        path = source.snapshot().documents[0].path
        held.set()
        assert source.settle(30)
        source.snapshot()
        assert source.passage(path) == pack(_vectors("Freeze ends 2 Dec."))
        assert source.embedded == 1  # the old text's vector was dropped, never landed
    finally:
        held.set()
        source.close()
        service.close()


async def test_vectors_stay_in_memory_and_leave_with_a_forgotten_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: SemanticTurns
) -> None:
    _embedding_with(monkeypatch, _vectors)
    service, store = await _service(tmp_path)
    source = StoreSource(store, "u1")
    vector = pack(SECRET_LIKE)
    try:
        snapshot = source.snapshot()
        assert source.settle(30)
        path = next(d.path for d in snapshot.documents if d.title == "plazo de pagos")
        assert source.passage(path) == vector
        assert "plazo de pagos" in _titles(source, ENGLISH)
        assert not _in_files(tmp_path, vector)  # never stored
        (record,) = [r for r in store.snapshot("u1", [GLOBAL])[1] if r.key == REFUNDS]
        await service.forget("u1", record.memory_id)
        snapshot = source.snapshot()
        assert source.passage(path) is None
        assert all(source.passage(d.path) != vector for d in snapshot.documents)
        assert "plazo de pagos" not in _titles(source, ENGLISH)
    finally:
        source.close()
        service.close()


async def test_without_an_embedder_or_once_closed_memories_rank_by_their_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: SemanticTurns
) -> None:
    _embedding_with(monkeypatch, None)  # MEMRECALL_PASSAGES=off, or no semantic reader
    service, store = await _service(tmp_path)
    off = StoreSource(store, "u1")
    assert "plazo de pagos" not in _titles(off, ENGLISH)
    assert off.settle(30)
    assert off.embedded == 0
    assert not off.index.passages
    _embedding_with(monkeypatch, _vectors)
    closed = StoreSource(store, "u1")
    closed.close()
    for words_only in (closed, StoreSource(store, "u1", passages=False)):
        assert "plazo de pagos" not in _titles(words_only, ENGLISH)
        assert words_only.settle(30)
        assert words_only.embedded == 0
    embedding = StoreSource(store, "u1")
    embedding.snapshot()
    assert embedding.settle(30)
    assert "plazo de pagos" in _titles(embedding, ENGLISH)
    embedding.close()
    service.close()


CLOSE = {
    "release_checklist": "Run the release checklist: changelog, version bump, green CI.",
    "tagging_a_release": "A release tag is signed; ask Dana before you tag.",
    **{k: v for k, v in NOTES.items() if "_note_" in k},
}
CLOSE_QUERY = "what goes in the release checklist before a tag?"
"""Its words favour the checklist (two title words), its meaning the tagging note
(tests/test_nearer_first.py)."""


SAME_BODY = "Run the release checklist before a tag: changelog, version bump, green CI."
ONE_SUBJECT = {
    "release_checklist": SAME_BODY,
    "checklist_before_a_tag": SAME_BODY,
    **{k: v for k, v in NOTES.items() if "_note_" in k},
}
"""Two notes on one subject (the same words): the fresher-facts rules' to order, not the
passages'."""


def _close_vectors(text: str) -> Sequence[float]:
    if text.startswith("release checklist"):
        return [1.0, 0.0, 0.0]
    if text.startswith(("tagging a release", "checklist before a tag")):
        return [0.0, 1.0, 0.0]
    return [0.6, 0.8, 0.0] if "release" in text else [0.0, 0.0, 1.0]


async def test_the_store_puts_the_nearer_of_two_close_memories_first_as_the_index_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader = SemanticTurns(QUESTION, READER.lexical_model, _close_vectors)
    monkeypatch.setattr("memrecall.store.source.default_turns", lambda: reader)
    _embedding_with(monkeypatch, _close_vectors)
    service, store = await _service(tmp_path, CLOSE)
    source = StoreSource(store, "u1")
    try:
        assert _titles(source, CLOSE_QUERY)[:2] == ["release checklist", "tagging a release"]
        assert source.settle(30)
        assert _titles(source, CLOSE_QUERY)[:2] == ["tagging a release", "release checklist"]
        snapshot = source.snapshot()
        fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=_close_vectors)
        assert snapshot.ranker.rank(CLOSE_QUERY, 5) == fresh.rank(CLOSE_QUERY, 5)
        assert snapshot.ranker.rank_and_fast(CLOSE_QUERY, 5) == fresh.rank_and_fast(  # type: ignore[attr-defined]
            CLOSE_QUERY, 5
        )
    finally:
        source.close()
        service.close()
    (tmp_path / "one").mkdir()
    service, store = await _service(tmp_path / "one", ONE_SUBJECT)
    source = StoreSource(store, "u1")
    try:
        words = _titles(source, CLOSE_QUERY)[:2]
        assert sorted(words) == ["checklist before a tag", "release checklist"]
        assert source.settle(30)
        assert _titles(source, CLOSE_QUERY)[:2] == words  # one subject: the words' order
        snapshot = source.snapshot()
        fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=_close_vectors)
        first, second = fresh.rank(CLOSE_QUERY, 5)[:2]
        assert fresh.same_subject(first, second)
        assert snapshot.ranker.rank(CLOSE_QUERY, 5) == fresh.rank(CLOSE_QUERY, 5)
    finally:
        source.close()
        service.close()


@pytest.mark.skipif(e5_embedder() is None, reason="the bundled model does not load here")
async def test_the_runtime_finds_a_stored_note_in_another_language_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, store = await _service(tmp_path)
    monkeypatch.setenv(ENVIRONMENT, "auto")
    found = {}
    for setting in ("off", "auto"):
        monkeypatch.setenv(PASSAGES, setting)
        default_turns.cache_clear()
        source = StoreSource(store, "u1")
        try:
            source.snapshot()
            assert source.settle(120)
            found[setting] = [d.title for d in prepare_recall(source, ENGLISH).fallback]
        finally:
            source.close()
            default_turns.cache_clear()
    assert found["off"][0] == found["auto"][0] == "release freeze"
    assert "plazo de pagos" not in found["off"]
    assert "plazo de pagos" in found["auto"]
    service.close()


def _hashed(text: str) -> Sequence[float]:
    """A stand-in for the model: a unit vector drawn from the text's digest (different texts,
    different vectors)."""
    digest = hashlib.sha256(text.encode()).digest()
    raw = [b - 127.5 for b in digest[:8]]
    norm = math.sqrt(sum(x * x for x in raw))
    return [x / norm for x in raw]


KEYS = ("parking", "lunch", "vpn")
WORDS = ("garage", "level", "two", "canteen", "noon", "tunnel", "token", "badge")


class StorePassagesFollowWrites(RuleBasedStateMachine):
    """Writes, suppressions, forgets, recalls and restarts in any order: a held passage is
    always the embedding of a text its memory had; once settled, of its current text; and a
    memory that left the pool (suppressed, forgotten) has none held."""

    def __init__(self) -> None:
        super().__init__()
        self.base = Path(tempfile.mkdtemp(prefix="memrecall-store-passages-"))
        self.store = SQLiteStore(self.base / "m.db", durable=False)
        self.now = T0
        self.patch = pytest.MonkeyPatch()
        reader = SemanticTurns(QUESTION, READER.lexical_model, _hashed)
        self.patch.setattr("memrecall.store.source.default_turns", lambda: reader)
        self.patch.setattr("memrecall.store.source.background_passage_embedder", lambda: _hashed)
        self.source = StoreSource(self.store, "u1")
        self.live: dict[str, tuple[str, str]] = {}
        """key → (memory id, content) of the active memories."""
        self.hidden: dict[str, tuple[str, str]] = {}
        """Suppressed memories, the same way."""
        self.seen: dict[str, set[bytes]] = {}
        """Every passage each path's memory has had."""
        self.counter = 0

    def _tick(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now

    def _seen(self, key: str, content: str) -> None:
        record = self.store.get("u1", self.live[key][0])
        document = record_document(record)
        vector = pack(_hashed(passage_of(document)))
        self.seen.setdefault(document.path, set()).add(vector)

    @rule(key=st.sampled_from(KEYS), words=st.lists(st.sampled_from(WORDS), min_size=1))
    def write(self, key: str, words: list[str]) -> None:
        content = " ".join(words)
        if key in self.hidden:
            return
        if key in self.live:
            memory_id, _ = self.live[key]
            revision = self.store.get("u1", memory_id).revision
            change = ContentChange(ChangeType.UPDATE, content=content)
            self.store.change("u1", memory_id, revision, change, self._tick())
        else:
            self.counter += 1
            memory_id = f"m{self.counter:04d}"
            new = new_memory("u1", GLOBAL, key, content, "project", memory_id=memory_id)
            self.store.save(new, self._tick())
        self.live[key] = (memory_id, content)
        self._seen(key, content)

    @precondition(lambda self: bool(self.live))
    @rule(pick=st.integers(0, 10))
    def suppress(self, pick: int) -> None:
        self._set_status(pick, self.live, self.hidden, Status.SUPPRESSED)

    @precondition(lambda self: bool(self.hidden))
    @rule(pick=st.integers(0, 10))
    def restore(self, pick: int) -> None:
        self._set_status(pick, self.hidden, self.live, Status.ACTIVE)

    def _set_status(
        self,
        pick: int,
        source: dict[str, tuple[str, str]],
        target: dict[str, tuple[str, str]],
        status: Status,
    ) -> None:
        """Give the picked memory of ``source`` the ``status`` and move it to ``target``."""
        key = sorted(source)[pick % len(source)]
        self.store.set_status("u1", source[key][0], status, self._tick())
        target[key] = source.pop(key)

    @precondition(lambda self: bool(self.live))
    @rule(pick=st.integers(0, 10))
    def forget(self, pick: int) -> None:
        key = sorted(self.live)[pick % len(self.live)]
        self.store.forget("u1", self.live.pop(key)[0], self._tick())

    @rule()
    def recall(self) -> None:
        snapshot = self.source.snapshot()
        for document in snapshot.documents:
            held = self.source.passage(document.path)
            # in the middle of embedding: nothing yet, or a text this very memory had
            assert held is not None
            assert held == b"" or held in self.seen[document.path]

    @rule()
    def settle(self) -> None:
        self.source.snapshot()
        assert self.source.settle(30)
        snapshot = self.source.snapshot()
        assert {d.title for d in snapshot.documents} == set(self.live)
        for document in snapshot.documents:
            assert self.source.passage(document.path) == pack(_hashed(passage_of(document)))
        for key in self.hidden.keys() | (set(KEYS) - self.live.keys()):
            assert self.source.passage(f"store/global/{key}.md") is None

    @rule()
    def restart(self) -> None:
        self.source.close()
        self.source = StoreSource(self.store, "u1")

    def teardown(self) -> None:
        self.source.close()
        self.store.close()
        self.patch.undo()
        shutil.rmtree(self.base, ignore_errors=True)


StorePassagesFollowWrites.TestCase.settings = settings(max_examples=25, stateful_step_count=15)
test_store_passages_follow_writes = StorePassagesFollowWrites.TestCase


async def test_a_silent_question_gets_the_update_of_the_memory_nearest_it_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: SemanticTurns
) -> None:
    # The passages answer a turn the words leave silent with the refund note; written 200
    # days later, a note on the same subject states another delay without saying it changed
    # anything, and its passage points elsewhere. It stands in for the older one, which
    # follows it, as the words' ranking places an update (FieldedIndex alike).
    _embedding_with(monkeypatch, _vectors)
    clock = ManualClock()
    service, store = await _service(tmp_path, clock=clock)
    clock.advance(200 * 86_400)
    update = "Los pagos de devoluciones a clientes tardan tres días hábiles con Stripe."
    await service.save("u1", GLOBAL, f"{REFUNDS}_stripe", update, "project")
    source = StoreSource(store, "u1")
    try:
        snapshot = _settled(source)
        fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=_vectors)
        titles = [d.title for d in snapshot.documents]
        old, new = titles.index("plazo de pagos"), titles.index("plazo de pagos stripe")
        assert fresh.same_subject(old, new)
        silent = "how long does a refund take?"
        assert fresh.matches(silent) == []  # the words leave it silent
        assert fresh.rank(silent, 5) == [new, old]
        assert snapshot.ranker.rank(silent, 5) == [new, old]
        assert snapshot.ranker.rank_and_fast(silent, 5) == fresh.rank_and_fast(silent, 5)  # type: ignore[attr-defined]
        assert snapshot.ranker.rank(silent, 1) == [new]
    finally:
        source.close()
        service.close()


async def test_a_silent_question_in_the_first_person_gets_its_nearest_memory_as_in_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "who's my boss again?" is near the reporting-line note and the standup note alike (no
    # memory stands out): in the first person it gets the nearest, as FieldedIndex gives it;
    # the same turn in the third person stays silent in both.
    def vectors(text: str) -> Sequence[float]:
        if "Reports to" in text:
            return [1.0, 0.0, 0.0]
        if "standup" in text:
            return [0.0, 1.0, 0.0]
        if "boss" in text or "hike" in text:
            return [0.85, 0.84, 0.83]
        return [0.0, 0.0, 1.0]

    reader = SemanticTurns(QUESTION, READER.lexical_model, vectors)
    monkeypatch.setattr("memrecall.store.source.default_turns", lambda: reader)
    _embedding_with(monkeypatch, vectors)
    notes = {
        "reporting_line": "Reports to the CTO, Ines Duarte, since March.",
        "daily_standup": "The standup is at 9:30 in the small room.",
        **{f"note_{i}": f"About the kafka of team {i}." for i in range(10)},
    }
    service, store = await _service(tmp_path, notes)
    source = StoreSource(store, "u1")
    try:
        snapshot = _settled(source)
        fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=vectors)
        line = [d.title for d in snapshot.documents].index("reporting line")
        mine, theirs = "who's my boss again?", "who's the boss again?"
        assert fresh.matches(mine) == fresh.matches(theirs) == []  # the words leave both silent
        assert fresh.rank(mine, 5) == snapshot.ranker.rank(mine, 5) == [line]
        assert fresh.rank(theirs, 5) == snapshot.ranker.rank(theirs, 5) == []
        # the subject of a how-to is not the asker: silent in both, as in the third person
        # (not "how do I reach my boss": a boss is work, and a how-to about work stays)
        howto = "how do I plan a hike again?"
        assert fresh.matches(howto) == []
        assert fresh.rank(howto, 5) == snapshot.ranker.rank(howto, 5) == []
        assert snapshot.ranker.rank_and_fast(mine, 5) == ([line], [])  # type: ignore[attr-defined]
    finally:
        source.close()
        service.close()
