"""The incrementally kept ``fielded`` pool equals a from-scratch build after any changes.

A catalog keeps one :class:`FieldedPool` and changes it a document at a time
(add, replace, remove). After any sequence of such changes, the pool
statistics (document frequencies, average field lengths, vocabulary) must be
those of the documents now in it, counted directly, and a view over the pool
must rank exactly like a :class:`FieldedIndex` built from scratch over the same
documents in the same order. A view published earlier must keep answering as
it did when it was published (copy on write), however the pool moved on.
A pool saved as an image and loaded again (its postings and features read on
demand) is the same pool, and stays so through later changes.
"""

from __future__ import annotations

import msgspec
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from memrecall.engine.scoring.fielded import (
    FIELDS,
    DocumentFeatures,
    FieldedIndex,
    FieldedPool,
    Match,
    Params,
)
from memrecall.engine.scoring.pool_image import PoolImage
from tests.factories import memory

WORDS = [
    "deploy", "deploys", "deployed", "deployment", "release", "rollback", "owner",
    "ownership", "tea", "team", "магазин", "магазины", "note", "staging",
]  # fmt: skip
QUERIES = ("deploy the release", "team owner", "магазин staging note", "rollbacks deploying")
KEYS = st.integers(0, 7)
TEXT = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@st.composite
def features(draw: st.DrawFn) -> DocumentFeatures:
    """A document's features; few titles, paths and ``supersedes`` links, so links that
    name one document, several, none, or each other all happen; mtimes far enough apart
    for same-subject pairs."""
    title = draw(st.sampled_from(["", "deploy", "release notes", "team"]))
    document = memory(
        title,
        draw(st.sampled_from(["", "d", "staging"])),
        draw(TEXT),
        name=draw(st.sampled_from(["x", "y", "notes/z"])),
        mtime=float(draw(st.integers(0, 3))) * 30 * 86_400.0,
    )
    link = draw(st.sampled_from(["", "x", "y.md", "./notes/z", "deploy", "team", "gone"]))
    return DocumentFeatures.of(msgspec.structs.replace(document, supersedes=link))


def counted(documents: list[DocumentFeatures]) -> tuple[dict[str, int], tuple[float, ...]]:
    """Document frequencies and average field lengths, counted directly."""
    frequencies: dict[str, int] = {}
    for document in documents:
        for term in set().union(*document.counts):
            frequencies[term] = frequencies.get(term, 0) + 1
    averages = []
    for i in range(len(FIELDS)):
        filled = [d.lengths[i] for d in documents if d.lengths[i]]
        averages.append(max(1.0, sum(filled) / len(filled)) if filled else 1.0)
    return frequencies, tuple(averages)


def answers(index: FieldedIndex) -> list[list[Match]]:
    return [index.matches(query) for query in QUERIES] + [
        [Match(i, 0.0, j, 0.0, 0.0) for i, j in index.judge(query, 3, exclude={0})]
        for query in QUERIES
    ]


class PoolMachine(RuleBasedStateMachine):
    """Random add / replace / remove sequences on one pool, checked against scratch builds."""

    params = Params()

    def __init__(self) -> None:
        super().__init__()
        self.pool = FieldedPool(params=self.params)
        self.model: dict[int, DocumentFeatures] = {}
        self.published: list[tuple[FieldedIndex, list[list[Match]]]] = []

    @rule(key=KEYS, document=features())
    def put(self, key: int, document: DocumentFeatures) -> None:
        self.pool.add(key, document)
        self.model[key] = document

    @rule(key=KEYS)
    def remove(self, key: int) -> None:
        self.pool.remove(key)
        self.model.pop(key, None)

    @rule()
    def reload(self) -> None:
        """Save the pool as a cache file would and carry on with the loaded one."""
        stored = msgspec.msgpack.encode(self.pool.image())
        self.pool = FieldedPool.from_image(
            msgspec.msgpack.decode(stored, type=PoolImage), params=self.params
        )

    @rule(order=st.randoms(use_true_random=False))
    def publish(self, order: object) -> None:
        keys = list(self.model)
        order.shuffle(keys)  # type: ignore[attr-defined]
        view = FieldedIndex.over(self.pool, keys)
        scratch = FieldedIndex([self.model[k] for k in keys], params=self.params)
        assert answers(view) == answers(scratch)
        assert view.fast("deploy release") == scratch.fast("deploy release")
        self.published.append((view, answers(scratch)))

    @invariant()
    def statistics_are_those_of_the_documents_in_the_pool(self) -> None:
        now = self.pool.statistics()
        frequencies, averages = counted(list(self.model.values()))
        assert now.documents == len(self.model)
        assert now.frequencies == frequencies
        assert now.averages == averages
        assert now.vocabulary == tuple(sorted(frequencies))
        assert {key: self.pool.get(key) for key in self.model} == self.model

    @invariant()
    def published_views_do_not_change(self) -> None:
        for view, expected in self.published[-3:]:
            assert answers(view) == expected


class SmallPoolMachine(PoolMachine):
    """Without the idf floor (``min_pool``), so every added or removed document
    changes every term's idf, even of terms whose postings did not change."""

    params = Params(min_pool=1)


_settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
PoolMachine.TestCase.settings = _settings
SmallPoolMachine.TestCase.settings = _settings
TestPoolMachine = PoolMachine.TestCase
TestSmallPoolMachine = SmallPoolMachine.TestCase
