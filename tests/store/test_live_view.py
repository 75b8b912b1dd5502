"""The incremental view (LiveView + IncrementalIndex) ranks exactly like a view rebuilt from
scratch (RetrievalView over FieldedIndex), after any sequence of puts and removals; and a
removed record leaves no trace in the index."""

from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import example, given
from hypothesis import strategies as st

from memrecall.engine.scoring.fielded import DocumentFeatures
from memrecall.events.documents import MemoryDocument, MemoryType, Scope
from memrecall.store import MemoryRecord, RetrievalView, SourceType, Status
from memrecall.store.backend import StoreChanges
from memrecall.store.index import IncrementalIndex
from memrecall.store.retrieval import Budget, LiveView, normalize_query

from .helpers import GLOBAL, LEARNING, T0

WORDS = (
    "charge", "charges", "charged", "coffee", "order", "colour", "colony", "tea", "team",
    "vim", "editor", "the", "and", "green", "flat", "white", "owner", "ownership", "прием",
    "приемы", "東京", "alpha",
)  # fmt: skip
CATEGORIES = ("preference", "Preference ", "tools", "misc")

text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
offset = st.sampled_from((None, None, None, None, -2, -1, 1, 2)).map(
    lambda h: None if h is None else T0 + timedelta(hours=h)
)


@st.composite
def records(draw: st.DrawFn) -> MemoryRecord:
    """A record with a small id space (so puts replace earlier records) and shared keys."""
    memory_id = f"m{draw(st.integers(0, 7)):02d}"
    updated = T0 - timedelta(seconds=draw(st.integers(0, 3)))
    return MemoryRecord(
        memory_id=memory_id,
        user_id="u1",
        scope=draw(st.sampled_from((GLOBAL, LEARNING))),
        key=draw(st.sampled_from(("coffee", "tea", "green_tea", "charge"))),
        content=draw(text),
        category=draw(st.sampled_from(CATEGORIES)),
        source_type=SourceType.EXPLICIT,
        status=Status.ACTIVE,
        revision=1,
        created_at=updated,
        updated_at=updated,
        last_confirmed_at=None,
        review_after=draw(offset),
        expires_at=draw(offset),
    )


operations = st.lists(
    st.one_of(records(), records(), st.integers(0, 7).map(lambda i: f"m{i:02d}")),
    min_size=3,
    max_size=30,
)
QUERIES = ("coffee", "Tea", "green tea", "charge", "charges order", "vim editor", "the", "東京")


@given(operations, st.sampled_from((None, "preference")), st.integers(1, 3))
def test_incremental_view_ranks_like_a_rebuilt_view(
    ops: list[MemoryRecord | str], category: str | None, limit: int
) -> None:
    live = LiveView()
    model: dict[str, MemoryRecord] = {}
    for n, op in enumerate(ops, start=1):
        if isinstance(op, str):
            model.pop(op, None)
            change = StoreChanges(n, n, (), (op,), full=False)
        else:
            model[op.memory_id] = op
            change = StoreChanges(n, n, (op,), (), full=False)
        live.apply(change)
    rebuilt = RetrievalView(len(ops), [model[m] for m in sorted(model)])
    budget = Budget(limit=limit)
    for query, hours in itertools.product(QUERIES, (-1.5, 0.5, 2.5)):
        now = T0 + timedelta(hours=hours)
        q = normalize_query(query)
        assert live.search(q, now, category=category, budget=budget) == rebuilt.search(
            q, now, category=category, budget=budget
        ), (query, hours)
        assert live.valid_until(now) == rebuilt.valid_until(now)


@given(st.lists(records(), min_size=1, max_size=12))
def test_removed_records_leave_no_trace(puts: list[MemoryRecord]) -> None:
    live = LiveView()
    for n, record in enumerate(puts, start=1):
        live.apply(StoreChanges(n, n, (record,), (), full=False))
    for memory_id in list(live.records):
        live.discard(memory_id)
    assert live.index.vocabulary() == ()
    assert len(live.index) == 0
    assert not live.records
    for word in WORDS:
        assert live.search(normalize_query(word), T0) == []


def test_forgotten_words_leave_the_vocabulary() -> None:
    live = LiveView()
    kept = MemoryRecord(
        memory_id="a",
        user_id="u1",
        scope=GLOBAL,
        key="drink",
        content="likes green tea",
        category="preference",
        source_type=SourceType.EXPLICIT,
        status=Status.ACTIVE,
        revision=1,
        created_at=T0,
        updated_at=T0,
        last_confirmed_at=None,
        review_after=None,
        expires_at=None,
    )
    secret = MemoryRecord(
        memory_id="b",
        user_id="u1",
        scope=GLOBAL,
        key="secret",
        content="zanzibar lighthouse tea",
        category="misc",
        source_type=SourceType.EXPLICIT,
        status=Status.ACTIVE,
        revision=1,
        created_at=T0,
        updated_at=T0,
        last_confirmed_at=None,
        review_after=None,
        expires_at=None,
    )
    live.apply(StoreChanges(2, 2, (kept, secret), (), full=False))
    assert [h.memory_id for h in live.search("zanzibar", T0)] == ["b"]
    live.apply(StoreChanges(3, 3, (), ("b",), full=False))
    assert live.search("zanzibar", T0) == []
    assert live.search("zanzibar lighthouse", T0) == []
    assert "zanzibar" not in live.index.vocabulary()
    assert "lighthouse" not in live.index.vocabulary()
    assert "tea" in live.index.vocabulary()
    assert [h.memory_id for h in live.search("tea", T0)] == ["a"]


@example(  # common terms outscoring every document with a rare one: the bound must hold
    docs=[("charge", 0)] * 6 + [("charges", 0), ("coffee", 0)],
    asks=["charges coffee"],
    limit=1,
    dropped=set(),
)
@given(
    st.lists(st.tuples(text, st.integers(0, 3)), min_size=1, max_size=40),
    st.lists(text, min_size=1, max_size=5),
    st.integers(1, 6),
    st.sets(st.integers(0, 39), max_size=5),
)
def test_best_equals_the_full_pass(
    docs: list[tuple[str, int]], asks: list[str], limit: int, dropped: set[int]
) -> None:
    index = IncrementalIndex()
    for n, (body, age) in enumerate(docs):
        document = MemoryDocument(
            scope=Scope.USER,
            path=f"d{n:02d}",
            relative_path=f"d{n:02d}",
            type=MemoryType.USER,
            title=f"note {n}",
            description="",
            body=body,
            mtime=float(-age),
        )
        index.add(f"d{n:02d}", DocumentFeatures.of(document))
    excluded = {f"d{n:02d}" for n in dropped}
    for query in asks:
        every = index.scores(query)
        found, score_of = index.best(query, limit, excluded=excluded)
        assert found == index.top(every, limit, excluded=excluded)
        assert [score_of(d) for d in found] == [every[d] for d in found]
        for n in range(len(docs)):
            assert score_of(f"d{n:02d}") == every.get(f"d{n:02d}")
