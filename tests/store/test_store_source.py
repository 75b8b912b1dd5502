"""Recall from the store: StoreSource gives the engine one user's visible, active memories,
kept current incrementally, ranked exactly like a FieldedIndex over the same documents."""

from __future__ import annotations

import random
import sys
from datetime import timedelta
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memrecall.actors import Engine, open_engine
from memrecall.actors.plan import MemoryBlock
from memrecall.engine.scoring.candidates import PoolOrder
from memrecall.engine.scoring.fielded import DocumentFeatures, FieldedIndex, Params
from memrecall.engine.scoring.judgement import Judgement, Thresholds, default_thresholds
from memrecall.engine.scoring.turn_model import TurnModel
from memrecall.events.documents import MemoryType, Scope
from memrecall.sources.source import Snapshot, prepare_recall
from memrecall.sources.turn_reader import default_turns, passage_embedder, remembering
from memrecall.store import (
    KeyConflict,
    MemoryService,
    SQLiteStore,
    WorkspaceType,
    visible_scopes,
)
from memrecall.store.source import StoreSource, _ordering, record_document

if TYPE_CHECKING:
    from _typeshed import TraceFunction

from .helpers import GLOBAL, LEARNING, T0, TEACHING, ManualClock, new_memory

WORDS = "deploy staging kubectl cluster blue green tea coffee editor vim charge charges".split()
WORDS += ["home", "mật", "khẩu", "mặt"]  # Vietnamese: syllable pairs and loose syllables
WORDS += ["アクセストークン", "サーバー"]  # katakana words: whole words and their pieces
UNSEEN = "zebra quasar nebula lantern orchid walrus".split()
"""Words no memory has: queries that share a word or two with a memory and name other
things, so the answer floor (Thresholds.answer_coverage) decides some of them."""
TURN = ["still", "thanks", "Quasar", "Kubectl", "home", "office", "weather", "birthday", "pizza"]
TURN += ["トーク", "トークン", "サーバ"]
"""Query words the rules about how a question is asked read: a "still" question, thanks,
a name no memory has (strong matches only), a name memories have (weak matches must hold
it), home (memories that never say it are out) unless the office is named too
(turn_words), everyday words the turn model reads as small talk (weak matches out), and
katakana words inside, at the end of, or a long-vowel mark apart from a memory's."""


def _setup(tmp_path: Path) -> tuple[MemoryService, SQLiteStore, ManualClock]:
    store = SQLiteStore(tmp_path / "m.db", durable=False)
    clock = ManualClock()
    return MemoryService(store, clock=clock), store, clock


def _read_with(
    store: SQLiteStore,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    reader: TurnModel,
    thresholds: Thresholds,
) -> tuple[Snapshot, FieldedIndex]:
    """User u1's snapshot, its ranker reading turns with ``reader``, and a fresh
    FieldedIndex over the same documents with the same reader and thresholds."""
    monkeypatch.setattr("memrecall.store.source.default_turns", lambda: reader)
    snapshot = StoreSource(store, "u1", clock=clock, thresholds=thresholds).snapshot()
    return snapshot, FieldedIndex.of(snapshot.documents, thresholds=thresholds, turns=reader)


@pytest.mark.parametrize(
    ("answer", "steps"),
    [
        (None, (0, 1, 60, 600)),
        (0.3, (0, 1, 60, 600)),
        # memories written months apart: the rules about time (fresher facts first,
        # possible updates, the freshness prior) decide too
        (None, (0, 600, 20 * 86_400, 200 * 86_400)),
    ],
)
async def test_documents_and_ranking_equal_a_fresh_index(
    tmp_path: Path, answer: float | None, steps: tuple[int, ...], semantic_reader: None
) -> None:
    # with the runtime's turn reader, the semantic one, and the memories' passages embedded
    # (recall across languages): the store must rank with them too
    with remembering():  # each text is embedded once, by the source's worker or the test
        await _equal_a_fresh_index(tmp_path, answer, steps)


async def _equal_a_fresh_index(
    tmp_path: Path, answer: float | None, steps: tuple[int, ...]
) -> None:
    # the shipped thresholds, and a high answer floor that silences many of the queries
    thresholds = default_thresholds()
    if answer is not None:
        thresholds = attrs.evolve(thresholds, answer_coverage=answer)
    service, store, clock = _setup(tmp_path)
    source = StoreSource(store, "u1", WorkspaceType.LEARNING, clock=clock, thresholds=thresholds)
    rng = random.Random(3)
    live: list[str] = []
    floored = moved = 0
    for step in range(80):
        clock.advance(rng.choice(steps))
        roll = rng.random()
        content = " ".join(rng.choices(WORDS, k=rng.randint(2, 8)))
        if roll < 0.5 or not live:
            expires = (
                clock.now + timedelta(seconds=rng.choice((300, 3000)))
                if rng.random() < 0.3
                else None
            )
            try:
                out = await service.save(
                    "u1",
                    rng.choice((GLOBAL, LEARNING, TEACHING)),
                    rng.choice(WORDS[:6]),
                    content,
                    rng.choice(("project", "tool", "preference")),
                    expires_at=expires,
                )
            except KeyConflict:
                continue
            live.append(out.record.memory_id)
        elif roll < 0.7:
            memory_id = rng.choice(live)
            current = await service.get("u1", memory_id)
            await service.update(
                "u1", memory_id, expected_revision=current.revision, content=content
            )
        elif roll < 0.8:
            await service.suppress("u1", rng.choice(live))
        elif roll < 0.9:
            await service.restore("u1", rng.choice(live))
        else:
            await service.forget("u1", live.pop(rng.randrange(len(live))))
        source.snapshot()
        assert source.settle(120)  # the passages the snapshot left are embedded
        snapshot = source.snapshot()
        # expected pool: visible, active, unexpired; workspace overrides global; newest first
        _revision, records = store.snapshot("u1", visible_scopes(WorkspaceType.LEARNING))
        records = [r for r in records if not r.expired(clock.now)]
        workspace_keys = {r.key for r in records if r.scope == LEARNING}
        wanted = [
            record_document(r)
            for r in records
            if not (r.scope == GLOBAL and r.key in workspace_keys)
        ]
        wanted.sort(key=lambda d: (-d.mtime, d.path))
        assert snapshot.documents == tuple(wanted), step
        expected = PoolOrder.of(snapshot.documents)
        assert snapshot.order is not None
        assert tuple(snapshot.order.by_recency) == expected.by_recency
        for path in [*expected.by_path, "store/global/no_such_key.md"]:
            assert tuple(snapshot.order.indices_of(path)) == expected.by_path.get(path, ())
        embed = passage_embedder(wanted=True)
        assert embed is not None
        fresh = FieldedIndex.of(
            snapshot.documents, thresholds=thresholds, turns=default_turns(), passage=embed
        )
        words_only = FieldedIndex.of(
            snapshot.documents, thresholds=thresholds, turns=default_turns()
        )
        floorless = FieldedIndex.of(
            snapshot.documents,
            thresholds=attrs.evolve(fresh.thresholds, answer_coverage=0.0),
            turns=default_turns(),
        )
        for _ in range(3):
            query = " ".join(rng.choices(WORDS + UNSEEN + TURN, k=rng.randint(1, 5)))
            floored += bool(floorless.rank(query, 5)) and not fresh.rank(query, 5)
            moved += words_only.rank(query, 5) != fresh.rank(query, 5)
            exclude = set(rng.sample(range(len(wanted)), min(len(wanted), rng.randint(0, 2))))
            limit = rng.randint(1, 6)
            assert snapshot.ranker.rank(query, limit, exclude=exclude) == fresh.rank(
                query, limit, exclude=exclude
            )
            assert snapshot.ranker.rank_and_fast(  # type: ignore[attr-defined]
                query, limit, exclude=exclude
            ) == fresh.rank_and_fast(query, limit, exclude=exclude)
    # the high answer floor silenced some queries, alike in both (the shipped one may too,
    # or not: that depends on the random words drawn)
    if answer is not None:
        assert floored
    assert moved  # the passages reordered or completed some answers
    assert source.loaded < 80  # each write read back alone (plus nothing else)
    assert source.embedded > 0
    source.close()
    service.close()


async def test_a_write_is_read_and_analysed_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, store, clock = _setup(tmp_path)
    for i in range(30):
        await service.save("u1", GLOBAL, f"note {i}", f"walnut fact number {i}", "fact")
    source = StoreSource(store, "u1", clock=clock)
    first = source.snapshot()
    assert source.loaded == 30
    assert source.snapshot() is first  # nothing changed: nothing read, nothing rebuilt
    analysed: list[str] = []
    real = DocumentFeatures.of

    def counting(document: object) -> object:
        analysed.append(document.path)  # type: ignore[attr-defined]
        return real(document)  # type: ignore[arg-type]

    monkeypatch.setattr(DocumentFeatures, "of", counting)
    await service.save("u1", GLOBAL, "boat", "the walnut boat is blue", "fact")
    candidates = prepare_recall(source, "walnut boat")
    assert source.loaded == 31
    assert analysed == ["store/global/boat.md"]
    assert candidates.fast
    assert len(source.snapshot().documents) == 31
    service.close()


async def test_record_document_mapping(tmp_path: Path) -> None:
    service, _store, _clock = _setup(tmp_path)
    out = await service.save(
        "u1", LEARNING, "Deploy Steps", "run the tests\nthen tag the release", "Workflow"
    )
    document = record_document(out.record)
    assert document.path == "store/workspace-learning/deploy_steps.md"
    assert document.relative_path == "deploy_steps.md"
    assert document.scope is Scope.PROJECT
    assert document.type is MemoryType.FEEDBACK
    assert document.title == "deploy steps"
    assert document.description == "run the tests"
    assert document.body == "run the tests\nthen tag the release"
    assert str(tmp_path) not in document.path
    service.close()


async def test_expired_records_leave_the_pool_when_due(tmp_path: Path) -> None:
    service, store, clock = _setup(tmp_path)
    await service.save(
        "u1", GLOBAL, "tea", "green tea today", "p", expires_at=clock.now + timedelta(hours=1)
    )
    source = StoreSource(store, "u1", clock=clock)
    assert len(source.snapshot().documents) == 1
    clock.advance(3600)
    assert source.snapshot().documents == ()
    service.close()


async def test_open_engine_recalls_from_the_store(tmp_path: Path) -> None:
    service, store, _clock = _setup(tmp_path)
    await service.save("u1", GLOBAL, "editor", "prefers vim for editing", "preference")
    source = StoreSource(store, "u1")
    query = "which kubectl cluster for the staging deploy"

    async def ask(engine: Engine, text: str) -> MemoryBlock | None:
        # a fresh session each time: a session never delivers one document twice
        session = await engine.open_session()
        block = await session.user_query(text)
        await session.turn_end(tools_requested=False)
        await session.close()
        return block

    async with open_engine(source) as engine:
        assert await ask(engine, query) is None
        saved = await service.save(
            "u1",
            GLOBAL,
            "staging deploy",
            "staging deploy uses kubectl on the blue cluster",
            "tool",
        )
        block = await ask(engine, query)
        assert block is not None
        assert block.paths == ("store/global/staging_deploy.md",)
        assert "blue cluster" in block.prompt
        await service.suppress("u1", saved.record.memory_id)
        assert await ask(engine, query) is None
        await service.restore("u1", saved.record.memory_id)
        block = await ask(engine, query)
        assert block is not None
        assert block.paths == ("store/global/staging_deploy.md",)
        await service.forget("u1", saved.record.memory_id)
        for text in (query, "blue cluster", "staging", "kubectl"):
            assert await ask(engine, text) is None
    assert "blue" not in source.index.vocabulary()
    service.close()


def _lines_for_one_write(tmp_path: Path, size: int) -> tuple[int, StoreSource]:
    """Python lines of memrecall run by the first ``snapshot()`` after one write into a
    source already holding ``size`` documents (SQL runs in C and is not counted)."""
    store = SQLiteStore(tmp_path / f"lines-{size}.db", durable=False)
    for n in range(size):
        store.save(new_memory(key=f"note_{n}", content=f"walnut fact number {n}"), T0)
    source = StoreSource(store, "u1", clock=lambda: T0)
    source.snapshot()
    store.save(new_memory(key="boat", content="the walnut boat is blue"), T0)
    lines = 0

    def trace(frame: FrameType, event: str, _arg: object) -> TraceFunction | None:
        nonlocal lines
        if "memrecall" not in frame.f_code.co_filename:
            return None
        if event == "line":
            lines += 1
        return trace

    sys.settrace(trace)
    try:
        snapshot = source.snapshot()
    finally:
        sys.settrace(None)
    assert len(snapshot.documents) == size + 1
    store.close()
    return lines, source


def test_one_write_costs_work_proportional_to_the_change(tmp_path: Path) -> None:
    """After one write, the next snapshot analyses one document and does not walk the pool:
    the same number of lines runs at 40 documents as at 400 (within a small margin)."""
    small, _ = _lines_for_one_write(tmp_path, 40)
    large, source = _lines_for_one_write(tmp_path, 400)
    assert source.analysed == 401  # 400 at the first snapshot, then only the written one
    assert source.snapshots_built == 2
    assert large <= small * 1.25, (small, large)


async def test_memories_written_months_apart_rank_as_in_a_fresh_index(tmp_path: Path) -> None:
    """The rules about time, each on its own, in the store's ranker as in a FieldedIndex."""
    service, store, clock = _setup(tmp_path)
    source = StoreSource(store, "u1", WorkspaceType.LEARNING, clock=clock)
    await service.save(
        "u1",
        GLOBAL,
        "staging-db",
        "Staging Postgres is pg-staging-01.internal:5432; connect through bastion-eu with"
        " your LDAP password; run alembic migrations from the ledger repo README.",
        "project",
    )
    await service.save("u1", GLOBAL, "lag-alert", "kafka consumer lag alert runbook", "project")
    # two notes on different subjects that a query matches about as well (the older a hair
    # better): only the freshness prior puts the newer first
    old_words = " ".join(f"alpha{i}" for i in range(30))
    await service.save("u1", GLOBAL, "zookeeper", f"zookeeper {old_words}", "project")
    await service.save(
        "u1",
        GLOBAL,
        "visitor-badges",
        "Visitor badges are printed at the front desk kiosk; visitors sign the NDA on the"
        " kiosk tablet.",
        "project",
    )
    await service.save(
        "u1",
        GLOBAL,
        "translations",
        "Legal translations\nContracts and terms to translate go to Lingua Juris (contact:"
        " Sophie Marchand), 0.12 euro per word, five working days.",
        "project",
    )
    clock.advance(200 * 86_400)
    await service.save(
        "u1",
        GLOBAL,
        "translations-tradulex",
        "Legal translations\nContracts and terms to translate go to Tradulex through their"
        " client portal, 0.09 euro per word, three working days.",
        "project",
    )
    await service.save(
        "u1",
        GLOBAL,
        "visitor-badges-envoy",
        "Visitor badges moved to the Envoy app: hosts register visitors ahead and badges"
        " print at the front desk.",
        "project",
    )
    await service.save(
        "u1",
        GLOBAL,
        "staging-db-2026",
        "Staging Postgres: pg-staging-02.internal:6432 behind PgBouncer; connect through the"
        " office VPN.",
        "project",
    )
    await service.save(
        "u1", GLOBAL, "lag-alert-2026", "kafka consumer lag alert runbook page", "project"
    )
    new_words = " ".join(f"beta{i}" for i in range(31))
    await service.save("u1", GLOBAL, "prometheus", f"prometheus {new_words}", "project")
    for i in range(20):
        await service.save(
            "u1", GLOBAL, f"note-{i}", f"grafana sentry backup number {i}", "project"
        )
    snapshot = source.snapshot()
    fresh = FieldedIndex.of(snapshot.documents)
    position = {d.path: i for i, d in enumerate(snapshot.documents)}

    def pair(old: str, new: str) -> tuple[int, int]:
        """The pool positions of two global memories, by key."""
        return position[f"store/global/{old}.md"], position[f"store/global/{new}.md"]

    old_db, new_db = pair("staging_db", "staging_db_2026")
    old_lag, new_lag = pair("lag_alert", "lag_alert_2026")
    old_near, new_near = pair("zookeeper", "prometheus")
    old_badge, new_badge = pair("visitor_badges", "visitor_badges_envoy")
    old_tr, new_tr = pair("translations", "translations_tradulex")
    assert fresh.same_subject(old_tr, new_tr)
    assert not fresh.says_change(new_tr)
    assert fresh.same_subject(old_badge, new_badge)
    assert fresh.says_change(new_badge)
    timeless = FieldedIndex.of(snapshot.documents, params=Params(freshness=0.0))
    assert timeless.rank("zookeeper prometheus", 2) == [old_near, new_near]
    cases = {
        # the freshness prior decides a near-tie
        "zookeeper prometheus": [new_near, old_near],
        # same subject, a newer and slightly longer note: it moves up
        "kafka consumer lag": [new_lag, old_lag],
        # asked in words of the older note's first line (the store's description) that the
        # update's lacks: the update's key holds the older one's ("staging db 2026"), one
        # title, so those words are the old fact and the update answers in its place
        "how do we connect to staging Postgres through bastion-eu with the LDAP password?": [
            new_db,
            old_db,
        ],
        # asked in the older note's words beyond a heading the update shares: the update of
        # a standing fact answers in its place (time_rules.stands_in)
        "do I send the contract to Sophie Marchand at Lingua Juris?": [new_tr, old_tr],
        # asked whether that still holds: the newer note first
        "do we still connect to staging Postgres through bastion-eu with the LDAP password?": [
            new_db,
            old_db,
        ],
        # asked in the older note's words only, with an update that says it moved things:
        # the update first
        "where do I sign the NDA on the tablet?": [new_badge, old_badge],
        # the same, with a word of the update's too: the words rank it far below
        "where do visitors sign the NDA on the kiosk tablet?": [new_badge, old_badge],
    }
    for query, first_two in cases.items():
        assert fresh.rank(query, 5)[:2] == first_two, query
        assert snapshot.ranker.rank(query, 5) == fresh.rank(query, 5), query
        assert snapshot.ranker.rank_and_fast(  # type: ignore[attr-defined]
            query, 5
        ) == fresh.rank_and_fast(query, 5), query
    # the fast result puts the update before its note as the ranking does
    assert fresh.rank_and_fast(
        "how do we connect to staging Postgres through bastion-eu with the LDAP password?", 5
    )[1] == [new_db, old_db]
    service.close()


@given(
    st.dictionaries(
        st.text("abcdefgh", min_size=1, max_size=3),
        st.tuples(st.floats(0.01, 50.0), st.floats(1.0, 1.05)),
        max_size=80,
    ),
    st.integers(1, 10),
    st.sets(st.text("abcdefgh", min_size=1, max_size=3), max_size=5),
)
def test_the_ordering_values_kept_are_enough_for_the_best(
    scored: dict[str, tuple[float, float]], wanted: int, excluded: set[str]
) -> None:
    # the store computes priors only for documents that can reach the `wanted` best
    kept = {d: v for d, (v, _p) in scored.items()}
    priors = {d: p for d, (_v, p) in scored.items()}
    some = _ordering(kept, priors.__getitem__, wanted, excluded, 1.05)
    full = {d: v * priors[d] for d, v in kept.items()}
    assert all(some[d] == full[d] for d in some)

    def best(order: dict[str, float]) -> list[str]:
        return sorted((d for d in order if d not in excluded), key=lambda d: (-order[d], d))[
            :wanted
        ]

    assert best(some) == best(full)


async def test_plain_small_talk_is_read_as_the_fielded_index_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # strong from a tenth of the query's weight up: under Params.talk_share
    low = Thresholds(0.0, 0.0, 0.1, 0.0)
    service, store, clock = _setup(tmp_path)
    await service.save(
        "u1", GLOBAL, "guest", "The guest password is on the reception desk.", "fact"
    )
    await service.save("u1", GLOBAL, "cat flap", "The cat flap code is on the fridge.", "fact")
    for i in range(20):
        await service.save("u1", GLOBAL, f"note {i}", f"walnut fact number {i}", "fact")
    query = "guest password for my dog tonight"  # one memory, a fourth of the turn
    explained = "guest password reception desk cat"  # one memory most of it, one a word
    ranked = {}
    both = {}
    for name, plain in (("question", 2.0), ("plain", 0.9)):
        reader = TurnModel({}, bias=-50.0 if name == "question" else 50.0, cutoff=0.5, plain=plain)
        snapshot, fresh = _read_with(store, clock, monkeypatch, reader, low)
        ranked[name] = snapshot.ranker.rank(query, 5)
        assert ranked[name] == fresh.rank(query, 5)
        both[name] = snapshot.ranker.rank(explained, 5)
        assert both[name] == fresh.rank(explained, 5)
        assert snapshot.ranker.rank_and_fast(  # type: ignore[attr-defined]
            query, 5
        ) == fresh.rank_and_fast(query, 5)
    assert len(ranked["question"]) == 1
    assert ranked["plain"] == []
    assert len(both["question"]) == 2
    assert both["plain"] == both["question"]
    service.close()


async def test_one_ordinary_word_gets_nothing_from_the_store_as_from_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service, store, clock = _setup(tmp_path)
    await service.save("u1", GLOBAL, "cat flap", "The cat flap code is on the fridge.", "fact")
    await service.save("u1", GLOBAL, "Unleash", "Feature toggles live in Unleash.", "fact")
    for i in range(20):
        await service.save("u1", GLOBAL, f"note {i}", f"walnut fact number {i}", "fact")
    question = TurnModel({}, bias=-50.0, cutoff=0.5, plain=2.0)
    snapshot, fresh = _read_with(store, clock, monkeypatch, question, Thresholds(0, 0, 0, 0))
    cases = (("fridge", False), ("Unleash", False), ("fridge code?", True), ("UNLEASH", True))
    for turn, answered in cases:
        ranked = snapshot.ranker.rank(turn, 5)
        assert ranked == fresh.rank(turn, 5)
        assert bool(ranked) is answered, turn
    service.close()


async def test_an_older_fact_is_never_put_first_by_the_turns_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # strong from 0.45 of the query's weight: the older note strong, its update weak
    strong_from = Thresholds(0.0, 0.0, 0.45, 0.0)
    service, store, clock = _setup(tmp_path)
    await service.save(
        "u1",
        GLOBAL,
        "beta builds for testers",
        "Every merge uploads the iOS and Android beta builds; testers join the beta group and"
        " install the builds from the tester app.",
        "project",
    )
    clock.advance(200 * 86_400)
    await service.save(
        "u1",
        GLOBAL,
        "beta builds",
        "iOS betas now go through TestFlight, Android betas through the Play test track; the"
        " pipeline uploads both after every merge.",
        "project",
    )
    for i in range(20):
        await service.save("u1", GLOBAL, f"note {i}", f"walnut fact number {i}", "fact")
    asked = "how do I install the iOS beta builds as a tester"
    firsts = {}
    judged = {}
    for name, bias in (("question", -50.0), ("talk", 50.0)):
        reader = TurnModel({}, bias=bias, cutoff=0.5)
        snapshot, fresh = _read_with(store, clock, monkeypatch, reader, strong_from)
        ranked = snapshot.ranker.rank(asked, 5)
        assert ranked == fresh.rank(asked, 5), name
        assert snapshot.ranker.rank_and_fast(  # type: ignore[attr-defined]
            asked, 5
        ) == fresh.rank_and_fast(asked, 5), name
        firsts[name] = [snapshot.documents[i].path for i in ranked]
        judged[name] = [(m.judgement, m.outranked) for m in fresh.matches(asked)[:2]]
    assert firsts["question"] == [
        "store/global/beta_builds.md",
        "store/global/beta_builds_for_testers.md",
    ]
    assert judged["question"] == [(Judgement.WEAK, False), (Judgement.WEAK, True)]
    # read as small talk the newer one is left out, and comes back as the update, first
    assert judged["talk"] == [(Judgement.NONE, False), (Judgement.WEAK, True)]
    assert firsts["talk"] == firsts["question"]
    service.close()


async def test_a_first_memory_held_by_one_word_yields_as_in_a_fresh_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # passages.nearest_over_thin in the store's ranker: stub vectors make the note the turn
    # means clearly nearer than the one it shares a word with (tests/test_passages.py)
    from memrecall.engine.scoring.turn_semantic import SemanticTurns
    from tests.test_passages import LEXICAL, QUESTION, _stop_vectors

    reader = SemanticTurns(QUESTION, LEXICAL, _stop_vectors)
    monkeypatch.setattr("memrecall.store.source.default_turns", lambda: reader)
    monkeypatch.setattr("memrecall.store.source.background_passage_embedder", lambda: _stop_vectors)
    service, store, clock = _setup(tmp_path)
    await service.save(
        "u1", GLOBAL, "deploy cutoff", "Stop all deploys after 15:00 on Fridays", "project"
    )
    clock.advance(60)
    await service.save("u1", GLOBAL, "end of my day", "I log off at 18:00 sharp", "preference")
    for i in range(20):
        await service.save("u1", GLOBAL, f"note {i}", f"walnut fact number {i}", "fact")
    source = StoreSource(store, "u1", clock=clock)
    source.snapshot()
    assert source.settle(60)
    snapshot = source.snapshot()
    fresh = FieldedIndex.of(snapshot.documents, turns=reader, passage=_stop_vectors)
    words = FieldedIndex.of(snapshot.documents, turns=reader)
    query = "what time do I usually stop working?"
    paths = [d.path for d in snapshot.documents]
    ranked = snapshot.ranker.rank(query, 5)
    assert ranked == fresh.rank(query, 5)
    assert snapshot.ranker.rank_and_fast(query, 5) == fresh.rank_and_fast(query, 5)  # type: ignore[attr-defined]
    assert paths[words.rank(query, 5)[0]] == "store/global/deploy_cutoff.md"
    assert paths[ranked[0]] == "store/global/end_of_my_day.md"
    source.close()
    service.close()
