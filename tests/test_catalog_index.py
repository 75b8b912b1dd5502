"""The catalog's word index ranks like the reference scorer and stays correct as it changes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memrecall.engine.scoring.candidates import prepare_candidates
from memrecall.engine.scoring.catalog_index import (
    CatalogIndex,
    Column,
    FieldTexts,
    IndexBuilder,
    words_of,
)
from memrecall.engine.scoring.reference import ReferenceIndex
from memrecall.events.documents import MemoryDocument, MemoryType, Scope

# Words that overlap as substrings, across scripts, cases and NFKC forms, so token hits
# land inside longer words, at word edges and in several fields at once.
WORDS = [
    "deploy",
    "Deployment",
    "redeploy",
    "the",
    "other",
    "theory",
    "api",
    "rapid",
    "ｄｅｐｌｏｙ",
    "部署",
    "部署流程",
    "ユーザー",
    "preference",
    "release",
    "dashboard",
    "ticket",
    "docs",
    "summary",
    "mcp__srv__search",
    "tool schema",
    "gotcha",
    "1200",
    "x" * 30,
]
SEPARATORS = [" ", "\n", "\t", "  ", ", ", "\u3000", "-", ""]

phrases = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=8).map(
    lambda parts: "".join(w + s for w, s in parts)
)


documents = st.builds(
    MemoryDocument,
    scope=st.sampled_from(Scope),
    path=st.sampled_from([f"/m/{i}.md" for i in range(60)]),
    relative_path=st.just("r.md"),
    type=st.sampled_from(MemoryType),
    title=phrases,
    description=phrases,
    body=st.tuples(phrases, st.sampled_from([1, 1, 1, 60])).map(lambda p: p[0] * p[1]),
    mtime=st.sampled_from([0.0, 1.5, 2.0, 1e9, 1e9 + 0.001]),
)
pools = st.lists(documents, max_size=40)


class EagerIndex(CatalogIndex):
    """Every hit set takes the set-algebra path."""

    large_hits = 0


class MixedIndex(CatalogIndex):
    large_hits = 3


INDEXES = st.sampled_from([CatalogIndex, EagerIndex, MixedIndex])

queries = st.one_of(phrases, st.text(max_size=30))


@given(pools, queries, st.integers(min_value=-3, max_value=250), INDEXES, st.data())
def test_rank_and_scores_match_the_reference_index(
    pool: list[MemoryDocument],
    query: str,
    limit: int,
    kind: type[CatalogIndex],
    data: st.DataObject,
) -> None:
    exclude = data.draw(st.sets(st.integers(min_value=-2, max_value=len(pool) + 2)))
    reference = ReferenceIndex.of(pool)
    index = kind.of(pool)
    assert index.rank(query, limit, exclude=exclude) == reference.rank(
        query, limit, exclude=exclude
    )
    assert index.scores(query, exclude=exclude) == reference.scores(query, exclude=exclude)


@given(pools, queries, INDEXES, st.data())
def test_prepare_candidates_matches_the_generic_pass(
    pool: list[MemoryDocument], query: str, kind: type[CatalogIndex], data: st.DataObject
) -> None:
    paths = sorted({d.path for d in pool} | {"/elsewhere.md"})
    excluded = data.draw(st.sets(st.sampled_from(paths)))
    tools = data.draw(st.lists(st.sampled_from(["mcp__srv__search", "api", "", "Bash"])))
    expected = prepare_candidates(
        query, pool, ReferenceIndex.of(pool), recent_tools=tools, excluded_paths=excluded
    )
    got = kind.of(pool).prepare_candidates(query, recent_tools=tools, excluded_paths=excluded)
    assert got == expected


def test_a_large_pool_with_one_frequent_word_ranks_like_the_reference() -> None:
    pool = [
        MemoryDocument(
            scope=Scope.USER if i % 7 == 0 else Scope.PROJECT,
            path=f"/m/{i}.md",
            relative_path=f"{i}.md",
            type=MemoryType.REFERENCE if i % 3 else MemoryType.PROJECT,
            title=f"Topic {i}",
            description=f"note {i} about deployment history",
            body="filler text " * 50 + ("the saved codeword" if i == 777 else ""),
            mtime=float(i % 50),
        )
        for i in range(3000)
    ]
    reference = ReferenceIndex.of(pool)
    index = CatalogIndex.of(pool)
    mixed = MixedIndex.of(pool)
    for query in ("the saved codeword for deployment", "project deployment note 12", "topic"):
        for limit in (5, 180, 5000):
            assert index.rank(query, limit) == reference.rank(query, limit)
            assert mixed.rank(query, limit) == reference.rank(query, limit)
            assert index.rank(query, limit, exclude={777, 1}) == reference.rank(
                query, limit, exclude={777, 1}
            )


def test_a_token_with_whitespace_falls_back_to_checking_every_document() -> None:
    pool = [
        MemoryDocument(
            scope=Scope.PROJECT,
            path=f"/m/{i}.md",
            relative_path=f"{i}.md",
            type=MemoryType.PROJECT,
            title=title,
            description="",
            body="",
            mtime=0.0,
        )
        for i, title in enumerate(["alpha beta", "alphabeta", "beta alpha"])
    ]
    index = CatalogIndex.of(pool)
    column = index._columns[0]
    assert index._token_hits("alpha beta", column) == {0}
    assert index._token_hits("pha", column) == {0, 1, 2}


fields_strategy = st.tuples(phrases, phrases, phrases)


@given(
    st.lists(
        st.dictionaries(st.integers(0, 12), st.one_of(st.none(), fields_strategy), max_size=6),
        max_size=8,
    )
)
def test_incremental_postings_equal_a_fresh_build_and_published_columns_never_change(
    batches: list[dict[int, FieldTexts | None]],
) -> None:
    builder = IndexBuilder()
    current: dict[int, FieldTexts] = {}
    published: list[tuple[tuple[Column, Column, Column], list[dict[str, list[int]]]]] = []
    for batch in batches:
        changes = {slot: (current.get(slot), after) for slot, after in batch.items()}
        builder.apply(changes)
        for slot, after in batch.items():
            if after is None:
                current.pop(slot, None)
            else:
                current[slot] = after
        columns = builder.freeze()
        content = [{w: sorted(s) for w, s in c.postings.items()} for c in columns]
        published.append((columns, content))
        expected: list[dict[str, list[int]]] = [{}, {}, {}]
        for slot, fields in current.items():
            for column, text in enumerate(fields):
                for word in words_of(text):
                    expected[column].setdefault(word, []).append(slot)
        assert content == [{w: sorted(s) for w, s in c.items()} for c in expected]
    for frozen, content in published:
        assert [{w: sorted(s) for w, s in c.postings.items()} for c in frozen] == content
